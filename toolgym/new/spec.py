"""The spec of a generated environment: what the agent sees, which actions exist, and their rules.

A person edits ``spec.json`` after ``toolgym new`` writes it; re-running ``toolgym new`` regenerates the policy,
tools and templates from it. Field names are the agent's (snake_case); each maps to a column of the fixture.
Rules are expressions that must hold for the action to go ahead (:mod:`toolgym.new.rules`), each with a
reason code the tool refuses with and the policy states.
"""

from __future__ import annotations

import json
import keyword
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolgym.new.errors import NewError
from toolgym.new.introspect import Source, singular, snake

__all__ = ["FieldSpec", "EntitySpec", "RuleSpec", "RefundSpec", "ActionSpec", "VerifySpec", "Spec", "field_label", "default_spec", "load_spec", "save_spec", "read_json", "parse_spec"]

Kind = Literal["key", "ref", "money", "category", "date", "integer", "decimal", "text", "freetext", "secret"]
_CODE = r"^[a-z][a-z0-9_]{1,47}$"
_NAME = r"^[a-z][a-z0-9_]{0,47}$"
_TERMINAL = ("cancelled", "canceled", "closed", "inactive", "archived", "void", "voided", "rejected", "refunded",
             "suspended", "blocked", "frozen", "released", "resolved", "returned", "deleted", "disabled", "withdrawn",
             "expired", "retired", "discontinued")
_VERBS = {"cancelled": "cancel", "canceled": "cancel", "closed": "close", "inactive": "deactivate", "archived": "archive",
          "void": "void", "voided": "void", "rejected": "reject", "refunded": "refund", "suspended": "suspend",
          "blocked": "block", "frozen": "freeze", "released": "release", "resolved": "resolve", "returned": "return",
          "deleted": "delete", "disabled": "disable", "withdrawn": "withdraw", "expired": "expire", "retired": "retire",
          "discontinued": "discontinue"}
_CONTACT = re.compile(r"(email|e_mail|phone|fax|address|city|postal|zip|postcode|state$|country)")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FieldSpec(_Model):
    """One column as the agent sees it."""

    column: str
    """The fixture table's column."""
    kind: Kind
    ref: str | None = None
    """For ``ref``: the entity referenced."""
    to: str | None = None
    """For ``ref``: the field of the referenced entity the column holds, when it is not its key (a code or a name
    people use: ``teams.park`` holds ``park.park_name``); its values must be unique in that entity."""
    values: list[str] = Field(default_factory=list)
    """For ``category``: its values."""
    scale: int = 2
    """For ``money``: minor-unit digits (stored value = amount × 10**scale)."""
    visible: bool = True
    """False: never shown to the agent (``secret`` fields never are)."""
    label: str | None = None
    """How prompts and tool descriptions name the field (default: its column in words, ``teamIDretro`` → "team ID
    (Retrosheet)")."""


def field_label(name: str, f: FieldSpec) -> str:
    """The words for field ``name``: its spec ``label``, else its column's name in words (:mod:`toolgym.new.words`)."""
    from toolgym.new.words import label

    return f.label or label(f.column)


class EntitySpec(_Model):
    """One table as an entity the agent searches, reads and acts on."""

    table: str
    plural: str = Field(pattern=_NAME)
    label: str
    """How a person names one row's kind, e.g. ``invoice line``."""
    key: str | None = None
    """The field of the single-column primary key (None: a link table, searchable only)."""
    natural_key: str | None = None
    """A unique text field people name rows by (an e-mail, a title, a code)."""
    title: list[str] = Field(default_factory=list)
    """Fields that together name a row for people (``first_name``, ``last_name``)."""
    currency: str | None = None
    """A field holding each row's currency code; else the spec's currency."""
    fields: dict[str, FieldSpec]

    @model_validator(mode="after")
    def _known(self) -> EntitySpec:
        for name in [self.key, self.natural_key, self.currency, *self.title]:
            if name is not None and name not in self.fields:
                raise ValueError(f"names field {name!r}, which is not among its fields ({', '.join(self.fields)})")
        return self


class RuleSpec(_Model):
    """A precondition of an action: ``check`` must hold, else the action is refused with ``code``."""

    check: str = Field(min_length=1)
    """An expression over the rows involved and the action's arguments, e.g. ``order.status in [delivered]``."""
    code: str = Field(pattern=_CODE)
    message: str = Field(min_length=1)
    """The rule as the policy states it, e.g. "Only delivered orders can be returned."."""


