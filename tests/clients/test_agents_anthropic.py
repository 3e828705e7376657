"""The Anthropic Messages agent against a scripted local provider: native tool use, retries, records."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import anyio
import httpx
import pytest

from clients.agents._provider import Backoff, retry_after_seconds
from clients.agents.anthropic import ANTHROPIC_VERSION, AnthropicAgent
from clients.errors import ProviderError
from servers.record import MessageEvent
from tests.clients.fake_provider import NEVER, Reply, anthropic_message, running_provider
from tests.clients.helpers import toy_session


class RecordingSleep:
    """Records the waits the agent asks for instead of spending them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def test_native_tool_use_loop_with_overload_and_timeout() -> None:
    script = [
        Reply({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, status=529, headers={"retry-after": "3"}),
        Reply(
            anthropic_message(
                [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "get_account", "input": {"account_id": "acc-001"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "get_account", "input": {"account_id": "acc-999"}},
                ]
            )
        ),
        Reply(anthropic_message([{"type": "text", "text": "late"}]), delay=NEVER),
        Reply(anthropic_message([{"type": "tool_use", "id": "toolu_3", "name": "submit_answer", "input": {"text": "paid"}}], input_tokens=30, output_tokens=3)),
        Reply(anthropic_message([{"type": "text", "text": "Finished."}], input_tokens=40, output_tokens=2)),
    ]
    sleep = RecordingSleep()
    with anyio.fail_after(30):
        async with running_provider(script) as provider, toy_session() as (session, episode):
            agent = AnthropicAgent("claude-test", base_url=provider.url, api_key="ak-test", max_tokens=512, sleep=sleep, backoff=Backoff(base=0.1, factor=2, cap=1, jitter=0))
            result = await agent.run(session)
            await agent.aclose()

    assert result.stop_reason == "done"
    assert sleep.delays == [3.0, 0.1]
    first = provider.requests[0]
    assert first.path == "/v1/messages"
    assert first.headers["x-api-key"] == "ak-test" and first.headers["anthropic-version"] == ANTHROPIC_VERSION
    assert first.body["max_tokens"] == 512 and first.body["model"] == "claude-test"
    assert first.body["system"].startswith("Move money between accounts")
    assert {t["name"] for t in first.body["tools"]} >= {"transfer", "get_account"}
    assert all("input_schema" in t for t in first.body["tools"])

    # Tool results go back as one user message of tool_result blocks, errors flagged.
    results = provider.requests[2].body["messages"][2]
    assert results["role"] == "user"
    blocks = {b["tool_use_id"]: b for b in results["content"]}
    assert blocks["toolu_1"]["is_error"] is False and json.loads(blocks["toolu_1"]["content"])["id"] == "acc-001"
    assert blocks["toolu_2"]["is_error"] is True and json.loads(blocks["toolu_2"]["content"])["error"] == "account_not_found"

    calls = episode.record.tool_calls
    assert [c.tool for c in calls] == ["get_account", "get_account", "submit_answer"]
    assert calls[1].error is not None and calls[1].error.code == "account_not_found"
    messages = [e for e in episode.record.events if isinstance(e, MessageEvent)]
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
    assert messages[2].content == "Let me look."
    assert messages[2].tool_calls == [
        {"id": "toolu_1", "type": "function", "function": {"name": "get_account", "arguments": '{"account_id": "acc-001"}'}},
        {"id": "toolu_2", "type": "function", "function": {"name": "get_account", "arguments": '{"account_id": "acc-999"}'}},
    ]
    assert messages[2].usage == {"prompt": 12, "completion": 7, "total": 19}
    assert session.tokens.total == 19 + 33 + 42


async def test_tool_input_that_is_not_an_object_goes_back_as_an_error() -> None:
    script = [
        Reply(anthropic_message([{"type": "tool_use", "id": "toolu_1", "name": "get_account", "input": "acc-001"}])),
        Reply(anthropic_message([{"type": "text", "text": "ok"}])),
    ]
    with anyio.fail_after(30):
        async with running_provider(script) as provider, toy_session() as (session, episode):
            agent = AnthropicAgent("claude-test", base_url=provider.url, api_key="k")
            await agent.run(session)
            await agent.aclose()
    assert episode.record.tool_calls == []
    block = provider.requests[1].body["messages"][2]["content"][0]
    assert block["is_error"] is True and json.loads(block["content"])["error"] == "invalid_arguments"


async def test_bad_request_is_not_retried() -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: field required"}}
    with anyio.fail_after(30):
        async with running_provider([Reply(body, status=400)]) as provider, toy_session() as (session, _):
            agent = AnthropicAgent("claude-test", base_url=provider.url, api_key="k")
            with pytest.raises(ProviderError, match="HTTP 400: max_tokens: field required"):
                await agent.run(session)
            await agent.aclose()
    assert len(provider.requests) == 1


def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds(httpx.Headers({"retry-after": "2"})) == 2.0
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after_seconds(httpx.Headers({"retry-after": "Thu, 01 Jan 2026 12:00:30 GMT"}), now=now) == 30.0
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None
