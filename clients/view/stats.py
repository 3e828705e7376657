"""The numbers a report shows, computed with the run summary's own code (``clients.summary``, ``clients.metrics``).

Nothing here re-derives pass@k or a mean-score interval: per task and overall figures are the run's
:class:`~clients.summary.Summary`; per category figures are ``summarize`` over that category's lines. Two
additions, both bootstrap intervals from :func:`clients.metrics.bootstrap_ci`'s recipe: pass@1's interval
over problems, and the interval of a pass-rate *difference* between two runs (for comparisons).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from clients.metrics import bootstrap_ci, mean, pass_at_k
from clients.results import ResultLine
from clients.summary import AgentSummary, Stats, summarize
from clients.view.data import TaskMeta

__all__ = ["pass_at_1_ci", "stats_json", "category_stats", "delta_ci", "task_deltas"]


def pass_at_1_ci(lines: Sequence[ResultLine]) -> tuple[float, float] | None:
    """95% bootstrap interval of pass@1 over problems (each (task, seed) weighs once, as in the summary)."""
    by_problem: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for line in lines:
        if line.status == "graded":
            by_problem[(line.task, line.seed)].append(bool(line.passed))
    return bootstrap_ci([pass_at_k(len(p), sum(p), 1) for p in by_problem.values()], seed=0)


def stats_json(stats: Stats, lines: Sequence[ResultLine] | None = None) -> dict[str, Any]:
    """A :class:`Stats` as JSON for the page, with pass@1's interval when its lines are given."""
    data = stats.model_dump(mode="json")
    if lines is not None:
        data["pass_at_1_ci"] = pass_at_1_ci(lines)
    return data


def category_stats(env: str, agent: AgentSummary, lines: Sequence[ResultLine], tasks: dict[str, TaskMeta], k: int) -> list[dict[str, Any]]:
    """One agent's figures per task category (``summarize`` over each category's lines), sorted by name."""
    by_category: dict[str, list[ResultLine]] = defaultdict(list)
    for line in lines:
        if line.agent == agent.agent:
            by_category[tasks.get(line.task, TaskMeta()).category].append(line)
    found = []
    for name in sorted(by_category):
        group = by_category[name]
        overall = summarize(env, group, k=k).agents[0].overall.model_copy(update={"name": name})
        found.append(stats_json(overall, group))
    return found


def delta_ci(
    before: Sequence[float], after: Sequence[float], *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``mean(after) - mean(before)``, each sample resampled on its own.

    Deterministic for a given ``seed`` (the same two runs always print the same interval); None when either
    side is empty. Two constant samples give a zero-width interval.
    """
    if not before or not after:
        return None
    if min(before) == max(before) and min(after) == max(after):
        value = after[0] - before[0]
        return (value, value)
    rng = random.Random(seed)
    draw = rng.random
    a, b = list(before), list(after)
    na, nb = len(a), len(b)
    diffs = sorted(
        sum(b[int(draw() * nb)] for _ in range(nb)) / nb - sum(a[int(draw() * na)] for _ in range(na)) / na
        for _ in range(resamples)
    )
    alpha = (1 - confidence) / 2
    lo = diffs[max(0, math.floor(alpha * resamples))]
    hi = diffs[min(resamples - 1, math.ceil((1 - alpha) * resamples) - 1)]
    return (lo, hi)


def _passes(lines: Sequence[ResultLine]) -> list[float]:
    return [1.0 if line.passed else 0.0 for line in lines if line.status == "graded"]


def _delta_row(name: str, a: Sequence[ResultLine], b: Sequence[ResultLine]) -> dict[str, Any]:
    pa, pb = _passes(a), _passes(b)
    rate_a, rate_b = mean(pa), mean(pb)
    delta = None if rate_a is None or rate_b is None else rate_b - rate_a
    ci = delta_ci(pa, pb)
    if delta is None:
        verdict = "missing"
    elif delta < 0:
        verdict = "regression"
    elif delta > 0:
        verdict = "fix"
    else:
        verdict = "same"
    return {
        "task": name,
        "a": {"n": len(pa), "passed": int(sum(pa)), "rate": rate_a, "ci": bootstrap_ci(pa, seed=0), "errored": len(a) - len(pa)},
        "b": {"n": len(pb), "passed": int(sum(pb)), "rate": rate_b, "ci": bootstrap_ci(pb, seed=0), "errored": len(b) - len(pb)},
        "delta": delta,
        "delta_ci": ci,
        "significant": ci is not None and (ci[0] > 0 or ci[1] < 0),
        "verdict": verdict,
    }


_ORDER = {"regression": 0, "fix": 1, "missing": 2, "same": 3}


def task_deltas(a: Sequence[ResultLine], b: Sequence[ResultLine]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Overall and per-task pass-rate deltas from run ``a`` to run ``b``: regressions first (worst first), then fixes."""
    by_task_a: dict[str, list[ResultLine]] = defaultdict(list)
    by_task_b: dict[str, list[ResultLine]] = defaultdict(list)
    for line in a:
        by_task_a[line.task].append(line)
    for line in b:
        by_task_b[line.task].append(line)
    rows = [_delta_row(task, by_task_a.get(task, []), by_task_b.get(task, [])) for task in sorted(set(by_task_a) | set(by_task_b))]
    rows.sort(key=lambda r: (_ORDER[r["verdict"]], r["delta"] if r["verdict"] == "regression" else -(r["delta"] or 0), r["task"]))
    return _delta_row("overall", a, b), rows