class RefundSpec(_Model):
    """Money an action gives back: the sum of a money field over the rows it acts on, in exact minor units, paid to a
    row the agent names (an argument ``<entity>_id``): its balance grows when it has one, and a record row is added."""

    amount: str
    """The money field summed (of the chosen children for ``children``; of the row's children for ``transition``:
    ``payments.amount`` as ``plural.field``)."""
    to: str
    """The entity refunded to (a payment method, a gift card, an account); its id is an argument of the tool."""
    balance: str | None = None
    """A money field of ``to`` credited with the amount (rows where it is empty are paid outside the database)."""
    record: str | None = None
    """An entity whose new row records the refund: it refers to the row acted on and to ``to``; its money field gets
    the amount and ``record_set`` fixes other fields (``{"transaction_type": "refund"}``)."""
    record_set: dict[str, str] = Field(default_factory=dict)


class ActionSpec(_Model):
    """An action the agent may take, enforced by its rules."""

    name: str = Field(pattern=_NAME)
    kind: Literal["transition", "update", "create", "children"]
    entity: str
    """The entity changed (``transition``, ``update``) or the child entity created (``create``)."""
    description: str = ""
    field: str | None = None
    """``transition``: the status field it sets."""
    to: str | None = None
    """``transition``: the value it sets."""
    fields: list[str] = Field(default_factory=list)
    """``update``: the fields it may change; ``create``: the fields the agent gives; ``transition``: fields the agent
    gives and the row records (a cancellation's ``cancel_reason``)."""
    parent: str | None = None
    """``create``: the field of the new row referencing its parent (the row the action is about); ``children``: the
    field of the children referencing the row acted on."""
    set: dict[str, str] = Field(default_factory=dict)
    """``create``: fixed values of other fields (``{"status": "issued"}``); ``children``: values set on each chosen child."""
    parent_set: dict[str, str] = Field(default_factory=dict)
    """``children``: values set on the row the children belong to (``{"status": "return requested"}``)."""
    replace: str | None = None
    """``children``: a reference field of each chosen child the agent replaces (an exchange: ``item_id``)."""
    refund: RefundSpec | None = None
    rules: list[RuleSpec] = Field(default_factory=list)
    requires_verified: bool = False
    """The customer (the spec's ``verify`` entity) must be verified in this conversation first."""
    confirm: bool = False
    """The requester (the person on the line) must agree to this action before it is taken (``confirm_action``)."""

    @model_validator(mode="after")
    def _shape(self) -> ActionSpec:
        if self.kind == "transition" and (not self.field or self.to is None):
            raise ValueError("a transition needs 'field' (the status field) and 'to' (the value it sets)")
        if self.kind == "update" and not self.fields:
            raise ValueError("an update needs 'fields' (the fields it may change)")
        if self.kind in ("create", "children") and not self.parent:
            raise ValueError(f"a {self.kind} needs 'parent' (the field of the {'new row' if self.kind == 'create' else 'children'} "
                             "referencing the row it is about)")
        if self.kind == "children" and not (self.set or self.replace):
            raise ValueError("a children action needs 'set' (values set on each chosen child) or 'replace' (a field it replaces)")
        return self


class VerifySpec(_Model):
    """Identity verification: the agent checks what the caller says against these fields of the entity (or against
    every field of one of the ``alternatives``: identity by e-mail, or by name and postcode)."""

    entity: str
    fields: list[str] = Field(min_length=1)
    alternatives: list[list[str]] = Field(default_factory=list)

    def groups(self) -> list[list[str]]:
        """Every set of fields that verifies on its own, ``fields`` first."""
        return [self.fields, *[g for g in self.alternatives if g]]

    def every_field(self) -> list[str]:
        """The fields of every group, once each, in order."""
        return list(dict.fromkeys(f for g in self.groups() for f in g))


