"""``--resume`` over errored episodes keeps the tokens their attempts spent, in every figure (issue 19).

Tokens are money: a resume that drops an errored line's tokens under-reports what a run cost (94,924 sent,
47,462 reported). Each scenario runs the real runner against a scripted provider over local HTTP.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console

from clients.agents.base import Limits
from clients.agents.openai import OpenAIAgent
from clients.results import read_results
from clients.runner import RunConfig, RunOutcome, run
from clients.summary import render_summary
from clients.view import run_report
from clients.view.data import load_run
from clients.view.payload import run_payload
from tests.clients.chromium import launched_chromium, open_report
from tests.clients.fake_provider import Reply, openai_error, running_provider
from tests.clients.llm_scenarios import ACCOUNT, QUICK, no_wait, solution, tool_turn
from tests.clients.toyenv import environment

OUTAGE = Reply(openai_error("upstream down"), status=502)


def _errors_after_a_turn() -> list[Reply]:
    """A turn that costs 120 tokens, then an outage: the attempt errors (``provider``) having spent them."""
    return [tool_turn("openai", [("c1", "get_account", json.dumps({"account_id": ACCOUNT}))], tokens=(100, 20)), OUTAGE]


async def _run(out: Path, script: list[Reply], *, resume: bool) -> RunOutcome:
    with anyio.fail_after(30):
        async with running_provider(script) as provider:
            agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1", api_key="k", sleep=no_wait, backoff=QUICK)
            config = RunConfig(
                env=environment, agent=agent, tasks="report_balance", seeds="0", out=out, resume=resume, retries=0,
                limits=Limits(request_timeout=5, max_retries=0), sleep=no_wait,
            )
            return await run(config)


async def _errored_twice_then_resumed(out: Path) -> RunOutcome:
    """Errored (120 tokens), resumed and errored again (120 more), resumed and graded (45)."""
    first = await _run(out, _errors_after_a_turn(), resume=False)
    assert (first.lines[0].status, first.lines[0].tokens.total) == ("errored", 120)
    again = await _run(out, _errors_after_a_turn(), resume=True)  # errored twice: both attempts' tokens carried
    assert again.lines[0].failed_attempt_tokens.total == 120
    return await _run(out, solution("openai"), resume=True)


async def test_a_resumed_errored_episode_keeps_its_tokens_in_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "run"
    final = await _errored_twice_then_resumed(out)
    (line,) = final.lines
    assert (line.status, line.passed, line.tokens.total) == ("graded", True, 45)
    assert line.failed_attempt_tokens.total == 240 and line.failed_attempt_tokens.prompt == 200
    overall = final.summary.agents[0].overall
    assert (overall.tokens, overall.failed_attempt_tokens) == (45, 240)
    written = json.loads((out / "summary.json").read_text())["agents"][0]["overall"]
    assert (written["tokens"], written["failed_attempt_tokens"]) == (45, 240)
    assert read_results(out / "results.jsonl").lines[-1].failed_attempt_tokens.total == 240
    console = Console(width=200, record=True)
    render_summary(final.summary, console)
    assert "45 (+240 re-run)" in console.export_text()
    page = run_payload(load_run(out, environment=environment)).index  # what the report shows
    (row,) = page["episodes"]
    assert (row["tokens"], row["rerun_tokens"]) == (285, 240)
    assert page["agents"][0]["overall"]["failed_attempt_tokens"] == 240


async def test_a_resume_that_only_grades_keeps_nothing_extra(tmp_path: Path) -> None:
    out = tmp_path / "run"
    await _run(out, solution("openai"), resume=False)
    final = await _run(out, [], resume=True)  # nothing left to run
    assert final.ran == 0 and final.lines[0].failed_attempt_tokens.total == 0
    assert final.summary.agents[0].overall.tokens == 45


def test_the_report_shows_the_tokens_of_re_run_attempts(tmp_path: Path) -> None:
    """In a real browser: the run's tokens card counts every attempt, and says how many were re-runs'."""
    out = tmp_path / "run"
    anyio.run(_errored_twice_then_resumed, out)
    page_file = run_report(out, environment=environment).write(tmp_path / "run.html")
    with launched_chromium() as browser:
        opened = open_report(browser, page_file)
        page: Any = opened.page
        assert page.locator('[data-stat="tokens"] .stat-value').inner_text() == "285"
        assert "240 in re-run attempts" in page.locator('[data-stat="tokens"] .stat-sub').inner_text()
        assert opened.errors == [], opened.errors
