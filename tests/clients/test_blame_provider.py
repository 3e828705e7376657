"""Who is blamed when the provider misbehaves: real local servers speaking each protocol, through the runner.

Stalls, Retry-After and trickling bodies never use the agent's time; a provider stalled past the episode's
provider budget errors (never graded); a refusal the model caused ends the episode graded and is not re-run;
a payload of the wrong shape is the provider's fault, never a crash of ours.
"""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest
from rich.console import Console

from clients.agents._provider import is_context_overflow
from clients.agents.base import Limits
from clients.agents.timing import Backoff
from clients.summary import render_summary, summarize
from tests.clients.fake_provider import NEVER, Reply, anthropic_error, openai_error, openai_message
from tests.clients.llm_scenarios import ACCOUNT, Protocol, RecordingSleep, run_llm, solution, tool_turn

PROTOCOLS: list[Protocol] = ["openai", "anthropic"]


def _error(protocol: Protocol, message: str, code: str | None = None) -> dict[str, object]:
    return openai_error(message, code=code) if protocol == "openai" else anthropic_error(message)


# Real waits, sized for a busy machine: the agent's own time in these episodes (connect, list tools, two calls) is
# ~30 ms on an idle core and a few tenths of a second under heavy load, so an agent budget is seconds, the
# provider's waits are longer than it, and a reply that must time out never comes (NEVER).


@pytest.fixture
async def warm(tmp_path: Path) -> None:
    """An untimed episode of each protocol first, so a timed one is never its process's first: that one imports
    and loads what later ones reuse, seconds of the agent's own time on a busy machine."""
    for protocol in PROTOCOLS:
        await run_llm(tmp_path / f"warm-{protocol}", solution(protocol), protocol)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.usefixtures("warm")
async def test_waiting_on_the_provider_never_uses_the_agents_time(tmp_path: Path, protocol: Protocol) -> None:
    first, *rest = solution(protocol)
    slow_down = Reply(_error(protocol, "slow down"), status=429, headers={"retry-after": "2"})
    script = [slow_down, Reply(first.body, delay=1.5), *rest]
    limits = Limits(episode_timeout=3.0, provider_timeout=60, request_timeout=30, max_retries=2)
    outcome = await run_llm(tmp_path / "run", script, protocol, limits=limits, sleep=None)
    line = outcome.line
    # 3.5 s waiting on the provider, more than the agent's 3 s: still the agent's own result.
    assert (line.status, line.passed, line.stop_reason) == ("graded", True, "done")
    assert line.provider_wait_ms >= 3500 and line.wall_ms >= 3500


@pytest.mark.slow
@pytest.mark.usefixtures("warm")
async def test_stalls_during_retries_are_not_the_agents_timeout(tmp_path: Path) -> None:
    script = [Reply(openai_message("late"), delay=NEVER) for _ in range(3)] + solution("openai")
    limits = Limits(episode_timeout=3.0, provider_timeout=60, request_timeout=1.5, max_retries=4)
    outcome = await run_llm(tmp_path / "run", script, limits=limits, sleep=None)
    assert (outcome.line.status, outcome.line.passed) == ("graded", True)  # 4.5 s of timed-out requests: not its time
    assert outcome.line.provider_wait_ms >= 4500
    assert len(outcome.provider.requests) == 6


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_provider_stalled_past_its_budget_errors_and_is_never_graded(tmp_path: Path, protocol: Protocol) -> None:
    script = [Reply(solution(protocol)[0].body, delay=NEVER) for _ in range(100)]
    limits = Limits(episode_timeout=60, provider_timeout=2.0, request_timeout=0.5, max_retries=100)
    outcome = await run_llm(tmp_path / "run", script, protocol, limits=limits, sleep=None)
    line = outcome.line
    assert (line.status, line.error_class, line.score, line.grade, line.stop_reason) == ("errored", "provider_timeout", None, None, None)
    assert "provider budget (2s)" in (line.error or "")
    # cut at the budget: without it, 100 requests timing out after 0.5 s each would wait for 50 s and more
    assert 2000 <= line.provider_wait_ms < 20_000
    assert outcome.record.closed is not None and outcome.record.closed.reason == "errored"


