"""The spec ``toolgym new`` writes from a database alone: entities, names people use, lifecycles and a desk's actions.

Lifecycles are read from status columns with safe defaults: nothing leaves a terminal value (``cancelled``,
``refunded``...), a cancellation only happens early (``pending``, ``scheduled``...), a refund only of what was paid,
a return only of what was delivered. Actions a desk needs come from the schema: a transition per lifecycle verb, the
same on some children of a row (cancel two of an order's items), a contact update of a person (verified first), an
address change of a person's row while it is early in its lifecycle, a record update bounded by the range the data
shows, and new child rows. The person rows belong to (customers, users) is the one who verifies.
"""

from __future__ import annotations

import keyword
import re

from toolgym.new.introspect import Column, Source, Table, singular, snake
from toolgym.new.spec import ActionSpec, EntitySpec, FieldSpec, RuleSpec, Spec, VerifySpec, field_label

__all__ = ["default_spec", "TERMINAL", "sources_for"]

TERMINAL = ("cancelled", "canceled", "closed", "inactive", "archived", "void", "voided", "rejected", "refunded",
            "suspended", "blocked", "frozen", "released", "resolved", "returned", "deleted", "disabled", "withdrawn",
            "expired", "retired", "discontinued")
_VERBS = {"cancelled": "cancel", "canceled": "cancel", "closed": "close", "inactive": "deactivate", "archived": "archive",
          "void": "void", "voided": "void", "rejected": "reject", "refunded": "refund", "suspended": "suspend",
          "blocked": "block", "frozen": "freeze", "released": "release", "resolved": "resolve", "returned": "return",
          "deleted": "delete", "disabled": "disable", "withdrawn": "withdraw", "expired": "expire", "retired": "retire",
          "discontinued": "discontinue"}
_EARLY = {"pending", "new", "draft", "open", "placed", "created", "requested", "scheduled", "booked", "reserved", "submitted",
          "awaiting", "awaiting_payment", "unpaid", "trialing", "trial", "on_hold", "hold", "queued", "planned", "proposed",
          "ordered", "unconfirmed", "waiting", "not_started"}
_PAID = {"paid", "delivered", "completed", "complete", "settled", "captured", "succeeded", "charged", "fulfilled", "shipped"}
_DELIVERED = {"delivered", "completed", "complete", "fulfilled", "received", "borrowed", "checked_out", "loaned", "renewed",
              "overdue", "out", "open", "lost"}
_ISSUED = {"open", "draft", "pending", "unpaid", "issued", "uncollectible", "past_due", "overdue"}
# which non-terminal values each verb may leave from; a verb not listed leaves from any non-terminal value
_FROM: dict[str, set[str]] = {
    "cancel": _EARLY | {"active", "past_due", "confirmed", "approved", "processing"},  # not yet shipped or done
    "refund": _PAID, "return": _DELIVERED, "void": _ISSUED, "reject": _EARLY | {"in_review", "under_review"},
}
_CONTACT = re.compile(r"(email|e_mail|phone|fax|mobile)")
_ADDRESS = re.compile(r"(address|street|city|postal|zip|postcode|state$|region|country|line_?[12]$)")


