"""The tools that change a generated world: one per action of the spec, ``verify_<entity>``, and the requester's.

Every action checks each of its rules before writing and refuses with the rule's code (writing nothing). Kinds:
``transition`` (a status, plus fields the agent gives such as a cancellation reason), ``update`` (named fields),
``create`` (a child row) and ``children`` (some children of a row: each chosen child gets ``set``, the row gets
``parent_set``). A ``refund`` moves money in exact minor units: the sum of the chosen rows' money field is paid to a
row the agent names — its balance grows when it has one — and a record row is added. Rules of ``children`` actions
hold for every chosen child (each in scope by its entity name); a refund's target row is in scope by its entity name.

When the spec names who verifies (``verify``), the person a task is for can be on the line: ``ask_requester``
answers from what they know (their own details, what the task says) and ``confirm_action`` tells whether they agree
(fixtures/persona.py); graders read both from the record.
"""

from __future__ import annotations

import inspect
import random
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from fixtures.persona import CustomerAnswer, CustomerResponse, Persona, ask, load_persona, propose
from servers.tools import DomainError, ToolContext
from toolgym.new.rules import Row, evaluate, load_row

if TYPE_CHECKING:
    from toolgym.new.runtime import GeneratedEnvironment
    from toolgym.new.spec import ActionSpec, EntitySpec

__all__ = ["action_tool", "verify_tool", "requester_tools", "next_key", "owner_key", "VERIFICATIONS", "topics", "check_keys"]

VERIFICATIONS = "toolgym_verifications"
"""The table where ``verify_<entity>`` records a verified identity for the rest of the episode."""
_MAX_CHILDREN = 20


class VerifyResult(BaseModel):
    """Whether the details given match the record."""

    verified: bool
    message: str


def owner_key(gen: GeneratedEnvironment, world: Any, ename: str, row: dict[str, Any]) -> tuple[str, Any] | None:
    """The verify entity's key reached from ``row`` (itself, or through up to two references)."""
    v = gen.spec.verify
    if v is None:
        return None
    frontier = [(ename, row)]
    for _ in range(3):
        nxt = []
        for name, r in frontier:
            e = gen.spec.entities[name]
            if name == v.entity:
                return name, r[e.fields[e.key or ""].column]
            for f in e.fields.values():
                if f.kind == "ref" and r.get(f.column) is not None and f.ref != name:
                    p = gen.spec.entities[f.ref or ""]
                    if p.key is None:
                        continue
                    found = world.query(f'SELECT * FROM "{p.table}" WHERE "{p.fields[p.key].column}" = ?', (r[f.column],))
                    if found:
                        nxt.append((f.ref or "", dict(found[0])))
        frontier = nxt
    return None


def verify_tool(gen: GeneratedEnvironment) -> Any:
    """``verify_<entity>``: the details the person gives (one whole group of the spec's ``verify``) must match."""
    from toolgym.new.runtime import _make

    v = gen.spec.verify
    assert v is not None
    entity = gen.spec.entities[v.entity]
    key = entity.key or ""
    groups = v.groups()
    params = [(key, gen.id_type(entity), inspect.Parameter.empty)]
    params += [(n, Annotated[str | None, Field(max_length=200, description=f"The {gen.label(entity, n)} the person gives")], None)
               for n in v.every_field()]

    async def body(ctx: ToolContext, args: dict[str, Any]) -> Any:
        row = gen.row(ctx, v.entity, args[key])
        given = {n: args[n] for n in v.every_field() if args.get(n) not in (None, "")}
        if not any(all(n in given for n in g) for g in groups):
            raise DomainError("details_missing", "give one whole set of details: " + "; or ".join(", ".join(g) for g in groups))
        ok = all(str(row[entity.fields[n].column] or "").strip().casefold() == str(value).strip().casefold() for n, value in given.items())
        # a failed check is recorded too: it is an effect of the call, like a bank's log of failed identity checks
        ctx.world.execute(f"INSERT INTO {VERIFICATIONS} (entity, key, outcome, at) VALUES (?, ?, ?, ?)",
                          (v.entity, str(args[key]), "verified" if ok else "failed", ctx.clock.now.isoformat()))
        if not ok:
            return VerifyResult(verified=False, message="The details do not match the record; the identity is not verified.")
        return VerifyResult(verified=True, message=f"Verified: actions for this {entity.label} are allowed in this conversation.")

    ways = " or ".join(", ".join(gen.label(entity, n) for n in g) for g in groups)
    doc = (f"Verify the identity of the {entity.label} you are dealing with: the details they give ({ways}) must match the "
           "record; every detail given must match. Required before the actions the policy names.")
    return _make(f"verify_{v.entity}", doc, params, VerifyResult, body, mutates=True, process=True)


