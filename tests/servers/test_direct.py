"""An in-process answer (``servers/direct.py``) is what a real in-memory MCP client receives, call for call.

Two episodes of the same instance play the same calls, one answered directly and one through ``mcp.Client``: the
observations (text, error flag, structured content), the records, the end worlds and the grades must be equal, on
every oracle step of every environment and on hostile calls; a call that never happened raises the same error.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

import servers.mcp_server
from clients.agents.base import result_text
from fixtures.errors import RecordUnwritable
from graders.grading import grade_episode
from servers.direct import Answer, call_direct
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import EPISODE_NOT_FOUND, RECORD_UNWRITABLE
from servers.memory import connect_in_memory
from servers.registry import load_environment
from tests.toy_env import environment as toy
from tests.toy_env import faulty_environment

HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("list_accounts", {}),
    ("get_account", {"account_id": "acc-001"}),
    ("get_account", {"account_id": 12}),  # a wrong type: invalid_arguments
    ("get_account", {}),  # a required argument missing
    ("get_account", {"account_id": "acc-001", "extra": True}),  # an argument the tool has not
    ("get_account", {"account_id": "acc-999' OR '1'='1"}),  # SQL-looking text: refused, nothing run
    ("get_account", {"account_id": "\ud800 lone surrogate"}),  # unsendable text
    ("get_account", {"account_id": "x" * 70_000}),  # oversized
    ("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "5.00"}),
    ("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": math.nan}),
    ("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": 10**40}),
    ("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": [[[[["5"]]]]]}),
    ("no_such_tool", {}),
    ("", {}),
    ("explode", {}),  # a tool that crashes: an internal error result, not an exception
    ("submit_answer", {"text": "Zoë — ünïcode ✓"}),
]


def _seen(text: str, is_error: bool, structured: Any) -> tuple[str, bool, Any]:
    return text, is_error, structured


async def _through_client(episode: Episode, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool, Any]]:
    seen = []
    async with connect_in_memory(episode) as client:
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            seen.append(_seen(result_text(result), bool(result.is_error), None if result.is_error else result.structured_content))
    return seen


async def _direct(episode: Episode, calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, bool, Any]]:
    answers = [await call_direct(episode, name, arguments) for name, arguments in calls]
    return [_seen(a.text, a.is_error, a.structured) for a in answers]


def _events(episode: Episode) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in ("started_ms", "duration_ms")} for e in episode.record.model_dump()["events"]]


async def test_hostile_calls_are_answered_as_the_client_receives_them() -> None:
    manager = EpisodeManager(faulty_environment, history=0)
    mine, theirs = manager.create(seed=0), manager.create(seed=0)
    with anyio.fail_after(60):
        direct = await _direct(mine, HOSTILE)
        client = await _through_client(theirs, HOSTILE)
    for call, got, wanted in zip(HOSTILE, direct, client, strict=True):
        assert got == wanted, call[0]
    assert sum(is_error for _, is_error, _ in direct) >= 10 and not direct[1][1]
    assert _events(mine) == _events(theirs)
    assert mine.world.hash() == theirs.world.hash() != mine.record.header.start_hash
    manager.close_all()


@pytest.mark.slow
@pytest.mark.parametrize("env_name", ["finance", "support", "workspace"])
async def test_every_oracle_step_answers_the_same_both_ways(env_name: str) -> None:
    environment = load_environment(env_name)
    manager = EpisodeManager(environment, history=0)
    with anyio.fail_after(240):
        for template in environment.task_templates():
            mine, theirs = manager.create(template, 1), manager.create(template, 1)
            assert mine.task is not None
            calls = [(step.tool, dict(step.arguments)) for step in mine.task.oracle]
            direct = await _direct(mine, calls)
            assert direct == await _through_client(theirs, calls), template
            assert _events(mine) == _events(theirs), template
            for episode in (mine, theirs):
                manager.close(episode.id)
            grades = [await grade_episode(episode) for episode in (mine, theirs)]
            assert grades[0].score == grades[1].score == 1.0, template
            assert mine.world.hash() == theirs.world.hash(), template
            for episode in (mine, theirs):
                manager.release(episode.id)


async def test_a_call_that_never_happened_raises_what_the_client_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(toy, history=0)
    episode = manager.create(seed=0)

    async def both(name: str = "list_accounts") -> tuple[MCPError, MCPError]:
        with pytest.raises(MCPError) as direct:
            await call_direct(episode, name, {})
        async with connect_in_memory(episode) as client:
            with pytest.raises(MCPError) as through_client:
                await client.call_tool(name, {})
        return direct.value, through_client.value

    def failing(error: BaseException) -> Any:
        async def call_tool(*_args: Any) -> Any:
            raise error

        return call_tool

    for error, code in ((RecordUnwritable("disk full"), RECORD_UNWRITABLE), (KeyError("a kit bug"), -32603)):
        monkeypatch.setattr(servers.mcp_server, "call_tool", failing(error))  # under both paths (dispatched)
        direct, through_client = await both()
        assert (direct.error.code, direct.error.message, direct.error.data) == (
            through_client.error.code, through_client.error.message, through_client.error.data)
        assert direct.error.code == code
    monkeypatch.undo()
    manager.close(episode.id)
    with pytest.raises(MCPError) as closed:
        await call_direct(episode, "list_accounts", {})
    assert closed.value.error.code == EPISODE_NOT_FOUND
    manager.close_all()


async def test_what_no_client_could_send_is_a_type_error_and_nothing_runs() -> None:
    manager = EpisodeManager(toy, history=0)
    episode = manager.create(seed=0)
    with pytest.raises(TypeError, match="a tool name is a string"):
        await call_direct(episode, 7, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tool arguments are an object"):
        await call_direct(episode, "get_account", ["acc-001"])  # type: ignore[arg-type]
    assert episode.seq == 0
    manager.close_all()


async def test_the_structured_answer_is_the_callers_own_copy() -> None:
    manager = EpisodeManager(toy, history=0)
    episode = manager.create(seed=0)
    answer = await call_direct(episode, "get_account", {"account_id": "acc-001"})
    assert isinstance(answer, Answer) and not answer.is_error and answer.structured["id"] == "acc-001"
    answer.structured["id"] = "changed by the caller"
    assert episode.record.tool_calls[-1].result["id"] == "acc-001"
    manager.close_all()
