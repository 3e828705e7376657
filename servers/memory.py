"""In-memory MCP: a real ``mcp.Client`` connected in-process to one episode (tests and RL loops)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp import Client

from servers.episodes import Episode
from servers.mcp_server import build_mcp_server, fixed_episode

__all__ = ["connect_in_memory"]


@asynccontextmanager
async def connect_in_memory(episode: Episode, **client_options: Any) -> AsyncIterator[Client]:
    """Open an MCP client bound to ``episode`` in this process; closes it on exit.

    ``client_options`` go to ``mcp.Client`` (e.g. ``mode="legacy"`` to force the handshake protocol).
    """
    server = build_mcp_server(episode.environment, fixed_episode(episode))
    async with Client(server, **client_options) as client:
        yield client
