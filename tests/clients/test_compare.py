"""Comparing two runs: a task is a regression or a fix only when the evidence says so, with intervals that
behave at 0 and 1, and runs that were not run alike are compared with a warning."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from clients.metrics import newcombe_interval, wilson_interval
from clients.results import ResultLine
from clients.runner import RunConfig, run
from clients.view import compare_report
from clients.view.stats import comparison_warnings, seed_list, task_deltas
from tests.clients.toyenv import environment


def _line(task: str, seed: int, trial: int, passed: bool) -> ResultLine:
    return ResultLine(
        env="toy-tasks", task=task, seed=seed, trial=trial, agent="noisy", episode_id=f"{task}.{seed}.{trial}",
        status="graded", score=1.0 if passed else 0.0, passed=passed, attempts=1, stop_reason="done",
    )


def _noisy_run(rng: random.Random, tasks: int = 31, trials: int = 10, p: float = 0.5) -> list[ResultLine]:
    return [_line(f"task_{n:02d}", 0, trial, rng.random() < p) for n in range(tasks) for trial in range(trials)]


def test_wilson_and_newcombe_keep_a_width_at_0_and_1() -> None:
    assert wilson_interval(9, 9) == pytest.approx((0.7009, 1.0), abs=1e-4)
    assert wilson_interval(0, 9) == pytest.approx((0.0, 0.2991), abs=1e-4)
    assert wilson_interval(0, 0) is None
    assert newcombe_interval(0, 9, 9, 9) == pytest.approx((0.5769, 1.0), abs=1e-4)
    assert newcombe_interval(9, 9, 9, 9) == pytest.approx((-0.2991, 0.2991), abs=1e-4)  # equal, yet not certain
    # Newcombe (1998), table II, example (a): 56/70 against 48/80 → 0.0524 … 0.3339
    low, high = newcombe_interval(48, 80, 56, 70)  # type: ignore[misc]
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


def test_9_of_9_against_0_of_9_is_a_regression_with_a_real_interval() -> None:
    a = [_line("t", 0, k, True) for k in range(9)]
    b = [_line("t", 0, k, False) for k in range(9)]
    overall, (row,) = task_deltas(a, b)
    assert row["verdict"] == "regression" and row["delta"] == -1.0 and row["significant"]
    low, high = row["delta_ci"]
    assert high - low > 0.3 and high < 0  # never a zero-width interval
    assert row["a"]["ci"][0] < 1.0 and row["b"]["ci"][1] > 0.0


def test_two_runs_of_the_same_noisy_policy_show_no_regressions_to_speak_of() -> None:
    rng = random.Random(7)
    a, b = _noisy_run(rng), _noisy_run(rng)
    overall, rows = task_deltas(a, b)
    moved = [r for r in rows if r["delta"] != 0]
    called = [r for r in rows if r["verdict"] in ("regression", "fix")]
    assert len(moved) > 20  # the pass rates do move on most tasks...
    assert len(called) <= 2, [(r["task"], r["delta"], r["delta_ci"]) for r in called]  # ...but that is noise
    assert all(r["verdict"] == "noise" for r in moved if r not in called)
    low, high = overall["delta_ci"]
    assert low < 0 < high and overall["verdict"] == "noise"
    assert [r["verdict"] for r in rows][: len(called)] == [r["verdict"] for r in called]  # the evidence first


def test_regressions_first_then_fixes_then_noise_worst_first() -> None:
    a = [_line("down", 0, k, True) for k in range(10)] + [_line("up", 0, k, False) for k in range(10)]
    a += [_line("wobble", 0, k, k < 6) for k in range(10)] + [_line("flat", 0, k, k < 5) for k in range(10)]
    b = [_line("down", 0, k, False) for k in range(10)] + [_line("up", 0, k, True) for k in range(10)]
    b += [_line("wobble", 0, k, k < 4) for k in range(10)] + [_line("flat", 0, k, k < 5) for k in range(10)]
    _, rows = task_deltas(a, b)
    assert [(r["task"], r["verdict"]) for r in rows] == [("down", "regression"), ("up", "fix"), ("wobble", "noise"), ("flat", "same")]


def test_runs_with_other_seeds_trials_or_tasks_are_compared_with_a_warning() -> None:
    a = [_line(t, s, k, True) for t in ("x", "y") for s in range(3) for k in range(3)]
    b = [_line(t, s, 0, True) for t in ("x", "z") for s in (0, 1, 2, 5, 6, 7)]
    warnings = comparison_warnings(a, b)
    assert warnings[0].startswith("the runs used different seeds (A: 0-2, B: 0-2,5-7)")
    assert warnings[1].startswith("the runs ran different trials per problem (A: 3, B: 1)")
    assert "1 task(s) only in run A (y)" in warnings[2] and "1 task(s) only in run B (z)" in warnings[3]
    assert comparison_warnings(a, a) == []
    assert seed_list({0, 1, 2, 4, 7, 8}) == "0-2,4,7-8"


async def test_view_of_mismatched_runs_prints_the_warnings(tmp_path: Path) -> None:
    await run(RunConfig(env=environment, agent="oracle", seeds="0-1", trials=2, out=tmp_path / "a"))
    await run(RunConfig(env=environment, agent="oracle", seeds="0", out=tmp_path / "b"))
    report = compare_report(tmp_path / "a", tmp_path / "b", environment=environment)
    assert report.warnings == (
        "the runs used different seeds (A: 0-1, B: 0): their tasks are compared on different task instances",
        "the runs ran different trials per problem (A: 2, B: 1): their pass rates rest on different samples",
    )
    assert "these runs were not run alike" in report.html.lower()  # the page script holds the notice's text