def _norm(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", value.lower()).strip("_")


def sources_for(verb: str, values: list[str]) -> list[str]:
    """The values of a status field a ``verb`` (cancel, refund, return...) may move a row from: never a terminal one,
    and only the early ones for a cancellation, the paid ones for a refund, the delivered ones for a return."""
    live = [v for v in values if v.lower() not in TERMINAL]
    allowed = _FROM.get(verb)
    return [v for v in live if allowed is None or _norm(v) in allowed]


def _entity_name(table: str) -> str:
    name = singular(snake(table))
    # rules name entities as Python names: a keyword (a table "returns") gets a suffix
    return f"{name}_record" if keyword.iskeyword(name) or name in ("today", "sum", "count", "values") else name


def _plural(name: str) -> str:
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return name[:-1] + "ies"
    if name.endswith(("s", "x", "z", "ch", "sh")):
        return name + "es"
    return name + "s"


def _a(word: str) -> str:
    vowel = word[:1].lower() in "aeiou" and not word.lower().startswith(("us", "uni", "eu", "one"))
    return ("an " if vowel else "a ") + word


def _title(fields: dict[str, FieldSpec]) -> list[str]:
    """The fields that name a row: a name or title, else a person's name split over columns (``first_name`` and
    ``last_name``, ``nameFirst`` and ``nameLast``, ``given_name`` and ``family_name``)."""
    texts = [n for n, f in fields.items() if f.kind == "text"]
    for n in ("name", "title", "full_name", "company_name", "display_name"):
        if n in texts:
            return [n]
    first = next((n for n in texts if re.search(r"(^|_)(first|given|f)_?name($|_)|^name_first$|^fname$", n)), None)
    last = next((n for n in texts if re.search(r"(^|_)(last|family|sur|l)_?name($|_)|^name_last$|^lname$|^surname$", n)), None)
    if first and last:
        return [first, last]
    return [n for n in texts if n.endswith("name")][:1]


def _fields(table: Table, by_table: dict[str, str], source: Source | None = None) -> dict[str, FieldSpec]:
    fields: dict[str, FieldSpec] = {}
    if len(table.key) != 1:
        fields["row_id"] = FieldSpec(column="row_id", kind="key", label="row ID")
    for col in table.columns:
        fname = snake(col.name)
        fname = f"{fname}_value" if keyword.iskeyword(fname) or fname in fields else fname
        for suffix in ("_minor", "_cents", "_pence"):
            if col.kind == "money" and col.minor and fname.endswith(suffix) and fname[: -len(suffix)] not in fields:
                fname = fname[: -len(suffix)]
        kind = col.kind if not (col.kind == "key" and len(table.key) != 1) else ("integer" if "INT" in col.declared else "text")
        to = None
        if col.kind == "ref" and source is not None:  # a reference to a column other than the table's key (a code, a name)
            target = next((t for t in source.tables if t.name == col.ref_table), None)
            if target is not None and target.key != [col.ref_column] and col.ref_column:
                to = col.ref_column  # a column for now: default_spec names the field once every entity exists
        fields[fname] = FieldSpec(column=col.name, kind=kind, ref=by_table.get(col.ref_table or ""),  # type: ignore[arg-type]
                                  values=col.values, scale=col.scale, visible=col.kind != "secret", to=to)
    return fields


def _column(table: Table, f: FieldSpec) -> Column | None:
    return next((c for c in table.columns if c.name == f.column), None)


def default_spec(source: Source, name: str) -> Spec:
    """The spec ``toolgym new`` writes when none exists (module docstring)."""
    entities: dict[str, EntitySpec] = {}
    by_table = {t.name: _entity_name(t.name) for t in source.tables}
    tables: dict[str, Table] = {}
    for table in source.tables:
        ename = by_table[table.name]
        tables[ename] = table
        fields = _fields(table, by_table, source)
        key = snake(table.key[0]) if len(table.key) == 1 else "row_id"
        uniques = [snake(c.name) for c in table.columns if c.unique and c.kind == "text" and c.name not in table.key]
        preferred = sorted([u for u in uniques if re.search(r"(email|code|sku|number|name|title|slug|username|reference)", u)],
                           key=lambda u: next(i for i, w in enumerate(("email", "code", "sku", "number", "reference", "slug",
                                                                       "username", "title", "name", "")) if w in u))
        codes = [snake(c.name) for c in table.columns if c.code and (c.kind == "key" and len(table.key) == 1 or c.unique and c.kind != "ref")]
        natural = (preferred or codes or uniques or [None])[0]
        title = _season_title(source, table, fields, _title(fields))
        currency = "currency" if "currency" in fields and fields["currency"].kind in ("category", "text") else None
        plural = snake(table.name) if snake(table.name) != ename else _plural(ename)
        label = ename.replace("_", " ") + (" record" if ename in fields else "")  # a salary's salary: a salary record's
        entities[ename] = EntitySpec(table=table.name, plural=plural, label=label, key=key,
                                     natural_key=natural, title=title, currency=currency, fields=fields)
    for e in entities.values():  # a reference to a non-key column names the field holding it
        for f in e.fields.values():
            if f.kind == "ref" and f.to is not None:
                target = entities[f.ref or ""]
                f.to = next((n for n, g in target.fields.items() if g.column == f.to), None)
                if f.to == target.key:
                    f.to = None
    verify = _verify(entities)
    spec = Spec(name=name, description=f"Generated from {source.path.name}", entities=entities, verify=verify)
    actions = _actions(spec, tables, source)
    used = [a for a in actions if a.requires_verified]
    return Spec(name=name, description=spec.description, entities=entities, actions=actions, verify=verify if used else None)


_YEAR = re.compile(r"^(year|year_id|yearid|season|yr)$")


def _season_title(source: Source, table: Table, fields: dict[str, FieldSpec], title: list[str]) -> list[str]:
    """A name that repeats year after year (a team's name in every season it played) names a row with its year in front
    (``2004 Boston Red Sox``) when the two together are unique; otherwise the title as it is."""
    year = next((n for n, f in fields.items() if f.kind == "integer" and _YEAR.match(n)), None)
    if not title or year is None or table.rows < 2 or any(n not in fields for n in title):
        return title
    cols = [fields[n].column for n in title]
    src = {c.name: c.source or c.name for c in table.columns}
    names = ", ".join(f'"{src.get(c, c)}"' for c in cols)
    name = table.source or table.name
    repeated = source.conn.execute(f'SELECT count(*) FROM (SELECT 1 FROM "{name}" GROUP BY {names} HAVING count(*) > 1)').fetchone()[0]
    if not repeated:
        return title
    with_year = f'"{src.get(fields[year].column, fields[year].column)}", {names}'
    clashes = source.conn.execute(f'SELECT count(*) FROM (SELECT 1 FROM "{name}" GROUP BY {with_year} HAVING count(*) > 1)').fetchone()[0]
    return [year, *title] if clashes * 20 < table.rows else title


def _verify(entities: dict[str, EntitySpec]) -> VerifySpec | None:
    """The person rows belong to: an entity with an e-mail and a name that others refer to the most (customers,
    users); they verify by e-mail, or by name and postcode when the row has one."""
    best, refs = None, -1
    for ename, e in entities.items():
        email = next((n for n, f in e.fields.items() if f.kind == "text" and re.search(r"e_?mail", n)), None)
        if email is None or len(e.title) != 2:
            continue
        n = sum(1 for other in entities.values() for f in other.fields.values() if f.kind == "ref" and f.ref == ename)
        if n > refs:
            best, refs = (ename, email), n
    if best is None:
        return None
    ename, email = best
    e = entities[ename]
    postal = next((n for n, f in e.fields.items() if f.kind == "text" and re.search(r"(postal|zip|postcode)", n)), None)
    return VerifySpec(entity=ename, fields=[email], alternatives=[[*e.title, postal]] if postal else [])


def _owner_path(spec: Spec, ename: str, person: str) -> bool:
    """Whether rows of ``ename`` belong to the ``person`` entity (itself, or up to two references away)."""
    frontier = {ename}
    for _ in range(3):
        if person in frontier:
            return True
        frontier = {f.ref or "" for e in frontier for f in spec.entities[e].fields.values() if f.kind == "ref" and f.ref != e}
    return False


def _actions(spec: Spec, tables: dict[str, Table], source: Source | None = None) -> list[ActionSpec]:
    person = spec.verify.entity if spec.verify else None
    actions: list[ActionSpec] = []
    for ename, entity in spec.entities.items():
        owned = person is not None and _owner_path(spec, ename, person)
        statuses = [(n, f) for n, f in entity.fields.items() if f.kind == "category" and re.search(r"(status|state)$", n)]
        early = {n: [v for v in f.values if _norm(v) in _EARLY] for n, f in statuses}
        parents = {f.ref or "" for f in entity.fields.values() if f.kind == "ref" and f.ref != ename}
        for fname, f in statuses:
            for terminal in [v for v in f.values if v.lower() in TERMINAL][:2]:
                verb = _VERBS[terminal.lower()]
                if any(fname in spec.entities[p].fields and terminal in spec.entities[p].fields[fname].values for p in parents):
                    continue  # an order's items follow their order: the children action covers them
                others = sources_for(verb, f.values)
                if not others:
                    continue
                what = field_label(fname, f)
                rule = RuleSpec(check=f"{ename}.{fname} in {_listed(others)}", code=f"{ename}_not_{verb}able"[:48],
                                message=f"{_a(entity.label).capitalize()} can be set to {terminal} only while its {what} is "
                                        f"{' or '.join(others)}.")
                reason = [n for n, g in entity.fields.items() if g.kind == "text" and "reason" in n][:1]
                actions.append(ActionSpec(name=f"{verb}_{ename}", kind="transition", entity=ename, field=fname, to=terminal,
                                          fields=reason, description=f"Set {_a(entity.label)}'s {what} to {terminal}.",
                                          rules=[rule, *_children_block(spec, ename, fname, verb)], requires_verified=owned,
                                          confirm=owned))
                actions += _children_actions(spec, ename, fname, terminal, verb, others, person)
        contact = [n for n, g in entity.fields.items() if g.kind == "text" and (_CONTACT.search(n) or _ADDRESS.search(n)) and n != entity.key]
        if ename == person or (contact and any(_CONTACT.search(n) for n in contact)):
            reach = [n for n in contact if _CONTACT.search(n)]  # how to reach them, and where they live: two desk requests
            where = [n for n in contact if n not in reach]
            for verb, what, fields in (("update", "contact", reach or where), ("change", "address", where if reach else [])):
                if fields:
                    words = "contact details" if what == "contact" else "address"
                    actions.append(ActionSpec(name=f"{verb}_{ename}_{what}", kind="update", entity=ename, fields=fields[:6],
                                              description=f"Change {_a(entity.label)}'s {words}.", requires_verified=ename == person,
                                              confirm=ename == person))
        elif owned and ename != person:
            address = [n for n, g in entity.fields.items() if g.kind == "text" and _ADDRESS.search(n)]
            if address:
                rules = [RuleSpec(check=f"{ename}.{n} in {_listed(early[n])}", code=f"{ename}_not_changeable"[:48],
                                  message=f"{_a(entity.label).capitalize()}'s address changes only while its "
                                          f"{field_label(n, entity.fields[n])} is {' or '.join(early[n])}.")
                         for n, _ in statuses if early[n]][:1]
                actions.append(ActionSpec(name=f"change_{ename}_address", kind="update", entity=ename, fields=address[:6],
                                          description=f"Change the address of {_a(entity.label)}.", rules=rules,
                                          requires_verified=True, confirm=True))
        actions += _bounded_updates(spec, ename, tables[ename], person)
        for fname, f in statuses[:1]:
            actions += _exchanges(spec, ename, fname, tables, person)
        actions += _creates(spec, ename, tables, person, source)
    unique: dict[str, ActionSpec] = {}
    for a in actions:  # two parents' children can give one name: the first is kept
        unique.setdefault(a.name, a)
    return list(unique.values())


def _listed(values: list[str]) -> str:
    """A rule's list of text values: bare words where they are names, quoted otherwise (``[pending, 'on hold']``)."""
    return "[" + ", ".join(v if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v) and not keyword.iskeyword(v) else repr(v) for v in values) + "]"


