"""Reading a source database: tables, keys, foreign keys, and what each column holds.

A source is a SQLite file or a folder of CSV or JSON tables (loaded into SQLite first). Each column gets a *kind*
the rest of the generator acts on: ``key`` (the primary key), ``ref`` (a foreign key), ``money`` (integer
minor units once imported: money is never a float), ``category`` (few distinct values: statuses, types),
``date``, ``integer``, ``decimal`` (non-money fractions, shown as decimal text), ``secret`` (passwords,
tokens: never shown), ``freetext`` (long prose) and ``text``.
"""

from __future__ import annotations

import csv
import json
import re
import shlex
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from toolgym.new.errors import NewError
from toolgym.new.words import split

__all__ = ["Column", "Table", "Source", "read_source", "open_source", "snake", "singular"]

_MONEY_WORDS = re.compile(r"(price|amount|total|cost|balance|fee|salary|freight|payment|charge|revenue|subtotal|tax|"
                          r"refund|paid|due|limit|minor)", re.I)
_SECRET_WORDS = re.compile(r"(password|passcode|passwd|secret|token|hash|salt|pin$|ssn|api_?key)", re.I)
_DATE_WORDS = re.compile(r"(date|_at$|_on$|time|day|birth|created|updated|expires)", re.I)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
_CATEGORY_MAX = 12
# integer dates: unix epochs (seconds or milliseconds) between 1973-03 and 2100, in a column named like a moment
_EPOCH_WORDS = re.compile(r"(date|_at$|_on$|_ts$|^ts$|time|epoch|created|updated|expires|placed|shipped|delivered|"
                          r"returned|loaned|opened|closed|happened|since|until|deadline|due)", re.I)
_EPOCH_S = (100_000_000, 4_102_444_800)
# integer money in whole units: only names that cannot be a count (a "total" of games is not money)
_WHOLE_MONEY = re.compile(r"(salary|salaries|price|cost|fee|amount|balance|revenue|wage|budget|payment|charge|fare|payroll)", re.I)
# identifiers people quote: letters and digits in one token (#W2378156, N11539, INV-000123, acct_00042)
_CODE = re.compile(r"^#?[A-Za-z0-9][A-Za-z0-9_.#/-]{1,30}$")
_CODE_NAMES = re.compile(r"(number|code|num$|_no$|^no$|sku|tailnum|reference|ref$|isbn|iata|icao|faa)", re.I)


@dataclass
class Column:
    """One column of a source table and what it holds."""

    name: str
    declared: str
    kind: str = "text"
    ref_table: str | None = None
    ref_column: str | None = None
    not_null: bool = False
    unique: bool = False
    values: list[str] = field(default_factory=list)
    """A category's distinct values, sorted."""
    scale: int = 2
    """Money: digits after the point of its currency (minor units = value * 10**scale)."""
    minor: bool = False
    """Money already stored as integer minor units in the source (``*_minor``, ``*_cents`` columns)."""
    epoch: str | None = None
    """A date stored as a unix epoch integer: ``"s"`` (seconds) or ``"ms"``; written to the fixture as ISO 8601 UTC."""
    source: str = ""
    """The column's name in the source (``name`` is the fixture's: the same unless it is not a plain identifier)."""
    whole: bool = False
    """Money held in whole units as integers (salaries in dollars): ×10**scale into minor units in the fixture."""
    code: bool = False
    """Unique text whose values are identifiers people quote (``#W2378156``, ``N11539``, ``INV-000123``)."""
    low: object = None
    """The smallest value (numbers and dates): drawn values stay within what the data shows."""
    high: object = None
    """The largest value."""


@dataclass
class Table:
    """One source table."""

    name: str
    columns: list[Column]
    key: list[str]
    rows: int
    virtual: bool = False
    source: str = ""
    """The table's name in the source (``name`` is the fixture's: the same unless it is not a plain identifier)."""

    def select(self) -> str:
        """``SELECT`` of every column from the source table, each under its fixture name."""
        cols = ", ".join(f'"{c.source or c.name}" AS "{c.name}"' for c in self.columns)
        return f'SELECT {cols} FROM "{self.source or self.name}"'

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


@dataclass
class Source:
    """A source database, opened read-only, with its tables described."""

    path: Path
    conn: sqlite3.Connection
    tables: list[Table]

    def table(self, name: str) -> Table:
        return next(t for t in self.tables if name in (t.name, t.source))


def snake(name: str) -> str:
    """``InvoiceLine`` / ``invoice-line`` / ``Invoice Line`` → ``invoice_line``; ``teamIDretro`` → ``team_id_retro``."""
    text = "_".join(t.lower() for t in split(name, digits=False))
    text = re.sub(r"[^0-9a-z]+", "_", text).strip("_")
    if not text or not text[0].isalpha():
        text = "t_" + text
    return text


