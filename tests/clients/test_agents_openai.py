"""The OpenAI-compatible agent against a scripted local provider: retries, timeouts, bad JSON, records."""

from __future__ import annotations

import json

import anyio
import pytest

from clients.agents._provider import Backoff
from clients.agents.openai import OpenAIAgent
from clients.errors import AgentSpecError, ProviderError
from servers.record import MessageEvent
from tests.clients.fake_provider import NEVER, Reply, openai_message, openai_tool_call, running_provider
from tests.clients.helpers import FAST_LIMITS, toy_session


class RecordingSleep:
    """Records the waits the agent asks for instead of spending them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def test_tool_loop_with_429_500_timeout_and_malformed_arguments() -> None:
    script = [
        Reply({"error": {"message": "slow down"}}, status=429, headers={"retry-after": "7"}),
        Reply({"error": {"message": "oops"}}, status=500),
        Reply(
            openai_message(
                None,
                [
                    openai_tool_call("c1", "list_accounts", "{}"),
                    openai_tool_call("c2", "get_account", '{"account_id": "acc-001"'),
                ],
                prompt=100,
                completion=20,
            )
        ),
        Reply(openai_message("late"), delay=NEVER),
        Reply(openai_message(None, [openai_tool_call("c3", "get_account", '{"account_id": "acc-002"}')], prompt=150, completion=10)),
        Reply(openai_message("All done.", prompt=200, completion=5)),
    ]
    sleep = RecordingSleep()
    with anyio.fail_after(30):
        async with running_provider(script) as provider, toy_session() as (session, episode):
            agent = OpenAIAgent("test-model", base_url=f"{provider.url}/v1", api_key="sk-test", temperature=0.0, sleep=sleep, backoff=Backoff(base=0.25, factor=2, cap=5, jitter=0))
            result = await agent.run(session)
            await agent.aclose()

    assert result.stop_reason == "done"
    # 429 honored Retry-After; the 500 and the timeout got exponential backoff (attempts 1 and 0 of their requests).
    assert sleep.delays == [7.0, 0.5, 0.25]
    assert len(provider.requests) == 6
    first = provider.requests[0]
    assert first.headers["authorization"] == "Bearer sk-test"
    assert first.body["model"] == "test-model" and first.body["temperature"] == 0.0
    assert {t["function"]["name"] for t in first.body["tools"]} == {"list_accounts", "get_account", "transfer", "submit_answer"}
    assert first.body["messages"][0] == {"role": "system", "content": "Move money between accounts with transfer; answer with submit_answer."}
    assert first.body["messages"][1] == {"role": "user", "content": "Pay the debt back."}

    # The malformed call never reached the world; the model got an invalid_arguments tool result instead.
    calls = episode.record.tool_calls
    assert [(c.tool, c.arguments) for c in calls] == [("list_accounts", {}), ("get_account", {"account_id": "acc-002"})]
    second_turn = provider.requests[3].body["messages"]
    tool_messages = {m["tool_call_id"]: m for m in second_turn if m["role"] == "tool"}
    assert json.loads(tool_messages["c2"]["content"])["error"] == "invalid_arguments"
    assert "not valid JSON" in json.loads(tool_messages["c2"]["content"])["message"]
    assert json.loads(tool_messages["c1"]["content"])["accounts"][0]["id"] == "acc-001"
    # Back to the provider, the malformed arguments go wrapped in an object (a strict server accepts it) ...
    assert second_turn[2]["tool_calls"][1]["function"]["arguments"] == json.dumps({"_invalid_arguments": '{"account_id": "acc-001"'})
    # ... while the record keeps them exactly as the model wrote them, and the rejected call is an event.
    assert episode.record.events[2].tool_calls[1]["function"]["arguments"] == '{"account_id": "acc-001"'  # type: ignore[union-attr]
    (rejected,) = episode.record.rejected_calls
    assert (rejected.call_id, rejected.tool, rejected.raw_arguments, rejected.error.code) == ("c2", "get_account", '{"account_id": "acc-001"', "invalid_arguments")

    messages = [e for e in episode.record.events if isinstance(e, MessageEvent)]
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
    assert messages[-1].content == "All done."
    assert messages[2].usage == {"prompt": 100, "completion": 20, "total": 120}
    assert session.tokens.total == 120 + 160 + 205
    assert session.turns == 3
    # Messages interleave with tool calls in the record: assistant, then both calls, then their results.
    kinds = [e.type if e.type != "message" else e.role for e in episode.record.events]
    assert kinds[:8] == ["system", "user", "assistant", "rejected_call", "tool_call", "tool", "tool", "assistant"]


async def test_turn_limit_stops_the_loop() -> None:
    script = [Reply(openai_message(None, [openai_tool_call(f"c{i}", "list_accounts", "{}")])) for i in range(5)]
    limits = FAST_LIMITS.__class__(max_turns=2, episode_timeout=30, request_timeout=5, max_retries=0)
    with anyio.fail_after(30):
        async with running_provider(script) as provider, toy_session(limits=limits) as (session, episode):
            agent = OpenAIAgent("m", base_url=f"{provider.url}/v1", api_key="")
            result = await agent.run(session)
            await agent.aclose()
    assert result.stop_reason == "max_turns"
    assert len(provider.requests) == 2
    assert "authorization" not in provider.requests[0].headers
    assert len(episode.record.tool_calls) == 2


async def test_unretryable_status_fails_at_once() -> None:
    sleep = RecordingSleep()
    with anyio.fail_after(30):
        async with running_provider([Reply({"error": {"message": "no such model"}}, status=404)]) as provider, toy_session() as (session, _):
            agent = OpenAIAgent("m", base_url=f"{provider.url}/v1", api_key="k", sleep=sleep)
            with pytest.raises(ProviderError, match="HTTP 404: no such model") as caught:
                await agent.run(session)
            await agent.aclose()
    assert caught.value.error_class == "provider" and caught.value.status == 404
    assert sleep.delays == [] and len(provider.requests) == 1


async def test_retries_are_bounded() -> None:
    sleep = RecordingSleep()
    script = [Reply({"error": {"message": "down"}}, status=503) for _ in range(10)]
    with anyio.fail_after(30):
        async with running_provider(script) as provider, toy_session() as (session, _):
            agent = OpenAIAgent("m", base_url=f"{provider.url}/v1", sleep=sleep, backoff=Backoff(base=1, factor=2, cap=3, jitter=0))
            with pytest.raises(ProviderError, match="failed after 4 attempts; last: HTTP 503: down"):
                await agent.run(session)
            await agent.aclose()
    assert len(provider.requests) == 4
    assert sleep.delays == [1, 2, 3]


async def test_unreachable_provider_is_a_provider_error() -> None:
    sleep = RecordingSleep()
    async with toy_session() as (session, _):
        agent = OpenAIAgent("m", base_url="http://127.0.0.1:9/v1", sleep=sleep)
        with pytest.raises(ProviderError, match="connection failed"):
            await agent.run(session)
        await agent.aclose()
    assert len(sleep.delays) == FAST_LIMITS.max_retries


async def test_answer_that_is_not_a_completion_is_a_provider_error() -> None:
    with anyio.fail_after(30):
        async with running_provider([Reply({"object": "list", "data": []})]) as provider, toy_session() as (session, _):
            agent = OpenAIAgent("m", base_url=f"{provider.url}/v1")
            with pytest.raises(ProviderError, match="without choices"):
                await agent.run(session)
            await agent.aclose()


def test_model_comes_from_spec_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLGYM_MODEL", raising=False)
    with pytest.raises(AgentSpecError, match="needs a model"):
        OpenAIAgent(None)
    monkeypatch.setenv("TOOLGYM_MODEL", "llama3")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/")
    agent = OpenAIAgent(None)
    assert agent.spec == "openai:llama3" and agent.base_url == "http://127.0.0.1:11434/v1"