class Spec(_Model):
    """The whole spec (``spec.json``)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,47}$")
    description: str = ""
    today: str = "2026-01-15T09:00:00+00:00"
    """The world's frozen clock (ISO 8601 with offset)."""
    currency: str = "USD"
    entities: dict[str, EntitySpec]
    actions: list[ActionSpec] = Field(default_factory=list)
    verify: VerifySpec | None = None
    references: dict[str, str] = Field(default_factory=dict)
    """References the database does not declare, one line each: ``"team.park": "park.park_name"`` (the field holds
    that field of the other entity: a key, or a unique code or name) or ``"salary.team_id": "team"`` (its key)."""

    @model_validator(mode="after")
    def _consistent(self) -> Spec:
        for source, target in self.references.items():
            _declare_reference(self, source, target)
        for entity in self.entities.values():
            for f in entity.fields.values():
                if f.kind == "ref" and f.ref not in self.entities:  # an entity taken out of the spec: its ids are plain values
                    f.kind, f.ref, f.to = "text", None, None
                if f.kind == "ref" and f.to is not None and f.to not in self.entities[f.ref or ""].fields:
                    raise ValueError(f"field {f.column!r} refers to {f.ref}.{f.to}, which is not a field of {f.ref} "
                                     f"({', '.join(self.entities[f.ref or ''].fields)})")
        names = set()
        for i, action in enumerate(self.actions):
            where = f"actions[{i}] ({action.name})"
            if action.name in names:
                raise ValueError(f"{where}: two actions are named {action.name!r}")
            names.add(action.name)
            entity = self.entities.get(action.entity)
            if entity is None:
                raise ValueError(f"{where}: unknown entity {action.entity!r}; entities: {', '.join(self.entities)}")
            if entity.key is None:
                raise ValueError(f"{where}: entity {action.entity!r} has no single-column key, so no row can be named")
            for fname in [*action.fields, *action.set, *([action.field] if action.field else []),
                          *([action.parent] if action.parent else []), *([action.replace] if action.replace else [])]:
                if fname not in entity.fields:
                    raise ValueError(f"{where}: entity {action.entity!r} has no field {fname!r}; fields: {', '.join(entity.fields)}")
            if action.kind == "children":
                if entity.fields[action.parent or ""].kind != "ref":
                    raise ValueError(f"{where}: parent field {action.parent!r} is not a reference to another entity")
                owner = self.entities[entity.fields[action.parent or ""].ref or ""]
                for fname in action.parent_set:
                    if fname not in owner.fields:
                        raise ValueError(f"{where}: parent_set: {entity.fields[action.parent or ''].ref!r} has no field {fname!r}")
                if action.replace and entity.fields[action.replace].kind != "ref":
                    raise ValueError(f"{where}: replace: {action.replace!r} is not a reference field")
            if action.refund is not None:
                _check_refund(self, action, where)
            if action.kind == "transition":
                f = entity.fields[action.field or ""]
                if f.kind == "category" and f.values and action.to not in f.values:
                    raise ValueError(f"{where}: {action.to!r} is not a value of {action.entity}.{action.field} ({', '.join(f.values)})")
            if action.kind == "create" and entity.fields[action.parent or ""].kind != "ref":
                raise ValueError(f"{where}: parent field {action.parent!r} is not a reference to another entity")
            if action.requires_verified and self.verify is None:
                raise ValueError(f"{where}: requires_verified needs a top-level 'verify' section")
        if self.verify is not None:
            entity = self.entities.get(self.verify.entity)
            if entity is None or entity.key is None:
                raise ValueError(f"verify: unknown or keyless entity {self.verify.entity!r}")
            for fname in self.verify.every_field():
                if fname not in entity.fields:
                    raise ValueError(f"verify: entity {self.verify.entity!r} has no field {fname!r}")
        return self

    def ref_column(self, f: FieldSpec) -> str:
        """The column of the referenced entity that reference field ``f`` holds (its ``to`` field, else its key)."""
        target = self.entities[f.ref or ""]
        return target.fields[f.to or target.key or ""].column

    def subject(self, action: ActionSpec) -> str:
        """The entity of the row an action is about: the parent for ``create`` and ``children``, else its own."""
        if action.kind in ("create", "children"):
            return self.entities[action.entity].fields[action.parent or ""].ref or ""
        return action.entity

    def reason_codes(self) -> list[str]:
        """Every code the tools refuse with and the policy names, sorted."""
        codes = {r.code for a in self.actions for r in a.rules}
        if any(a.requires_verified for a in self.actions):
            codes.add("identity_not_verified")
        return sorted(codes) or ["not_allowed"]


def _declare_reference(spec: Spec, source: str, target: str) -> None:
    """Apply one line of ``references``: ``entity.field`` becomes a reference to ``entity[.field]``."""
    where = f"references: {source!r}"
    ename, _, fname = source.partition(".")
    entity = spec.entities.get(ename)
    if entity is None or fname not in entity.fields:
        raise ValueError(f"{where}: give entity.field of the field that refers (entities: {', '.join(spec.entities)})")
    tname, _, tfield = target.partition(".")
    other = spec.entities.get(tname)
    if other is None:
        raise ValueError(f"{where}: {tname!r} is not an entity ({', '.join(spec.entities)})")
    if tfield and tfield not in other.fields:
        raise ValueError(f"{where}: {tname} has no field {tfield!r} ({', '.join(other.fields)})")
    if other.key is None:
        raise ValueError(f"{where}: {tname} has no single-column key, so its rows cannot be reached")
    f = entity.fields[fname]
    f.kind, f.ref, f.to = "ref", tname, (tfield if tfield and tfield != other.key else None)


