"""A generated environment at run time: its fixture, tools and policy, built from its folder's ``spec.json``.

A generated package's ``__init__`` calls :func:`load_generated` with its own folder; nothing else is code. The
tools are typed functions like hand-written ones (names, docstrings, type hints → MCP schemas): per entity
``search_<plural>`` (free-text query, typed filters, pagination, references as filters: foreign-key navigation)
and ``get_<entity>``; per action of the spec one tool that checks every rule before writing and refuses with
the rule's code; ``verify_<entity>`` when the spec has a ``verify`` section; and ``submit_answer``.
"""

from __future__ import annotations

import hashlib
import inspect
import random
import sqlite3
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import sqlite_utils
from pydantic import BaseModel, Field, create_model

from fixtures.fixture import Fixture
from fixtures.money import Amount
from fixtures.search import index_sql, match
from fixtures.persona import PERSONA_SCHEMA
from servers.answer import answer_tool
from servers.environment import Environment, ResourceSpec
from servers.provenance import row_view
from servers.tools import DomainError, ToolContext, tool
from toolgym.new.actions import VERIFICATIONS, action_tool, check_keys, requester_tools, verify_tool
from toolgym.new.errors import NewError
from toolgym.new.rules import parse_rule
from toolgym.new.spec import EntitySpec, FieldSpec, Spec, field_label, load_spec

__all__ = ["load_generated", "GeneratedEnvironment", "VERIFICATIONS", "copy_data"]

_VERIFY_DDL = (f"CREATE TABLE {VERIFICATIONS} (id INTEGER PRIMARY KEY, entity TEXT NOT NULL, key TEXT NOT NULL, "
               "outcome TEXT NOT NULL CHECK (outcome IN ('verified', 'failed')), at TEXT NOT NULL);\n")
_PAGE = 20
_MAX_INT = 2**53
_POOL_BUDGET = 112 * 2**20
"""Bytes of released worlds a generated fixture keeps for reuse (its pool size is this over its data's size)."""


class AnswerReceipt(BaseModel):
    """Acknowledgement of a final answer."""

    received: bool
    submitted_at: str
    value_names: list[str]