def topics(gen: GeneratedEnvironment) -> list[str]:
    """What the requester can be asked about: their verification details, the identifier of the row they mean, and
    the arguments of the actions they may request."""
    v = gen.spec.verify
    assert v is not None
    out = list(v.every_field())
    for a in gen.spec.actions:
        subject = gen.spec.entities[gen.spec.subject(a)]
        out.append(subject.natural_key or subject.key or "")
        out += [f"new_{n}" if a.kind == "update" else n for n in a.fields if n != a.parent]
        if a.kind == "children":
            out.append("which_items")
        if a.refund is not None:
            out.append(f"{a.refund.to}_id")
    return [t for t in dict.fromkeys(out) if t]


def requester_tools(gen: GeneratedEnvironment) -> list[Any]:
    """``ask_requester`` and ``confirm_action``: the person the task is for, on the line (fixtures/persona.py)."""
    from toolgym.new.runtime import _make

    v = gen.spec.verify
    assert v is not None
    person = gen.spec.entities[v.entity].label
    names = tuple(a.name for a in gen.spec.actions) or ("none",)

    def persona(ctx: ToolContext) -> Persona:
        found = load_persona(ctx.world)
        if found is None:
            raise DomainError("no_requester", f"no {person} is on the line in this episode (free play): there is nobody to ask")
        return found

    async def ask_body(ctx: ToolContext, args: dict[str, Any]) -> Any:
        return ask(persona(ctx), args["topic"])

    async def confirm_body(ctx: ToolContext, args: dict[str, Any]) -> Any:
        return propose(persona(ctx), args["action"], None).model_copy(update={"amount": None})

    ask_tool = _make("ask_requester", f"Ask the {person} you are helping for one piece of information (their details for "
                     "verification, which record they mean, what they want done). They tell you only what they know.",
                     [("topic", Literal[tuple(topics(gen))], inspect.Parameter.empty)], CustomerAnswer, ask_body)  # type: ignore[misc]
    confirm = _make("confirm_action", f"Tell the {person} which action you are about to take (and on what) and hear whether "
                    "they agree. Get their agreement before every action the policy says needs it; if they decline, do not act.",
                    [("action", Literal[names], inspect.Parameter.empty),  # type: ignore[misc]
                     ("about", Annotated[str, Field(min_length=1, max_length=200, description="The record it is about, as you "
                                                   "would name it to them (an order number, a title)")], inspect.Parameter.empty)],
                    CustomerResponse, confirm_body)
    return [ask_tool, confirm]


def _scope(gen: GeneratedEnvironment, ctx: ToolContext, action: ActionSpec, subject_name: str, subject: dict[str, Any],
           args: dict[str, Any]) -> dict[str, Any]:
    entity = gen.spec.entities[action.entity]
    scope: dict[str, Any] = {"today": ctx.clock.today.isoformat(), subject_name: Row(gen.spec, subject_name, subject, ctx.world)}
    for n in action.fields:
        if n in args and args[n] is not None:
            f = entity.fields[n] if n in entity.fields else gen.spec.entities[subject_name].fields[n]
            scope[n] = Decimal(args[n]) if f.kind == "money" else args[n]
    if action.refund is not None:
        to = action.refund.to
        scope[f"{to}_id"] = args[f"{to}_id"]
        scope[to] = Row(gen.spec, to, gen.row(ctx, to, args[f"{to}_id"]), ctx.world)
    return scope


def _check(gen: GeneratedEnvironment, action: ActionSpec, scope: dict[str, Any]) -> None:
    for rule, tree in gen.rules[action.name]:
        if not evaluate(tree, gen.spec, scope):
            raise DomainError(rule.code, rule.message)


