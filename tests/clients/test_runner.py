"""The runner in process: oracle and no-op runs, summaries, resume, retries of infrastructure errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from clients.agents.base import AgentResult, AgentSession, Limits
from clients.errors import AgentSpecError, RunError
from clients.results import ResultLine, read_results
from clients.runner import RunConfig, RunOutcome, run
from servers.record import read_record
from tests.clients.toyenv import FLAKY, environment


@pytest.fixture(autouse=True)
def _steady_flaky_tool() -> Iterator[None]:
    FLAKY["failures_left"] = 0
    yield
    FLAKY["failures_left"] = 0


async def _no_pause(seconds: float) -> None:
    """Pauses before re-runs are not spent in tests."""


async def go(out: Path, **options: Any) -> RunOutcome:
    options.setdefault("env", environment)
    options.setdefault("agent", "oracle")
    options.setdefault("sleep", _no_pause)
    with anyio.fail_after(60):
        return await run(RunConfig(out=out, **options))


def stable(line: ResultLine) -> dict[str, Any]:
    """What must not depend on timing, concurrency or interruption."""
    return {
        "key": line.key,
        "status": line.status,
        "score": line.score,
        "passed": line.passed,
        "grade": line.grade,
        "tool_calls": line.tool_calls,
        "record": line.record,
    }


async def test_oracle_passes_every_task(tmp_path: Path) -> None:
    outcome = await go(tmp_path / "run", seeds="0-2")
    assert len(outcome.lines) == 9
    assert all(line.status == "graded" and line.passed and line.score == 1.0 for line in outcome.lines)
    overall = outcome.summary.agents[0].overall
    assert (overall.pass_at_1, overall.mean_score, overall.score_ci, overall.errored) == (1.0, 1.0, (1.0, 1.0), 0)
    assert {t.name for t in outcome.summary.agents[0].tasks} == {"pay_back", "report_balance", "flaky_report"}
    # Every episode's record is on disk, complete, and its grade is in the results line.
    for line in outcome.lines:
        assert line.record is not None
        record = read_record(tmp_path / "run" / line.record, require_closed=True)
        assert record.header.task == line.task and record.header.seed == line.seed
        assert [c.tool for c in record.tool_calls][-1] == "submit_answer"
        assert line.grade is not None and line.grade["template_id"] == line.task
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["agents"][0]["overall"]["pass_at_1"] == 1.0


async def test_noop_fails_every_task_and_the_summary_says_why(tmp_path: Path) -> None:
    outcome = await go(tmp_path / "run", agent="noop", seeds="0,1")
    assert all(line.status == "graded" and not line.passed for line in outcome.lines)
    assert all(line.tool_calls == 0 for line in outcome.lines)
    stats = outcome.summary.agents[0]
    assert stats.overall.pass_at_1 == 0.0
    failed = {c.name: c for c in stats.failed_criteria}
    assert failed["right balance"].failures == 4 and failed["right balance"].tasks == ["flaky_report", "report_balance"]
    assert failed["debt paid"].failures == 2 and failed["debt paid"].of == 2


async def test_trials_give_pass_hat_k_and_pass_at_k(tmp_path: Path) -> None:
    outcome = await go(tmp_path / "run", tasks="report_balance", seeds="0-1", trials=3)
    assert [(l.seed, l.trial) for l in outcome.lines] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    overall = outcome.summary.agents[0].overall
    assert overall.k == 3 and overall.problems == 2
    assert overall.pass_hat_k == 1.0 and overall.pass_at_k == 1.0


async def test_resume_after_an_interruption_gives_the_uninterrupted_results(tmp_path: Path) -> None:
    options: dict[str, Any] = {"seeds": "0-2", "trials": 2, "concurrency": 4}
    whole = await go(tmp_path / "whole", **options)
    interrupted = tmp_path / "interrupted"
    await go(interrupted, **options)
    results = interrupted / "results.jsonl"
    kept = results.read_text().splitlines(keepends=True)[:5]
    # An interrupted run: five finished lines, then a line torn mid-write, records of unfinished episodes gone.
    results.write_text("".join(kept) + kept[0][:37])
    finished = {ResultLine.model_validate_json(text).key for text in kept}
    for line in whole.lines:
        if line.key not in finished:
            (interrupted / line.record).unlink()  # type: ignore[operator]
    resumed = await go(interrupted, resume=True, **options)
    assert resumed.skipped == 5 and resumed.ran == len(whole.lines) - 5
    assert [stable(l) for l in resumed.lines] == [stable(l) for l in whole.lines]
    assert len(read_results(results).lines) == len(whole.lines)  # the torn line was dropped, nothing duplicated
    for line in resumed.lines:
        assert (interrupted / line.record).exists()  # type: ignore[operator]
    again = await go(interrupted, resume=True, **options)
    assert again.ran == 0 and again.skipped == len(whole.lines)


async def test_corrupt_results_file_on_resume_is_a_clear_error_and_untouched(tmp_path: Path) -> None:
    out = tmp_path / "run"
    await go(out, tasks="report_balance", seeds="0-2")
    results = out / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text(lines[0] + '{"env": "toy-tasks", "task": 7}\n' + "".join(lines[1:]))
    before = results.read_bytes()
    with pytest.raises(RunError, match="corrupt at line 2"):
        await go(out, tasks="report_balance", seeds="0-2", resume=True)
    assert results.read_bytes() == before


async def test_an_existing_run_is_not_overwritten_by_accident(tmp_path: Path) -> None:
    out = tmp_path / "run"
    await go(out, tasks="report_balance")
    before = (out / "results.jsonl").read_bytes()
    with pytest.raises(RunError, match="already holds a run; pass --resume"):
        await go(out, tasks="report_balance")
    assert (out / "results.jsonl").read_bytes() == before
    replaced = await go(out, tasks="pay_back", overwrite=True)
    assert [l.task for l in replaced.lines] == ["pay_back"]
    assert [p.name for p in (out / "records").iterdir()] == ["oracle.pay_back.s0.t0.jsonl"]


async def test_default_folder_survives_a_run_that_cannot_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = await run(RunConfig(env=environment, agent="oracle", tasks="report_balance"))
    assert first.out == Path("runs/latest")
    before = (tmp_path / "runs/latest/results.jsonl").read_bytes()
    with pytest.raises(RunError, match="cannot reach"):
        await run(RunConfig(env=environment, agent="oracle", server="http://127.0.0.1:9"))
    assert (tmp_path / "runs/latest/results.jsonl").read_bytes() == before
    second = await run(RunConfig(env=environment, agent="oracle", tasks="pay_back"))  # the default folder is replaced
    assert [l.task for l in second.lines] == ["pay_back"]


async def test_kit_crash_is_retried_then_scored(tmp_path: Path) -> None:
    FLAKY["failures_left"] = 1
    outcome = await go(tmp_path / "run", tasks="flaky_report", concurrency=1)
    (line,) = outcome.lines
    assert line.status == "graded" and line.passed and line.attempts == 2


async def test_persistent_kit_crash_is_errored_excluded_and_counted(tmp_path: Path) -> None:
    FLAKY["failures_left"] = 1000
    outcome = await go(tmp_path / "run", tasks="flaky_report,report_balance", retries=1)
    errored = [l for l in outcome.lines if l.status == "errored"]
    assert [(l.task, l.error_class, l.attempts) for l in errored] == [("flaky_report", "internal", 2)]
    assert "flaky_balance" in (errored[0].error or "") and "flaky backend" in (errored[0].error or "")
    assert errored[0].score is None and errored[0].grade is None
    stats = outcome.summary.agents[0]
    assert stats.overall.episodes == 1 and stats.overall.errored == 1 and stats.overall.pass_at_1 == 1.0
    assert stats.error_classes == {"internal": 1}
    # The errored attempt's record is kept for debugging, marked as such.
    record = read_record(tmp_path / "run" / errored[0].record, require_closed=True)  # type: ignore[operator]
    assert record.tool_calls[0].error is not None and record.tool_calls[0].error.error_class == "internal"


async def test_selection_by_tag_and_split(tmp_path: Path) -> None:
    by_tag = await go(tmp_path / "a", tasks="tag:writes")
    assert [l.task for l in by_tag.lines] == ["pay_back"]
    by_split = await go(tmp_path / "b", tasks="split:test")
    assert sorted(l.task for l in by_split.lines) == ["flaky_report", "report_balance"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"env": "no-such-env"}, "no environment 'no-such-env'; available:"),
        ({"tasks": "pay_back,nope"}, "has no task 'nope'; tasks: pay_back, report_balance, flaky_report"),
        ({"tasks": "tag:nope"}, "no task of 'toy-tasks' has tag 'nope'; tags: flaky, read, writes"),
        ({"tasks": "split:dev"}, "no task of 'toy-tasks' is in split 'dev'; splits: test, train"),
        ({"seeds": "3-1"}, "is not a seed or an ascending range"),
        ({"seeds": "a"}, "is not a seed or an ascending range"),
        ({"trials": 0}, "--trials must be >= 1"),
        ({"server": "http://127.0.0.1:9"}, "cannot reach a toolgym server at http://127.0.0.1:9"),
    ],
)
async def test_bad_requests_are_clear_errors(tmp_path: Path, options: dict[str, Any], message: str) -> None:
    env = options.pop("env", environment)
    with anyio.fail_after(30), pytest.raises(RunError) as caught:
        await run(RunConfig(env=env, agent="oracle", out=tmp_path / "run", **options))
    assert message in str(caught.value)
    assert not (tmp_path / "run" / "results.jsonl").exists()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt4", "unknown agent 'gpt4'; agents: oracle, noop, replay:PATH, openai:MODEL, anthropic:MODEL, cmd:COMMAND"),
        ("replay:", "replay needs a record file or a run folder"),
        ("replay:/nonexistent/run", "neither a record file nor a run folder"),
        ("cmd:", "cmd: needs a command"),
        ("cmd:definitely-not-a-program-xyz --x", "is not an executable on PATH"),
        ("oracle:extra", "unknown agent 'oracle:extra'"),
    ],
)
async def test_bad_agent_specs_are_clear_errors(tmp_path: Path, spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError) as caught:
        await run(RunConfig(env=environment, agent=spec, out=tmp_path / "run"))
    assert message in str(caught.value)


async def test_agent_timeout_stops_the_episode_and_it_is_still_graded(tmp_path: Path) -> None:
    class Stuck:
        spec = "stuck"
        transport = "memory"
        needs_instance = False
        needs_tools = False

        async def run(self, session: AgentSession) -> AgentResult:
            await session.call_tool("list_accounts", {})
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def aclose(self) -> None:
            pass

    outcome = await go(tmp_path / "run", agent=Stuck(), tasks="report_balance", limits=Limits(episode_timeout=0.2))
    (line,) = outcome.lines
    assert line.status == "graded" and line.stop_reason == "timeout" and not line.passed and line.tool_calls == 1


class SignsItsWork:
    """Calls tools through the raw client (not session.call_tool), interleaving with the other workers."""

    spec = "signer"
    transport = "memory"
    needs_instance = False
    needs_tools = True

    async def run(self, session: AgentSession) -> AgentResult:
        assert session.client is not None and {t.name for t in session.tools} >= {"submit_answer"}
        for part in range(3):
            await session.client.call_tool("submit_answer", {"text": f"{session.name}#{part}"})
            await anyio.sleep(0)  # let every other worker's calls interleave with ours
        return AgentResult()

    async def aclose(self) -> None:
        pass


async def test_concurrent_episodes_on_the_shared_client_stay_isolated(tmp_path: Path) -> None:
    outcome = await go(tmp_path / "run", agent=SignsItsWork(), seeds="0-3", concurrency=6)
    assert len(outcome.lines) == 12
    for line in outcome.lines:
        record = read_record(tmp_path / "run" / line.record, require_closed=True)  # type: ignore[operator]
        name = Path(line.record).stem  # type: ignore[arg-type]
        assert [c.arguments["text"] for c in record.tool_calls] == [f"{name}#0", f"{name}#1", f"{name}#2"]


def odd_seeds_reporting_figures(environment: Any, template_id: str, pairs: int = 2) -> list[int]:
    """Seeds 2k, 2k+1 where the odd seed's oracle reports figures (the world decides some instances' outcome)."""
    chosen: list[int] = []
    for odd in range(1, 40, 2):
        world, task = environment.instantiate_task(template_id, odd)
        world.release()
        if isinstance(task.oracle[-1].arguments.get("values"), dict):
            chosen += [odd - 1, odd]
        if len(chosen) == 2 * pairs:
            return chosen
    raise AssertionError(f"{template_id}: too few odd seeds whose answer reports figures")


class BreaksTheGraderOnOddSeeds:
    """Plays the oracle, but on odd seeds reports every figure as "1e999999999" (issue 17: that crashed the
    grader, the episode errored and dropped out of pass@1, so this agent was reported passing everything)."""

    spec = "odd-breaker"
    transport = "memory"
    needs_instance = True
    needs_tools = False

    async def run(self, session: AgentSession) -> AgentResult:
        assert session.instance is not None
        for step in session.instance.oracle:
            arguments = dict(step.arguments)
            if session.seed % 2:
                if isinstance(arguments.get("values"), dict):
                    arguments["values"] = dict.fromkeys(arguments["values"], "1e999999999")
                if "amount" in arguments and step.tool == "submit_answer":
                    arguments["amount"] = "1e999999999"
            await session.call_tool(step.tool, arguments)
        return AgentResult()

    async def aclose(self) -> None:
        pass


async def test_an_agent_that_breaks_the_grader_on_odd_seeds_is_scored_on_every_seed(tmp_path: Path) -> None:
    from envs.finance import environment as finance

    seeds = odd_seeds_reporting_figures(finance, "available_balance")
    with anyio.fail_after(120):
        outcome = await run(RunConfig(env=finance, agent=BreaksTheGraderOnOddSeeds(), tasks="available_balance", seeds=seeds,
                                      out=tmp_path / "run", sleep=_no_pause))
    assert [(l.seed, l.status, l.passed) for l in outcome.lines] == [(s, "graded", s % 2 == 0) for s in seeds]
    overall = outcome.summary.agents[0].overall
    assert overall.pass_at_1 == 0.5 and overall.errored == 0 and outcome.summary.not_graded == 0
    assert outcome.summary.headline() is None


async def test_a_grader_that_fails_errors_the_episode_as_grading_once_and_the_headline_counts_it(tmp_path: Path) -> None:
    """The kit's own grading failure: errored ``grading`` (never ``kit`` or ``connection``), not re-run, counted."""
    from rich.console import Console

    from clients.summary import render_summary
    from tests.graders.fragile import environment as fragile

    with anyio.fail_after(60):
        outcome = await go(tmp_path / "run", env=fragile, agent=BreaksTheGraderOnOddSeeds(), seeds="0-3", retries=2)
    lines = {l.seed: l for l in outcome.lines}
    assert [lines[s].status for s in range(4)] == ["graded", "errored", "graded", "errored"]
    for seed in (1, 3):
        line = lines[seed]
        assert (line.error_class, line.attempts, line.score) == ("grading", 1, None)
        assert "custom check 'tests.graders.fragile:careless_amount' crashed: Overflow" in (line.error or "")
        assert line.record is not None and (tmp_path / "run" / line.record).exists()  # kept, to grade again once fixed
    summary = outcome.summary
    assert summary.not_graded == 2 and summary.episodes == 4 and summary.agents[0].error_classes == {"grading": 2}
    headline = summary.headline()
    assert headline == "2 of 4 episodes were not graded (grading: 2): every pass rate and score below covers the 2 graded ones only"
    console = Console(record=True, width=200)
    render_summary(summary, console)
    assert console.export_text().splitlines()[0] == headline
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["not_graded"] == 2


