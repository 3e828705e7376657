"""The numbers a report shows, computed with the run summary's own code (``clients.summary``, ``clients.metrics``).

Nothing here re-derives pass@k or a mean-score interval: per task and overall figures are the run's
:class:`~clients.summary.Summary`; per category figures are ``summarize`` over that category's lines. Two
additions: pass@1's bootstrap interval over problems, and, for comparisons, pass rates with Wilson intervals
and their *differences* with Newcombe's interval (:mod:`clients.metrics`) — intervals that keep a width at
0/n and n/n, where a bootstrap collapses to a point.

A comparison calls a task a **regression** or a **fix** only when the evidence says so: the 95% interval of
its pass-rate difference excludes 0. A difference whose interval includes 0 is **noise** (two runs of the
same noisy policy differ on most tasks), and the rows say so rather than counting it as a change. Runs that
were not run alike (other seeds, trials or tasks) are compared with a warning (:func:`comparison_warnings`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from clients.metrics import bootstrap_ci, mean, newcombe_interval, pass_at_k, wilson_interval
from clients.results import ResultLine
from clients.summary import AgentSummary, Stats, summarize
from clients.view.data import TaskMeta

__all__ = ["pass_at_1_ci", "stats_json", "category_stats", "task_deltas", "comparison_warnings", "seed_list"]


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


def _passes(lines: Sequence[ResultLine]) -> list[float]:
    return [1.0 if line.passed else 0.0 for line in lines if line.status == "graded"]


def _verdict(delta: float | None, ci: tuple[float, float] | None) -> str:
    """regression / fix when the interval excludes 0; noise when it moved within it; same; missing."""
    if delta is None or ci is None:
        return "missing"
    if ci[1] < 0:
        return "regression"
    if ci[0] > 0:
        return "fix"
    return "noise" if delta != 0 else "same"


def _side(lines: Sequence[ResultLine]) -> dict[str, Any]:
    passes = _passes(lines)
    passed = int(sum(passes))
    return {"n": len(passes), "passed": passed, "rate": mean(passes), "ci": wilson_interval(passed, len(passes)), "errored": len(lines) - len(passes)}


def _delta_row(name: str, a: Sequence[ResultLine], b: Sequence[ResultLine]) -> dict[str, Any]:
    side_a, side_b = _side(a), _side(b)
    rate_a, rate_b = side_a["rate"], side_b["rate"]
    delta = None if rate_a is None or rate_b is None else rate_b - rate_a
    ci = newcombe_interval(side_a["passed"], side_a["n"], side_b["passed"], side_b["n"])
    verdict = _verdict(delta, ci)
    return {
        "task": name,
        "a": side_a,
        "b": side_b,
        "delta": delta,
        "delta_ci": ci,
        "significant": verdict in ("regression", "fix"),
        "verdict": verdict,
    }


_ORDER = {"regression": 0, "fix": 1, "noise": 2, "missing": 3, "same": 4}


def task_deltas(a: Sequence[ResultLine], b: Sequence[ResultLine]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Overall and per-task pass-rate deltas from run ``a`` to run ``b``: regressions first (worst first), then fixes."""
    by_task_a: dict[str, list[ResultLine]] = defaultdict(list)
    by_task_b: dict[str, list[ResultLine]] = defaultdict(list)
    for line in a:
        by_task_a[line.task].append(line)
    for line in b:
        by_task_b[line.task].append(line)
    rows = [_delta_row(task, by_task_a.get(task, []), by_task_b.get(task, [])) for task in sorted(set(by_task_a) | set(by_task_b))]
    rows.sort(key=lambda r: (_ORDER[r["verdict"]], r["delta"] if r["verdict"] != "fix" and r["delta"] is not None else -(r["delta"] or 0), r["task"]))
    return _delta_row("overall", a, b), rows


def seed_list(seeds: set[int]) -> str:
    """Seeds as a user typed them: ``0-4``, ``0,2,7-9``."""
    ordered = sorted(seeds)
    parts: list[str] = []
    start = previous = None
    for seed in ordered + [None]:  # type: ignore[list-item]
        if seed is not None and previous is not None and seed == previous + 1:
            previous = seed
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = seed
    return ",".join(parts) or "none"


def comparison_warnings(a: Sequence[ResultLine], b: Sequence[ResultLine]) -> list[str]:
    """Why two runs may not compare like for like: other seeds, other trial counts, tasks only one of them ran."""
    found: list[str] = []
    seeds_a, seeds_b = {line.seed for line in a}, {line.seed for line in b}
    if seeds_a != seeds_b:
        found.append(
            f"the runs used different seeds (A: {seed_list(seeds_a)}, B: {seed_list(seeds_b)}): their tasks are "
            "compared on different task instances"
        )
    trials_a = {line.trial for line in a}
    trials_b = {line.trial for line in b}
    if len(trials_a) != len(trials_b):
        found.append(f"the runs ran different trials per problem (A: {len(trials_a)}, B: {len(trials_b)}): their pass rates rest on different samples")
    tasks_a, tasks_b = {line.task for line in a}, {line.task for line in b}
    for side, only in (("A", tasks_a - tasks_b), ("B", tasks_b - tasks_a)):
        if only:
            names = ", ".join(sorted(only)[:5]) + (" …" if len(only) > 5 else "")
            found.append(f"{len(only)} task(s) only in run {side} ({names}): the overall figures cover different tasks")
    return found
