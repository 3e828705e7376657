"""The pytest plugin's fixtures (loaded through the ``toolgym`` pytest11 entry point), play(), and secrecy."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fixtures.errors import EnvironmentNotFound
from graders.play import as_tool_call, play
from graders.tasks import ToolCall, call
from servers.memory import connect_in_memory

TOY = "tests.graders.toy:environment"


async def test_a_grader_test_in_a_few_lines(toolgym_episode: Any, toolgym_play: Any, toolgym_grade: Any) -> None:
    episode = await toolgym_episode(TOY, task="transfer_funds", seed=5)
    verify, wire = episode.task.oracle
    played = await toolgym_play(episode, [wire, verify])  # wired before verifying
    assert [p.ok for p in played] == [True, True]
    grade = await toolgym_grade(episode)
    assert episode.state == "closed"
    assert not grade.passed and grade.failed_gates == ["verified first"]


async def test_the_oracle_passes_through_the_fixtures(toolgym_episode: Any, toolgym_play: Any, toolgym_grade: Any) -> None:
    episode = await toolgym_episode(TOY, task="balance_lookup", seed=1)
    await toolgym_play(episode, episode.task.oracle)
    assert (await toolgym_grade(episode)).passed


async def test_toolgym_check_fixture(toolgym_check: Any) -> None:
    report = await toolgym_check(TOY, seeds=1, templates=["freeze_compromised"])
    assert report.ok, report.summary()


async def test_free_play_and_unknown_environments(toolgym_episode: Any) -> None:
    free = await toolgym_episode(TOY, seed=2)
    assert free.task is None and free.world.seed == 2
    with pytest.raises(EnvironmentNotFound, match="no environment 'nowhere'"):
        await toolgym_episode("nowhere")


async def test_play_accepts_every_call_spelling_and_reports_errors(toolgym_episode: Any) -> None:
    episode = await toolgym_episode(TOY, task="freeze_compromised", seed=0)
    calls: list[Any] = [
        call("get_account", account_id=1),
        ("get_account", {"account_id": 2}),
        {"tool": "get_account", "arguments": {"account_id": 0}},
        ToolCall(tool="get_account", arguments={"account_id": 3}),
    ]
    played = await play(episode, calls)
    assert [p.ok for p in played] == [True, True, False, True]
    assert played[0].data["id"] == 1 and played[0].error_code is None
    assert played[2].error_code == "invalid_arguments" and played[2].data["message"].startswith("account_id:")
    stopped = await play(episode, calls[2:], stop_on_error=True)
    assert len(stopped) == 1
    with pytest.raises(TypeError, match="cannot play 'get_account'"):
        as_tool_call("get_account")  # type: ignore[arg-type]


async def test_rubric_oracle_and_negatives_are_unreachable_over_mcp(toolgym_episode: Any) -> None:
    episode = await toolgym_episode(TOY, task="transfer_funds", seed=0)
    instance = episode.task
    secrets = [c.label for c in instance.rubric] + [n.name for n in instance.negatives] + [n.description for n in instance.negatives]
    seen: list[str] = []
    async with connect_in_memory(episode) as client:
        tools = await client.list_tools()
        seen.append(json.dumps([t.model_dump(mode="json") for t in tools.tools]))
        resources = await client.list_resources()
        for resource in resources.resources:
            seen.append(json.dumps((await client.read_resource(resource.uri)).model_dump(mode="json")))
        seen.append(client.instructions or "")
        for step in instance.oracle:
            seen.append(json.dumps((await client.call_tool(step.tool, step.arguments)).model_dump(mode="json")))
    surface = "\n".join(seen)
    leaked = [s for s in secrets if s in surface]
    assert leaked == []
    assert "rubric" not in surface and "oracle" not in surface
