"""Real finance runs for the report tests, made once per test session by the real runner.

- ``oracle`` and ``noop``: three tasks × seeds 6-7 × 2 trials (12 episodes each): all pass / all fail. Seeds 6 and 7
  are where the world makes ``savings_to_checking`` a transfer to do on both (the hostile agent's planned miss counts).
- ``hostile``: the same episodes played by :class:`HostileAgent`, which solves every task like the oracle
  but writes script payloads everywhere an agent can (its messages, a transfer memo, a wire's rejection
  reason, its answer), misses the transfer on trial 1 of ``savings_to_checking`` and hits an
  infrastructure error, whose message is a payload too, on seed 7 trial 1 of ``dispute_too_old``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import pytest

from clients.agents.base import AgentResult, AgentSession
from clients.agents.noop import NoopAgent
from clients.agents.oracle import OracleAgent
from clients.errors import InfrastructureError
from clients.runner import RunConfig, run

__all__ = ["TASKS", "PAYLOAD", "MEMO", "HostileAgent", "view_runs", "EXPECTED", "run_async"]

T = TypeVar("T")

TASKS = ["savings_to_checking", "cancel_wire", "dispute_too_old"]
SEEDS = "6-7"
TRIALS = 2

PAYLOAD = '</script><script>window.__pwned = 1; document.title = "pwned"</script><!-- <img src=x onerror="window.__pwned = 2">'
"""What a hostile agent writes: it must show as text and never run."""

MEMO = '<script>window.__pwned = 3; document.title = "pwned"</script>'
"""Fits the 140-character memo of a transfer."""

EXPECTED = {
    "hostile": {"episodes": 12, "graded": 11, "pass": 9, "fail": 2, "errored": 1, "pass_at_1": "83.3%", "pass_hat_k": "60%", "pass_at_k": "100%"},
}
"""Known figures of the hostile run. Problems (task, seed) weigh once and the errored trial is excluded, so
dispute_too_old seed 7 counts 1/1; savings_to_checking fails trial 1 on both seeds: pass@1 = (4 × 1 + 2 × ½) / 6;
pass^2 counts only the 5 problems with 2 graded trials: 3 / 5."""


class HostileAgent:
    """The oracle's calls with payloads in every free-text field, and planned failures."""

    spec = "hostile"
    transport: Literal["memory"] = "memory"
    needs_instance = True
    needs_tools = False

    async def run(self, session: AgentSession) -> AgentResult:
        """Play the task like the oracle, but hostile."""
        assert session.instance is not None
        if session.task == "dispute_too_old" and session.seed == 7 and session.trial == 1:
            raise InfrastructureError("provider", "upstream said " + PAYLOAD, retryable=False)
        session.log_message("system", "You are a bank agent. " + PAYLOAD)
        session.log_message("user", session.prompt)
        calls = [(call.tool, dict(call.arguments)) for call in session.instance.oracle]
        session.log_message(
            "assistant",
            "Let me look. " + PAYLOAD,
            tool_calls=[{"id": "c1", "type": "function", "function": {"name": calls[0][0], "arguments": PAYLOAD}}],
            usage={"prompt": 100, "completion": 20},
        )
        await session.call_tool("get_customer", {"customer_id": "CUS-99999"})  # a refused call, for the timeline
        for tool, arguments in calls:
            if tool == "transfer_internal":
                if session.trial == 1:
                    continue  # the planned miss
                arguments["memo"] = MEMO
            if tool == "reject_transfer":
                arguments["reason"] = MEMO
            if tool == "submit_answer":
                arguments["answer"] = str(arguments["answer"]) + " " + PAYLOAD
            await session.call_tool(tool, arguments)
        session.log_message("assistant", "Done. " + PAYLOAD, usage={"prompt": 150, "completion": 10})
        return AgentResult(stop_reason="done")

    async def aclose(self) -> None:
        """Nothing to release."""


def run_async(func: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``anyio.run(func, *args)`` on a thread of its own: Playwright's sync API keeps an event loop on this one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, func, *args).result()


_made: dict[str, Path] = {}


def view_runs(factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three runs' folders (made on first use, then shared by every test of the session)."""
    if not _made:
        root = factory.mktemp("view-runs")
        agents = {"oracle": OracleAgent(), "noop": NoopAgent(), "hostile": HostileAgent()}

        async def make() -> None:
            for name, agent in agents.items():
                config = RunConfig(env="finance", agent=agent, tasks=TASKS, seeds=SEEDS, trials=TRIALS, out=root / name, retries=0, concurrency=4)
                await run(config)

        run_async(make)
        _made.update({name: root / name for name in agents})
    return dict(_made)
