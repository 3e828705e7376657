"""Shared by the blame tests: the toy task an LLM agent solves, scripted in each provider's protocol, and a runner.

``report_balance`` seed 0 is solved by two tool calls (``get_account``, then ``submit_answer`` with the
balance); :func:`solution` scripts them — and a last plain answer — for either protocol, so a test only
writes the misbehaviour it is about and appends the solution.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio

from clients.agents.anthropic import AnthropicAgent
from clients.agents.base import Limits
from clients.agents.openai import OpenAIAgent
from clients.agents.timing import Backoff
from clients.results import ResultLine
from clients.runner import RunConfig, run
from servers.record import Record, read_record
from tests.clients.fake_provider import FakeProvider, Reply, Validator, anthropic_message, openai_message, running_provider
from tests.clients.toyenv import environment

__all__ = ["Protocol", "ACCOUNT", "BALANCE", "solution", "tool_turn", "Outcome", "run_llm", "RecordingSleep", "no_wait", "QUICK"]

Protocol = Literal["openai", "anthropic"]

_world, _instance = environment.instantiate_task("report_balance", 0)
_world.close()
ACCOUNT: str = _instance.oracle[0].arguments["account_id"]
BALANCE: str = _instance.oracle[1].arguments["text"]

QUICK = Backoff(base=0.01, factor=2.0, cap=0.05)
"""Retry pacing for tests that spend their waits for real."""


class RecordingSleep:
    """Records the waits asked for instead of spending them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def no_wait(seconds: float) -> None:
    """Waits are not spent."""


def tool_turn(protocol: Protocol, calls: list[tuple[str | None, str | None, Any]], *, tokens: tuple[int, int] = (10, 5)) -> Reply:
    """A model turn calling tools: (id, name, arguments) with arguments as the model writes them.

    For OpenAI the arguments are the raw string; for Anthropic the ``input`` value. ``None`` leaves out the id
    or the name.
    """
    if protocol == "openai":
        raw = []
        for call_id, name, arguments in calls:
            item: dict[str, Any] = {"type": "function", "function": {"arguments": arguments}}
            if call_id is not None:
                item["id"] = call_id
            if name is not None:
                item["function"]["name"] = name
            raw.append(item)
        return Reply(openai_message(None, raw, prompt=tokens[0], completion=tokens[1]))
    blocks = []
    for call_id, name, arguments in calls:
        block: dict[str, Any] = {"type": "tool_use", "input": arguments}
        if call_id is not None:
            block["id"] = call_id
        if name is not None:
            block["name"] = name
        blocks.append(block)
    return Reply(anthropic_message(blocks, input_tokens=tokens[0], output_tokens=tokens[1]))


def _arguments(protocol: Protocol, value: dict[str, Any]) -> Any:
    return json.dumps(value) if protocol == "openai" else value


def solution(protocol: Protocol, prefix: str = "s") -> list[Reply]:
    """The model turns that solve the toy task: look the account up, answer its balance, say done."""
    final = Reply(openai_message("Done.")) if protocol == "openai" else Reply(anthropic_message([{"type": "text", "text": "Done."}]))
    return [
        tool_turn(protocol, [(f"{prefix}1", "get_account", _arguments(protocol, {"account_id": ACCOUNT}))]),
        tool_turn(protocol, [(f"{prefix}2", "submit_answer", _arguments(protocol, {"text": BALANCE}))]),
        final,
    ]


@dataclass
class Outcome:
    """One LLM episode through the runner: its results line, the provider's view, the record."""

    line: ResultLine
    provider: FakeProvider
    out: Path
    lines: list[ResultLine] = field(default_factory=list)

    @property
    def record(self) -> Record:
        """The episode's record as written to the run folder."""
        assert self.line.record is not None
        return read_record(self.out / self.line.record, require_closed=True)

    def conversation(self, request: int = -1) -> list[dict[str, Any]]:
        """The messages of one request the agent sent (the last by default)."""
        return list(self.provider.requests[request].body["messages"])


async def run_llm(
    out: Path,
    script: list[Reply],
    protocol: Protocol = "openai",
    *,
    validate: Validator | None = None,
    limits: Limits | None = None,
    retries: int = 0,
    sleep: Any = no_wait,
    backoff: Backoff = QUICK,
    seeds: str = "0",
    rerun_sleep: Any = no_wait,
    timeout: float = 120,
    server: Any = None,
) -> Outcome:
    """Run ``report_balance`` with an LLM agent of ``protocol`` against a scripted provider, through the runner.

    Args:
        timeout: a guard against a hang, sized for a busy machine (an episode takes well under a second idle).
        server: a running ``servers.http`` server to run the episode on (default: in this process).
    """
    with anyio.fail_after(timeout):
        async with running_provider(script, validate=validate) as provider:
            agent: Any
            if protocol == "openai":
                agent = OpenAIAgent("scripted", base_url=f"{provider.url}/v1", api_key="k", sleep=sleep, backoff=backoff)
            else:
                agent = AnthropicAgent("scripted", base_url=provider.url, api_key="k", sleep=sleep, backoff=backoff)
            config = RunConfig(
                env=environment,
                agent=agent,
                tasks="report_balance",
                seeds=seeds,
                out=out,
                retries=retries,
                limits=limits or Limits(request_timeout=5, max_retries=2),
                sleep=rerun_sleep,
                server=server.url if server is not None else None,
                token=server.token if server is not None else None,
            )
            outcome = await run(config)
    return Outcome(line=outcome.lines[0], provider=provider, out=out, lines=outcome.lines)
