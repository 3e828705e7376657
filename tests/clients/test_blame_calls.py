"""What the model issues is recorded faithfully, counted, and sent back in a form a strict provider accepts.

Every scenario runs against a provider that validates the conversation like the real APIs do (unique ids,
object arguments, one tool result per call): a normalised conversation is never refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from rich.console import Console

from clients.agents.base import RAW_ARGUMENTS_CAP, Limits
from clients.regrade import regrade
from clients.runner import RunConfig, run
from clients.summary import render_summary
from servers.http import running_http
from servers.record import MessageEvent, RejectedCallEvent, ToolCallEvent
from tests.clients.fake_provider import Reply, openai_message, openai_tool_call, validate_anthropic, validate_openai
from tests.clients.llm_scenarios import ACCOUNT, Outcome, Protocol, run_llm, solution, tool_turn
from tests.clients.toyenv import environment

PROTOCOLS: list[Protocol] = ["openai", "anthropic"]
VALIDATE = {"openai": validate_openai, "anthropic": validate_anthropic}


def _args(protocol: Protocol, value: Any) -> Any:
    return json.dumps(value) if protocol == "openai" else value


def recorded_calls(outcome: Outcome) -> list[dict[str, Any]]:
    """The tool calls of the record's assistant messages (OpenAI format)."""
    return [c for e in outcome.record.events if isinstance(e, MessageEvent) and e.role == "assistant" for c in e.tool_calls or []]


def wire_calls(outcome: Outcome, protocol: Protocol) -> list[dict[str, Any]]:
    """The tool calls of the last conversation sent to the provider, as (id, name, arguments as an object)."""
    found = []
    for message in outcome.conversation():
        if protocol == "openai" and message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                found.append({"id": call["id"], "name": call["function"]["name"], "input": json.loads(call["function"]["arguments"])})
        if protocol == "anthropic" and message.get("role") == "assistant" and isinstance(message["content"], list):
            found += [{"id": b["id"], "name": b["name"], "input": b["input"]} for b in message["content"] if b["type"] == "tool_use"]
    return found


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_duplicate_and_missing_ids_are_made_unique(tmp_path: Path, protocol: Protocol) -> None:
    calls = [("dup", "get_account", _args(protocol, {"account_id": ACCOUNT})), ("dup", "list_accounts", _args(protocol, {})), (None, "list_accounts", _args(protocol, {}))]
    script = [tool_turn(protocol, calls), *solution(protocol, prefix="dup")]
    outcome = await run_llm(tmp_path / "run", script, protocol, validate=VALIDATE[protocol])
    assert outcome.provider.rejected == []
    assert (outcome.line.status, outcome.line.passed, outcome.line.tool_calls, outcome.line.tool_errors) == ("graded", True, 5, 0)
    ids = [c["id"] for c in recorded_calls(outcome)]
    assert len(ids) == len(set(ids)) == 5 and ids[0] == "dup"
    assert [c["id"] for c in wire_calls(outcome, protocol)] == ids
    answered = [e.tool_call_id for e in outcome.record.events if isinstance(e, MessageEvent) and e.role == "tool"]
    assert answered == ids


@pytest.mark.parametrize(
    ("label", "call", "raw", "problem"),
    [
        ("not JSON", ("x1", "get_account", '{"account_id": '), '{"account_id": ', "not valid JSON"),
        ("not an object", ("x1", "get_account", "[1, 2]"), "[1, 2]", "must be a JSON object, not array"),
        ("no function name", ("x1", None, "{}"), "{}", "without a function name"),
    ],
)
async def test_calls_rejected_before_a_tool_are_record_events(tmp_path: Path, label: str, call: tuple[Any, ...], raw: str, problem: str) -> None:
    outcome = await run_llm(tmp_path / "run", [tool_turn("openai", [call]), *solution("openai")], validate=validate_openai)
    line = outcome.line
    assert outcome.provider.rejected == []
    assert (line.status, line.passed) == ("graded", True)
    assert (line.tool_calls, line.tool_errors, line.rejected_calls) == (3, 1, 1)
    (rejected,) = outcome.record.rejected_calls
    assert (rejected.call_id, rejected.raw_arguments, rejected.error.error_class) == ("x1", raw, "invalid_arguments")
    assert problem in rejected.error.message
    # The record's conversation holds the call as the model wrote it; the wire, a form the provider accepts.
    assert recorded_calls(outcome)[0]["function"] == {"name": call[1] or "", "arguments": raw}
    assert wire_calls(outcome, "openai")[0]["input"] == {"_invalid_arguments": raw}
    answer = json.loads(outcome.conversation()[3]["content"])
    assert answer["error"] == "invalid_arguments" and problem in answer["message"]
    kinds = [e.type if not isinstance(e, MessageEvent) else e.role for e in outcome.record.events]
    assert kinds[:5] == ["system", "user", "assistant", "rejected_call", "tool"]


async def test_non_object_input_for_anthropic_is_recorded_as_sent_and_wrapped_on_the_wire(tmp_path: Path) -> None:
    script = [tool_turn("anthropic", [("t0", "get_account", ACCOUNT)]), *solution("anthropic")]
    outcome = await run_llm(tmp_path / "run", script, "anthropic", validate=validate_anthropic)
    assert outcome.provider.rejected == []
    assert (outcome.line.status, outcome.line.passed, outcome.line.rejected_calls) == ("graded", True, 1)
    assert recorded_calls(outcome)[0]["function"]["arguments"] == json.dumps(ACCOUNT)  # not "{}"
    (rejected,) = outcome.record.rejected_calls
    assert rejected.raw_arguments == json.dumps(ACCOUNT) and "not string" in rejected.error.message
    assert wire_calls(outcome, "anthropic")[0] == {"id": "t0", "name": "get_account", "input": {"_invalid_arguments": ACCOUNT}}