def _children_block(spec: Spec, ename: str, fname: str, verb: str) -> list[RuleSpec]:
    """What a row's children's states say about its own transition: an order cannot be cancelled while one of its items
    is already past the states a cancellation may leave (shipped, delivered) — one rule per child entity that has the
    same status field."""
    out = []
    entity = spec.entities[ename]
    for cname, child in spec.entities.items():
        link = [n for n, g in child.fields.items() if g.kind == "ref" and g.ref == ename]
        status = child.fields.get(fname)
        if cname == ename or len(link) != 1 or status is None or status.kind != "category" or not status.values:
            continue
        allowed = sources_for(verb, status.values)
        blocked = [v for v in status.values if v not in allowed and v.lower() not in TERMINAL]
        if not allowed or not blocked:
            continue
        check = " and ".join(f"{v!r} not in values({child.plural}.{fname})" for v in blocked)
        out.append(RuleSpec(check=check, code=f"{cname}_blocks_{verb}"[:48],
                            message=f"{_a(entity.label).capitalize()} with {child.plural.replace('_', ' ')} that are "
                                    f"{' or '.join(blocked)} cannot be {_VERBED.get(verb, verb + 'ed')}."))
    return out


_VERBED = {"cancel": "cancelled", "close": "closed", "deactivate": "deactivated", "archive": "archived", "void": "voided",
           "reject": "rejected", "refund": "refunded", "suspend": "suspended", "block": "blocked", "freeze": "frozen",
           "release": "released", "resolve": "resolved", "return": "returned", "delete": "deleted", "disable": "disabled",
           "withdraw": "withdrawn", "expire": "expired", "retire": "retired", "discontinue": "discontinued"}


