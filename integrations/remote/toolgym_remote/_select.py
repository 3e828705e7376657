"""Task selection over the control API's task metadata, with ``toolgym run --tasks`` semantics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["select_tasks"]


def select_tasks(rows: Sequence[dict[str, Any]], selector: str | Sequence[str] | None = None) -> list[str]:
    """Task ids of ``rows`` (``ControlClient.tasks()``) named by ``selector``, in the server's order.

    ``None`` or ``all`` selects every task; otherwise a comma-separated union of ids, ``split:X`` and ``tag:Y``.

    Raises:
        ValueError: a term names no task (the message lists what exists).
    """
    order = [str(row["id"]) for row in rows]
    if selector is None:
        return order
    terms = selector.split(",") if isinstance(selector, str) else list(selector)
    chosen: set[str] = set()
    for raw in terms:
        term = raw.strip()
        if not term:
            continue
        if term == "all":
            hits = set(order)
        elif term.startswith("split:"):
            hits = {str(r["id"]) for r in rows if r.get("split") == term[6:]}
        elif term.startswith("tag:"):
            hits = {str(r["id"]) for r in rows if term[4:] in (r.get("tags") or ())}
        else:
            hits = {term} & set(order)
        if not hits:
            shown = ", ".join(order[:10]) + (", ..." if len(order) > 10 else "")
            raise ValueError(f"task selector {term!r} names no task; tasks: {shown}")
        chosen |= hits
    if not chosen:
        raise ValueError(f"task selector {selector!r} selects no task")
    return [tid for tid in order if tid in chosen]
