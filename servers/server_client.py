"""A client of one toolgym server: its control API and its episodes' MCP endpoints, over one set of connections.

This is what toolgym's own runner uses to drive a server (``clients.backends.HttpBackend``). Two paths:

- **lean** (an ``http://`` server without a proxy in between, the usual case: the same machine or the
  cluster network): control requests and MCP requests share one :class:`~servers.http_client.HttpClient`,
  and each episode's MCP client is an :class:`~servers.episode_client.EpisodeClient` — real 2026-07-28 MCP
  requests to the episode's URL, with the server's discover result and tool listing fetched once;
- **SDK** (``https://``, a proxy, or a server that does not speak 2026-07-28): httpx2 for the control API
  and the SDK's ``mcp.Client`` per episode, primed by one :class:`~servers.tool_cache.ToolCache`.

Either way the control token goes only on control requests, never on an episode's MCP requests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol

import anyio
import httpx2
import mcp_types as types
from mcp.shared.exceptions import MCPError

from servers.episode_client import EpisodeClient, ServerListing, fetch_listing
from servers.http_client import HttpClient, TransportError, supports
from servers.tool_cache import ToolCache

__all__ = ["ServerClient", "ControlResponse", "TransportError", "CONTROL_TIMEOUT"]

CONTROL_TIMEOUT = 60.0
"""Seconds one control request may take (a finish grades the episode)."""

_NOT_MODERN = (types.UNSUPPORTED_PROTOCOL_VERSION, types.METHOD_NOT_FOUND)
"""Discover errors that mean "this server does not speak 2026-07-28": use the SDK client, which negotiates."""


class ControlResponse(Protocol):
    """What a control request returns, on either path."""

    status_code: int

    def json(self) -> Any:
        """The body as JSON."""
        ...

    @property
    def text(self) -> str:
        """The body as text."""
        ...


class ServerClient:
    """Control requests and per-episode MCP clients for the toolgym server at ``url``.

    Args:
        url: the server's base URL (``http://127.0.0.1:8765``).
        token: the control API's bearer token, sent on control requests only.
        lean: use the lean path when the URL allows it (False forces the SDK path).
    """

    def __init__(self, url: str, *, token: str | None = None, lean: bool = True) -> None:
        self.url = url.rstrip("/")
        self._auth = {"authorization": f"Bearer {token}"} if token else {}
        self.lean = lean and supports(self.url)
        """Whether episodes get an :class:`EpisodeClient` (else an SDK ``mcp.Client``)."""
        self._http = HttpClient(timeout=CONTROL_TIMEOUT) if self.lean else None
        self._control: httpx2.AsyncClient | None = None
        self._mcp_http: httpx2.AsyncClient | None = None
        self.tools = ToolCache()
        """The SDK path's tool listing and validators (one per server)."""
        self.listing: ServerListing | None = None
        """The lean path's discover result and tools (fetched on the first episode)."""
        self._listing_lock = anyio.Lock()

    async def aclose(self) -> None:
        """Close every connection."""
        for client in (self._http, self._control, self._mcp_http):
            if client is not None:
                await client.aclose()

    @property
    def requests(self) -> int | None:
        """Requests the lean path sent so far (None on the SDK path)."""
        return self._http.requests if self._http is not None else None

    async def control(self, method: str, path: str, *, json: Any = None) -> ControlResponse:
        """One control API request (``path`` relative to ``/control``); any status is returned.

        Raises:
            TransportError: the server could not be reached or the connection broke (timeouts included).
        """
        url = f"{self.url}/control{path}"
        try:
            if self._http is not None:
                return await self._http.request(method, url, json=json, headers=self._auth)
            if self._control is None:
                self._control = httpx2.AsyncClient(headers=self._auth, timeout=httpx2.Timeout(CONTROL_TIMEOUT))
            return await self._control.request(method, url, json=json)
        except TimeoutError as exc:
            raise TransportError(f"{method} {url}: no answer within {CONTROL_TIMEOUT:g}s") from exc
        except httpx2.HTTPError as exc:
            raise TransportError(f"{method} {url}: {type(exc).__name__}: {exc}") from exc

    @asynccontextmanager
    async def connect(self, mcp_url: str) -> AsyncIterator[Any]:
        """An MCP client of the episode at ``mcp_url`` (``call_tool``, ``list_tools``, ``instructions``).

        Lean: an :class:`EpisodeClient` (sends nothing until its first call). SDK: an ``mcp.Client`` primed by
        :attr:`tools`, closed on exit.
        """
        if self._http is not None and (mcp_url.startswith(f"{self.url}/") or supports(mcp_url)):
            listing = await self._listing(mcp_url)
            if listing is not None:
                yield EpisodeClient(self._http, mcp_url, listing)
                return
        if self._mcp_http is None:
            # One MCP HTTP client for every episode: constructing one costs ~29 ms.
            self._mcp_http = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=300.0))
        async with self.tools.connect(mcp_url, self._mcp_http) as client:
            yield client

    async def _listing(self, mcp_url: str) -> ServerListing | None:
        """The server's listing, fetched through the first episode; None when the server needs the SDK path."""
        if self.listing is None and self.lean:
            async with self._listing_lock:
                if self.listing is None and self.lean:
                    assert self._http is not None
                    try:
                        self.listing = await fetch_listing(self._http, mcp_url)
                    except MCPError as exc:
                        if exc.code not in _NOT_MODERN:
                            raise
                        self.lean = False  # an older protocol: the SDK client negotiates it
        return self.listing if self.lean else None
