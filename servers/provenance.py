"""Read provenance: which rows of the world, and which of their fields, a tool's result showed the agent.

A gate that asks "did the agent read the fact that decides this task?" must not care *which tool* showed the
fact: a private channel's members shown by ``list_channels`` are as read as the same members shown by
``get_channel``, a relation between two issues is read on either issue, a gift card's balance is read from a
search page as from its own page. So the kit keeps, for every call, what its result showed: a set of
``(table, key) -> fields`` facts, and gates name rows and fields (``graders/criteria/seen.py``), never tools.

Where the facts come from: a result model declares which row it is a view of with :func:`row_view`
(``@row_view("channels", "channel_id")`` on the ``Channel`` model). Every field of such a model that the
result carries with a value (not null) is a fact shown of that row, under the field's name (or the name the
declaration maps it to); nested models are views of their own rows (a transaction's page shows each
transaction; an account shows its active holds). Hand-built and generated environments declare their models
the same way, so one mechanism serves both.

Why derived from the stored result rather than stored beside it: the record already holds every result
exactly as the agent received it, so the facts are a pure function of (tool, result) — old records and
offline re-grading get them for free, and a record line is not doubled by a list of field names per row.
The plan that walks a result is built once per tool from its return type (:func:`result_plan`), and walking
a result costs microseconds.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar, Union

from pydantic import BaseModel

if TYPE_CHECKING:
    from servers.tools import ToolSpec

__all__ = ["RowView", "row_view", "Shown", "ResultPlan", "result_plan", "shown_rows", "environment_facts", "row_key"]

M = TypeVar("M", bound=type[BaseModel])
Shown = dict[tuple[str, str], frozenset[str]]
"""What one result showed: ``(table, key)`` → the names of the fields shown of that row."""

KEY_JOIN = "|"
"""Joins the parts of a composite key (``issue_relations`` keyed by two issues) into one key string."""


def row_key(*parts: Any) -> str:
    """The key string of a row from its key value(s): ``"C-12"``, ``"7"``, ``"ISS-1|ISS-2"`` (composite)."""
    return KEY_JOIN.join(str(p) for p in parts)


@dataclass(frozen=True)
class RowView:
    """A model's declaration that it shows one row of ``table``, identified by its ``key`` field(s)."""

    table: str
    key: tuple[str, ...]
    """Names of the model's fields that hold the row's key (several for a composite key)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """Model field → fact name, where a model calls a fact something else than the other views of the row do."""
    exclude: frozenset[str] = frozenset()
    """Fields that are not facts of the row (e.g. a page cursor carried on a row model)."""

    def fact(self, model_field: str) -> str:
        """The fact name under which ``model_field`` is shown."""
        return self.names.get(model_field, model_field)


def row_view(table: str, *key: str, names: Mapping[str, str] | None = None, exclude: Iterable[str] = ()) -> Any:
    """Class decorator: the model is a view of one row of ``table`` whose key is held by the fields ``key``.

    Example: ``@row_view("accounts", "account_id")`` on ``Account``; every non-null field of an ``Account`` in
    a result is then a fact shown of that account. Why a decorator: it only marks the model (like ``@tool``
    marks a function); :func:`result_plan` reads the mark once per tool.

    Raises:
        TypeError: no key field given, or a key field the model does not have.
    """
    if not key:
        raise TypeError(f"row_view({table!r}) needs the model field(s) holding the row's key")

    def mark(model: M) -> M:
        missing = [k for k in key if k not in model.model_fields]
        if missing:
            raise TypeError(f"@row_view({table!r}) on {model.__name__}: no field {', '.join(map(repr, missing))} holds the key")
        model.__toolgym_row__ = RowView(table=table, key=tuple(key), names=dict(names or {}), exclude=frozenset(exclude))  # type: ignore[attr-defined]
        return model

    return mark


@dataclass(frozen=True)
class ResultPlan:
    """How to find row views in a JSON value of one type: a model (its view and its fields' plans) or a container."""

    view: RowView | None = None
    fields: tuple[str, ...] = ()
    """The model's field names (facts when ``view`` is set)."""
    children: Mapping[str, ResultPlan] = field(default_factory=dict)
    """Plans of the fields that may hold further row views."""
    items: ResultPlan | None = None
    """For a list or a dict: the plan of each item (value)."""


_EMPTY = ResultPlan()


def _strip(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


@lru_cache(maxsize=2048)
def _plan(tp: Any) -> ResultPlan | None:
    """The plan for values of type ``tp`` (None: no row view can be inside one)."""
    tp = _strip(tp)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        plans = [p for p in (_plan(arg) for arg in typing.get_args(tp)) if p is not None]
        return plans[0] if plans else None
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        inner = _plan(args[0]) if args else None
        return ResultPlan(items=inner) if inner is not None else None
    if origin is dict:
        args = typing.get_args(tp)
        inner = _plan(args[1]) if len(args) == 2 else None
        return ResultPlan(items=inner) if inner is not None else None
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        view: RowView | None = getattr(tp, "__toolgym_row__", None)
        if view is not None and "__toolgym_row__" not in tp.__dict__:
            view = None  # a subclass of a row model is not that row unless it says so
        children = {}
        for name, info in tp.model_fields.items():
            child = _plan(info.annotation)
            if child is not None:
                children[name] = child
        if view is None and not children:
            return None
        fields = tuple(n for n in tp.model_fields if view is not None and n not in view.exclude)
        return ResultPlan(view=view, fields=fields, children=children)
    return None


def result_plan(spec: ToolSpec) -> ResultPlan:
    """The plan of ``spec``'s result (a wrapped non-model result sits under ``"result"``); built once per tool."""
    inner = _plan(typing.get_type_hints(spec.fn, include_extras=True).get("return", Any)) or _EMPTY
    return ResultPlan(children={"result": inner}) if spec.wraps_result else inner


_MAX_DEPTH = 16


def _walk(plan: ResultPlan, value: Any, out: dict[tuple[str, str], set[str]], depth: int) -> None:
    if depth > _MAX_DEPTH or value is None:
        return
    if plan.items is not None:
        if isinstance(value, list):
            for item in value:
                _walk(plan.items, item, out, depth + 1)
        elif isinstance(value, dict):
            for item in value.values():
                _walk(plan.items, item, out, depth + 1)
        return
    if not isinstance(value, dict):
        return
    view = plan.view
    if view is not None:
        parts = [value.get(k) for k in view.key]
        if all(p is not None and not isinstance(p, dict | list) for p in parts):
            facts = out.setdefault((view.table, row_key(*parts)), set())
            facts.update(view.fact(n) for n in plan.fields if value.get(n) is not None)
    for name, child in plan.children.items():
        if name in value:
            _walk(child, value[name], out, depth + 1)


def shown_rows(plan: ResultPlan, result: Any) -> Shown:
    """What a successful call's ``result`` (as recorded: JSON data) showed, by row.

    Never raises on what a result holds: values that do not fit the plan are passed over.
    """
    out: dict[tuple[str, str], set[str]] = {}
    _walk(plan, result, out, 0)
    return {row: frozenset(fields) for row, fields in out.items()}


def _facts_of(plan: ResultPlan, out: dict[str, set[str]], seen: set[int]) -> None:
    if id(plan) in seen:
        return
    seen.add(id(plan))
    if plan.view is not None:
        out.setdefault(plan.view.table, set()).update(plan.view.fact(n) for n in plan.fields)
    for child in plan.children.values():
        _facts_of(child, out, seen)
    if plan.items is not None:
        _facts_of(plan.items, out, seen)


def environment_facts(specs: Iterable[ToolSpec]) -> dict[str, frozenset[str]]:
    """Every fact some of ``specs`` can show, by table: what a gate may name (``Environment.facts`` caches it)."""
    out: dict[str, set[str]] = {}
    seen: set[int] = set()
    for spec in specs:
        _facts_of(spec.result_plan, out, seen)
    return {table: frozenset(names) for table, names in out.items()}