def _creates(spec: Spec, ename: str, tables: dict[str, Table], person: str | None, source: Source | None) -> list[ActionSpec]:
    """New lines on a row (a track added to an invoice): for a child nothing refers to (a line, not a catalogue row) with
    a key that can be numbered, a reference to its row and one to a named row it adds. The agent gives what is added;
    a column with one value in all the data is set to it (a quantity of 1); fields the added row has of the same name
    are copied from it (its price). Where the data never repeats the added row on one parent, that is a rule."""
    if source is None:
        return []
    out = []
    parent = spec.entities[ename]
    owned = person is not None and _owner_path(spec, ename, person)
    referenced = {f.ref for e in spec.entities.values() for f in e.fields.values() if f.kind == "ref"}
    for cname, child in spec.entities.items():
        table = tables[cname]
        link = next((n for n, g in child.fields.items() if g.kind == "ref" and g.ref == ename and g.to is None), None)
        if link is None or cname == ename or cname in referenced or child.key is None or table.rows < 40 or len(table.key) != 1:
            continue
        keycol = next(c for c in table.columns if c.name == table.key[0])
        if "INT" not in keycol.declared:
            continue
        added = next((n for n, g in child.fields.items() if g.kind == "ref" and n != link and g.to is None
                      and (spec.entities[g.ref or ""].title or spec.entities[g.ref or ""].natural_key)), None)
        if added is None:
            continue
        target = spec.entities[child.fields[added].ref or ""]
        fixed, rest = {}, []
        for n, g in child.fields.items():
            col = _column(table, g)
            if n in (link, added, child.key) or col is None or n in target.fields or g.kind == "date":
                continue
            if col.low is not None and col.low == col.high:
                fixed[n] = str(col.low)
            elif col.not_null:
                rest.append(n)
        if rest:
            continue  # a required column the agent could not know: no default create
        src = {c.name: c.source or c.name for c in table.columns}
        lcol, acol = src[child.fields[link].column], src[child.fields[added].column]
        repeats = source.conn.execute(f'SELECT count(*) FROM (SELECT 1 FROM "{table.source or table.name}" GROUP BY "{lcol}", "{acol}" '
                                      'HAVING count(*) > 1)').fetchone()[0]
        rules = [] if repeats else [RuleSpec(check=f"{added} not in values({child.plural}.{added})", code=f"{target.label.replace(' ', '_')}_already_on_{ename}"[:48],
                                             message=f"{_a(parent.label).capitalize()} has each {target.label} at most once.")]
        out.append(ActionSpec(name=f"add_{cname}"[:48], kind="create", entity=cname, parent=link, fields=[added], set=fixed,
                              rules=rules, requires_verified=owned, confirm=owned,
                              description=f"Add {_a(child.label)} to {_a(parent.label)}: the {target.label} it is for."))
    return out


