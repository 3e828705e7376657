"""The runner with an LLM agent on a scripted provider: messages and tokens in records, provider outages."""

from __future__ import annotations

from pathlib import Path

import anyio

from clients.agents._provider import Backoff
from clients.agents.base import Limits
from clients.agents.openai import OpenAIAgent
from clients.runner import RunConfig, run
from servers.record import MessageEvent, read_record
from tests.clients.fake_provider import Reply, openai_message, openai_tool_call, running_provider
from tests.clients.toyenv import environment


async def _no_wait(seconds: float) -> None:
    """Retry waits are not spent in tests."""


async def test_llm_episode_records_messages_and_tokens(tmp_path: Path) -> None:
    world, instance = environment.instantiate_task("report_balance", 0)
    world.close()
    account = instance.oracle[0].arguments["account_id"]
    balance = instance.oracle[1].arguments["text"]
    script = [
        Reply(openai_message(None, [openai_tool_call("c1", "get_account", f'{{"account_id": "{account}"}}')], prompt=50, completion=9)),
        Reply(openai_message(None, [openai_tool_call("c2", "submit_answer", f'{{"text": "{balance}"}}')], prompt=80, completion=7)),
        Reply(openai_message(f"The balance is {balance}.", prompt=90, completion=8)),
    ]
    with anyio.fail_after(60):
        async with running_provider(script) as provider:
            agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1", api_key="k", sleep=_no_wait)
            outcome = await run(RunConfig(env=environment, agent=agent, tasks="report_balance", out=tmp_path / "run"))
    (line,) = outcome.lines
    assert line.status == "graded" and line.passed and line.agent == "openai:scripted"
    assert (line.turns, line.tool_calls, line.stop_reason) == (3, 2, "done")
    assert (line.tokens.prompt, line.tokens.completion, line.tokens.total) == (220, 24, 244)
    record = read_record(tmp_path / "run" / line.record, require_closed=True)  # type: ignore[operator]
    kinds = [e.type if not isinstance(e, MessageEvent) else e.role for e in record.events]
    assert kinds == ["system", "user", "assistant", "tool_call", "tool", "assistant", "tool_call", "tool", "assistant", "closed"]
    assert provider.requests[0].body["messages"][1]["content"] == instance.prompt
    assert outcome.summary.agents[0].overall.tokens == 244


async def test_provider_outage_is_an_errored_episode_retried_and_excluded(tmp_path: Path) -> None:
    outage = [Reply({"error": {"message": "upstream down"}}, status=502) for _ in range(6)]
    with anyio.fail_after(60):
        async with running_provider(outage) as provider:
            agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1", sleep=_no_wait, backoff=Backoff(base=0.01))
            outcome = await run(
                RunConfig(
                    env=environment, agent=agent, tasks="report_balance", out=tmp_path / "run", retries=1, limits=Limits(max_retries=2), sleep=_no_wait
                )
            )
    (line,) = outcome.lines
    assert line.status == "errored" and line.error_class == "provider" and line.attempts == 2
    assert "failed after 3 attempts; last: HTTP 502: upstream down" in (line.error or "")
    assert len(provider.requests) == 6
    overall = outcome.summary.agents[0].overall
    assert overall.episodes == 0 and overall.errored == 1 and overall.pass_at_1 is None
