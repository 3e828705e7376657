"""toolgym-remote (the adapters' thin client, httpx only) against a real toolgym server over HTTP: seeds as
``toolgym run`` reads them, a finished episode's grade or the infrastructure failure it hides, and its record
written back as a record file that ``toolgym grade`` grades to the same score."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from servers.http import running_http
from servers.registry import load_environment
from tests.integrations.venvs import REPO

sys.path.insert(0, str(REPO / "integrations" / "remote"))
from toolgym_remote import (
    ControlClient,
    EpisodeSession,
    MCPRefused,
    NotScored,
    graded,
    parse_seeds,
    record_jsonl,
)

TOOLGYM = str(Path(sys.executable).with_name("toolgym"))


def test_seeds_read_as_toolgym_run_reads_them() -> None:
    assert parse_seeds("0-2,7,1") == [0, 1, 2, 7]
    assert parse_seeds(3) == [3] and parse_seeds([4, 4, 2]) == [4, 2] and parse_seeds(" 5 ") == [5]
    for bad in ("2-1", "a", "-1", "", [True], [1.5], True, "0-999999999"):
        with pytest.raises(ValueError, match="seeds"):
            parse_seeds(bad)  # type: ignore[arg-type]


def test_a_grade_is_a_score_only_when_the_agent_earned_it() -> None:
    grade = {"score": 0.5, "passed": False, "internal_errors": 0, "criteria": []}
    assert graded({"id": "ep-1", "grade": grade}) is grade
    with pytest.raises(NotScored, match="could not grade episode ep-1: grading_error: the grader crashed"):
        graded({"id": "ep-1", "grade": None, "grade_error": {"error": "grading_error", "message": "the grader crashed"}})
    with pytest.raises(NotScored, match="1 tool call\\(s\\) crashed inside toolgym") as caught:
        graded({"id": "ep-1", "grade": {**grade, "internal_errors": 1}})
    assert caught.value.code == "internal"


async def test_a_finished_record_grades_again_to_the_same_score(tmp_path: Path) -> None:
    async with running_http(load_environment("finance")) as server:
        async with ControlClient(server.url, server.token) as control:
            created = await control.create("duplicate_charge", 0, oracle=True)
            assert created.oracle
            async with EpisodeSession(created.mcp_url) as session:
                with pytest.raises(MCPRefused):  # a JSON-RPC error: the caller's, not infrastructure
                    await session.request("no/such/method")
                for step in created.oracle[:-1]:
                    await session.call_tool(step["tool"], step.get("arguments") or {})
            done = await control.finish(created.id, record=True)
    grade = graded(done)
    path = tmp_path / f"{created.id}.jsonl"
    path.write_text(record_jsonl(done["record"]))
    again = subprocess.run([TOOLGYM, "grade", "--json", str(path)], capture_output=True, text=True, timeout=120, check=False)
    assert not again.stderr, again.stderr
    (regraded,) = map(json.loads, again.stdout.splitlines())
    assert regraded["score"] == grade["score"] and regraded["criteria"] == grade["criteria"]
    assert regraded["tool_calls"] == len(created.oracle) - 1
