"""Task selection over the control API's task metadata, with ``toolgym run --tasks`` semantics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["select_tasks", "parse_seeds", "MAX_INSTANCES"]


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


MAX_INSTANCES = 100_000
"""Most seeds one selector may name: a typo such as ``0-99999999`` fails at once instead of filling memory."""


def parse_seeds(seeds: str | int | Sequence[int]) -> list[int]:
    """Seeds from ``toolgym run --seeds`` text (``0,1,2``, ``0-4``, ``0-2,7``), one integer, or a list of integers;
    duplicates dropped, order kept.

    Raises:
        ValueError: a term is not a non-negative integer or an ascending range of them, or the selection is empty or
            larger than :data:`MAX_INSTANCES`.
    """
    if isinstance(seeds, bool):
        raise ValueError(f"seeds: {seeds!r} is not a seed")
    if isinstance(seeds, int):
        terms: list[str] = [str(seeds)]
    elif isinstance(seeds, str):
        terms = seeds.split(",")
    else:
        terms = []
        for seed in seeds:
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise ValueError(f"seeds: {seed!r} is not a seed (a non-negative integer)")
            terms.append(str(seed))
    chosen: dict[int, None] = {}
    for raw in terms:
        term = raw.strip()
        if not term:
            continue
        low, dash, high = term.partition("-")
        try:
            start, stop = (int(low), int(high)) if dash else (int(term), int(term))
        except ValueError:
            raise ValueError(f"seeds: {term!r} is not a seed or an ascending range like 0-4") from None
        if start < 0 or stop < start:
            raise ValueError(f"seeds: {term!r} is not a seed or an ascending range like 0-4")
        if stop - start + 1 + len(chosen) > MAX_INSTANCES:
            raise ValueError(f"seeds: {term!r} names more than {MAX_INSTANCES} seeds")
        chosen.update(dict.fromkeys(range(start, stop + 1)))
    if not chosen:
        raise ValueError(f"seeds: {seeds!r} selects no seed")
    return list(chosen)