class ListsItsTools:
    """Lists the tools through the client the runner hands it, as an LLM agent's harness does, then calls one."""

    spec = "lister"
    transport = "memory"
    needs_instance = False
    needs_tools = True

    def __init__(self) -> None:
        self.listings: list[list[dict[str, Any]]] = []

    async def run(self, session: AgentSession) -> AgentResult:
        assert session.client is not None
        listed = (await session.client.list_tools()).tools
        self.listings.append([tool.model_dump(mode="json") for tool in listed])
        assert [t.model_dump(mode="json") for t in session.tools] == self.listings[-1]
        await session.client.call_tool("list_accounts", {})
        return AgentResult()

    async def aclose(self) -> None:
        pass


async def test_agents_in_process_get_the_servers_listing_without_a_request_per_episode(
    tmp_path: Path, sdk_listings: Callable[[], int]
) -> None:
    from servers import EpisodeManager, connect_in_memory

    manager = EpisodeManager(environment)
    async with connect_in_memory(manager.create()) as client:  # what the server answers to a real tools/list
        wanted = [tool.model_dump(mode="json") for tool in (await client.list_tools()).tools]
    manager.close_all()
    before = sdk_listings()
    agent = ListsItsTools()
    outcome = await go(tmp_path / "run", agent=agent, tasks="report_balance", seeds="0-2")
    assert [line.status for line in outcome.lines] == ["graded"] * 3 and all(line.tool_calls == 1 for line in outcome.lines)
    assert agent.listings == [wanted] * 3  # what the server lists, once per server: no tools/list per episode
    assert sdk_listings() == before
