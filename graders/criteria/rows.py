"""Row changes as evidence and as content signatures (shared by the change-set and collateral criteria).

Matching by content is what makes generated ids harmless: two inserts that differ only in ignorable
columns (a generated id, a timestamp) have the same signature, wherever they landed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fixtures.changes import RowChange
from graders.criteria.matchers import short

__all__ = ["IgnoreColumns", "ignored_for", "signature", "render_change", "render_key"]

IgnoreColumns = Mapping[str, Sequence[str]]
"""Table name (or ``"*"`` for every table) → columns whose values do not matter."""


def ignored_for(ignore: IgnoreColumns, table: str) -> set[str]:
    """The columns ignored in ``table``: its own entry plus the ``"*"`` entry."""
    return set(ignore.get(table, ())) | set(ignore.get("*", ()))


def _project(row: dict[str, Any] | None, drop: set[str]) -> dict[str, Any] | None:
    if row is None:
        return None
    return {k: v for k, v in row.items() if k not in drop}


def signature(change: RowChange, ignore: IgnoreColumns) -> str | None:
    """A canonical string for what ``change`` did, ignoring ``ignore``'s columns.

    Returns None for an update that only touched ignored columns (it does not count as a change).
    """
    drop = ignored_for(ignore, change.table)
    if change.op == "update" and all(c in drop for c in change.columns):
        return None
    body = [change.table, change.op, _project(change.before, drop), _project(change.after, drop)]
    return json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)


def render_key(change: RowChange) -> str:
    """``table[key]`` for evidence, e.g. ``accounts[3]`` or ``lines[7,2]``."""
    return f"{change.table}[{','.join(str(k) for k in change.key)}]"


def render_change(change: RowChange, ignore: IgnoreColumns | None = None, limit: int = 6) -> str:
    """One readable line for a row change: what happened to which row, with the values that matter."""
    drop = ignored_for(ignore or {}, change.table)
    head = f"{change.op} {render_key(change)}"
    if change.op == "update" and change.before is not None and change.after is not None:
        shown = [c for c in change.columns if c not in drop] or list(change.columns)
        parts = [f"{c}: {short(change.before.get(c), 30)} → {short(change.after.get(c), 30)}" for c in shown[:limit]]
        more = f", +{len(shown) - limit} more" if len(shown) > limit else ""
        return f"{head} {', '.join(parts)}{more}"
    row = change.after if change.op == "insert" else change.before
    items = [(k, v) for k, v in sorted((row or {}).items()) if k not in drop]
    parts = [f"{k}={short(v, 30)}" for k, v in items[:limit]]
    more = f", +{len(items) - limit} more" if len(items) > limit else ""
    return f"{head} {{{', '.join(parts)}{more}}}"