async def test_a_retry_after_beyond_what_is_left_fails_at_once(tmp_path: Path) -> None:
    sleep = RecordingSleep()
    script = [Reply(openai_error("slow down"), status=429, headers={"retry-after": "30"}) for _ in range(3)]
    limits = Limits(provider_timeout=2, request_timeout=2, max_retries=2)
    outcome = await run_llm(tmp_path / "a", script, limits=limits, sleep=sleep)
    assert (outcome.line.status, outcome.line.error_class) == ("errored", "provider_timeout")
    assert "would outlast the episode's provider budget" in (outcome.line.error or "")
    assert sleep.delays == [] and len(outcome.provider.requests) == 1
    # Beyond what any request waits for (Backoff.max_wait), even with budget left: a provider error at once.
    script = [Reply(openai_error("slow down"), status=429, headers={"retry-after": "600"})]
    outcome = await run_llm(tmp_path / "b", script, sleep=sleep)
    assert (outcome.line.status, outcome.line.error_class) == ("errored", "provider")
    assert "asked to retry after 600s, more than the 120s we wait" in (outcome.line.error or "")
    assert sleep.delays == []


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_trickling_body_is_cut_at_the_request_timeout(tmp_path: Path, protocol: Protocol) -> None:
    first, *rest = solution(protocol)
    # ~40 chunks, one every 0.5 s: each read is quick, the whole body takes 20 s; the request timeout is 1.5 s.
    trickle = Reply(first.body, trickle=0.5, chunk=8)
    limits = Limits(request_timeout=1.5, max_retries=1)
    recovered = await run_llm(tmp_path / "a", [trickle, first, *rest], protocol, limits=limits, sleep=None)
    assert (recovered.line.status, recovered.line.passed) == ("graded", True)
    first_request, retry = recovered.provider.requests[:2]
    assert retry.at - first_request.at < 10  # retried at the request timeout, long before the body would have ended
    limits = Limits(request_timeout=1.5, max_retries=0)
    cut = await run_llm(tmp_path / "b", [trickle], protocol, limits=limits, sleep=None)
    assert (cut.line.status, cut.line.error_class) == ("errored", "provider")
    assert "no complete answer within 1.5s" in (cut.line.error or "") and cut.line.wall_ms < 10_000


OVERFLOWS = {
    "openai": (400, openai_error("This model's maximum context length is 4096 tokens. However, your messages resulted in 5120 tokens.", code="context_length_exceeded")),
    "anthropic": (400, anthropic_error("prompt is too long: 210000 tokens > 200000 maximum")),
}


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_context_overflow_is_the_agents_failure_and_not_rerun(tmp_path: Path, protocol: Protocol) -> None:
    status, body = OVERFLOWS[protocol]
    script = [solution(protocol)[0], Reply(body, status=status)] * 3
    outcome = await run_llm(tmp_path / "run", script, protocol, retries=2)
    line = outcome.line
    assert (line.status, line.stop_reason, line.attempts, line.error_class) == ("graded", "context_overflow", 1, None)
    assert line.passed is False and "no longer fits the model" in (line.stop_detail or "")
    assert len(outcome.provider.requests) == 2 and line.tool_calls == 1