_AVAILABLE = re.compile(r"^(available|in_stock|stock|quantity_available|on_hand|inventory)$")


def _exchanges(spec: Spec, ename: str, fname: str, tables: dict[str, Table], person: str | None) -> list[ActionSpec]:
    """Exchanges of a row's children for siblings of what they refer to (an order item for another variant of the same
    product): while the row is early (``modify_``: a pending order's items) and once it is delivered (``exchange_``).
    The new row must share the old one's group and, where the data says so, be available."""
    entity = spec.entities[ename]
    status = entity.fields[fname]
    out = []
    owned = person is not None and _owner_path(spec, ename, person)
    for cname, child in spec.entities.items():
        link = next((n for n, g in child.fields.items() if g.kind == "ref" and g.ref == ename), None)
        if link is None or cname == ename or child.key is None or tables[cname].rows < 20:
            continue
        for rname, r in child.fields.items():
            variant = spec.entities.get(r.ref or "")
            if r.kind != "ref" or rname == link or variant is None or variant.key is None or r.to is not None:
                continue
            priced = {n for n, g in child.fields.items() if g.kind == "money"} & {n for n, g in variant.fields.items() if g.kind == "money"}
            if not priced:
                continue  # a line of a catalogue row carries its price (order_items.price is the variant's price)
            group = next((n for n, g in variant.fields.items() if g.kind == "ref" and g.ref not in (ename, cname, r.ref)), None)
            product = spec.entities.get(variant.fields[group].ref or "") if group else None
            if group is None or product is None or tables[r.ref or ""].rows < 2 * max(1, tables[variant.fields[group].ref or ""].rows):
                continue  # fewer than two rows per group on average: nothing to exchange for
            if any(g.kind == "date" for g in variant.fields.values()) or not (product.title or product.natural_key):
                continue  # a catalogue row (a variant of a named product) has no date; an invoice or a payment does
            vname = r.ref or ""
            rules = [RuleSpec(check=f"new_{vname}.{group} == {cname}.{rname}.{group}", code=f"not_same_{group.removesuffix('_id')}"[:48],
                              message=f"{_a(child.label).capitalize()} is exchanged only for another {variant.label} of the same "
                                      f"{product.label}.")]
            stock = next((n for n, g in variant.fields.items() if g.kind == "integer" and _AVAILABLE.search(n)), None)
            if stock is not None:
                rules.append(RuleSpec(check=f"new_{vname}.{stock} > 0", code=f"{vname}_not_available"[:48],
                                      message=f"The new {variant.label} must be available."))
            for verb, states in (("modify", [v for v in status.values if _norm(v) in _EARLY]),
                                 ("exchange", [v for v in status.values if _norm(v) in _DELIVERED - {"open", "out", "lost"}])):
                if not states:
                    continue
                when = RuleSpec(check=f"{ename}.{fname} in {_listed(states)}", code=f"{ename}_not_{verb.removesuffix('y') + 'i' if verb.endswith('y') else verb}able"[:48],
                                message=f"{_a(entity.label).capitalize()}'s {child.plural.replace('_', ' ')} are "
                                        f"{'modified' if verb == 'modify' else 'exchanged'} only while it is {' or '.join(states)}.")
                out.append(ActionSpec(name=f"{verb}_{child.plural}"[:48], kind="children", entity=cname, parent=link, replace=rname,
                                      rules=[when, *rules], requires_verified=owned, confirm=owned,
                                      description=f"Exchange some of {_a(entity.label)}'s {child.plural.replace('_', ' ')} for another "
                                                  f"{variant.label} of the same {product.label}."))
            break
    return out