async def test_tool_calls_sent_as_an_object_are_one_call_not_three_phantom_errors(tmp_path: Path) -> None:
    call = openai_tool_call("c1", "get_account", json.dumps({"account_id": ACCOUNT}))
    script = [Reply(openai_message(None, call)), *solution("openai")[1:]]
    outcome = await run_llm(tmp_path / "run", script, validate=validate_openai)
    line = outcome.line
    assert (line.status, line.passed, line.tool_calls, line.tool_errors, line.rejected_calls) == ("graded", True, 2, 0, 0)
    assert [c.tool for c in outcome.record.tool_calls] == ["get_account", "submit_answer"]


async def test_a_refused_megabyte_is_stored_once(tmp_path: Path) -> None:
    huge = json.dumps({"account_id": ACCOUNT, "note": "x" * 1_000_000})
    script = [tool_turn("openai", [("big", "get_account", huge)]), *solution("openai")]
    outcome = await run_llm(tmp_path / "run", script)
    line = outcome.line
    assert (line.status, line.passed, line.tool_calls, line.rejected_calls) == ("graded", True, 3, 1)
    (rejected,) = outcome.record.rejected_calls
    assert rejected.error.code == "payload_too_large" and rejected.raw_size == len(huge)
    assert len(rejected.raw_arguments) == RAW_ARGUMENTS_CAP
    assert not any(isinstance(e, ToolCallEvent) and "note" in e.arguments for e in outcome.record.events)
    size = (outcome.out / line.record).stat().st_size  # type: ignore[operator]
    assert len(huge) < size < len(huge) + 100_000  # the conversation holds it once; nothing else does


async def test_calls_past_the_tool_call_limit_are_refused_and_the_limit_is_reported(tmp_path: Path) -> None:
    calls = [(f"c{i}", "get_account", json.dumps({"account_id": ACCOUNT})) for i in range(3)]
    outcome = await run_llm(tmp_path / "run", [tool_turn("openai", calls)], limits=Limits(max_tool_calls=2))
    line = outcome.line
    assert (line.status, line.stop_reason, line.tool_calls, line.rejected_calls) == ("graded", "max_tool_calls", 3, 1)
    assert "2 tool calls" in (line.stop_detail or "")
    assert outcome.record.rejected_calls[0].error.code == "tool_call_limit"


async def test_the_oracle_stops_at_the_tool_call_limit_graded(tmp_path: Path) -> None:
    with anyio.fail_after(30):
        outcome = await run(RunConfig(env=environment, agent="oracle", tasks="report_balance", out=tmp_path / "run", limits=Limits(max_tool_calls=1)))
    (line,) = outcome.lines
    assert (line.status, line.stop_reason, line.tool_calls, line.passed) == ("graded", "max_tool_calls", 1, False)
    assert outcome.summary.agents[0].stop_reasons == {"max_tool_calls": 1}
    console = Console(width=160, record=True)
    render_summary(outcome.summary, console)
    assert "graded episodes the agent did not finish (scored as they stood) — max_tool_calls: 1" in console.export_text()


async def test_turn_limit_is_reported_as_such(tmp_path: Path) -> None:
    script = [tool_turn("openai", [(f"c{i}", "list_accounts", "{}")]) for i in range(3)]
    outcome = await run_llm(tmp_path / "run", script, limits=Limits(max_turns=2))
    assert (outcome.line.status, outcome.line.stop_reason, outcome.line.turns) == ("graded", "max_turns", 2)
    assert outcome.line.stop_detail == "2 model calls, the episode's limit"


async def test_replaying_a_record_reproduces_its_rejected_calls(tmp_path: Path) -> None:
    script = [tool_turn("openai", [("x1", "get_account", "{oops")]), *solution("openai")]
    original = await run_llm(tmp_path / "orig", script)
    with anyio.fail_after(30):
        replayed = await run(RunConfig(env=environment, agent=f"replay:{tmp_path / 'orig'}", out=tmp_path / "again"))
    (line,) = replayed.lines
    assert (line.score, line.tool_calls, line.rejected_calls) == (original.line.score, 3, 1)
    events = [e for e in original.record.events if isinstance(e, RejectedCallEvent)]
    assert events[0].raw_arguments == "{oops"


async def test_rejected_calls_keep_their_place_over_http_and_grades_match(tmp_path: Path) -> None:
    def script() -> list[Reply]:
        return [tool_turn("openai", [("x1", "get_account", "{oops"), ("x2", "list_accounts", "{}")]), *solution("openai")]

    local = await run_llm(tmp_path / "local", script())
    with anyio.fail_after(60):
        async with running_http(environment) as server:
            remote = await run_llm(tmp_path / "remote", script(), server=server)
    assert (remote.line.tool_calls, remote.line.rejected_calls, remote.line.score) == (local.line.tool_calls, 1, local.line.score)
    assert remote.line.grade["criteria"] == local.line.grade["criteria"]  # type: ignore[index]
    for outcome in (local, remote):
        kinds = [e.type if not isinstance(e, MessageEvent) else e.role for e in outcome.record.events]
        assert kinds[2:7] == ["assistant", "rejected_call", "tool_call", "tool", "tool"], kinds
        (regraded,) = await regrade([outcome.out / outcome.line.record], environment=environment)  # type: ignore[operator]
        assert regraded.grade == outcome.line.grade
