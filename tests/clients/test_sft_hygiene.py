"""SFT export hygiene: a passing score is not enough; only well-formed conversations become training data.

Passing episodes are made by real runs against scripted providers (a model that recovers from its own
mistake still passes), and older records are made by editing a clean record the way earlier agents wrote
them (duplicate ids, a non-object input misrecorded as ``"{}"``, a call nobody answered).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clients.cli import main
from clients.sft import conversation_problems, export_sft
from tests.clients.llm_scenarios import ACCOUNT, Protocol, run_llm, solution, tool_turn
from tests.clients.toyenv import environment

TOOLS = {"get_account", "list_accounts", "transfer", "submit_answer", "flaky_balance"}


async def _passing_run(out: Path, first_turn: Any, protocol: Protocol = "openai") -> Path:
    outcome = await run_llm(out, [first_turn, *solution(protocol)], protocol)
    assert outcome.line.passed, "the scenario must be a passing episode"
    return out


def _edit_record(run_dir: Path, edit: Any) -> None:
    """Rewrite the run's one record line by line (``edit`` gets each event as a dict, returns a list of them)."""
    (path,) = (run_dir / "records").glob("*.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    edited = [lines[0]] + [new for event in lines[1:] for new in edit(event)]
    path.write_text("".join(json.dumps(e) + "\n" for e in edited))


@pytest.mark.parametrize(
    ("protocol", "first_turn", "reason"),
    [
        ("openai", tool_turn("openai", [("n1", "get_account", "{oops")]), "arguments"),
        ("openai", tool_turn("openai", [("n1", "get_account", '"acc-001"')]), "arguments"),
        ("openai", tool_turn("openai", [("u1", "no_such_tool", "{}")]), "unknown_tool"),
        ("anthropic", tool_turn("anthropic", [("t0", "get_account", ACCOUNT)]), "arguments"),
    ],
)
async def test_a_passing_episode_with_malformed_calls_is_skipped_and_counted(tmp_path: Path, protocol: Protocol, first_turn: Any, reason: str) -> None:
    run_dir = await _passing_run(tmp_path / "run", first_turn, protocol)
    stats = export_sft(run_dir, tmp_path / "sft.jsonl", environment=environment)
    assert (stats.considered, stats.passing, stats.written, stats.skipped_episodes) == (1, 1, 0, 1)
    assert stats.skipped == {reason: 1}
    assert (tmp_path / "sft.jsonl").read_text() == ""


async def test_normalised_duplicate_ids_export_cleanly(tmp_path: Path) -> None:
    turn = tool_turn("openai", [("d", "get_account", json.dumps({"account_id": ACCOUNT})), ("d", "list_accounts", "{}")])
    run_dir = await _passing_run(tmp_path / "run", turn)
    stats = export_sft(run_dir, tmp_path / "sft.jsonl", environment=environment)
    assert (stats.written, stats.skipped) == (1, {})
    (example,) = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    ids = [c["id"] for m in example["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert len(ids) == len(set(ids)) == 4


def _duplicate_ids(event: dict[str, Any]) -> list[dict[str, Any]]:
    if event.get("role") == "assistant" and event.get("tool_calls"):
        event["tool_calls"] = [{**c, "id": "same"} for c in event["tool_calls"]]
    if event.get("role") == "tool":
        event["tool_call_id"] = "same"
    return [event]


def _misrecorded_input(event: dict[str, Any]) -> list[dict[str, Any]]:
    """The old Anthropic agent: a non-object input logged as "{}", answered invalid_arguments, no event at all."""
    if event.get("role") == "user":
        call = {"id": "toolu_0", "type": "function", "function": {"name": "get_account", "arguments": "{}"}}
        answer = json.dumps({"error": "invalid_arguments", "message": "tool input must be a JSON object, not str"})
        return [event, {"type": "message", "role": "assistant", "content": None, "tool_calls": [call]}, {"type": "message", "role": "tool", "content": answer, "tool_call_id": "toolu_0"}]
    return [event]


def _unanswered(event: dict[str, Any]) -> list[dict[str, Any]]:
    return [] if event.get("role") == "tool" and event.get("tool_call_id") == "s1" else [event]


@pytest.mark.parametrize(
    ("edit", "reasons"),
    [(_duplicate_ids, {"tool_call_ids": 1}), (_misrecorded_input, {"unrecorded_calls": 1}), (_unanswered, {"tool_messages": 1})],
)
async def test_older_records_that_are_not_well_formed_are_skipped(tmp_path: Path, edit: Any, reasons: dict[str, int]) -> None:
    run_dir = await _passing_run(tmp_path / "run", solution("openai", prefix="p")[0])
    assert export_sft(run_dir, tmp_path / "clean.jsonl", environment=environment).written == 1
    _edit_record(run_dir, edit)
    stats = export_sft(run_dir, tmp_path / "sft.jsonl", environment=environment)
    assert (stats.passing, stats.written, stats.skipped) == (1, 0, reasons)


def test_conversation_problems_name_every_rule() -> None:
    def call(call_id: Any, name: str, arguments: str) -> dict[str, Any]:
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    good = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "get_account", "{}"), call("b", "list_accounts", "{}")]},
        {"role": "tool", "tool_call_id": "b", "content": "{}"},
        {"role": "tool", "tool_call_id": "a", "content": "{}"},
        {"role": "assistant", "content": "done"},
    ]
    assert conversation_problems(good, TOOLS) == []
    missing_id = [good[0], {"role": "assistant", "tool_calls": [call(None, "get_account", "{}")]}, {"role": "tool", "tool_call_id": None, "content": ""}]
    assert conversation_problems(missing_id, TOOLS) == ["tool_call_ids"]
    twice = good[:4] + [{"role": "tool", "tool_call_id": "a", "content": "{}"}]
    assert conversation_problems(twice, TOOLS) == ["tool_messages"]
    late = [good[0], good[1], good[2], {"role": "assistant", "content": "?"}, good[3]]
    assert conversation_problems(late, TOOLS) == ["tool_messages"]
    bad_args = [good[0], {"role": "assistant", "tool_calls": [call("a", "get_account", "[]")]}, good[3]]
    assert conversation_problems(bad_args, TOOLS) == ["arguments"]


async def test_export_command_reports_what_it_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = await _passing_run(tmp_path / "run", tool_turn("openai", [("u1", "no_such_tool", "{}")]))
    with pytest.raises(SystemExit) as exited:
        main(["export", "sft", str(run_dir), "--env", "tests.clients.toyenv:environment", "--out", str(tmp_path / "sft.jsonl")])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert "1 of 1 graded episodes scored >= 1; 0 written" in out
    assert "skipped 1 passing episode(s) that are not well-formed conversations:" in out
    assert "1 × unknown_tool: calls of tools the environment does not have" in out