_IRREGULAR = {"people": "person", "children": "child", "men": "man", "women": "woman", "mice": "mouse", "geese": "goose",
              "series": "series", "species": "species", "data": "data", "media": "media", "analyses": "analysis",
              "indices": "index", "statuses": "status", "addresses": "address", "news": "news"}


def singular(word: str) -> str:
    """A table name's singular (``customers`` → ``customer``, ``categories`` → ``category``, ``people`` → ``person``)."""
    for plural, one in _IRREGULAR.items():
        if word == plural or word.endswith("_" + plural):
            return word[: len(word) - len(plural)] + one
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def open_source(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to a SQLite file, or an in-memory database loaded from a folder of CSV files.

    Raises:
        NewError: the path does not exist, is not a SQLite database, or holds no CSV file.
    """
    path = Path(path)
    if not path.exists():
        raise NewError(f"source {str(path)!r} does not exist; give a SQLite file or a folder of CSV tables")
    if path.is_dir():
        return _load_csv_folder(path)
    if path.stat().st_size == 0:
        raise NewError(f"source {str(path)!r} is an empty file: no tables to build from; give a SQLite database with data")
    with path.open("rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            raise NewError(f"source {str(path)!r} is not a SQLite database (give a .sqlite/.db file or a folder of CSV tables)")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:  # damaged pages fail here, in one line, not in the middle of reading a table
        problems = [" ".join(str(row[0]).split()) for row in conn.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:
        problems = [str(exc)]
    if problems != ["ok"]:
        conn.close()
        raise NewError(f"source {str(path)!r} is damaged ({'; '.join(problems)[:300]}); repair it first, e.g. "
                       f"sqlite3 {shlex.quote(str(path))} .recover | sqlite3 repaired.db, and give the repaired copy")
    return conn


_NULLS = ("NA", "N/A", "NULL", "null", "NaN", "nan")
"""Missing values as R, pandas and SQL dumps write them; read as NULL only in a column whose other values are numbers."""
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$")
_INT = re.compile(r"^-?[0-9]{1,18}$")
_KEYISH = re.compile(r"(^id$|_id$|_key$|_code$|_no$|_num$|_number$|^code$|^key$|^sku$|num$)")


def _json_value(value: object) -> object:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return str(Decimal(str(value)))  # decimal text: money is read from it exactly, never as a float
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _csv_rows(file: Path) -> tuple[list[str], Iterator[list[str]]]:
    """Header (snake_case) and an iterator over the data rows of a CSV file; a row with more or fewer cells than the
    header is a :class:`NewError` naming the file and line (a ragged file is never half-read)."""
    handle = file.open(newline="", encoding="utf-8")
    reader = csv.reader(handle)
    try:
        header = [snake(h) for h in next(reader)]
    except StopIteration:
        handle.close()
        raise NewError(f"{file}: empty CSV file (a header row is needed)") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        handle.close()
        raise NewError(f"{file}: cannot be read as UTF-8 CSV ({exc}); save it as UTF-8 CSV") from None

    def rows() -> Iterator[list[str]]:
        try:
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise NewError(f"{file}, line {reader.line_num}: {len(row)} cells where the header has {len(header)}; "
                                   "fix the row (a comma inside a value needs quotes) and run again")
                yield row
        except (UnicodeDecodeError, csv.Error) as exc:
            raise NewError(f"{file}, line {reader.line_num}: cannot be read as UTF-8 CSV ({exc})") from None
        finally:
            handle.close()

    return header, rows()


def _table_rows(file: Path) -> tuple[list[str], Iterator[list[object]]]:
    """Header and rows of a CSV file (values as text, '' as NULL) or a JSON file (a list of objects)."""
    if file.suffix == ".json":
        try:
            items = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise NewError(f"{file}: not valid JSON ({exc})") from None
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise NewError(f"{file}: a JSON table is a list of objects, one per row")
        keys = list(dict.fromkeys(k for item in items for k in item))
        return [snake(k) for k in keys], iter([[_json_value(item.get(k)) for k in keys] for item in items])
    header, rows = _csv_rows(file)
    return header, ([None if v == "" else v for v in row] for row in rows)


def _profile(file: Path) -> tuple[list[str], list[str], list[bool], list[bool], int]:
    """One pass over a table file: (header, SQL type per column, NA-as-NULL per column, unique-and-complete per
    key-like column, rows). Only the first column and key-like ones keep their values (to test uniqueness)."""
    header, rows = _table_rows(file)
    if len(set(header)) != len(header):
        raise NewError(f"{file}: the header names a column twice ({', '.join(sorted({h for h in header if header.count(h) > 1}))})")
    n = len(header)
    ints, nums, seen_na, filled = [True] * n, [True] * n, [False] * n, [0] * n
    watch = [i == 0 or bool(_KEYISH.search(h)) for i, h in enumerate(header)]
    values: list[set[object] | None] = [set() if w else None for w in watch]
    count = 0
    for row in rows:
        count += 1
        for i, v in enumerate(row):
            if v is None:
                continue
            if isinstance(v, str) and v in _NULLS:
                seen_na[i] = True
                continue
            filled[i] += 1
            text = str(v)
            if ints[i] and not (isinstance(v, int) or _INT.match(text)):
                ints[i] = False
            if nums[i] and not (isinstance(v, (int, float)) or _NUMBER.match(text)):
                nums[i] = False
            bucket = values[i]
            if bucket is not None:
                if v in bucket:
                    values[i] = None
                else:
                    bucket.add(v)
    na_null = [seen_na[i] and nums[i] and filled[i] > 0 for i in range(n)]
    types = ["INTEGER" if ints[i] and filled[i] else "TEXT" for i in range(n)]
    for i in range(n):
        if seen_na[i] and not na_null[i]:
            types[i] = "TEXT"
    unique = [values[i] is not None and filled[i] == count and count > 0 for i in range(n)]
    return header, types, na_null, unique, count


def _load_csv_folder(folder: Path) -> sqlite3.Connection:
    """Load a folder of CSV/JSON tables into a private temporary SQLite database (on disk, deleted on close: a
    million-row file never sits in memory), with a key per table where one column is unique and complete, and the
    references its values show (a column named like another table's key whose every value is one of that table's)."""
    files = sorted([*folder.glob("*.csv"), *folder.glob("*.json")])
    if not files:
        raise NewError(f"folder {str(folder)!r} holds no .csv or .json file; give one file per table (CSV with a header "
                       "row, or JSON: a list of objects)")
    conn = sqlite3.connect("")
    conn.row_factory = sqlite3.Row
    profiles = {}
    keys: dict[str, str] = {}
    for file in files:
        table = snake(file.stem)
        if table in profiles:
            raise NewError(f"{file}: two files make the table {table!r}; rename one")
        header, types, na_null, unique, _ = _profile(file)
        profiles[table] = (file, header, types, na_null)
        named = [h for h, u in zip(header, unique, strict=True) if u and h in ("id", f"{singular(table)}_id")]
        keyish = [h for i, (h, u) in enumerate(zip(header, unique, strict=True)) if u and (_KEYISH.search(h) or i == 0)]
        key = (named or keyish or [None])[0]
        if key is not None:
            keys[table] = key
    for table, (file, header, types, na_null) in profiles.items():
        defs = [f'"{h}" {t}' + (" PRIMARY KEY" if keys.get(table) == h else "") for h, t in zip(header, types, strict=True)]
        conn.execute(f'CREATE TABLE "staging_{table}" ({", ".join(defs)})')
        _, rows = _table_rows(file)
        marks = ", ".join("?" for _ in header)
        cast = [int if t == "INTEGER" else None for t in types]

        def clean(row: list[object]) -> list[object]:
            out = []
            for v, c, na in zip(row, cast, na_null, strict=True):
                if v is None or (na and v in _NULLS):
                    out.append(None)
                else:
                    out.append(c(v) if c is not None and not isinstance(v, int) else v)
            return out

        conn.executemany(f'INSERT INTO "staging_{table}" VALUES ({marks})', (clean(r) for r in rows))
    for table, (file, header, types, na_null) in profiles.items():
        defs = []
        for h, t in zip(header, types, strict=True):
            line = f'"{h}" {t}' + (" PRIMARY KEY" if keys.get(table) == h else "")
            if keys.get(table) != h:
                target = _reference(conn, table, h, keys)
                if target is not None:
                    line += f' REFERENCES "{target}"("{keys[target]}")'
            defs.append(line)
        conn.execute(f'CREATE TABLE "{table}" ({", ".join(defs)})')
        conn.execute(f'INSERT INTO "{table}" SELECT * FROM "staging_{table}"')
    for table in profiles:
        conn.execute(f'DROP TABLE "staging_{table}"')
    conn.commit()
    return conn


def _reference(conn: sqlite3.Connection, table: str, column: str, keys: dict[str, str]) -> str | None:
    """The table ``column`` refers to: one keyed by a column of the same name (``player_id`` → the table keyed by
    ``player_id``) or named by it (``customer_id`` → ``customers``), holding every value the column holds."""
    for target, key in keys.items():
        if target == table:
            continue
        if column == key or column in (f"{singular(target)}_id", f"{target}_id"):
            left = conn.execute(f'SELECT count(*) FROM "staging_{table}" WHERE "{column}" IS NOT NULL AND "{column}" NOT IN '
                                f'(SELECT "{key}" FROM "staging_{target}")').fetchone()[0]
            if left == 0:
                return target
    return None


def _is_decimal(value: object) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, str):
        try:
            Decimal(value)
        except InvalidOperation:
            return False
        return "." in value
    return False


def _describe_column(conn: sqlite3.Connection, table: str, info: sqlite3.Row, fks: dict[str, tuple[str, str]],
                     key: list[str], rows: int) -> Column:
    name, declared = info["name"], (info["type"] or "").upper()
    col = Column(name=name, declared=declared, not_null=bool(info["notnull"]) or name in key)
    q = f'"{name}"'
    stats = conn.execute(f'SELECT count(DISTINCT {q}) AS d, count({q}) AS n, max(length({q})) AS mx, avg(length({q})) AS av '
                         f'FROM "{table}"').fetchone()
    sample = [r[0] for r in conn.execute(f'SELECT {q} FROM "{table}" WHERE {q} IS NOT NULL LIMIT 200')]
    col.unique = stats["n"] == rows and stats["d"] == rows and rows > 0
    if name in fks:
        col.kind, (col.ref_table, col.ref_column) = "ref", fks[name]
    elif name in key:
        col.kind = "key"
    elif _SECRET_WORDS.search(name) or any(isinstance(v, bytes) for v in sample):  # binary data is never shown either
        col.kind = "secret"
    elif name.lower().endswith(("_minor", "_cents", "_pence")) and sample and all(isinstance(v, int) for v in sample):
        col.kind, col.minor = "money", True
    elif _WHOLE_MONEY.search(name) and sample and all(isinstance(v, int) and not isinstance(v, bool) for v in sample):
        col.kind, col.whole = "money", True
    elif sample and all(isinstance(v, (int, float)) or _is_decimal(v) for v in sample) and any(_is_decimal(v) for v in sample):
        places = max((len(str(Decimal(str(v))).partition(".")[2]) for v in sample), default=0)
        # REAL money carries binary noise (0.1 + 0.2 = 0.30000000000000004): still money when every value is
        # within a millionth of whole cents; the fixture rounds it half-up to minor units
        cents = places <= 2 or all(isinstance(v, float) and abs(v * 100 - round(v * 100)) < 1e-4 for v in sample)
        col.kind = "money" if _MONEY_WORDS.search(name) and cents else "decimal"
    elif sample and all(isinstance(v, int) and not isinstance(v, bool) for v in sample) and _EPOCH_WORDS.search(name) and (
            all(_EPOCH_S[0] <= v <= _EPOCH_S[1] for v in sample) or all(_EPOCH_S[0] * 1000 <= v <= _EPOCH_S[1] * 1000 for v in sample)):
        col.kind, col.epoch = "date", "s" if all(v <= _EPOCH_S[1] for v in sample) else "ms"
    elif sample and all(isinstance(v, str) and _ISO_DATE.match(v) for v in sample) or (
            _DATE_WORDS.search(name) and sample and all(isinstance(v, str) and _ISO_DATE.match(v) for v in sample)):
        col.kind = "date"
    elif sample and all(isinstance(v, int) for v in sample):
        col.kind = "integer"
    elif rows >= 8 and 1 < stats["d"] <= _CATEGORY_MAX and stats["d"] * 3 <= max(rows, 1) and (stats["mx"] or 0) <= 40:
        col.kind = "category"
        col.values = sorted(str(r[0]) for r in conn.execute(f'SELECT DISTINCT {q} FROM "{table}" WHERE {q} IS NOT NULL'))
    elif (stats["av"] or 0) > 60:
        col.kind = "freetext"
    if col.kind in ("key", "text", "ref") and col.unique and sample and all(isinstance(v, str) for v in sample):
        texts = [str(v) for v in sample]
        coded = all(_CODE.match(v) for v in texts) and all(any(ch.isdigit() for ch in v) for v in texts)
        col.code = coded and (_CODE_NAMES.search(name) is not None or all(any(ch.isalpha() or ch == "#" for ch in v) for v in texts))
    if col.kind in ("integer", "money", "date", "decimal"):
        bounds = conn.execute(f'SELECT min({q}) AS lo, max({q}) AS hi FROM "{table}"').fetchone()
        col.low, col.high = bounds["lo"], bounds["hi"]
    return col


def read_source(path: str | Path) -> Source:
    """Open and describe every content table of ``path`` (virtual/FTS tables and internal ``_`` tables are skipped).

    Raises:
        NewError: the source cannot be read or has no table.
    """
    conn = open_source(path)
    try:
        return _read(path, conn)
    except sqlite3.DatabaseError as exc:  # a damaged page anywhere in the file: one line, never a traceback
        conn.close()
        raise NewError(f"source {str(path)!r} cannot be read as SQLite ({exc}): the file is damaged; recover it "
                       "(sqlite3 FILE .recover) or export the tables to CSV") from None


def _read(path: str | Path, conn: sqlite3.Connection) -> Source:
    listing = conn.execute("SELECT name, type FROM pragma_table_list WHERE schema = 'main' ORDER BY name").fetchall()
    tables = []
    for row in listing:
        name, kind = row["name"], row["type"]
        if kind != "table" or name.startswith(("sqlite_", "_")):
            continue
        info = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
        key = [r["name"] for r in sorted((r for r in info if r["pk"] > 0), key=lambda r: r["pk"])]
        fks: dict[str, tuple[str, str]] = {}
        for fk in conn.execute(f'PRAGMA foreign_key_list("{name}")').fetchall():
            target = fk["table"]
            tcol = fk["to"]
            if tcol is None:  # REFERENCES t: its primary key; a table keyed by several columns (or none) cannot be named so
                tkey = [r["name"] for r in conn.execute(f'PRAGMA table_info("{target}")') if r["pk"] > 0]
                if len(tkey) != 1:
                    continue
                tcol = tkey[0]
            fks[fk["from"]] = (target, tcol)
        count = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        columns = [_describe_column(conn, name, r, fks, key, count) for r in info]
        tables.append(Table(name=name, columns=columns, key=key, rows=count))
    if not tables:
        views = [r["name"] for r in listing if r["type"] == "view"]
        skipped = [r["name"] for r in listing if r["type"] != "view" and not r["name"].startswith("sqlite_")]
        raise NewError(f"source {str(path)!r} has no table to build from" + (f" (only views: {', '.join(views)})" if views else "")
                       + (f" (skipped: {', '.join(skipped)}: virtual or internal)" if skipped else "") + "; give a database with data")
    if not any(t.rows for t in tables):
        raise NewError(f"source {str(path)!r} has tables ({', '.join(t.name for t in tables)}) but no rows in any: nothing to "
                       "build tasks from; give a database with data")
    names = {t.name for t in tables}
    for t in tables:  # a reference to a table we skipped (virtual, internal) is plain data
        for c in t.columns:
            if c.kind == "ref" and c.ref_table not in names:
                c.kind, c.ref_table, c.ref_column = "text", None, None
    _fixture_names(tables)
    return Source(path=Path(path), conn=conn, tables=tables)


_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_RESERVED = ("persona",)
"""Tables a generated world adds (fixtures/persona.py): a source table of that name is renamed (``persona_2``)."""


def _safe(name: str, taken: set[str]) -> str:
    """``name`` if it is a plain identifier, else its snake_case (unique among ``taken``, case-insensitively)."""
    base = name if _IDENT.match(name) and not name.lower().startswith(("sqlite_", "toolgym_")) else snake(name)
    out, n = base, 2
    while out.lower() in taken:
        out, n = f"{base}_{n}", n + 1
    taken.add(out.lower())
    return out


def _fixture_names(tables: list[Table]) -> None:
    """Give tables and columns whose names are not plain identifiers (``"wait list"``, ``"O'Neil"``) fixture names
    in snake_case; the source is still read under the old ones (:meth:`Table.select`)."""
    taken: set[str] = set(_RESERVED)  # the kit's own tables in a world (a persona, verifications) are never a source's
    renamed: dict[str, str] = {}
    columns: dict[tuple[str, str], str] = {}
    for t in tables:
        t.source = t.name
        renamed[t.name] = _safe(t.name, taken)
        seen: set[str] = set()
        for c in t.columns:
            c.source = c.name
            columns[(t.name, c.name)] = _safe(c.name, seen)
    for t in tables:
        for c in t.columns:
            if c.kind == "ref":
                c.ref_column = columns.get((c.ref_table or "", c.ref_column or ""), c.ref_column)
                c.ref_table = renamed[c.ref_table or ""]
        t.key = [columns[(t.name, k)] for k in t.key]
        for c in t.columns:
            c.name = columns[(t.name, c.name)]
        t.name = renamed[t.name]