@pytest.mark.parametrize(
    ("status", "message", "code"),
    [
        (400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens", None),  # vLLM
        (400, "the request exceeds the available context size, try increasing it", "exceed_context_size_error"),  # llama.cpp
        (400, "input length and `max_tokens` exceed context limit: 199000 + 4096 > 200000", None),  # Anthropic
        (413, "Request exceeds the maximum allowed number of bytes.", "request_too_large"),
        (400, "Invalid request", "context_length_exceeded"),
    ],
)
def test_context_overflow_wordings(status: int, message: str, code: str | None) -> None:
    assert is_context_overflow(status, message, code)


def test_other_refusals_are_not_overflows() -> None:
    assert not is_context_overflow(400, "max_tokens: field required")
    assert not is_context_overflow(429, "too many tokens per minute")


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_400_caused_by_the_models_malformed_output_is_the_agents_failure(tmp_path: Path, protocol: Protocol) -> None:
    malformed = '{"account_id": ' if protocol == "openai" else ACCOUNT
    script = [tool_turn(protocol, [("c1", "get_account", malformed)]), Reply(_error(protocol, "messages.1.content.0: invalid tool call"), status=400)] * 3
    outcome = await run_llm(tmp_path / "run", script, protocol, retries=2)
    line = outcome.line
    assert (line.status, line.stop_reason, line.attempts) == ("graded", "model_output_rejected", 1)
    assert "malformed output" in (line.stop_detail or "") and "c1" in (line.stop_detail or "")
    assert (line.tool_calls, line.rejected_calls, line.tool_errors) == (1, 1, 1)


# A refused key (401, 403) is not an episode's error but the run's: tests/clients/test_provider_keys.py.
@pytest.mark.parametrize(("status", "message"), [(400, "unknown parameter: temprature"), (404, "model not found")])
async def test_a_refusal_of_the_request_as_configured_errors_and_is_not_rerun(tmp_path: Path, status: int, message: str) -> None:
    script = [Reply(openai_error(message), status=status)] * 3
    outcome = await run_llm(tmp_path / "run", script, retries=2)
    line = outcome.line
    assert (line.status, line.error_class, line.attempts) == ("errored", "provider", 1)
    assert f"HTTP {status}: {message}" in (line.error or "") and len(outcome.provider.requests) == 1


PAYLOADS = [
    ("openai", Reply({"choices": [{"index": 0, "message": "I will look it up."}]}), "choices[0].message as str"),
    ("openai", Reply({"choices": []}), "without choices"),
    ("openai", Reply({"choices": [{"message": {"content": None, "tool_calls": "get_account"}}]}), "tool_calls that are not a list"),
    ("openai", Reply({"choices": [{"message": {"content": {"text": "hi"}}}]}), "content as a dict"),
    ("openai", Reply(raw=b"<html>502 Bad Gateway</html>"), "not JSON"),
    ("openai", Reply(raw=b"[1, 2]"), "a JSON list, not an object"),
    ("anthropic", Reply({"type": "message", "content": "hello"}), "without a content list"),
    ("anthropic", Reply({"type": "message", "content": ["hello"]}), "without a content list"),
    ("anthropic", Reply({"type": "message", "content": [{"type": "text"}]}), "text block without text"),
]


@pytest.mark.parametrize(("protocol", "reply", "message"), PAYLOADS)
async def test_a_malformed_payload_is_the_providers_fault_never_a_crash(
    tmp_path: Path, protocol: Protocol, reply: Reply, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        outcome = await run_llm(tmp_path / "run", [reply], protocol)
    assert (outcome.line.status, outcome.line.error_class) == ("errored", "provider")
    assert message in (outcome.line.error or "")
    assert not [r for r in caplog.records if r.exc_info], "a malformed payload must not print a traceback"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_usage_that_is_not_numbers_is_ignored(tmp_path: Path, protocol: Protocol, caplog: pytest.LogCaptureFixture) -> None:
    first, *rest = solution(protocol)
    body = dict(first.body)
    body["usage"] = {"prompt_tokens": "lots", "completion_tokens": 5} if protocol == "openai" else {"input_tokens": "n/a", "output_tokens": 3}
    with caplog.at_level(logging.WARNING):
        outcome = await run_llm(tmp_path / "run", [Reply(body), *rest], protocol)
    assert (outcome.line.status, outcome.line.passed) == ("graded", True)
    assert outcome.line.tokens.total == (15 + 15 if protocol == "openai" else 15 + 19)  # the other two turns
    assert any("not token counts" in r.getMessage() for r in caplog.records)


async def test_every_retry_is_jittered(tmp_path: Path) -> None:
    sleep = RecordingSleep()
    script = [Reply(openai_error("down"), status=503) for _ in range(6)]
    await run_llm(tmp_path / "run", script, seeds="0,1", limits=Limits(max_retries=2), sleep=sleep, backoff=Backoff(base=1.0))
    assert len(sleep.delays) == 4 and len(set(sleep.delays)) == 4  # two episodes, never in lockstep
    assert all(0.5 <= d <= 2.0 for d in sleep.delays)
    backoff = Backoff(base=1.0, jitter=0.5)
    rng = random.Random(7)
    exponential = [backoff.pause(2, rng=rng) for _ in range(200)]
    assert min(exponential) >= 2.0 and max(exponential) <= 4.0 and len(set(exponential)) == 200
    asked = [backoff.pause(0, 3.0, rng) for _ in range(200)]
    assert min(asked) >= 3.0 and max(asked) <= 3.0 * 1.5  # never earlier than the provider asked


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_reruns_back_off_and_failed_attempts_tokens_are_kept(tmp_path: Path, protocol: Protocol) -> None:
    outage = Reply(_error(protocol, "upstream down"), status=502)
    first = tool_turn(protocol, [("c1", "get_account", _args(protocol))], tokens=(100, 20))
    pauses = RecordingSleep()
    script = [first, outage, outage, *solution(protocol)]
    outcome = await run_llm(tmp_path / "run", script, protocol, retries=2, limits=Limits(max_retries=1), rerun_sleep=pauses)
    line = outcome.line
    assert (line.status, line.passed, line.attempts) == ("graded", True, 2)
    assert line.tokens.total == (45 if protocol == "openai" else 49) and line.failed_attempt_tokens.total == 120
    assert len(pauses.delays) == 1 and 1.0 <= pauses.delays[0] <= 2.0  # RunConfig.rerun_backoff: base 2 s, jittered
    summary = summarize("toy-tasks", outcome.lines)
    assert summary.agents[0].overall.failed_attempt_tokens == 120
    console = Console(width=160, record=True)
    render_summary(summary, console)
    assert "(+120 re-run)" in console.export_text()


def _args(protocol: Protocol) -> object:
    return f'{{"account_id": "{ACCOUNT}"}}' if protocol == "openai" else {"account_id": ACCOUNT}
