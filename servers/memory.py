"""In-memory MCP: real ``mcp.Client`` objects connected in-process to episodes (tests, RL loops, runners, checks).

Two ways to connect:

* :func:`connect_in_memory` — a client bound to one episode for the duration of a block;
* :class:`SharedClient` — one client for many episodes, each request routed to the episode its calling
  task has bound with :meth:`SharedClient.bind`. The in-memory dispatcher runs handlers in the caller's
  task, so the binding is a context variable: isolation stays by episode, never by connection
  (decision 1), and a request made outside any binding finds no episode and fails — it can never reach
  another task's world.

Both clients come primed by the environment's process-wide :class:`~servers.tool_cache.ToolCache`: the
SDK client otherwise lists every tool before validating a tool's first result, and compiles a validator
per output schema per session. Primed, no session lists the tools (concurrent episodes on a fresh shared
client used to list once each) and every validator is compiled once per process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any

from mcp import Client

from fixtures.errors import EpisodeNotFound
from servers.environment import Environment
from servers.episodes import Episode
from servers.mcp_server import build_mcp_server, fixed_episode
from servers.tool_cache import ToolCache

__all__ = ["connect_in_memory", "SharedClient"]

_BOUND: ContextVar[Episode | None] = ContextVar("toolgym_bound_episode", default=None)
"""The episode the current task's requests on a shared client go to."""


@asynccontextmanager
async def connect_in_memory(episode: Episode, **client_options: Any) -> AsyncIterator[Client]:
    """Open an MCP client bound to ``episode`` in this process; closes it on exit.

    ``client_options`` go to ``mcp.Client`` (e.g. ``mode="legacy"`` to force the handshake protocol).
    """
    server = build_mcp_server(episode.environment, fixed_episode(episode))
    async with Client(server, **client_options) as client:
        ToolCache.local(episode.environment).install(client)
        yield client


def _bound_episode(_ctx: Any) -> Episode:
    episode = _BOUND.get()
    if episode is None or episode.state != "live":
        raise EpisodeNotFound("no live episode is bound to this request (it was made outside its episode)")
    return episode


class SharedClient:
    """One in-memory MCP client for every episode of ``environment``; ``bind`` picks the episode per task.

    Use as ``async with SharedClient(env) as shared:`` then ``with shared.bind(episode) as client: ...``.
    Open and close it from the same task (the SDK client's task group requires it).
    """

    def __init__(self, environment: Environment, *, validate_results: bool = True, **client_options: Any) -> None:
        """``validate_results=False``: the SDK client does not re-validate tool results against their output
        schemas (see :meth:`ToolCache.install`); ``client_options`` go to ``mcp.Client``."""
        self.environment = environment
        self._options = client_options
        self._validate = validate_results
        self._client: Client | None = None
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> SharedClient:
        stack = AsyncExitStack()
        client = await stack.enter_async_context(Client(build_mcp_server(self.environment, _bound_episode), **self._options))
        ToolCache.local(self.environment).install(client, validate=self._validate)
        self._client = client
        self._stack = stack
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        stack, self._stack, self._client = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    @contextmanager
    def bind(self, episode: Episode) -> Iterator[Client]:
        """The shared client, with this task's requests (and those of tasks it starts) going to ``episode``."""
        if self._client is None:
            raise RuntimeError("the shared client is not open: use `async with SharedClient(environment)`")
        token = _BOUND.set(episode)
        try:
            yield self._client
        finally:
            _BOUND.reset(token)
