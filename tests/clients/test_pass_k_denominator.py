"""pass^k and pass@k say over how many problems they are averaged: those with k graded trials (issue 19).

A problem (task, seed) whose trials errored has fewer than k graded trials and is left out of both: without
the denominator, a pass^3 over 2 of 40 problems reads like one over all 40.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from clients.results import ResultLine
from clients.runner import RunConfig, run
from clients.summary import render_summary, summarize
from tests.clients.toyenv import environment


def _line(seed: int, trial: int, passed: bool | None) -> ResultLine:
    """A graded line, or (``passed`` None) an errored one."""
    if passed is None:
        return ResultLine(
            env="toy-tasks", task="report_balance", seed=seed, trial=trial, agent="a", episode_id=f"e{seed}.{trial}",
            status="errored", error_class="provider", error="down", attempts=1,
        )
    return ResultLine(
        env="toy-tasks", task="report_balance", seed=seed, trial=trial, agent="a", episode_id=f"e{seed}.{trial}",
        status="graded", score=1.0 if passed else 0.0, passed=passed, attempts=1, stop_reason="done",
    )


def test_the_denominator_is_in_the_stats_the_json_and_the_table() -> None:
    # seed 0: 2 of 2 pass; seed 1: 1 of 2 pass; seed 2: one trial errored, so it is not a problem with 2 trials
    lines = [_line(0, 0, True), _line(0, 1, True), _line(1, 0, True), _line(1, 1, False), _line(2, 0, True), _line(2, 1, None)]
    summary = summarize("toy-tasks", lines, k=2)
    overall = summary.agents[0].overall
    assert (overall.problems, overall.problems_k, overall.pass_hat_k, overall.pass_at_k) == (3, 2, 0.5, 1.0)
    assert json.loads(summary.model_dump_json())["agents"][0]["overall"]["problems_k"] == 2
    console = Console(width=200, record=True)
    render_summary(summary, console)
    text = console.export_text()
    assert "50.0% of 2" in text and "100% of 2" in text
    assert "mean over the problems (task, seed) with 2 graded trials" in text


async def test_a_run_writes_the_denominator_to_summary_json(tmp_path: Path) -> None:
    outcome = await run(RunConfig(env=environment, agent="oracle", tasks="report_balance", seeds="0-2", trials=2, out=tmp_path / "run"))
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert written["agents"][0]["overall"]["problems_k"] == 3 == outcome.summary.agents[0].overall.problems_k
    assert all(task["problems_k"] == 3 for task in written["agents"][0]["tasks"])
