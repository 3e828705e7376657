"""No value crashes writing a record (issue 19): whatever an agent sent or a tool echoed, the line is written
whole and read back; what a file cannot hold as it was is stored escaped or described, never lost with the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servers.record import CallError, ClosedEvent, EpisodeHeader, MessageEvent, RecordWriter, RejectedCallEvent, ToolCallEvent, read_record


def _deep(levels: int) -> Any:
    return json.loads("[" * levels + "]" * levels)


HOSTILE: list[Any] = [
    "\ud800Carlos",
    {"\udfff": "x", "ok": ["\ud83d"]},
    float("nan"),
    float("-inf"),
    _deep(300),  # past pydantic's serialisation depth
    {"a": _deep(900)},  # near Python's own recursion limit
    b"\xff\xfe raw bytes",
    {1: "int key", None: "null key"},
    {"a": {1, 2}},
    object(),
    "\x00\u202e",
]


@pytest.mark.parametrize("value", HOSTILE, ids=[f"v{i}" for i in range(len(HOSTILE))])
def test_any_value_is_written_whole_and_read_back(tmp_path: Path, value: Any) -> None:
    path = tmp_path / "record.jsonl"
    writer = RecordWriter(path, sync=False)
    writer.write(EpisodeHeader(episode_id="e", env="toy", fixture_version="1", task="t", seed=0, fixture_seed=0, start_hash="h", clock="2026-01-01"))
    events = [
        MessageEvent(role="assistant", content=value, tool_calls=[{"id": "c1", "type": "function", "function": {"name": "n", "arguments": value}}]),
        ToolCallEvent(seq=1, tool="get_account", arguments={"account_id": value}, result=value, started_ms=0.0, duration_ms=0.0),
        RejectedCallEvent(call_id="c2", tool="get_account", raw_arguments=str(value)[:100], raw_size=3, error=CallError(error_class="invalid_arguments", code="invalid_arguments", message=str(value)[:50])),
        ClosedEvent(end_hash="h", tool_calls=1),
    ]
    for event in events:
        writer.write(event)
    writer.close()
    assert writer.failure is None
    record = read_record(path, require_closed=True)
    assert [e.type for e in record.events] == ["message", "tool_call", "rejected_call", "closed"]
    assert all(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
