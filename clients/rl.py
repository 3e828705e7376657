"""A Python API for RL loops: one episode at a time, as prompt → steps → reward.

::

    async with open_episode("finance", task="pay_invoice", seed=3) as ep:
        messages = [{"role": "user", "content": ep.prompt}]
        obs = await ep.step("list_invoices", {"status": "open"})   # obs.text, obs.is_error
        ...
        done = await ep.finish()                                    # done.reward in [0, 1], done.grade

For many episodes, ``async with open_gym("finance") as gym:`` then ``async with gym.episode(task, seed) as ep``
shares one episode manager between them (also concurrently) and, with ``transport="memory"``, one MCP client.

What the policy sees is exactly what any MCP agent sees: the same text, error results, structured content and
record. By default a step is answered in process from the dispatcher (``transport="direct"``,
``servers/direct.py``), which builds the observation an MCP client would receive from the same recorded
event, at a third of the cost; ``transport="memory"`` sends every step through a real in-memory MCP client
instead (``tests/servers/test_direct.py`` holds the two to the same observations). ``step`` also takes the
raw argument string a model produced: text that is not a JSON object comes back as an ``invalid_arguments``
observation instead of an exception, the way a tool-calling loop needs it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import mcp_types as types
from mcp import Client

from clients.agents._provider import invalid_arguments_text
from clients.agents.base import openai_tool, result_text
from fixtures.errors import EpisodeNotFound, TaskError
from servers.environment import Environment
from servers.direct import call_direct
from servers.episodes import Episode, EpisodeManager
from servers.mcp_server import build_mcp_server
from servers.memory import connect_in_memory
from servers.record import MessageEvent, Record
from servers.registry import load_environment
from servers.tool_cache import ToolCache

__all__ = ["open_episode", "open_gym", "Gym", "RLEpisode", "Observation", "Finished", "EPISODE_META_KEY", "Transport"]

EPISODE_META_KEY = "toolgym/episode"
"""Request ``_meta`` key naming the episode a request of a :class:`Gym`'s shared client belongs to."""

Transport = Literal["direct", "memory"]
"""How steps reach the episode: ``direct`` answers them in process as an MCP client would receive them
(``servers/direct.py``); ``memory`` sends each through a real in-memory MCP client."""


@dataclass(frozen=True)
class Observation:
    """What one step shows the policy."""

    text: str
    """The tool result as text (JSON), errors included: ``{"error": code, "message": ...}``."""
    is_error: bool
    structured: Any = None
    """The structured result of a successful call (None for errors)."""


@dataclass(frozen=True)
class Finished:
    """The end of an episode: its reward and the grade behind it."""

    reward: float
    """The grade's score, in [0, 1]."""
    passed: bool
    grade: Any
    """The full ``graders.grading.Grade`` (criteria with evidence)."""


class RLEpisode:
    """A live episode driven step by step, in process or through an MCP client. Made by :func:`open_episode`."""

    def __init__(
        self, episode: Episode, manager: EpisodeManager, client: Client | None, tools: list[types.Tool], meta: dict[str, Any] | None = None
    ) -> None:
        """``client`` None: steps are answered in process (``servers/direct.py``); otherwise they go through it."""
        self._episode = episode
        self._manager = manager
        self._client = client
        self._meta = meta
        self.mcp_tools = tools
        """The MCP tool definitions."""
        self.tools: list[dict[str, Any]] = [openai_tool(t) for t in tools]
        """The tools as OpenAI function schemas (``tools=`` of a chat-completions request)."""
        self.instructions: str | None = client.instructions if client is not None else episode.environment.instructions or None
        self._finished: Finished | None = None

    @property
    def id(self) -> str:
        """The episode id."""
        return self._episode.id

    @property
    def prompt(self) -> str:
        """The task's prompt (empty in free play)."""
        return self._episode.task.prompt if self._episode.task is not None else ""

    @property
    def record(self) -> Record:
        """Everything the episode did so far."""
        return self._episode.record

    @property
    def steps(self) -> int:
        """Tool calls made so far."""
        return self._episode.seq

    def log_message(self, role: str, content: Any = None, **fields: Any) -> None:
        """Add a conversation message to the episode's record (``tool_calls``, ``tool_call_id``, ``usage``)."""
        self._episode.append(MessageEvent(role=role, content=content, **fields))

    async def step(self, name: str, arguments: dict[str, Any] | str | None = None) -> Observation:
        """Call one tool and return its observation.

        Raises:
            RuntimeError: the episode is finished.
        """
        if self._finished is not None or self._episode.state != "live":
            raise RuntimeError(f"episode {self.id} is finished; open a new one")
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                return Observation(invalid_arguments_text(f"arguments are not valid JSON ({exc})"), True)
            if not isinstance(parsed, dict):
                return Observation(invalid_arguments_text(f"arguments must be a JSON object, not {type(parsed).__name__}"), True)
            arguments = parsed
        if self._client is None:
            answer = await call_direct(self._episode, name, arguments or {})
            return Observation(answer.text, answer.is_error, answer.structured)
        result = await self._client.call_tool(name, arguments or {}, meta=self._meta)  # type: ignore[arg-type]
        return Observation(result_text(result), bool(result.is_error), None if result.is_error else result.structured_content)

    async def finish(self) -> Finished:
        """Close the episode and grade it (idempotent: a second call returns the same result).

        Raises:
            TaskError: a free-play episode has no rubric to grade by.
        """
        if self._finished is not None:
            return self._finished
        if self._episode.task is None:
            raise TaskError(f"episode {self.id} is free play: there is no rubric to compute a reward from")
        from graders.grading import grade_episode

        self._manager.close(self.id)
        grade = grade_episode(self._episode)
        if inspect.isawaitable(grade):
            grade = await grade
        self._finished = Finished(reward=float(grade.score), passed=bool(grade.passed), grade=grade)
        return self._finished