def _pascal(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


class GeneratedEnvironment:
    """Everything derived from one package folder: spec, storage types, models, tools, fixture, environment."""

    def __init__(self, folder: Path, module: str) -> None:
        self.folder, self.module = folder, module
        self.spec: Spec = _with_proposals(load_spec(folder / "spec.json"), folder)
        self.data = folder / "data.sqlite"
        if not self.data.exists():
            raise NewError(f"{self.data} is missing: run `toolgym new {self.spec.name} --from SOURCE --out {folder.parent}`")
        conn = sqlite3.connect(f"file:{self.data}?mode=ro", uri=True)
        try:
            self.ddl = "\n".join(r[0] + ";" for r in conn.execute(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type DESC, name"))
            self.int_columns = {(t, r[1]) for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                                for r in conn.execute(f'PRAGMA table_info("{t}")') if "INT" in (r[2] or "").upper()}
        finally:
            conn.close()
        self._search_indexes: dict[str, str] | None = None
        self._check_columns()
        self.rules = {a.name: [(r, parse_rule(r.check)) for r in a.rules] for a in self.spec.actions}
        self._queries: dict[str, Any] = {}
        self.models: dict[str, type[BaseModel]] = {}
        self.summaries: dict[str, type[BaseModel]] = {}
        for ename, entity in self.spec.entities.items():
            self.models[ename] = self._model(ename, entity, summary=False)
            self.summaries[ename] = self._model(ename, entity, summary=True)

    # -- the spec against the data ---------------------------------------------------------------------------
    def _check_columns(self) -> None:
        conn = sqlite3.connect(f"file:{self.data}?mode=ro", uri=True)
        try:
            for ename, e in self.spec.entities.items():
                cols = {r[1] for r in conn.execute(f'PRAGMA table_info("{e.table}")')}
                if not cols:
                    raise NewError(f"spec.json: entity {ename!r} names table {e.table!r}, which data.sqlite does not have")
                for fname, f in e.fields.items():
                    if f.column not in cols:
                        raise NewError(f"spec.json: entities.{ename}.fields.{fname} names column {f.column!r}, which table "
                                       f"{e.table!r} does not have ({', '.join(sorted(cols))})")
            for action in self.spec.actions:
                if action.kind != "create":
                    continue
                e = self.spec.entities[action.entity]
                filled = {e.fields[n].column for n in [*action.fields, *action.set, action.parent or "", e.key or ""] if n in e.fields}
                filled |= {f.column for f in e.fields.values() if f.kind == "date"} | ({e.fields[e.currency].column} if e.currency else set())
                for r in conn.execute(f'PRAGMA table_info("{e.table}")'):
                    if r[3] and r[4] is None and r[1] not in filled and not r[5]:
                        field = next((n for n, f in e.fields.items() if f.column == r[1]), r[1])
                        raise NewError(f"spec.json: action {action.name!r} creates {e.plural} but leaves {field!r} empty, and the "
                                       f"table requires it (NOT NULL): add it to the action's 'fields' (the agent gives it) or "
                                       f"'set' (a fixed value)")
            check_keys(self, conn)
        finally:
            conn.close()

    def is_int(self, entity: EntitySpec, f: FieldSpec) -> bool:
        return (entity.table, f.column) in self.int_columns

    # -- models ---------------------------------------------------------------------------------------------
    def summary_fields(self, entity: EntitySpec) -> list[str]:
        keep = {"key", "ref", "category", "money", "date"}
        return [n for n, f in entity.fields.items() if f.visible and f.kind != "secret" and
                (f.kind in keep or n == entity.natural_key or n in entity.title or n == entity.currency)]

    def _model(self, ename: str, entity: EntitySpec, *, summary: bool) -> type[BaseModel]:
        names = self.summary_fields(entity) if summary else [n for n, f in entity.fields.items() if f.visible and f.kind != "secret"]
        fields: dict[str, Any] = {}
        for n in names:
            f = entity.fields[n]
            typ: Any = int if self.is_int(entity, f) and f.kind in ("key", "ref", "integer") else str
            fields[n] = (typ | None, Field(default=None, description=self._describe(entity, n, f)))
        if any(entity.fields[n].kind == "money" for n in names) and entity.currency is None:
            fields["currency"] = (str, Field(description="Currency of the amounts"))
        if not summary:
            fields["related"] = (dict[str, int], Field(default_factory=dict, description="Rows of other entities that refer to this "
                                                       "one, by entity; list them with that entity's search tool and this id"))
        suffix = "Summary" if summary else ""
        model = create_model(f"{_pascal(ename)}{suffix}", __doc__=f"A {entity.label}{' (summary)' if summary else ''}.", **fields)
        # read provenance (servers/provenance.py): a result showing this model showed the entity's row, field by field
        return row_view(entity.table, entity.key)(model) if entity.key in names else model

    def label(self, entity: EntitySpec, name: str) -> str:
        """The words for a field of ``entity`` (its spec label, else its column in words)."""
        f = entity.fields.get(name)
        return field_label(name, f) if f is not None else name.replace("_", " ")

    def money_text(self, f: FieldSpec, minor: int) -> str:
        """Integer minor units → the decimal string tools show (exact)."""
        return str(Decimal(int(minor)).scaleb(-f.scale).quantize(Decimal(1).scaleb(-f.scale)))

    def _describe(self, entity: EntitySpec, name: str, f: FieldSpec) -> str:
        words = field_label(name, f)
        if f.kind == "money":
            return f"{words.capitalize()}: an amount as a decimal string"
        if f.kind == "ref":
            target = self.spec.entities[f.ref or ""]
            if f.to is not None:
                return f"{words.capitalize()}: the {self.label(target, f.to)} of the {target.label}"
            what = "code" if not self.is_int(target, target.fields[target.key or ""]) else "id"
            return f"{words.capitalize()}: the {what} of the {target.label}"
        if f.kind == "category":
            return f"{words.capitalize()}: one of " + ", ".join(f.values)
        if f.kind == "date":
            return f"{words.capitalize()} (ISO 8601)"
        return words[:1].upper() + words[1:]

    def public(self, ename: str, row: dict[str, Any], *, summary: bool = False, world: Any = None) -> BaseModel:
        entity = self.spec.entities[ename]
        model = (self.summaries if summary else self.models)[ename]
        out: dict[str, Any] = {}
        for n in model.model_fields:
            if n in ("currency", "related") and n not in entity.fields:
                continue
            f = entity.fields[n]
            value = row[f.column]
            if f.kind == "money" and value is not None:
                value = self.money_text(f, value)
            elif value is not None and model.model_fields[n].annotation == (str | None):
                value = str(value)
            out[n] = value
        if "currency" in model.model_fields and "currency" not in entity.fields:
            out["currency"] = self.spec.currency
        if not summary and world is not None and entity.key is not None:
            related = {}
            for cname, child in self.spec.entities.items():
                for f in child.fields.values():
                    if f.kind == "ref" and f.ref == ename:
                        n = world.query(f'SELECT count(*) AS n FROM "{child.table}" WHERE "{f.column}" = ?', (row[self.spec.ref_column(f)],))[0]["n"]
                        if n:
                            related[child.plural] = related.get(child.plural, 0) + n
            out["related"] = related
        return model(**out)

    # -- argument types -------------------------------------------------------------------------------------
    def id_type(self, entity: EntitySpec) -> Any:
        f = entity.fields[entity.key or ""]
        label = entity.label
        if self.is_int(entity, f):
            return Annotated[int, Field(ge=-_MAX_INT, le=_MAX_INT, description=f"Id of the {label}")]
        return Annotated[str, Field(min_length=1, max_length=80, description=f"Id of the {label}")]

    def value_type(self, entity: EntitySpec, name: str) -> Any:
        f = entity.fields[name]
        if f.kind == "ref" and f.to is not None:  # a reference by a code or name: the type of that field
            target = self.spec.entities[f.ref or ""]
            if self.is_int(target, target.fields[f.to]):
                return Annotated[int, Field(ge=-_MAX_INT, le=_MAX_INT, description=f"The {self.label(target, f.to)} of the {target.label}")]
            return Annotated[str, Field(min_length=1, max_length=200, description=f"The {self.label(target, f.to)} of the {target.label}")]
        if f.kind == "ref":
            return self.id_type(self.spec.entities[f.ref or ""])
        if f.kind == "money":
            return Amount
        if f.kind == "category" and f.values:
            return Literal[tuple(f.values)]
        if f.kind in ("integer", "key") and self.is_int(entity, f):
            return Annotated[int, Field(ge=-_MAX_INT, le=_MAX_INT)]
        if f.kind == "date":
            return Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9:.]{5,15})?$", description="ISO 8601 date")]
        return Annotated[str, Field(min_length=1, max_length=500)]

    def stored(self, entity: EntitySpec, name: str, value: Any) -> Any:
        f = entity.fields[name]
        if f.kind == "money" and value is not None:
            return int(Decimal(value).scaleb(f.scale))
        return value

    # -- tools ------------------------------------------------------------------------------------------------
    def tools(self) -> list[Any]:
        found: list[Any] = []
        for ename, entity in self.spec.entities.items():
            found.append(self._search_tool(ename, entity))
            if entity.key is not None:
                found.append(self._get_tool(ename, entity))
        if self.spec.verify is not None:
            found.append(verify_tool(self))
            found += requester_tools(self)
        for action in self.spec.actions:
            found.append(action_tool(self, action))
        found.append(answer_tool(
            outcomes=("completed", "refused"), reason_codes=self.spec.reason_codes(), receipt=AnswerReceipt,
            now=lambda ctx: ctx.clock.now.isoformat(), answer_help="Your final answer, in plain words",
            values_help='Named values the task asks for, as strings, e.g. {"total": "12.50"}',
            description="Give your final answer when the request is done, or cannot be done under the policy. Declare the "
                        "outcome (and, when refusing, the policy rule's reason code); put the values the task asks for in "
                        "`values`. Call it once, last: it changes nothing."))
        return found

    def _search_tool(self, ename: str, entity: EntitySpec) -> Any:
        params: list[tuple[str, Any, Any]] = [("query", Annotated[str | None, Field(max_length=200, description="Words to find in "
                                              "the " + entity.label + "'s text fields (case-insensitive); omit to list all")], None)]
        filters: dict[str, tuple[str, str]] = {}
        for n, f in entity.fields.items():
            if not f.visible:
                continue
            if f.kind == "ref" or (f.kind == "category" and f.values):
                params.append((n, self.value_type(entity, n) | None, None))
                filters[n] = (f.column, "=")
        dates = [n for n, f in entity.fields.items() if f.kind == "date" and f.visible][:2]
        for n in dates:
            day = Annotated[str | None, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", description="YYYY-MM-DD")]
            params += [(f"{n}_from", day, None), (f"{n}_to", day, None)]
            filters[f"{n}_from"] = (entity.fields[n].column, ">=")
            filters[f"{n}_to"] = (entity.fields[n].column, "<=")
        sortable = [n for n, f in entity.fields.items() if f.visible and f.kind in ("date", "money", "integer", "decimal")]
        if sortable:
            params += [("sort", Literal[tuple(sortable)] | None, None),  # type: ignore[misc]
                       ("descending", Annotated[bool, Field(description="Largest or latest first")], False)]
        params += [("limit", Annotated[int, Field(ge=1, le=50)], _PAGE), ("offset", Annotated[int, Field(ge=0, le=1_000_000)], 0)]
        quoted = self.quoted_columns(entity)
        text_cols = self.text_columns(entity)
        index = self.search_indexes().get(ename)
        key_order = f'"{entity.fields[entity.key].column}"' if entity.key else "rowid"
        monies = [n for n in self.summary_fields(entity) if entity.fields[n].kind == "money"]
        summary = self.summaries[ename]
        extra: dict[str, Any] = {}
        if monies:
            extra["sums"] = (dict[str, str], Field(default_factory=dict, description="Each amount field added up over every "
                                                   "matching row (all pages), as a decimal string"))
        page = create_model(f"{_pascal(entity.plural)}Page", __doc__=f"One page of {entity.plural}.",
                            total=(int, Field(description="Rows matching, over all pages")), items=(list[summary], ...),  # type: ignore[valid-type]
                            next_offset=(int | None, Field(default=None, description="Offset of the next page; null on the last")),
                            **extra)

        def query(world: Any, args: dict[str, Any]) -> tuple[Any, list[Any]]:
            where, bound = [], []
            if args.get("query"):
                words = [w for w in str(args["query"]).split() if w][:8]
                found = [m for m in (match(world, index, w) for w in words) if m is not None] if index is not None else []
                if found:  # the trigram index finds every row the LIKEs can match: only those are read
                    where.append(f"rowid IN (SELECT rowid FROM {index} WHERE {index} MATCH ?)")
                    bound.append(" AND ".join(found))
                for w in words:
                    like = "%" + w.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                    where.append("(" + " OR ".join(f'"{c}" LIKE ? ESCAPE \'\\\'' for c in text_cols) + ")" if text_cols else "0")
                    bound += [like] * len(text_cols)
            for name, (column, op) in filters.items():
                if args.get(name) is not None:
                    value = args[name]
                    if op == "<=":
                        value = str(value) + "~"  # the whole last day, whatever time of day it holds
                    where.append(f'"{column}" {op} ?')
                    bound.append(value)
            clause = (" WHERE " + " AND ".join(where)) if where else ""
            heads = ["count(*) AS n", *[f'sum("{entity.fields[m].column}") AS "s_{m}"' for m in monies]]
            head = world.query(f'SELECT {", ".join(heads)} FROM "{entity.table}"{clause}', tuple(bound))[0]
            order = key_order
            if args.get("sort"):
                column = entity.fields[args["sort"]].column
                order = f'"{column}" IS NULL, "{column}" {"DESC" if args.get("descending") else "ASC"}, {key_order}'
            return head, world.query(f'SELECT * FROM "{entity.table}"{clause} ORDER BY {order} LIMIT ? OFFSET ?',
                                     (*bound, args.get("limit", _PAGE), args.get("offset", 0)))

        self._queries[ename] = query

        async def body(ctx: ToolContext, args: dict[str, Any]) -> Any:
            head, rows = query(ctx.world, args)
            total = head["n"]
            items = [self.public(ename, r, summary=True) for r in rows]
            nxt = args["offset"] + len(rows) if args["offset"] + len(rows) < total else None
            more: dict[str, Any] = {}
            if monies:
                more["sums"] = {m: self.money_text(entity.fields[m], head[f"s_{m}"] or 0) for m in monies}
            return page(total=total, items=items, next_offset=nxt, **more)

        refs = ", ".join(n for n in filters if entity.fields.get(n) and entity.fields[n].kind == "ref")
        doc = (f"Find {entity.plural.replace('_', ' ')}: words of their text{' and ' + self.label(entity, entity.natural_key or '') if quoted and entity.natural_key else ''}, exact filters"
               + (f" (references: {refs} — list the {entity.plural.replace('_', ' ')} of one of those)" if refs else "")
               + (", sorted by any of " + ", ".join(sortable) if sortable else "")
               + f", one page at a time ({_PAGE} by default; follow next_offset). Shows a summary of each"
               + (" and the amounts added up over all pages (sums)" if monies else "") + f"; get_{ename} shows everything.")
        return _make(f"search_{entity.plural}", doc, params, page, body)

    def quoted_columns(self, entity: EntitySpec) -> list[str]:
        """Key columns people quote (an order number, a tail number): searched like the text they are."""
        return [entity.fields[n].column for n in (entity.key, entity.natural_key) if n and entity.fields[n].kind in ("key", "text")
                and not self.is_int(entity, entity.fields[n])]

    def text_columns(self, entity: EntitySpec) -> list[str]:
        """The columns a search tool matches its words against: quoted keys, then visible text and title fields."""
        return list(dict.fromkeys([*self.quoted_columns(entity), *[f.column for n, f in entity.fields.items()
                                   if f.visible and (f.kind in ("text", "freetext", "category") or n in entity.title)]]))

    def search_indexes(self) -> dict[str, str]:
        """Entity → the trigram index over its searched text columns (``fixtures/search.py``).

        Only for rowid tables of at least :data:`SEARCH_INDEX_ROWS` rows: a smaller table is read in well under a
        millisecond, and each index costs the template its size in text and every new connection its triggers.
        """
        if self._search_indexes is None:
            conn = sqlite3.connect(f"file:{self.data}?mode=ro", uri=True)
            try:
                plain = {name for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
                         if "WITHOUT ROWID" not in (sql or "").upper()}
                large = {e for e, entity in self.spec.entities.items() if entity.table in plain and conn.execute(
                    f'SELECT count(*) FROM "{entity.table.replace(chr(34), chr(34) * 2)}"').fetchone()[0] >= SEARCH_INDEX_ROWS}
            finally:
                conn.close()
            self._search_indexes = {e: f"search_index_{i}" for i, (e, entity) in enumerate(self.spec.entities.items())
                                    if e in large and self.text_columns(entity)}
        return self._search_indexes

    def _search_ddl(self) -> str:
        """The schema of every search index (kept in step with its table by triggers)."""
        ddl = []
        for ename, index in self.search_indexes().items():
            entity = self.spec.entities[ename]
            texts = {f"t{i}": "{row}." + '"' + column.replace('"', '""') + '"' for i, column in enumerate(self.text_columns(entity))}
            ddl.append(index_sql(index, entity.table, texts))
        return "".join(ddl)

    def search(self, world: Any, ename: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        """The rows ``search_<plural>(**args)`` shows on ``world`` (templates ask what a search they plan shows)."""
        if not self._queries:
            self.tools()
        return [dict(r) for r in self._queries[ename](world, args)[1]]

    def _get_tool(self, ename: str, entity: EntitySpec) -> Any:
        key = entity.key or ""

        async def body(ctx: ToolContext, args: dict[str, Any]) -> Any:
            row = self.row(ctx, ename, args[key])
            return self.public(ename, row, world=ctx.world)

        return _make(f"get_{ename}", f"Show one {entity.label} by its id: every field, and how many rows of other entities refer to it.",
                     [(key, self.id_type(entity), inspect.Parameter.empty)], self.models[ename], body)

    def row(self, ctx: ToolContext, ename: str, key: Any) -> dict[str, Any]:
        entity = self.spec.entities[ename]
        found = ctx.world.query(f'SELECT * FROM "{entity.table}" WHERE "{entity.fields[entity.key or ""].column}" = ?', (key,))
        if not found:
            raise DomainError(f"{ename}_not_found"[:48], f"no {entity.label} with id {key!r}; search_{entity.plural} finds them")
        return dict(found[0])

    # -- fixture and environment ----------------------------------------------------------------------------
    def fixture(self) -> Fixture:
        digest = hashlib.sha256(self.data.read_bytes()).hexdigest()[:16]
        spec_digest = hashlib.sha256((self.folder / "spec.json").read_bytes()).hexdigest()[:16]
        schema = (f"-- data.sqlite {digest}, spec.json {spec_digest}\n{self.ddl}\n{_VERIFY_DDL}\n{self._search_ddl()}"
                  + (PERSONA_SCHEMA if self.spec.verify else ""))
        data = self.data

        def generate(db: sqlite_utils.Database, rng: random.Random, scale: int) -> None:
            copy_data(db, data)

        today = datetime.fromisoformat(self.spec.today)
        # released worlds kept for reuse hold a world's memory each: a big database keeps few (a 55 MB world: 3)
        pool = max(1, min(32, _POOL_BUDGET // max(1, self.data.stat().st_size)))
        return Fixture(name=self.spec.name, schema=schema, generate=generate, today=today, pool_size=pool)

    def environment(self) -> Environment:
        policy = self.folder / "policy.md"
        volatile: dict[str, tuple[str, ...]] = {VERIFICATIONS: ("id",)}
        for a in self.spec.actions:
            for made in ([a.entity] if a.kind == "create" else []) + ([a.refund.record] if a.refund and a.refund.record else []):
                e = self.spec.entities[made]
                volatile[e.table] = (e.fields[e.key or ""].column,)
        return Environment(
            name=self.spec.name,
            description=self.spec.description or f"Generated from {self.spec.name}'s database",
            fixture=self.fixture(),
            tools=self.tools(),
            resources=[ResourceSpec(uri=f"toolgym://{self.spec.name}/policy", name="policy",
                                    description="What the agent may do, and the rules of each action", path=policy)] if policy.exists() else [],
            tasks_module=f"{self.module}.tasks",
            instructions=(f"You work with the {self.spec.name} database through these tools. Read the policy resource first; "
                          "find records with the search tools, act only as the policy allows, and finish with submit_answer."),
            volatile_columns=volatile,
            bookkeeping_rows={VERIFICATIONS: {"outcome": "verified"}},
        )


SEARCH_INDEX_ROWS = 1000
"""Rows from which a generated entity's search goes through a trigram index instead of reading the table."""


def _with_proposals(spec: Spec, folder: Path) -> Spec:
    """``spec`` with the actions a model proposed that are being checked or were kept (toolgym.new.propose); a proposal
    that no longer fits an edited spec is left out (the next ``toolgym new`` reports it)."""
    from toolgym.new.propose import PROPOSALS_FILE, proposed_actions
    from toolgym.new.spec import parse_spec

    extra = proposed_actions(folder)
    if not extra:
        return spec
    data = spec.model_dump(mode="json", exclude_defaults=True)
    data["actions"] = [*data.get("actions", []), *extra]
    try:
        return parse_spec(data, folder / PROPOSALS_FILE)
    except NewError:
        return spec


def copy_data(db: sqlite_utils.Database, data: Path) -> None:
    """Fill the fixture's tables from the package's ``data.sqlite`` (same tables, same columns)."""
    src = sqlite3.connect(f"file:{data}?mode=ro", uri=True)
    try:
        for (table,) in src.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"):
            cur = src.execute(f'SELECT * FROM "{table}"')
            cols = [d[0] for d in cur.description]
            marks = ", ".join("?" for _ in cols)
            db.conn.executemany(f'INSERT INTO "{table}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) VALUES ({marks})', cur)
    finally:
        src.close()


def _make(name: str, doc: str, params: list[tuple[str, Any, Any]], returns: Any, body: Any, *, mutates: bool = False,
          destructive: bool = False, process: bool = False) -> Any:
    """A typed ``async def name(ctx, ...)`` tool whose signature and annotations are ``params``."""

    async def fn(ctx: ToolContext, **kwargs: Any) -> Any:
        return await body(ctx, kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    sig = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=ToolContext)]
    sig += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=a, default=d) for n, a, d in params]
    fn.__signature__ = inspect.Signature(sig, return_annotation=returns)  # type: ignore[attr-defined]
    fn.__annotations__ = {"ctx": ToolContext, **{n: a for n, a, _ in params}, "return": returns}
    return tool(mutates=mutates, destructive=destructive, process=process)(fn)


_LOADED: dict[tuple[str, str], Environment] = {}


def load_generated(folder: str | Path, module: str) -> Environment:
    """The environment of a generated package's folder (built once per process).

    Raises:
        NewError: the spec is invalid or does not fit the data (the message names the field and the fix).
    """
    folder = Path(folder).resolve()
    key = (str(folder), module)
    if key not in _LOADED:
        generated = GeneratedEnvironment(folder, module)
        env = generated.environment()
        env.generated = generated  # type: ignore[attr-defined]
        _LOADED[key] = env
    return _LOADED[key]