def _check_refund(spec: Spec, action: ActionSpec, where: str) -> None:
    """A refund's names exist: the money field summed, the entity paid, its balance, the record entity and its fields."""
    r = action.refund
    assert r is not None
    entity = spec.entities[action.entity]
    subject = spec.subject(action)
    if action.kind == "children":
        if r.amount not in entity.fields or entity.fields[r.amount].kind != "money":
            raise ValueError(f"{where}: refund.amount {r.amount!r} is not a money field of {action.entity}")
    else:
        plural, _, fname = r.amount.partition(".")
        child = next((n for n, e in spec.entities.items() if e.plural == plural), None)
        if child is None or spec.entities[child].fields.get(fname) is None or spec.entities[child].fields[fname].kind != "money":
            raise ValueError(f"{where}: refund.amount {r.amount!r}: give children.field, a money field of rows referring to the {subject}")
    to = spec.entities.get(r.to)
    if to is None or to.key is None:
        raise ValueError(f"{where}: refund.to {r.to!r} is not an entity with a key")
    if r.balance is not None and (r.balance not in to.fields or to.fields[r.balance].kind != "money"):
        raise ValueError(f"{where}: refund.balance {r.balance!r} is not a money field of {r.to}")
    if r.record is not None:
        rec = spec.entities.get(r.record)
        if rec is None or rec.key is None:
            raise ValueError(f"{where}: refund.record {r.record!r} is not an entity with a key")
        refs = {f.ref for f in rec.fields.values() if f.kind == "ref"}
        money = [n for n, f in rec.fields.items() if f.kind == "money"]
        if subject not in refs or r.to not in refs or not money:
            raise ValueError(f"{where}: refund.record {r.record!r} must refer to {subject} and to {r.to} and have a money field")
        for fname in r.record_set:
            if fname not in rec.fields:
                raise ValueError(f"{where}: refund.record_set: {r.record!r} has no field {fname!r}")


def _entity_name(table: str) -> str:
    name = singular(snake(table))
    # rules name entities as Python names: a keyword (a table "returns") gets a suffix
    return f"{name}_record" if keyword.iskeyword(name) or name in ("today", "sum", "count") else name


def _plural(name: str) -> str:
    """``branch`` → ``branches``, ``copy`` → ``copies``, ``order`` → ``orders``."""
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return name[:-1] + "ies"
    if name.endswith(("s", "x", "z", "ch", "sh")):
        return name + "es"
    return name + "s"


def _a(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def default_spec(source: Source, name: str) -> Spec:
    """The spec ``toolgym new`` writes when none exists (:func:`toolgym.new.defaults.default_spec`)."""
    from toolgym.new.defaults import default_spec as build

    return build(source, name)


def load_spec(path: str | Path) -> Spec:
    """Read and validate a spec file (JSON).

    Raises:
        NewError: the file is missing, not JSON, or not a valid spec (the message names the field and the fix).
    """
    return parse_spec(read_json(path), path)


def read_json(path: str | Path) -> object:
    """The JSON of a spec or rules file.

    Raises:
        NewError: the file is missing or not JSON (names the line and column).
    """
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, IsADirectoryError):
        raise NewError(f"spec file {str(path)!r} does not exist") from None
    except UnicodeDecodeError:
        raise NewError(f"spec file {str(path)!r} is not UTF-8 text (give a JSON file)") from None
    except json.JSONDecodeError as exc:
        raise NewError(f"spec file {str(path)!r} is not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def parse_spec(data: object, path: str | Path) -> Spec:
    """Validate a spec's JSON (``path`` names it in errors), its rules included.

    Raises:
        NewError: not a valid spec (the message names the field and the fix).
    """
    if not isinstance(data, dict):
        raise NewError(f"spec file {str(path)!r} is invalid: the top level must be a JSON object")
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = "unknown key: check its spelling (the README's section 'Your own database' lists the keys)"
            parts.append(f"{where}: {msg}" if where else msg)
        raise NewError(f"spec file {str(path)!r} is invalid: " + "; ".join(parts)) from None
    from toolgym.new.rules import check_rules  # rules are parsed against the spec: bad expressions fail here

    check_rules(spec, path)
    return spec


def save_spec(spec: Spec, path: Path) -> None:
    """Write the spec as indented JSON (stable key order, so diffs read well)."""
    path.write_text(json.dumps(spec.model_dump(mode="json", exclude_defaults=True), indent=2) + "\n")