@asynccontextmanager
async def open_episode(
    env: str | Environment, task: str | None = None, seed: int = 0, *, manager: EpisodeManager | None = None,
    transport: Transport = "direct",
) -> AsyncIterator[RLEpisode]:
    """Open one episode of ``env`` (a name or an Environment); frees it on exit.

    Args:
        task: task template id (None: free play on fixture seed ``seed``).
        seed: the task seed.
        manager: share one ``EpisodeManager`` across calls (e.g. to cap live episodes); one is made otherwise
            (its task setups are the environment's process-wide ones either way: ``SetupCache.shared``).
        transport: ``direct`` (steps answered in process) or ``memory`` (through a real in-memory MCP client).

    Raises:
        EnvironmentNotFound: no environment of that name.
        TaskError: ``task`` names no template of the environment.
    """
    environment = env if isinstance(env, Environment) else load_environment(env)
    if manager is None:  # not `or`: an empty manager is falsy (it has a length)
        manager = EpisodeManager(environment, history=0)
    _check_transport(transport)
    episode = manager.create(task, seed)
    try:
        tools = ToolCache.local(environment).tools or []
        if transport == "direct":
            yield RLEpisode(episode, manager, None, tools)
        else:
            async with connect_in_memory(episode) as client:  # primed: no tools/list, validators compiled once
                yield RLEpisode(episode, manager, client, tools)
    finally:
        manager.release(episode.id)


def _check_transport(transport: str) -> None:
    if transport not in ("direct", "memory"):
        raise ValueError(f"transport is 'direct' or 'memory', not {transport!r}")


class Gym:
    """Many episodes of one environment on one episode manager (concurrent episodes included).

    Why: one manager and, with ``transport="memory"``, one in-memory MCP client for many episodes is cheaper
    than one per episode (no connection setup). The client is primed with the environment's listing
    (:class:`servers.tool_cache.ToolCache`), so concurrent episodes never list the tools and validators are
    compiled once per process; it names the episode of each request in the request's ``_meta``, and the
    server resolves it by that id — isolation stays by episode id (decision 1), only the connection is
    shared. With ``transport="direct"`` (the default) there is no client: each step is answered in process.
    Made by :func:`open_gym`.
    """

    def __init__(self, environment: Environment, manager: EpisodeManager, client: Client | None) -> None:
        self.environment = environment
        self.manager = manager
        self._client = client
        self._tools: list[types.Tool] = ToolCache.local(environment).tools or []

    @asynccontextmanager
    async def episode(self, task: str | None = None, seed: int = 0) -> AsyncIterator[RLEpisode]:
        """Open one episode of the gym; frees it on exit.

        Raises:
            TaskError: ``task`` names no template of the environment.
        """
        episode = self.manager.create(task, seed)
        meta = {EPISODE_META_KEY: episode.id} if self._client is not None else None
        try:
            yield RLEpisode(episode, self.manager, self._client, self._tools, meta)
        finally:
            self.manager.release(episode.id)


@asynccontextmanager
async def open_gym(env: str | Environment, *, max_live: int = 1024, transport: Transport = "direct") -> AsyncIterator[Gym]:
    """A :class:`Gym` for ``env``: its episode manager and, with ``transport="memory"``, one shared in-memory MCP
    client; closes both on exit.

    Raises:
        EnvironmentNotFound: no environment of that name.
        ValueError: an unknown ``transport``.
    """
    _check_transport(transport)
    environment = env if isinstance(env, Environment) else load_environment(env)
    manager = EpisodeManager(environment, max_live=max_live, history=0)

    def resolve(ctx: Any) -> Episode:
        ident = (ctx.meta or {}).get(EPISODE_META_KEY)
        if not isinstance(ident, str):
            raise EpisodeNotFound(f"a gym request must name its episode in _meta[{EPISODE_META_KEY!r}]")
        return manager.get(ident, live=True)

    try:
        if transport == "direct":
            yield Gym(environment, manager, None)
        else:
            async with Client(build_mcp_server(environment, resolve)) as client:
                ToolCache.local(environment).install(client)
                yield Gym(environment, manager, client)
    finally:
        manager.close_all()
