"""Copying a source's data into the fixture file of a generated environment (``data.sqlite``).

Money becomes integer minor units (never a float), non-money fractions decimal text; a table without a primary
key gets ``row_id``. ``sample`` keeps a connected subset (every kept row's parents are kept, children only of kept
parents); ``scrub`` replaces personal data with generated values, keeping uniqueness.
"""

from __future__ import annotations

import random
import re
import sqlite3
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from toolgym.new.errors import NewError
from toolgym.new.introspect import Column, Source, Table

__all__ = ["write_data", "fixture_ddl"]

_FIRST = ("Ada", "Bruno", "Chiara", "Dev", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Keiko", "Liam", "Maya",
          "Nils", "Olga", "Pablo", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zoe")
_LAST = ("Abbott", "Baker", "Castro", "Dalton", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova", "Jensen", "Kowalski",
         "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quist", "Rossi", "Silva", "Tanaka", "Ulrich", "Varga", "Weber")


def _sql_type(col: Column) -> str:
    if col.kind in ("money", "integer"):
        return "INTEGER"
    if col.kind in ("key", "ref"):
        return "INTEGER" if "INT" in col.declared else "TEXT" if col.declared else ""
    return "TEXT"


def fixture_ddl(source: Source) -> str:
    """CREATE TABLE statements of the fixture (keys, foreign keys, money as INTEGER) plus an index per reference."""
    parts = []
    for t in source.tables:
        # one column names every row: a table keyed by several columns (or none) gets a row_id, so get_ reads it
        lines = [] if len(t.key) == 1 else ['"row_id" INTEGER PRIMARY KEY']
        for c in t.columns:
            lines.append(f'"{c.name}" {_sql_type(c)}{" NOT NULL" if c.not_null and c.kind != "key" else ""}'.rstrip())
        if len(t.key) == 1:
            lines.append(f'PRIMARY KEY ("{t.key[0]}")')
        elif t.key:
            lines.append("UNIQUE (" + ", ".join(f'"{k}"' for k in t.key) + ")")
        for c in t.columns:  # SQLite needs the parent column to be its key or unique: a reference to a plain column is the spec's
            if c.kind == "ref" and _parent_key(source, c):
                lines.append(f'FOREIGN KEY ("{c.name}") REFERENCES "{c.ref_table}"("{c.ref_column}")')
        parts.append(f'CREATE TABLE "{t.name}" (\n    ' + ",\n    ".join(lines) + "\n);")
        moments = [c.name for c in t.columns if c.kind == "date"][:1]  # a parent's latest child: one index seek
        for c in t.columns:
            if c.kind == "ref":
                parts.append(f'CREATE INDEX "ix_{t.name}_{c.name}" ON "{t.name}"("{c.name}"{", " + chr(34) + moments[0] + chr(34) if moments else ""});')
    return "\n".join(parts) + "\n"


def _parent_key(source: Source, col: Column) -> bool:
    """Whether ``col`` refers to its table's single key or a unique column (what a FOREIGN KEY clause may name)."""
    target = next((t for t in source.tables if t.name == col.ref_table), None)
    if target is None:
        return False
    return target.key == [col.ref_column] or any(c.name == col.ref_column and c.unique for c in target.columns)


def _convert(col: Column, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bytes):  # the world's change log is JSON, which holds no BLOB: binary data is kept as hex
        return value.hex()
    if col.kind == "money" and col.whole and isinstance(value, int):
        return value * 10**col.scale
    if col.kind == "money" and not col.minor:
        try:  # exact from the text of the value (a REAL's shortest repr), rounded half-up to minor units
            return int(Decimal(str(value)).scaleb(col.scale).to_integral_value(rounding=ROUND_HALF_UP))
        except InvalidOperation:
            raise NewError(f"column {col.source or col.name!r} looks like money but holds {value!r}: set its kind in "
                           "spec.json, or clean the value") from None
    if col.kind == "date" and col.epoch and isinstance(value, int):
        moment = datetime.fromtimestamp(value / (1000 if col.epoch == "ms" else 1), tz=timezone.utc)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if col.kind == "decimal":
        return str(Decimal(str(value)))
    return value


def _topological(source: Source) -> list[Table]:
    done: list[Table] = []
    left = list(source.tables)
    while left:
        ready = [t for t in left if all(c.ref_table in {d.name for d in done} or c.ref_table == t.name
                                        for c in t.columns if c.kind == "ref")]
        if not ready:  # a cycle of references: take the rest as they are
            ready = left[:1]
        for t in ready:
            done.append(t)
            left.remove(t)
    return done


def _key_tuple(table: Table, row: sqlite3.Row) -> Any:
    return tuple(row[k] for k in table.key) if table.key else None


def _sample(source: Source, n: int) -> dict[str, list[sqlite3.Row]]:
    """A connected subset: ``n`` rows of each table nothing else constrains; children only of kept parents (at most
    ``20 * n`` per table); rows that kept rows reference are added back so every reference resolves."""
    kept: dict[str, list[sqlite3.Row]] = {}
    keys: dict[str, set[Any]] = {}
    for t in _topological(source):
        refs = [c for c in t.columns if c.kind == "ref" and c.ref_table != t.name]
        order = ", ".join(f'"{k}"' for k in t.key) or "rowid"
        cursor = source.conn.execute(f"{t.select()} ORDER BY {order}")
        limit = 20 * n if refs else n
        rows = []
        for r in cursor:  # streamed: a million-row table is never all in memory
            if refs and not all(r[c.name] is None or (r[c.name],) in keys.get(c.ref_table or "", set()) for c in refs):
                continue
            rows.append(r)
            if len(rows) >= limit:
                break
        kept[t.name] = rows
        keys[t.name] = {(r[t.key[0]],) for r in rows} if len(t.key) == 1 else set()
    return kept


def _scrubbed(col: Column, index: int, value: Any, rng: random.Random) -> Any:
    if value is None:
        return None
    name = col.name.lower()
    first, last = _FIRST[index % len(_FIRST)], _LAST[(index // len(_FIRST) + index) % len(_LAST)]
    if "mail" in name:
        return f"{first.lower()}.{last.lower()}{index}@example.com"
    if "phone" in name or "fax" in name or "mobile" in name:
        return f"+1 555 {rng.randint(100, 999)} {1000 + index % 9000}"
    if re.search(r"first", name):
        return first
    if re.search(r"(last|sur)", name):
        return last
    if "name" in name:
        return f"{first} {last}" + (f" {index}" if col.unique else "")
    if "address" in name or "street" in name:
        return f"{rng.randint(1, 999)} {last} Street"
    if isinstance(value, int):
        return rng.randint(10**5, 10**6 - 1) * 1000 + index
    return f"{col.name.lower()}-{index:05d}"


def write_data(source: Source, target: Path, *, sample: int | None = None, scrub: list[str] = ()) -> None:
    """Write ``target`` (the fixture data file): the fixture's tables filled from ``source``.

    Args:
        sample: keep a connected subset (see :func:`_sample`); None keeps everything.
        scrub: columns (``table.column`` or ``column``) whose values are replaced with generated ones.

    Raises:
        NewError: a scrub names no column of the source.
    """
    wanted = {s.lower() for s in scrub}
    matched: set[str] = set()
    target.unlink(missing_ok=True)
    out = sqlite3.connect(target)
    out.executescript(fixture_ddl(source))
    rows_of = _sample(source, sample) if sample else None
    rng = random.Random("scrub")
    for t in source.tables:
        rows = rows_of[t.name] if rows_of is not None else source.conn.execute(t.select())
        scrubbed = []
        for c in t.columns:
            for w in {c.name.lower(), f"{t.name.lower()}.{c.name.lower()}", (c.source or c.name).lower(),
                      f"{(t.source or t.name).lower()}.{(c.source or c.name).lower()}"}:
                if w in wanted:
                    scrubbed.append(c.name)
                    matched.add(w)
        names = [c.name for c in t.columns]
        marks = ", ".join("?" for _ in names)
        cols = ", ".join(f'"{n}"' for n in names)
        def converted(rows: Any = rows, scrubbed: list[str] = scrubbed, t: Table = t) -> Any:
            for i, r in enumerate(rows):
                values = [_convert(c, r[c.name]) for c in t.columns]
                for j, c in enumerate(t.columns):
                    if c.name in scrubbed:
                        values[j] = _scrubbed(c, i, values[j], rng)
                yield values

        try:
            out.executemany(f'INSERT INTO "{t.name}" ({cols}) VALUES ({marks})', converted())
        except sqlite3.IntegrityError as exc:  # a key the source repeats, or a NOT NULL it leaves empty
            out.close()
            target.unlink(missing_ok=True)
            raise NewError(f"table {t.source or t.name!r}: {exc}; fix the source's data or its declared keys") from None
        except sqlite3.DatabaseError as exc:
            out.close()
            target.unlink(missing_ok=True)
            raise NewError(f"table {t.source or t.name!r} cannot be read: {exc}: the source is damaged; recover it "
                           "(sqlite3 FILE .recover) or export the tables to CSV") from None
        for c in t.columns:  # a self-reference to a row the sample left out would dangle
            if c.kind == "ref" and c.ref_table == t.name and rows_of is not None:
                out.execute(f'UPDATE "{t.name}" SET "{c.name}" = NULL WHERE "{c.name}" NOT IN (SELECT "{c.ref_column}" FROM "{t.name}")')
    missing = wanted - matched
    if missing:
        out.close()
        target.unlink(missing_ok=True)
        raise NewError(f"--scrub names no column of the source: {', '.join(sorted(missing))} (give COLUMN or TABLE.COLUMN)")
    out.commit()
    out.execute("VACUUM")
    out.close()
