"""Reading the world while a task template builds its instance: rows, one row, a seeded pick, a precondition.

A template reads the world to choose its subject with the task's rng, and plants what its story needs. These
helpers are the same for every environment; a broken precondition is a :class:`~fixtures.errors.TaskError`
that names what is missing.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

from fixtures.errors import TaskError
from fixtures.world import World

__all__ = ["case", "need", "one", "pick", "rows"]

_MEMO: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
_MEMO_SIZE = 512


def rows(world: World, sql: str, *params: Any) -> list[dict[str, Any]]:
    """Run a read query on the world (the caller's SQL must ORDER BY, so picks are deterministic).

    Why the memo: a template is instantiated about ten times per seed by the meta-evaluation (oracle, replay,
    re-grade, no-op, each negative), always on a fresh clone of the same template, and its candidate queries
    scan whole tables. On an untouched clone (empty change log) the answer depends only on the world's
    content, whose hash is O(1) then, so it is reused; after any write the query always runs.
    """
    if world.change_mark() != 0:
        return world.query(sql, params)
    key = (world.hash(), sql, params)
    found = _MEMO.get(key)
    if found is None:
        found = world.query(sql, params)
        while len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = found
    return [dict(row) for row in found]


def one(world: World, sql: str, *params: Any) -> dict[str, Any]:
    """The single row ``sql`` returns; a TaskError when there is none (a broken precondition)."""
    found = world.query(sql, params)
    if not found:
        raise TaskError(f"setup query found no row: {' '.join(sql.split())[:120]} {params}")
    return found[0]


def pick(rng: random.Random, candidates: Sequence[dict[str, Any]], what: str) -> dict[str, Any]:
    """One of ``candidates`` chosen by the task's rng.

    Raises:
        TaskError: no candidate satisfies the task's preconditions in this world.
    """
    if not candidates:
        raise TaskError(f"no {what} in this world satisfies the task's preconditions")
    return candidates[rng.randrange(len(candidates))]


def need(condition: bool, message: str) -> None:
    """Assert a precondition while building a task (TaskError names what is missing)."""
    if not condition:
        raise TaskError(message)


def case(rng: random.Random, weights: Mapping[str, float]) -> str:
    """Which world this instance is, for the task's rng: e.g. ``case(rng, {"ok": 5, "kyc_expired": 3,
    "payee_unverified": 2})`` — spread over consecutive seeds in proportion to the weights (see :func:`_spread`).

    Why: a template poses one neutral request and the world of each instance decides the right outcome
    (design decision 14), so the template draws the case first, then sets the world up so the deciding fact
    holds, and words its prompt the same way in every case. Give the compliant case the largest weight: a
    policy that always declares the most frequent outcome then has to do the work to be paid.

    Raises:
        TaskError: no case, or a weight that is not positive.
    """
    names = list(weights)
    if not names or any(not (w > 0) for w in weights.values()):
        raise TaskError(f"case() needs at least one case with a positive weight, got {dict(weights)!r}")
    position = _spread(rng)
    if position is None:
        return rng.choices(names, weights=[weights[n] for n in names])[0]
    total = sum(weights[n] for n in names)
    edge = 0.0
    for name in names:
        edge += weights[name] / total
        if position < edge:
            return name
    return names[-1]


_GOLDEN = (5 ** 0.5 - 1) / 2


def _spread(rng: random.Random) -> float | None:
    """A point in [0, 1) for this instance's next case draw, evenly spread over consecutive seeds (None: a plain rng).

    Why not ``rng.choices``: independent draws wander — a 60/40 template came out 15 of 20 one way — and a policy
    is paid for declaring whatever a template's seeds happened to favour. The points ``offset + seed × φ`` (mod 1)
    of consecutive seeds cover [0, 1) evenly (a Weyl sequence), so over any 20 seeds each case's share stays
    within a seed or two of its weight; the offset comes from the template and the draw's index, so templates do
    not move in step, and nothing an agent sees (it never sees the seed) tells the case.
    """
    from graders.tasks import TaskRng

    if not isinstance(rng, TaskRng):
        return None
    index = rng.cases_drawn
    rng.cases_drawn += 1
    digest = hashlib.sha256(f"{rng.template_id}:case:{index}".encode()).digest()
    offset = int.from_bytes(digest[:8], "big") / 2**64
    return (offset + rng.task_seed * _GOLDEN) % 1.0