def _refund(gen: GeneratedEnvironment, ctx: ToolContext, action: ActionSpec, subject_name: str, subject: dict[str, Any],
            minor: int, args: dict[str, Any]) -> None:
    """Pay ``minor`` (exact minor units) to the row the agent named: its balance grows, a record row is added."""
    r = action.refund
    assert r is not None
    to = gen.spec.entities[r.to]
    tkey = args[f"{r.to}_id"]
    target = gen.row(ctx, r.to, tkey)
    if r.balance is not None and target[to.fields[r.balance].column] is not None:
        column = to.fields[r.balance].column
        ctx.world.execute(f'UPDATE "{to.table}" SET "{column}" = "{column}" + ? WHERE "{to.fields[to.key or ""].column}" = ?', (minor, tkey))
    if r.record is None:
        return
    rec = gen.spec.entities[r.record]
    se = gen.spec.entities[subject_name]
    values: dict[str, Any] = {}
    for n, f in rec.fields.items():
        if f.kind == "ref" and f.ref == subject_name and f.column not in values:
            values[f.column] = subject[se.fields[se.key or ""].column]
        elif f.kind == "ref" and f.ref == r.to and f.column not in values:
            values[f.column] = tkey
        elif f.kind == "money" and not any(g.kind == "money" and g.column in values for g in rec.fields.values()):
            values[f.column] = minor
        elif f.kind == "date":
            values[f.column] = ctx.clock.today.isoformat()
    for n, v in r.record_set.items():
        values[rec.fields[n].column] = v
    if rec.key != "row_id" or gen.is_int(rec, rec.fields[rec.key or ""]):
        values.setdefault(rec.fields[rec.key or ""].column, next_key(gen, ctx, rec))
    for n, f in rec.fields.items():  # a line number within the row (payments keyed by order and seq): the next one
        if f.kind == "integer" and f.column not in values and re.search(r"(seq|line|number|no)$", n):
            link = next(g for g in rec.fields.values() if g.kind == "ref" and g.ref == subject_name)
            top = ctx.world.query(f'SELECT max("{f.column}") AS m FROM "{rec.table}" WHERE "{link.column}" = ?', (values[link.column],))
            values[f.column] = (top[0]["m"] or 0) + 1
    cols = ", ".join(f'"{c}"' for c in values)
    ctx.world.execute(f'INSERT INTO "{rec.table}" ({cols}) VALUES ({", ".join("?" for _ in values)})', tuple(values.values()))


