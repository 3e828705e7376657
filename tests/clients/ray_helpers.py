"""Agents and tasks for the Ray tests, in a module of their own so that Ray workers import them cheaply.

- :class:`PacedOracle` plays the oracle with a pause before each call, so a test can act while episodes are
  in flight;
- :class:`KillsItsActor` plays the oracle, and the first episode to claim its marker file kills its own
  process (the environment actor) with SIGKILL after one tool call: a death mid-episode, exactly once per run;
- :func:`rollout` is a trainer's rollout function, run as a Ray task against a pool of environment actors.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import ray

from clients.agents.base import AgentResult, AgentSession
from tests.clients.toyenv import FLAKY, environment


class PacedOracle:
    """The oracle, pausing ``pause`` seconds before each call."""

    transport = "memory"
    needs_instance = True
    needs_tools = False

    def __init__(self, pause: float = 0.0, spec: str = "paced-oracle") -> None:
        self.pause = pause
        self.spec = spec

    async def run(self, session: AgentSession) -> AgentResult:
        """Play the oracle's calls, slowly."""
        assert session.instance is not None
        for call in session.instance.oracle:
            await anyio.sleep(self.pause)
            await session.call_tool(call.tool, dict(call.arguments))
        return AgentResult()

    async def aclose(self) -> None:
        """Nothing held."""


class BreaksFlakyTool(PacedOracle):
    """The oracle, in a process whose ``flaky_balance`` tool then always crashes (a kit bug, wherever it runs)."""

    def __init__(self) -> None:
        super().__init__(0.0, spec="breaks-flaky-tool")

    async def run(self, session: AgentSession) -> AgentResult:
        """Break the tool in this process, then play."""
        FLAKY["failures_left"] = 1000
        return await super().run(session)


class KillsItsActor(PacedOracle):
    """Like :class:`PacedOracle`; the episode that claims ``marker`` (once per run) kills its process mid-episode."""

    def __init__(self, marker: Path | None, pause: float = 0.02) -> None:
        super().__init__(pause, spec="kills-its-actor")
        self.marker = marker

    def _claim(self) -> bool:
        if self.marker is None:
            return False
        try:
            os.rename(self.marker, f"{self.marker}.{os.getpid()}")  # atomic: one episode of one actor wins
        except FileNotFoundError:
            return False
        return True

    async def run(self, session: AgentSession) -> AgentResult:
        """Play; after the first call, die if this is the chosen episode."""
        assert session.instance is not None
        for index, call in enumerate(session.instance.oracle):
            await anyio.sleep(self.pause)
            await session.call_tool(call.tool, dict(call.arguments))
            if index == 0 and self._claim():
                Path(f"{self.marker}.episode").write_text(session.name)
                os.kill(os.getpid(), signal.SIGKILL)
        return AgentResult()


async def play(pool: Any, task: str, seed: int, solve: bool) -> dict[str, Any]:
    """Open an episode from the pool, play the oracle (or its first call only), finish → reward and grade."""
    world, instance = environment.instantiate_task(task, seed)
    world.close()
    async with pool.episode(task, seed) as episode:
        assert episode.prompt == instance.prompt
        assert {tool["function"]["name"] for tool in episode.tools} >= {"transfer", "submit_answer"}
        episode.log_message("user", episode.prompt)
        for call in instance.oracle if solve else instance.oracle[:1]:
            observation = await episode.step(call.tool, dict(call.arguments))
            assert not observation.is_error, observation.text
        done = await episode.finish(record=True)
        assert episode.record is not None
        return {
            "reward": done.reward,
            "passed": done.passed,
            "criteria": [c.name for c in done.grade.criteria],
            "calls": [c.tool for c in episode.record.tool_calls],
            "first": episode.record.events[0].type,
        }


@ray.remote(num_cpus=0)  # the actors hold the cluster's CPUs; a rollout only waits on them
def rollout(pool: Any, task: str, seeds: list[int]) -> list[dict[str, Any]]:
    """A trainer's rollout function as a Ray task: one episode per seed at once, even seeds solved.

    It refers to module-level names only, since Ray pickles a remote function by value.
    """

    async def batch() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(play(pool, task, seed, seed % 2 == 0) for seed in seeds)))

    return asyncio.run(batch())
