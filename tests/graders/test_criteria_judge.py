"""The LLM-judge criterion: never passed silently; graded through a real local chat-completions server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graders.criteria import LLMJudge
from graders.criteria.judge import NOT_CONFIGURED, JudgeClient
from graders.grading import grade_episode, grade_record
from graders.tasks import call
from tests.graders.conftest import Run, grade_with
from tests.graders.judge_server import fake_judge


def _polite_judge(body: dict[str, Any]) -> str:
    """Passes answers that name both duplicate ids and say please; a strict but simple judge."""
    user = body["messages"][-1]["content"]
    answer = user.split("AGENT'S ANSWER:\n", 1)[1]
    ok = "tr-d001" in answer and "tr-d002" in answer
    return json.dumps({"passed": ok, "score": 1.0 if ok else 0.2, "reason": "names both ids" if ok else "misses an id"})


@pytest.fixture(autouse=True)
def _no_judge_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOOLGYM_JUDGE_BASE_URL", "TOOLGYM_JUDGE_MODEL", "TOOLGYM_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


async def test_without_an_endpoint_the_judge_is_not_graded_and_the_grade_does_not_pass(run: Run) -> None:
    done = await run("explain_duplicate", 0, "oracle")
    grade = await grade_episode(done)
    judged = next(r for r in grade.criteria if r.kind == "judge")
    assert judged.graded is False and judged.passed is False and judged.score == 0.0
    assert judged.evidence == NOT_CONFIGURED
    assert grade.score == 1.0  # every graded criterion passed...
    assert grade.complete is False and grade.passed is False  # ...but an ungraded one never passes silently
    assert grade.ungraded == ["explains politely"]
    assert "incomplete: explains politely not graded" in grade.summary()


async def test_judge_via_a_local_server_from_the_environment(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    async with fake_judge(_polite_judge) as server:
        monkeypatch.setenv("TOOLGYM_JUDGE_BASE_URL", server.base_url)
        monkeypatch.setenv("TOOLGYM_JUDGE_MODEL", "judge-1")
        monkeypatch.setenv("TOOLGYM_JUDGE_API_KEY", "sk-test")
        done = await run("explain_duplicate", 0, "oracle")
        grade = await grade_episode(done)
        wrong = await run("explain_duplicate", 0, [call("submit_answer", answer="Transfer tr-d001 looks doubled, sorry.")])
        wrong_grade = await grade_episode(wrong)
        regraded = await grade_record(done.environment, done.record)
    assert grade.complete and grade.passed and grade.score == 1.0
    judged = next(r for r in grade.criteria if r.kind == "judge")
    assert judged.graded and judged.passed and judged.evidence == "judge judge-1 passed (score 1): names both ids"
    assert regraded.to_json() == grade.to_json()
    failed = next(r for r in wrong_grade.criteria if r.kind == "judge")
    assert failed.graded and not failed.passed and failed.score == 0.2
    assert failed.evidence == "judge judge-1 failed (score 0.2): misses an id"

    request = server.requests[0]
    assert request["model"] == "judge-1" and request["temperature"] == 0
    assert request["messages"][0]["role"] == "system"
    assert "GRADING INSTRUCTION:\nThe answer names the two duplicate transfers and is polite." in request["messages"][1]["content"]
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert len(server.requests) == 3  # one per graded episode: the judge is called exactly when needed


async def test_judge_failures_are_ungraded_with_the_reason(run: Run) -> None:
    replies: list[Any] = [
        (500, {"error": "overloaded"}),
        "I think it is fine",
        json.dumps({"passed": "yes"}),
        json.dumps({"passed": True, "score": 7}),
        "```json\n" + json.dumps({"passed": True, "score": 0.9, "reason": "fenced"}) + "\n```",
    ]
    async with fake_judge(lambda body: replies.pop(0)) as server:
        done = await run("explain_duplicate", 1, "oracle")
        client = JudgeClient(base_url=server.base_url, model="judge-2")
        try:
            evidences = []
            for _ in range(5):
                grade = await grade_episode(done, judge=client)
                evidences.append(next(r for r in grade.criteria if r.kind == "judge"))
        finally:
            await client.aclose()
    assert [e.graded for e in evidences] == [False, False, False, False, True]
    assert evidences[0].evidence.startswith('not graded: judge returned HTTP 500: {"error":"overloaded"}')
    assert evidences[1].evidence == "not graded: judge reply is not a JSON object: 'I think it is fine'"
    assert evidences[2].evidence.startswith("not graded: judge reply has no boolean 'passed'")
    assert evidences[3].evidence.startswith("not graded: judge reply has a 'score' outside [0, 1]")
    assert evidences[4].evidence == "judge judge-2 passed (score 0.9): fenced"
    assert "authorization" not in server.headers[0]


async def test_unreachable_judge_and_missing_model(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    done = await run("explain_duplicate", 2, "oracle")
    async with fake_judge(lambda body: "{}") as server:
        dead_url = server.base_url
    dead = JudgeClient(base_url=dead_url, model="m", timeout=5)
    try:
        grade = await grade_episode(done, judge=dead)
    finally:
        await dead.aclose()
    judged = next(r for r in grade.criteria if r.kind == "judge")
    assert not judged.graded and judged.evidence.startswith(f"not graded: judge request to {dead_url}/chat/completions failed: ConnectError")
    monkeypatch.setenv("TOOLGYM_JUDGE_BASE_URL", dead_url)
    grade = await grade_episode(done)
    assert next(r for r in grade.criteria if r.kind == "judge").evidence == "not graded: TOOLGYM_JUDGE_MODEL is not set"
    assert not grade.passed


async def test_judge_can_see_the_transcript(run: Run) -> None:
    seen: list[str] = []

    def remember(body: dict[str, Any]) -> str:
        seen.append(body["messages"][1]["content"])
        return json.dumps({"passed": True})

    async with fake_judge(remember) as server:
        done = await run("explain_duplicate", 0, "oracle")
        client = JudgeClient(base_url=server.base_url, model="m")
        try:
            grade = await grade_with(done, [LLMJudge(instructions="Checks the account first.", show_transcript=True)], judge=client)
        finally:
            await client.aclose()
    assert grade.passed and grade.criteria[0].score == 1.0
    assert grade.criteria[0].evidence == "judge m passed (score 1)"
    assert "AGENT'S TOOL CALLS:\n#1 get_account(account_id=" in seen[0]