def action_tool(gen: GeneratedEnvironment, action: ActionSpec) -> Any:
    """The tool of one action: arguments typed from the spec, every rule checked before anything is written."""
    from toolgym.new.runtime import _make

    entity = gen.spec.entities[action.entity]
    key = entity.key or ""
    subject_name = gen.spec.subject(action)
    subject_entity = gen.spec.entities[subject_name]
    params: list[tuple[str, Any, Any]] = []
    if action.kind == "create":
        params.append((action.parent or "", gen.id_type(subject_entity), inspect.Parameter.empty))
        params += [(n, gen.value_type(entity, n), inspect.Parameter.empty) for n in action.fields if n != action.parent]
    elif action.kind == "children":
        params.append((subject_entity.key or "", gen.id_type(subject_entity), inspect.Parameter.empty))
        params.append((f"{entity.key}s", Annotated[list[gen.id_type(entity)], Field(min_length=1, max_length=_MAX_CHILDREN,  # type: ignore[misc]
                       description=f"Ids of the {entity.plural.replace('_', ' ')} to act on, each once")], inspect.Parameter.empty))
        if action.replace:  # an exchange: each chosen child gets another row of what it refers to
            target = gen.spec.entities[entity.fields[action.replace].ref or ""]
            params.append((f"new_{action.replace}s", Annotated[list[gen.value_type(entity, action.replace)], Field(  # type: ignore[misc]
                min_length=1, max_length=_MAX_CHILDREN, description=f"For each id in {entity.key}s, in the same order: the "
                f"{target.label} it is exchanged for")], inspect.Parameter.empty))
    else:
        params.append((key, gen.id_type(entity), inspect.Parameter.empty))
        if action.kind == "update":
            params += [(n, gen.value_type(entity, n) | None, None) for n in action.fields]
        elif action.fields:
            params += [(n, gen.value_type(entity, n), inspect.Parameter.empty) for n in action.fields]
    if action.refund is not None:
        params.append((f"{action.refund.to}_id", gen.id_type(gen.spec.entities[action.refund.to]), inspect.Parameter.empty))

    async def body(ctx: ToolContext, args: dict[str, Any]) -> Any:
        if action.kind == "create":
            subject = gen.row(ctx, subject_name, args[action.parent or ""])
        elif action.kind == "children":
            subject = gen.row(ctx, subject_name, args[subject_entity.key or ""])
        else:
            subject = gen.row(ctx, action.entity, args[key])
        given = {n: args.get(n) for n in action.fields if n in args}
        if action.kind == "update" and not any(v is not None for v in given.values()):
            raise DomainError("nothing_to_change", f"give at least one of {', '.join(action.fields)}")
        for n, value in given.items():
            if entity.fields[n].kind == "money" and value is not None and Decimal(value) <= 0:
                raise DomainError("invalid_amount", "the amount must be positive")
        if action.requires_verified:
            owner = owner_key(gen, ctx.world, subject_name, subject)
            if owner is None or not ctx.world.query(f"SELECT 1 FROM {VERIFICATIONS} WHERE entity = ? AND key = ? AND outcome = 'verified'",
                                                    (owner[0], str(owner[1]))):
                v = gen.spec.verify
                raise DomainError("identity_not_verified", f"verify the {v.entity.replace('_', ' ')}'s identity first (verify_{v.entity})")  # type: ignore[union-attr]
        scope = _scope(gen, ctx, action, subject_name, subject, args)
        table = f'"{entity.table}"'
        if action.kind == "children":
            return _children(gen, ctx, action, subject_name, subject, scope, args)
        _check(gen, action, scope)
        if action.kind == "transition":
            f = entity.fields[action.field or ""]
            if subject[f.column] == action.to:
                raise DomainError("no_change", f"the {entity.label} is already {action.to}; nothing was changed")
            sets = [(f.column, action.to), *[(entity.fields[n].column, gen.stored(entity, n, v)) for n, v in given.items()]]
            ctx.world.execute(f'UPDATE {table} SET ' + ", ".join(f'"{c}" = ?' for c, _ in sets) + f' WHERE "{entity.fields[key].column}" = ?',
                              (*[v for _, v in sets], args[key]))
            if action.refund is not None:
                plural, _, fname = action.refund.amount.partition(".")
                child = next(n for n, e in gen.spec.entities.items() if e.plural == plural)
                ce = gen.spec.entities[child]
                link = next(g for g in ce.fields.values() if g.kind == "ref" and g.ref == action.entity)
                paid = ctx.world.query(f'SELECT coalesce(sum("{ce.fields[fname].column}"), 0) AS s FROM "{ce.table}" WHERE "{link.column}" = ?',
                                       (args[key],))[0]["s"]
                _refund(gen, ctx, action, action.entity, subject, int(paid), args)
            return gen.public(action.entity, gen.row(ctx, action.entity, args[key]), world=ctx.world)
        if action.kind == "update":
            sets = [(entity.fields[n].column, gen.stored(entity, n, v)) for n, v in given.items() if v is not None]
            if all(subject[c] == v for c, v in sets):
                raise DomainError("no_change", f"the {entity.label} already has these values; nothing was changed")
            ctx.world.execute(f'UPDATE {table} SET ' + ", ".join(f'"{c}" = ?' for c, _ in sets) + f' WHERE "{entity.fields[key].column}" = ?',
                              (*[v for _, v in sets], args[key]))
            return gen.public(action.entity, gen.row(ctx, action.entity, args[key]), world=ctx.world)
        values: dict[str, Any] = {entity.fields[action.parent or ""].column: args[action.parent or ""]}
        for n, v in given.items():
            values[entity.fields[n].column] = gen.stored(entity, n, v)
        for n, v in action.set.items():
            values[entity.fields[n].column] = ctx.clock.today.isoformat() if v == "today" else v
        for n, v in given.items():  # a row referred to gives the new row its copies (an invoice line's price is the track's)
            f = entity.fields[n]
            if f.kind != "ref" or v is None:
                continue
            referred = load_row(gen.spec, ctx.world, f.ref or "", v, by=f.to)
            if referred is None:
                target = gen.spec.entities[f.ref or ""]
                raise DomainError(f"{f.ref}_not_found"[:48], f"no {target.label} with id {v!r}; search_{target.plural} finds them")
            target = gen.spec.entities[f.ref or ""]
            for m, g in entity.fields.items():
                other = target.fields.get(m)
                if other is not None and other.kind == g.kind and g.kind not in ("key", "ref") and g.column not in values:
                    values[g.column] = referred.data[other.column]
        for f in entity.fields.values():
            if f.kind == "date" and f.column not in values:
                values[f.column] = ctx.clock.today.isoformat()
        if entity.currency and entity.fields[entity.currency].column not in values:
            pcur = subject_entity.currency
            values[entity.fields[entity.currency].column] = subject[subject_entity.fields[pcur].column] if pcur else gen.spec.currency
        new_key = next_key(gen, ctx, entity)
        values[entity.fields[key].column] = new_key
        cols = ", ".join(f'"{c}"' for c in values)
        ctx.world.execute(f"INSERT INTO {table} ({cols}) VALUES ({', '.join('?' for _ in values)})", tuple(values.values()))
        return gen.public(action.entity, gen.row(ctx, action.entity, new_key), world=ctx.world)

    rules_text = "; ".join(r.message for r, _ in gen.rules[action.name])
    doc = (action.description or f"{action.name.replace('_', ' ').capitalize()}.") + (
        f" Refused (with a reason code, changing nothing) unless: {rules_text}" if rules_text else "") + (
        " The identity must be verified first." if action.requires_verified else "") + (
        f" Refunds {action.refund.amount.replace('_', ' ')} to the {gen.spec.entities[action.refund.to].label} given." if action.refund else "")
    returns = gen.models[subject_name if action.kind == "children" else action.entity]
    return _make(action.name, doc, params, returns, body, mutates=True, destructive=action.kind in ("transition", "children"))