def _children_actions(spec: Spec, ename: str, fname: str, terminal: str, verb: str, others: list[str],
                      person: str | None) -> list[ActionSpec]:
    """The same lifecycle verb on some children of a row: children whose status field has the same terminal value
    (an order's items) are set to it, when each is in a state the verb may leave."""
    out = []
    for cname, child in spec.entities.items():
        link = next((n for n, g in child.fields.items() if g.kind == "ref" and g.ref == ename), None)
        status = child.fields.get(fname)
        if link is None or cname == ename or status is None or status.kind != "category" or terminal not in status.values:
            continue
        sources = sources_for(verb, status.values)
        if not sources:
            continue
        owned = person is not None and _owner_path(spec, ename, person)
        parent = spec.entities[ename]
        rules = [RuleSpec(check=f"{cname}.{fname} in {_listed(sources)}", code=f"{cname}_not_{verb}able"[:48],
                          message=f"Each {child.label} must be {' or '.join(sources)}."),
                 RuleSpec(check=f"{ename}.{fname} in {_listed(others)}", code=f"{ename}_not_{verb}able"[:48],
                          message=f"{_a(parent.label).capitalize()}'s {child.plural.replace('_', ' ')} change only while it is "
                                  f"{' or '.join(others)}.")]
        out.append(ActionSpec(name=f"{verb}_{child.plural}"[:48], kind="children", entity=cname, parent=link,
                              set={fname: terminal}, rules=rules, requires_verified=owned, confirm=owned,
                              description=f"Set some of {_a(parent.label)}'s {child.plural.replace('_', ' ')} to {terminal}."))
    return out


