"""The runner against a running server (--server): control API + per-episode MCP URLs over real HTTP."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import pytest

import httpx

from clients.agents.base import AgentResult, AgentSession
from clients.agents.openai import OpenAIAgent
from clients.backends import merge_messages
from clients.errors import RunError
from clients.runner import RunConfig, run
from servers.episodes import EpisodeManager
from servers.http import HttpServer, running_http
from servers.http_client import HttpClient
from servers.record import ClosedEvent, EpisodeHeader, MessageEvent, Record, ToolCallEvent, read_record
from tests.clients.fake_provider import Reply, openai_message, openai_tool_call, running_provider
from tests.clients.toyenv import environment
from tests.toy_env import environment as other_environment


def verdicts(lines: list) -> list[tuple]:  # type: ignore[type-arg]
    return [(l.task, l.seed, l.score, l.passed, l.grade["criteria"]) for l in lines]


async def test_oracle_over_http_grades_like_in_process(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        local = await run(RunConfig(env=environment, agent="oracle", seeds="0-1", out=tmp_path / "local"))
        manager = EpisodeManager(environment)
        async with running_http(environment, manager=manager) as server:
            config = RunConfig(
                env=environment, agent="oracle", seeds="0-1", out=tmp_path / "remote", server=server.url, token=server.token, concurrency=4
            )
            remote = await run(config)
            assert len(server.manager) == 0  # every episode was released on the server
    assert verdicts(remote.lines) == verdicts(local.lines)
    assert all(l.passed for l in remote.lines)
    for line in remote.lines:
        record = read_record(tmp_path / "remote" / line.record, require_closed=True)  # type: ignore[operator]
        assert record.header.episode_id == line.episode_id


async def test_llm_messages_are_merged_into_the_server_record(tmp_path: Path) -> None:
    world, instance = environment.instantiate_task("report_balance", 0)
    world.close()
    account, balance = instance.oracle[0].arguments["account_id"], instance.oracle[1].arguments["text"]
    script = [
        Reply(openai_message("Looking.", [openai_tool_call("c1", "get_account", f'{{"account_id": "{account}"}}'), openai_tool_call("c2", "list_accounts", "{}")])),
        Reply(openai_message(None, [openai_tool_call("c3", "submit_answer", f'{{"text": "{balance}"}}')])),
        Reply(openai_message("Done.")),
    ]
    with anyio.fail_after(60):
        async with running_provider(script) as provider, running_http(environment) as server:
            agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1")
            config = RunConfig(env=environment, agent=agent, tasks="report_balance", out=tmp_path / "run", server=server.url, token=server.token)
            outcome = await run(config)
    (line,) = outcome.lines
    assert line.passed and line.turns == 3 and line.tokens.total == 45
    record = read_record(tmp_path / "run" / line.record, require_closed=True)  # type: ignore[operator]
    kinds = [e.role if isinstance(e, MessageEvent) else e.type for e in record.events]
    assert kinds == ["system", "user", "assistant", "tool_call", "tool_call", "tool", "tool", "assistant", "tool_call", "tool", "assistant", "closed"]


def test_merge_places_messages_after_the_calls_that_preceded_them() -> None:
    header = EpisodeHeader(episode_id="e", env="toy", fixture_version="v", task="t", seed=0, fixture_seed=0, start_hash="h", clock="c")
    calls = [ToolCallEvent(seq=i, tool=f"t{i}", arguments={}, started_ms=0, duration_ms=0) for i in (1, 2)]
    record = Record(header=header, events=[*calls, ClosedEvent(end_hash="h", tool_calls=2)])
    messages = [(0, MessageEvent(role="user")), (0, MessageEvent(role="assistant")), (1, MessageEvent(role="tool")), (2, MessageEvent(role="tool")), (2, MessageEvent(role="assistant"))]
    merged = merge_messages(record, messages)
    assert [getattr(e, "role", None) or e.type for e in merged.events] == ["user", "assistant", "tool_call", "tool", "tool_call", "tool", "assistant", "closed"]


async def test_server_mismatch_and_token_are_clear_errors(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with running_http(other_environment) as server:
            with pytest.raises(RunError, match=r"serves environment 'toy', not 'toy-tasks'"):
                await run(RunConfig(env=environment, agent="oracle", out=tmp_path / "a", server=server.url, token=server.token))
        async with running_http(environment, token="s3cret") as server:
            with pytest.raises(RunError, match="needs a control token"):
                await run(RunConfig(env=environment, agent="oracle", out=tmp_path / "b", server=server.url))
            outcome = await run(RunConfig(env=environment, agent="oracle", tasks="pay_back", out=tmp_path / "c", server=f"{server.url}/control", token="s3cret"))
            assert outcome.lines[0].passed


class VanishingEpisode:
    """Deletes its own episode on the server mid-episode: the next MCP call finds no episode (a dropped connection)."""

    spec = "vanishing"
    transport = "memory"
    needs_instance = False
    needs_tools = False

    def __init__(self, server: HttpServer) -> None:
        self.server = server
        self.attempts = 0

    async def run(self, session: AgentSession) -> AgentResult:
        self.attempts += 1
        await session.call_tool("list_accounts", {})
        if self.attempts == 1:
            async with httpx.AsyncClient(headers=self.server.control_headers) as http:
                (await http.delete(f"{self.server.control_url}/episodes/{session.episode_id}")).raise_for_status()
            await session.call_tool("list_accounts", {})
        return AgentResult()

    async def aclose(self) -> None:
        pass


async def _no_pause(seconds: float) -> None:
    """The pause before a re-run is not spent in tests."""


async def test_an_episode_lost_on_the_server_is_a_connection_error_and_retried(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with running_http(environment) as server:
            agent = VanishingEpisode(server)
            common = {"env": environment, "agent": agent, "tasks": "report_balance", "server": server.url, "token": server.token}
            once = await run(RunConfig(**common, out=tmp_path / "a", retries=0))  # type: ignore[arg-type]
            agent.attempts = 0
            retried = await run(RunConfig(**common, out=tmp_path / "b", retries=1, sleep=_no_pause))  # type: ignore[arg-type]
    (line,) = once.lines
    assert line.status == "errored" and line.error_class == "connection" and line.attempts == 1
    (line,) = retried.lines
    assert line.status == "graded" and line.attempts == 2 and not line.passed


async def test_an_http_episode_costs_its_calls_plus_two_control_requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[str, str]] = []
    original = HttpClient.request

    async def spy(self, method, url, **options):  # type: ignore[no-untyped-def]
        sent.append((method, urlsplit(url).path))
        return await original(self, method, url, **options)

    monkeypatch.setattr(HttpClient, "request", spy)
    rebuilt: list[str] = []
    monkeypatch.setattr("clients.backends.HttpBackend._instance", _spy_instance(rebuilt))
    with anyio.fail_after(60):
        async with running_http(environment) as server:
            config = RunConfig(env=environment, agent="oracle", seeds="0-1", out=tmp_path / "run", server=server.url, token=server.token)
            outcome = await run(config)
            assert len(server.manager) == 0
    assert all(line.passed for line in outcome.lines) and len(outcome.lines) == 2 * len(environment.task_templates())
    control = [(method, path.rsplit("/", 1)[-1]) for method, path in sent if path.startswith("/control/") and path != "/control/health"]
    assert sorted(set(control)) == [("POST", "episodes"), ("POST", "finish")]
    assert len(control) == 2 * len(outcome.lines)
    # MCP: the oracle's tool calls, plus server/discover and tools/list once for the whole run
    mcp = [path for method, path in sent if path.endswith("/mcp")]
    assert len(mcp) == sum(line.tool_calls for line in outcome.lines) + 2
    assert rebuilt and all(kind == "server" for kind in rebuilt)  # the oracle came with the create response


def _spy_instance(seen: list[str]):  # type: ignore[no-untyped-def]
    from clients.backends import HttpBackend

    original = HttpBackend._instance

    def spy(self, task, seed, body):  # type: ignore[no-untyped-def]
        seen.append("server" if isinstance(body.get("oracle"), list) else "local")
        instance = original(self, task, seed, body)
        assert instance.rubric == []  # the rubric never leaves the server
        return instance

    return spy


async def test_over_http_a_broken_grade_is_a_grading_error_and_hostile_answers_are_scored(tmp_path: Path) -> None:
    """Issue 17: /finish answered 500, the runner filed ``connection``, re-ran, then dropped the episode."""
    from envs.finance import environment as finance
    from tests.clients.test_runner import BreaksTheGraderOnOddSeeds, odd_seeds_reporting_figures
    from tests.graders.fragile import environment as fragile

    seeds = odd_seeds_reporting_figures(finance, "available_balance", pairs=1)
    with anyio.fail_after(120):
        async with running_http(finance) as server:
            config = RunConfig(env=finance, agent=BreaksTheGraderOnOddSeeds(), tasks="available_balance", seeds=seeds,
                               out=tmp_path / "finance", server=server.url, token=server.token)
            scored = await run(config)
            assert len(server.manager) == 0
        assert [(l.status, l.passed) for l in scored.lines] == [("graded", True), ("graded", False)]
        async with running_http(fragile) as server:
            config = RunConfig(env=fragile, agent=BreaksTheGraderOnOddSeeds(), seeds="0-1", out=tmp_path / "fragile",
                               server=server.url, token=server.token, retries=2)
            broken = await run(config)
            assert len(server.manager) == 0  # the runner released what the server kept for it
    good, bad = broken.lines
    assert good.status == "graded" and good.passed
    assert (bad.status, bad.error_class, bad.attempts) == ("errored", "grading", 1)
    assert bad.error is not None and "careless_amount' crashed: Overflow" in bad.error
    assert broken.summary.not_graded == 1


async def test_over_http_records_land_whole_without_an_fsync_each_and_the_run_files_are_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A record's fsync ran on the runner's event loop, stalling every other episode for the disk's wait; records
    # are written whole (a file renamed over its target) and, as in process, results.jsonl is what --resume trusts.
    synced: list[str] = []
    original = os.fsync

    def spy(fd: int) -> None:
        synced.append(Path(os.readlink(f"/proc/self/fd/{fd}")).name)
        original(fd)

    monkeypatch.setattr(os, "fsync", spy)
    with anyio.fail_after(60):
        async with running_http(environment) as server:
            config = RunConfig(env=environment, agent="oracle", seeds="0-1", out=tmp_path / "run", server=server.url, token=server.token)
            outcome = await run(config)
    assert len(outcome.lines) == 2 * len(environment.task_templates()) and all(line.passed for line in outcome.lines)
    assert sorted(synced) == sorted(["results.jsonl", f".summary.json.{os.getpid()}.tmp"])
    for line in outcome.lines:
        record = read_record(tmp_path / "run" / line.record, require_closed=True)  # type: ignore[operator]
        assert record.header.episode_id == line.episode_id and len(record.tool_calls) == line.tool_calls
    assert not [p.name for p in (tmp_path / "run" / "records").iterdir() if p.name.startswith(".")]  # no temporary file left