def _children(gen: GeneratedEnvironment, ctx: ToolContext, action: ActionSpec, subject_name: str, subject: dict[str, Any],
              scope: dict[str, Any], args: dict[str, Any]) -> Any:
    """Act on the chosen children of the row: every one must belong to it and pass every rule, else nothing changes."""
    entity = gen.spec.entities[action.entity]
    se = gen.spec.entities[subject_name]
    ids = args[f"{entity.key}s"]
    if len(set(map(str, ids))) != len(ids):
        raise DomainError("repeated_item", f"each {entity.label} may be named once")
    link = entity.fields[action.parent or ""]
    chosen = []
    for cid in ids:
        child = gen.row(ctx, action.entity, cid)
        if str(child[link.column]) != str(subject[gen.spec.ref_column(link)]):
            raise DomainError(f"{action.entity}_not_in_{subject_name}"[:48], f"{entity.label} {cid!r} does not belong to this {se.label}")
        chosen.append(child)
    replacements = _replacements(gen, ctx, action, chosen, args)
    for child, new in zip(chosen, replacements, strict=True):
        extra = {} if new is None else {f"new_{new.entity}": new}
        _check(gen, action, {**scope, action.entity: Row(gen.spec, action.entity, child, ctx.world), **extra})
    keycol = entity.fields[entity.key or ""].column
    sets = [(entity.fields[n].column, v) for n, v in action.set.items()]
    if sets and not action.replace and all(all(c[col] == v for col, v in sets) for c in chosen):
        raise DomainError("no_change", f"the {entity.plural.replace('_', ' ')} already have these values; nothing was changed")
    planned = [list(sets) + (_follow(gen, action, new) if new is not None else []) for new in replacements]
    minor = 0
    if action.refund is not None:
        money = entity.fields[action.refund.amount].column
        if action.replace:  # an exchange settles the difference: what was paid less what the new rows cost
            minor = sum(int(c[money] or 0) - int(dict(p).get(money, c[money]) or 0) for c, p in zip(chosen, planned, strict=True))
        else:
            minor = sum(int(c[money] or 0) for c in chosen)
        _check_balance(gen, ctx, action, minor, args)
    for child, changes in zip(chosen, planned, strict=True):
        if changes:
            ctx.world.execute(f'UPDATE "{entity.table}" SET ' + ", ".join(f'"{c}" = ?' for c, _ in changes) + f' WHERE "{keycol}" = ?',
                              (*[v for _, v in changes], child[keycol]))
    if action.parent_set:
        psets = [(se.fields[n].column, v) for n, v in action.parent_set.items()]
        ctx.world.execute(f'UPDATE "{se.table}" SET ' + ", ".join(f'"{c}" = ?' for c, _ in psets) + f' WHERE "{se.fields[se.key or ""].column}" = ?',
                          (*[v for _, v in psets], subject[se.fields[se.key or ""].column]))
    if action.refund is not None and minor:
        _refund(gen, ctx, action, subject_name, subject, minor, args)
    return gen.public(subject_name, gen.row(ctx, subject_name, subject[se.fields[se.key or ""].column]), world=ctx.world)


def _check_balance(gen: GeneratedEnvironment, ctx: ToolContext, action: ActionSpec, minor: int, args: dict[str, Any]) -> None:
    """A difference the person owes (an exchange for dearer rows) is taken from the balance named: it must cover it."""
    r = action.refund
    if r is None or minor >= 0 or r.balance is None:
        return
    to = gen.spec.entities[r.to]
    balance = gen.row(ctx, r.to, args[f"{r.to}_id"])[to.fields[r.balance].column]
    if balance is not None and int(balance) + minor < 0:
        raise DomainError("insufficient_balance", f"the {to.label}'s {r.balance} does not cover the difference of "
                                                  f"{gen.money_text(to.fields[r.balance], -minor)}")