_NOT_EDITED = re.compile(r"(year|month|day|hour|minute|_id$|^id$|count|number|seq|line|order|rank|position|balance|birth|distance|"
                        r"death|lat|lon|tz|^g$|^w$|^l$|engines)")


_MEASURE = re.compile(r"(price|cost|fee|amount|salary|balance|weight|height|seats|capacity|stock|quantity|attendance|duration|"
                      r"air_time|length|size|votes|limit|budget|speed|alt$|altitude|elevation|ballots|points|score)")
"""Numbers a records desk corrects (ranked before other numbers when choosing what an update may change)."""


def _bounded_updates(spec: Spec, ename: str, table: Table, person: str | None) -> list[ActionSpec]:
    """Updates of a named row's numbers (a price, a seat count) within the range the data shows: the rule states the
    largest value on record, and a request above it is refused. Money first; at most two per entity."""
    from decimal import Decimal

    entity = spec.entities[ename]
    owned = person is not None and _owner_path(spec, ename, person)
    # a row people name, or one found as the latest child of a named row (a player's latest salary)
    ordered = any(f.kind == "date" or f.kind == "integer" and _YEAR.match(n) for n, f in entity.fields.items()) and any(
        f.kind == "ref" and (spec.entities[f.ref or ""].title or spec.entities[f.ref or ""].natural_key) for f in entity.fields.values())
    if not (entity.title or entity.natural_key or ordered) or table.rows < 40 or owned:
        return []
    numbers = []
    for n, f in entity.fields.items():
        col = _column(table, f)
        if col is None or f.kind not in ("money", "integer") or not f.visible or n == entity.key or col.high is None:
            continue
        if f.kind != "money" and (n == ename or n.removesuffix("_number") == ename):  # a flight's flight is its number
            continue
        if _NOT_EDITED.search(n) or col.low == col.high or (isinstance(col.low, int) and col.low < 0 and not _MEASURE.search(n)):
            continue  # a negative count is a difference (a delay), not a quantity; an altitude may be below sea level
        if "time" in n and _MEASURE.search(n) is None and isinstance(col.high, int) and col.high <= 2400:
            continue  # a clock time written hhmm (dep_time 517), not a quantity
        if f.kind == "integer" and _MEASURE.search(n) is None and isinstance(col.high, int) and col.high - int(col.low or 0) < 10:
            continue  # a game number, a flag, an ordinal: not a quantity a desk corrects
        numbers.append((f.kind != "money", _MEASURE.search(n) is None, n, f, col))
    out = []
    for _, _, n, f, col in sorted(numbers, key=lambda x: x[:2])[:2]:
        if f.kind == "money":
            unit = Decimal(1).scaleb(-f.scale)
            top = Decimal(int(col.high)).scaleb(-f.scale) if col.minor else Decimal(str(col.high))
            high = str(top.quantize(unit))
        else:
            high = str(col.high)
        what = field_label(n, f)
        out.append(ActionSpec(name=f"update_{ename}_{n}"[:48], kind="update", entity=ename, fields=[n],
                              description=f"Change {_a(entity.label)}'s {what}.",
                              rules=[RuleSpec(check=f"{n} <= {high}", code=f"{n}_out_of_range"[:48],
                                              message=f"{_a(entity.label).capitalize()}'s {what} is at most {high}, the "
                                                      "largest on record.")]))
    return out
