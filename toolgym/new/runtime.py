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
import re
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
from servers.answer import answer_tool
from servers.environment import Environment, ResourceSpec
from servers.provenance import row_view
from servers.tools import DomainError, ToolContext, tool
from toolgym.new.errors import NewError
from toolgym.new.rules import Row, evaluate, parse_rule
from toolgym.new.spec import ActionSpec, EntitySpec, FieldSpec, Spec, load_spec

__all__ = ["load_generated", "GeneratedEnvironment", "VERIFICATIONS"]

VERIFICATIONS = "toolgym_verifications"
"""The table where ``verify_<entity>`` records a verified identity for the rest of the episode."""
_VERIFY_DDL = (f"CREATE TABLE {VERIFICATIONS} (id INTEGER PRIMARY KEY, entity TEXT NOT NULL, key TEXT NOT NULL, "
               "outcome TEXT NOT NULL CHECK (outcome IN ('verified', 'failed')), at TEXT NOT NULL);\n")
_PAGE = 20
_MAX_INT = 2**53


class AnswerReceipt(BaseModel):
    """Acknowledgement of a final answer."""

    received: bool
    submitted_at: str
    value_names: list[str]


class VerifyResult(BaseModel):
    """Whether the details given match the record."""

    verified: bool
    message: str


def _pascal(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


class GeneratedEnvironment:
    """Everything derived from one package folder: spec, storage types, models, tools, fixture, environment."""

    def __init__(self, folder: Path, module: str) -> None:
        self.folder, self.module = folder, module
        self.spec: Spec = load_spec(folder / "spec.json")
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

    def _describe(self, entity: EntitySpec, name: str, f: FieldSpec) -> str:
        if f.kind == "money":
            return "Amount as a decimal string"
        if f.kind == "ref":
            return f"Id of the {self.spec.entities[f.ref or ''].label}"
        if f.kind == "category":
            return "One of: " + ", ".join(f.values)
        if f.kind == "date":
            return "Date (ISO 8601)"
        return name.replace("_", " ").capitalize()

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
                value = str(Decimal(int(value)).scaleb(-f.scale).quantize(Decimal(1).scaleb(-f.scale)))
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
                        n = world.query(f'SELECT count(*) AS n FROM "{child.table}" WHERE "{f.column}" = ?', (row[entity.fields[entity.key].column],))[0]["n"]
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
            found.append(self._verify_tool())
        for action in self.spec.actions:
            found.append(self._action_tool(action))
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
        params += [("limit", Annotated[int, Field(ge=1, le=50)], _PAGE), ("offset", Annotated[int, Field(ge=0, le=1_000_000)], 0)]
        text_cols = _text_columns(entity)
        index = self.search_indexes().get(ename)
        order = f'"{entity.fields[entity.key].column}"' if entity.key else "rowid"
        summary = self.summaries[ename]
        page = create_model(f"{_pascal(entity.plural)}Page", __doc__=f"One page of {entity.plural}.",
                            total=(int, Field(description="Rows matching, over all pages")), items=(list[summary], ...),  # type: ignore[valid-type]
                            next_offset=(int | None, Field(default=None, description="Offset of the next page; null on the last")))

        async def body(ctx: ToolContext, args: dict[str, Any]) -> Any:
            where, bound = [], []
            if args.get("query"):
                words = [w for w in str(args["query"]).split() if w][:8]
                found = [m for m in (match(ctx.world, index, w) for w in words) if m is not None] if index is not None else []
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
            total = ctx.world.query(f'SELECT count(*) AS n FROM "{entity.table}"{clause}', tuple(bound))[0]["n"]
            rows = ctx.world.query(f'SELECT * FROM "{entity.table}"{clause} ORDER BY {order} LIMIT ? OFFSET ?',
                                   (*bound, args["limit"], args["offset"]))
            items = [self.public(ename, r, summary=True) for r in rows]
            nxt = args["offset"] + len(rows) if args["offset"] + len(rows) < total else None
            return page(total=total, items=items, next_offset=nxt)

        refs = ", ".join(n for n in filters if entity.fields.get(n) and entity.fields[n].kind == "ref")
        doc = (f"Find {entity.plural.replace('_', ' ')}: words of their text, exact filters"
               + (f" (references: {refs} — list the {entity.plural.replace('_', ' ')} of one of those)" if refs else "")
               + f", one page at a time ({_PAGE} by default; follow next_offset). Shows a summary of each; "
               + (f"get_{ename} shows everything." if entity.key else "this is all there is."))
        return _make(f"search_{entity.plural}", doc, params, page, body)

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
                                    if e in large and _text_columns(entity)}
        return self._search_indexes

    def _search_ddl(self) -> str:
        """The schema of every search index (kept in step with its table by triggers)."""
        ddl = []
        for ename, index in self.search_indexes().items():
            entity = self.spec.entities[ename]
            texts = {f"t{i}": "{row}." + '"' + column.replace('"', '""') + '"' for i, column in enumerate(_text_columns(entity))}
            ddl.append(index_sql(index, entity.table, texts))
        return "".join(ddl)

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

    def _verify_tool(self) -> Any:
        v = self.spec.verify
        assert v is not None
        entity = self.spec.entities[v.entity]
        key = entity.key or ""
        params = [(key, self.id_type(entity), inspect.Parameter.empty)]
        params += [(n, Annotated[str, Field(min_length=1, max_length=200, description=f"The {n.replace('_', ' ')} the person gives")],
                    inspect.Parameter.empty) for n in v.fields]

        async def body(ctx: ToolContext, args: dict[str, Any]) -> Any:
            row = self.row(ctx, v.entity, args[key])
            ok = all(str(row[entity.fields[n].column] or "").strip().casefold() == str(args[n]).strip().casefold() for n in v.fields)
            # a failed check is recorded too: it is an effect of the call, like a bank's log of failed identity checks
            ctx.world.execute(f"INSERT INTO {VERIFICATIONS} (entity, key, outcome, at) VALUES (?, ?, ?, ?)",
                              (v.entity, str(args[key]), "verified" if ok else "failed", ctx.clock.now.isoformat()))
            if not ok:
                return VerifyResult(verified=False, message="The details do not match the record; the identity is not verified.")
            return VerifyResult(verified=True, message=f"Verified: actions for this {entity.label} are allowed in this conversation.")

        doc = (f"Verify the identity of the {entity.label} you are dealing with: the {', '.join(n.replace('_', ' ') for n in v.fields)} "
               "they give must match the record. Required before the actions the policy names.")
        return _make(f"verify_{v.entity}", doc, params, VerifyResult, body, mutates=True, process=True)

    def owner_key(self, ctx: ToolContext, ename: str, row: dict[str, Any]) -> tuple[str, Any] | None:
        """The verify entity's key reached from ``row`` (itself, or through up to two references)."""
        v = self.spec.verify
        if v is None:
            return None
        frontier = [(ename, row)]
        for _ in range(3):
            nxt = []
            for name, r in frontier:
                e = self.spec.entities[name]
                if name == v.entity:
                    return name, r[e.fields[e.key or ""].column]
                for f in e.fields.values():
                    if f.kind == "ref" and r.get(f.column) is not None:
                        p = self.spec.entities[f.ref or ""]
                        if p.key is None:
                            continue
                        found = ctx.world.query(f'SELECT * FROM "{p.table}" WHERE "{p.fields[p.key].column}" = ?', (r[f.column],))
                        if found:
                            nxt.append((f.ref or "", dict(found[0])))
            frontier = nxt
        return None

    def _action_tool(self, action: ActionSpec) -> Any:
        entity = self.spec.entities[action.entity]
        key = entity.key or ""
        params: list[tuple[str, Any, Any]] = []
        if action.kind == "create":
            pfield = entity.fields[action.parent or ""]
            parent_name = pfield.ref or ""
            parent = self.spec.entities[parent_name]
            params.append((action.parent or "", self.id_type(parent), inspect.Parameter.empty))
            params += [(n, self.value_type(entity, n), inspect.Parameter.empty) for n in action.fields if n != action.parent]
        else:
            params.append((key, self.id_type(entity), inspect.Parameter.empty))
            if action.kind == "update":
                params += [(n, self.value_type(entity, n) | None, None) for n in action.fields]
        rules = self.rules[action.name]

        async def body(ctx: ToolContext, args: dict[str, Any]) -> Any:
            scope: dict[str, Any] = {"today": ctx.clock.today.isoformat()}
            if action.kind == "create":
                prow = self.row(ctx, parent_name, args[action.parent or ""])
                scope[parent_name] = Row(self.spec, parent_name, prow, ctx.world)
                subject_name, subject = parent_name, prow
            else:
                row = self.row(ctx, action.entity, args[key])
                scope[action.entity] = Row(self.spec, action.entity, row, ctx.world)
                subject_name, subject = action.entity, row
            given = {n: args.get(n) for n in action.fields if n in args}
            if action.kind == "update" and not any(v is not None for v in given.values()):
                raise DomainError("nothing_to_change", f"give at least one of {', '.join(action.fields)}")
            for n, value in given.items():
                f = entity.fields[n]
                scope[n] = Decimal(value) if f.kind == "money" and value is not None else value
                if f.kind == "money" and value is not None and Decimal(value) <= 0:
                    raise DomainError("invalid_amount", "the amount must be positive")
            if action.requires_verified:
                owner = self.owner_key(ctx, subject_name, subject)
                if owner is None or not ctx.world.query(f"SELECT 1 FROM {VERIFICATIONS} WHERE entity = ? AND key = ? AND outcome = 'verified'",
                                                        (owner[0], str(owner[1]))):
                    raise DomainError("identity_not_verified", f"verify the {self.spec.verify.entity.replace('_', ' ')}'s "  # type: ignore[union-attr]
                                      f"identity first (verify_{self.spec.verify.entity})")  # type: ignore[union-attr]
            for rule, tree in rules:
                if not evaluate(tree, self.spec, scope):
                    raise DomainError(rule.code, rule.message)
            table = f'"{entity.table}"'
            if action.kind == "transition":
                f = entity.fields[action.field or ""]
                if row[f.column] == action.to:
                    raise DomainError("no_change", f"the {entity.label} is already {action.to}; nothing was changed")
                ctx.world.execute(f'UPDATE {table} SET "{f.column}" = ? WHERE "{entity.fields[key].column}" = ?', (action.to, args[key]))
                return self.public(action.entity, self.row(ctx, action.entity, args[key]), world=ctx.world)
            if action.kind == "update":
                sets = [(entity.fields[n].column, self.stored(entity, n, v)) for n, v in given.items() if v is not None]
                if all(row[c] == v for c, v in sets):
                    raise DomainError("no_change", f"the {entity.label} already has these values; nothing was changed")
                ctx.world.execute(f'UPDATE {table} SET ' + ", ".join(f'"{c}" = ?' for c, _ in sets) + f' WHERE "{entity.fields[key].column}" = ?',
                                  (*[v for _, v in sets], args[key]))
                return self.public(action.entity, self.row(ctx, action.entity, args[key]), world=ctx.world)
            values: dict[str, Any] = {entity.fields[action.parent or ""].column: args[action.parent or ""]}
            for n, v in given.items():
                values[entity.fields[n].column] = self.stored(entity, n, v)
            for n, v in action.set.items():
                values[entity.fields[n].column] = ctx.clock.today.isoformat() if v == "today" else v
            for n, f in entity.fields.items():
                if f.kind == "date" and f.column not in values:
                    values[f.column] = ctx.clock.today.isoformat()
                if f.kind == "money" and f.column not in values and entity.currency is None:
                    pass
            if entity.currency and entity.fields[entity.currency].column not in values:
                pcur = self.spec.entities[parent_name].currency
                values[entity.fields[entity.currency].column] = prow[self.spec.entities[parent_name].fields[pcur].column] if pcur else self.spec.currency
            new_key = self.next_key(ctx, entity)
            values[entity.fields[key].column] = new_key
            cols = ", ".join(f'"{c}"' for c in values)
            ctx.world.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' for _ in values)})", tuple(values.values()))
            return self.public(action.entity, self.row(ctx, action.entity, new_key), world=ctx.world)

        rules_text = "; ".join(r.message for r, _ in rules)
        doc = (action.description or f"{action.name.replace('_', ' ').capitalize()}.") + (
            f" Refused (with a reason code, changing nothing) unless: {rules_text}" if rules_text else "") + (
            " The identity must be verified first." if action.requires_verified else "")
        returns = self.models[action.entity]
        return _make(action.name, doc, params, returns, body, mutates=True, destructive=action.kind == "transition")

    def next_key(self, ctx: ToolContext, entity: EntitySpec) -> Any:
        """The next id of ``entity``: after the largest, skipping a seed-dependent gap in a task world (fixtures/ids.py)."""
        column = entity.fields[entity.key or ""].column
        prefix, width = "", 0
        if self.is_int(entity, entity.fields[entity.key or ""]):
            last = ctx.world.query(f'SELECT max("{column}") AS m FROM "{entity.table}"')[0]["m"] or 0
        else:  # PREFIX-000123 ids continue their sequence, as fixtures/ids.py mints them
            top = ctx.world.query(f'SELECT "{column}" AS m FROM "{entity.table}" ORDER BY length("{column}") DESC, "{column}" DESC LIMIT 1')
            found = re.fullmatch(r"([A-Za-z]+-)([0-9]+)", str(top[0]["m"])) if top else None
            if found is None:
                raise DomainError("not_supported", f"{entity.label} ids are not numbered (PREFIX-123); new rows cannot be numbered")
            prefix, width, last = found.group(1), len(found.group(2)), int(found.group(2))
        salt = getattr(ctx.world, "id_salt", None)
        if salt is not None:
            floors = ctx.world.id_floors
            if entity.table not in floors:
                floors[entity.table] = last + random.Random(f"{salt}:{entity.table}").randint(1, 5_000)
            last = max(last, floors[entity.table])
        return f"{prefix}{last + 1:0{width}d}" if prefix else last + 1

    # -- fixture and environment ----------------------------------------------------------------------------
    def fixture(self) -> Fixture:
        digest = hashlib.sha256(self.data.read_bytes()).hexdigest()[:16]
        spec_digest = hashlib.sha256((self.folder / "spec.json").read_bytes()).hexdigest()[:16]
        schema = f"-- data.sqlite {digest}, spec.json {spec_digest}\n{self.ddl}\n{_VERIFY_DDL}\n{self._search_ddl()}"
        data = self.data

        def generate(db: sqlite_utils.Database, rng: random.Random, scale: int) -> None:
            copy_data(db, data)

        today = datetime.fromisoformat(self.spec.today)
        return Fixture(name=self.spec.name, schema=schema, generate=generate, today=today)

    def environment(self) -> Environment:
        policy = self.folder / "policy.md"
        volatile: dict[str, tuple[str, ...]] = {VERIFICATIONS: ("id",)}
        for a in self.spec.actions:
            if a.kind == "create":
                e = self.spec.entities[a.entity]
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


def _text_columns(entity: EntitySpec) -> list[str]:
    """The columns a search tool matches its words against."""
    return [f.column for f in entity.fields.values() if f.visible and f.kind in ("text", "freetext", "category")]


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