def _replacements(gen: GeneratedEnvironment, ctx: ToolContext, action: ActionSpec, chosen: list[dict[str, Any]],
                  args: dict[str, Any]) -> list[Row | None]:
    """For a ``replace`` action, the row each chosen child is exchanged for (in scope as ``new_<entity>``)."""
    if not action.replace:
        return [None] * len(chosen)
    entity = gen.spec.entities[action.entity]
    f = entity.fields[action.replace]
    given = args.get(f"new_{action.replace}s") or []
    if len(given) != len(chosen):
        raise DomainError("replacements_mismatch", f"give one new_{action.replace} for each id in {entity.key}s, in the same order "
                                                   f"({len(chosen)} asked, {len(given)} given)")
    out: list[Row | None] = []
    for child, value in zip(chosen, given, strict=True):
        new = load_row(gen.spec, ctx.world, f.ref or "", value, by=f.to)
        if new is None:
            target = gen.spec.entities[f.ref or ""]
            raise DomainError(f"{f.ref}_not_found"[:48], f"no {target.label} with id {value!r}; search_{target.plural} finds them")
        if str(child[f.column]) == str(value):
            raise DomainError("no_change", f"{entity.label} {child[entity.fields[entity.key or ''].column]!r} already has that "
                                           f"{gen.label(entity, action.replace)}; exchange it for another")
        out.append(new)
    return out


def _follow(gen: GeneratedEnvironment, action: ActionSpec, new: Row) -> list[tuple[str, Any]]:
    """A child's new reference and the fields it copies from the row referred to (an order item's price and options
    are the variant's: fields of the same name and kind follow the new row)."""
    entity = gen.spec.entities[action.entity]
    f = entity.fields[action.replace or ""]
    target = gen.spec.entities[new.entity]
    out = [(f.column, new.data[gen.spec.ref_column(f)])]
    for n, g in entity.fields.items():
        other = target.fields.get(n)
        if n in (action.replace, entity.key, action.parent) or other is None or other.kind != g.kind or other.kind == "key":
            continue
        out.append((g.column, new.data[other.column]))
    return out


def next_key(gen: GeneratedEnvironment, ctx: ToolContext, entity: EntitySpec) -> Any:
    """The next id of ``entity``: after the largest, skipping a seed-dependent gap in a task world (fixtures/ids.py)."""
    column = entity.fields[entity.key or ""].column
    prefix, width = "", 0
    if gen.is_int(entity, entity.fields[entity.key or ""]):
        last = ctx.world.query(f'SELECT max("{column}") AS m FROM "{entity.table}"')[0]["m"] or 0
    else:  # PREFIX-000123 ids continue their sequence, as fixtures/ids.py mints them (spec loading refuses other keys)
        top = ctx.world.query(f'SELECT "{column}" AS m FROM "{entity.table}" ORDER BY length("{column}") DESC, "{column}" DESC LIMIT 1')
        found = re.fullmatch(_NUMBERED, str(top[0]["m"])) if top else None
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


_NUMBERED = r"([A-Za-z#]*[-_]?)([0-9]+)"


def check_keys(gen: GeneratedEnvironment, conn: Any) -> None:
    """Every entity an action adds rows to has keys that can be numbered (integers, or PREFIX-123 codes): checked when
    the spec loads, not when the first oracle runs."""
    from toolgym.new.errors import NewError

    targets = [(a.name, a.entity) for a in gen.spec.actions if a.kind == "create"]
    targets += [(a.name, a.refund.record) for a in gen.spec.actions if a.refund is not None and a.refund.record]
    for name, ename in targets:
        e = gen.spec.entities[ename or ""]
        f = e.fields[e.key or ""]
        if gen.is_int(e, f):
            continue
        top = conn.execute(f'SELECT "{f.column}" FROM "{e.table}" ORDER BY length("{f.column}") DESC, "{f.column}" DESC LIMIT 1').fetchone()
        if top is None or re.fullmatch(_NUMBERED, str(top[0])) is None:
            raise NewError(f"spec.json: action {name!r} adds {e.plural} rows, but their key {e.key!r} holds {top[0] if top else 'nothing'!r}, "
                           "which is not numbered (an integer or PREFIX-123): new rows could not be given a key; drop the action "
                           "or give the table an integer key")
