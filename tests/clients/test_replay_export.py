"""Replaying records reproduces grades; exporting a run gives valid OpenAI chat JSONL; offline re-grading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from clients.errors import RunError
from clients.regrade import record_paths, regrade
from clients.runner import RunConfig, RunOutcome, run
from clients.sft import export_sft
from tests.clients.toyenv import environment


async def go(out: Path, **options: Any) -> RunOutcome:
    options.setdefault("agent", "oracle")
    with anyio.fail_after(60):
        return await run(RunConfig(env=environment, out=out, **options))


def grades(outcome: RunOutcome) -> dict[tuple[str, int, int], Any]:
    return {(l.task, l.seed, l.trial): (l.score, l.passed, [(c["name"], c["passed"]) for c in l.grade["criteria"]]) for l in outcome.lines}  # type: ignore[index]


async def test_replaying_a_run_folder_reproduces_its_grades(tmp_path: Path) -> None:
    original = await go(tmp_path / "orig", seeds="0-1")
    noop = await go(tmp_path / "noop", agent="noop", tasks="pay_back,report_balance", seeds="0-1")
    replayed = await go(tmp_path / "again", agent=f"replay:{tmp_path / 'orig'}")  # default selection: the records'
    assert grades(replayed) == grades(original)
    replayed_noop = await go(tmp_path / "again-noop", agent=f"replay:{tmp_path / 'noop'}")
    assert grades(replayed_noop) == grades(noop)
    assert replayed.lines[0].agent == f"replay:{tmp_path / 'orig'}"


async def test_replaying_one_record_file(tmp_path: Path) -> None:
    original = await go(tmp_path / "orig", tasks="pay_back", seeds="1")
    record = tmp_path / "orig" / original.lines[0].record  # type: ignore[operator]
    replayed = await go(tmp_path / "again", agent=f"replay:{record}")
    assert grades(replayed) == grades(original)
    with pytest.raises(RunError, match=r"is a record of task 'pay_back' seed 1, not task 'pay_back' seed 0; run with --tasks pay_back --seeds 1"):
        await go(tmp_path / "wrong", agent=f"replay:{record}", tasks="pay_back", seeds="0")


async def test_export_sft_writes_valid_chat_jsonl(tmp_path: Path) -> None:
    await go(tmp_path / "run", seeds="0-1")
    noop = await go(tmp_path / "noop", agent="noop")
    stats = export_sft(tmp_path / "run", tmp_path / "sft.jsonl", min_score=1.0, environment=environment)
    assert (stats.written, stats.considered) == (6, 6)
    lines = (tmp_path / "sft.jsonl").read_text().splitlines()
    assert len(lines) == 6
    for raw in lines:
        example = json.loads(raw)
        assert set(example) == {"messages", "tools", "metadata"}
        assert set(example["metadata"]) == {"env", "task", "seed", "trial", "agent", "score", "episode_id"}
        tool_names = {t["function"]["name"] for t in example["tools"]}
        assert {"transfer", "submit_answer", "flaky_balance"} <= tool_names
        assert all(t["type"] == "function" and "parameters" in t["function"] for t in example["tools"])
        messages = example["messages"]
        assert messages[0] == {"role": "system", "content": environment.instructions}
        assert messages[1]["role"] == "user" and messages[1]["content"]
        pending: set[str] = set()
        for message in messages[2:]:
            assert message["role"] in ("assistant", "tool")
            if message["role"] == "assistant":
                for tool_call in message["tool_calls"]:
                    assert tool_call["type"] == "function" and tool_call["function"]["name"] in tool_names
                    assert isinstance(json.loads(tool_call["function"]["arguments"]), dict)
                    pending.add(tool_call["id"])
            else:
                pending.remove(message["tool_call_id"])
                json.loads(message["content"])
        assert not pending
        assert messages[-2]["tool_calls"][0]["function"]["name"] == "submit_answer"
    # Nothing of a failing run passes the bar, nor any lower bar: inaction earns no partial credit.
    assert export_sft(tmp_path / "noop", tmp_path / "none.jsonl", environment=environment).written == 0
    assert (tmp_path / "none.jsonl").read_text() == ""
    partial = export_sft(tmp_path / "noop", tmp_path / "partial.jsonl", min_score=0.01, environment=environment)
    assert partial.written == sum(1 for l in noop.lines if (l.score or 0) >= 0.01) == 0
    everything = export_sft(tmp_path / "noop", tmp_path / "all.jsonl", min_score=0.0, environment=environment)
    assert everything.written == len(noop.lines)


async def test_export_refuses_what_it_cannot_export(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="is not a run folder"):
        export_sft(tmp_path, tmp_path / "out.jsonl")
    await go(tmp_path / "run", tasks="report_balance")
    with pytest.raises(RunError, match="no environment 'toy-tasks'"):
        export_sft(tmp_path / "run", tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


async def test_regrading_saved_records_offline_matches_the_live_grades(tmp_path: Path) -> None:
    outcome = await go(tmp_path / "run", agent="noop", tasks="report_balance,pay_back")
    oracle = await go(tmp_path / "oracle", tasks="report_balance,pay_back")
    paths = record_paths([tmp_path / "run", tmp_path / "oracle" / oracle.lines[0].record])  # type: ignore[operator]
    regraded = await regrade(paths, environment=environment)
    live = {l.episode_id: l.grade for l in outcome.lines + oracle.lines}
    assert len(regraded) == 3
    for item in regraded:
        assert item.grade == live[item.record.header.episode_id]
    with pytest.raises(RunError, match="no record file or run folder"):
        record_paths([tmp_path / "missing.jsonl"])
    truncated = tmp_path / "cut.jsonl"
    truncated.write_text("\n".join(paths[0].read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(RunError, match="has no 'closed' line"):
        await regrade([truncated], environment=environment)
