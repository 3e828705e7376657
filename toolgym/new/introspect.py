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
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from toolgym.new.errors import NewError

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
    """``InvoiceLine`` / ``invoice-line`` / ``Invoice Line`` → ``invoice_line``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", text)
    text = re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()
    if not text or not text[0].isalpha():
        text = "t_" + text
    return text


def singular(word: str) -> str:
    """A table name's singular (``customers`` → ``customer``, ``categories`` → ``category``)."""
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


def _csv_value(text: str) -> object:
    if text == "":
        return None
    if re.fullmatch(r"-?[0-9]{1,18}", text):
        return int(text)
    return text


def _json_value(value: object) -> object:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return str(Decimal(str(value)))  # decimal text: money is read from it exactly, never as a float
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _read_table_file(file: Path) -> tuple[list[str], list[list[object]]]:
    """Header and rows of a CSV file (header row first) or a JSON file (a list of objects)."""
    if file.suffix == ".json":
        try:
            items = json.loads(file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise NewError(f"{file}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise NewError(f"{file}: a JSON table is a list of objects, one per row")
        keys = list(dict.fromkeys(k for item in items for k in item))
        return [snake(k) for k in keys], [[_json_value(item.get(k)) for k in keys] for item in items]
    with file.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        try:
            header = [snake(h) for h in next(reader)]
        except StopIteration:
            raise NewError(f"{file}: empty CSV file (a header row is needed)") from None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise NewError(f"{file}: not a readable CSV file ({exc})") from None
        rows = []
        try:
            for row in reader:
                if len(row) > len(header):
                    raise NewError(f"{file}, line {reader.line_num}: {len(row)} cells where the header names {len(header)} "
                                   "columns; remove the extra cells, or quote a value that holds a comma")
                if row:
                    rows.append([_csv_value(v) for v in row])
        except (csv.Error, UnicodeDecodeError) as exc:
            raise NewError(f"{file}, line {reader.line_num}: not readable as CSV ({exc})") from None
        return header, rows


def _load_csv_folder(folder: Path) -> sqlite3.Connection:
    files = sorted([*folder.glob("*.csv"), *folder.glob("*.json")])
    if not files:
        raise NewError(f"folder {str(folder)!r} holds no .csv or .json file; give one file per table (CSV with a header "
                       "row, or JSON: a list of objects)")
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    names = {snake(f.stem) for f in files}
    for file in files:
        header, body = _read_table_file(file)
        table = snake(file.stem)
        key = next((h for h in header if h in ("id", f"{singular(table)}_id")), None)
        defs = []
        for h in header:
            typ = "INTEGER" if all(isinstance(r[header.index(h)], int) or r[header.index(h)] is None for r in body) else "TEXT"
            line = f'"{h}" {typ}'
            if h == key and len({r[header.index(h)] for r in body}) == len(body):
                line += " PRIMARY KEY"
            elif h.endswith("_id") and h != key:
                target = next((n for n in names if singular(n) == h[:-3] or n == h[:-3]), None)
                if target is not None:
                    line += f' REFERENCES "{target}"'
            defs.append(line)
        conn.execute(f'CREATE TABLE "{table}" ({", ".join(defs)})')
        marks = ", ".join("?" for _ in header)
        conn.executemany(f'INSERT INTO "{table}" VALUES ({marks})', [r + [None] * (len(header) - len(r)) for r in body])
    # foreign keys named after a table whose key is not 'id' were declared without a column: fill it in
    return conn


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
    return col


def read_source(path: str | Path) -> Source:
    """Open and describe every content table of ``path`` (virtual/FTS tables and internal ``_`` tables are skipped).

    Raises:
        NewError: the source cannot be read or has no table.
    """
    conn = open_source(path)
    try:
        return _describe_source(path, conn)
    except sqlite3.DatabaseError as exc:  # damage quick_check did not see: still one line, never a traceback
        raise NewError(f"source {str(path)!r} cannot be read as SQLite: {exc}; repair it first (sqlite3 SOURCE .recover)") from None


def _describe_source(path: str | Path, conn: sqlite3.Connection) -> Source:
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
            if tcol is None:
                tkey = [r["name"] for r in conn.execute(f'PRAGMA table_info("{target}")') if r["pk"] > 0]
                tcol = tkey[0] if len(tkey) == 1 else "id"
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
    taken: set[str] = set()
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
