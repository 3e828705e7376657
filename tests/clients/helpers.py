"""Shared by the client tests: an agent session on a real toy episode, over a real in-memory MCP client."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from clients.agents.base import AgentSession, Limits
from clients.sandbox import probe
from servers.environment import Environment
from servers.episodes import Episode, EpisodeManager
from servers.memory import connect_in_memory
from tests.toy_env import environment as toy_environment

__all__ = ["toy_session", "FAST_LIMITS", "needs_sandbox"]

needs_sandbox = pytest.mark.skipif(
    probe() is not None and not os.environ.get("CI"),
    reason=f"cmd: agents need a sandbox and there is none here ({probe()}); CI installs bubblewrap",
)
"""For tests of ``cmd:`` agents under the default sandbox: skipped where bubblewrap cannot run, except in CI."""

FAST_LIMITS = Limits(max_turns=8, episode_timeout=30.0, request_timeout=1.5, max_retries=3)
"""Limits for agent tests: a request times out in 1.5 s — a scripted reply comes in milliseconds, even on a busy
machine, and one meant to time out never comes (``fake_provider.NEVER``)."""


@asynccontextmanager
async def toy_session(
    *, limits: Limits = FAST_LIMITS, prompt: str = "Pay the debt back.", environment: Environment | None = None
) -> AsyncIterator[tuple[AgentSession, Episode]]:
    """A free-play toy episode and the session an agent would get for it (messages go into its record)."""
    env = environment or toy_environment
    manager = EpisodeManager(env)
    episode = manager.create(None, 0)
    try:
        async with connect_in_memory(episode) as client:
            tools = list((await client.list_tools()).tools)
            session = AgentSession(
                episode_id=episode.id,
                env=env.name,
                task=None,
                seed=0,
                prompt=prompt,
                limits=limits,
                client=client,
                tools=tools,
                instructions=client.instructions,
                sink=lambda event, position: episode.append(event),
            )
            yield session, episode
    finally:
        manager.release(episode.id)
