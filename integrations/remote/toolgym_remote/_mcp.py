"""One episode's MCP endpoint as plain JSON-RPC over HTTP (streamable HTTP, handshake-era protocol).

No MCP SDK on purpose: the frameworks this package serves pin their own. The session is the protocol's
``initialize`` handshake (``Mcp-Session-Id``), which a toolgym episode endpoint accepts from every client;
closing it (``DELETE``) frees the episode's session slot.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx

from toolgym_remote._control import RemoteError

__all__ = ["EpisodeSession", "ToolResult", "MCPRefused", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = "2025-11-25"
"""The handshake-era protocol version this client speaks."""


CALLER_ERRORS = frozenset({-32601, -32602})
"""JSON-RPC codes that blame the request itself (method not found, invalid params); every other error code (an
episode gone, a limit reached, a record that cannot be written, an internal error) is infrastructure."""


class MCPRefused(RemoteError):
    """The server refused the request as malformed (:data:`CALLER_ERRORS`: an unknown tool, arguments it cannot
    take): the caller's error, to show the agent — unlike any other failure, which is infrastructure."""


@dataclass(frozen=True)
class ToolResult:
    """One ``tools/call`` result."""

    text: str
    """The text content blocks joined by newlines (what a model is shown)."""
    is_error: bool
    structured: Any = None
    raw: dict[str, Any] = field(default_factory=dict)


class EpisodeSession:
    """An MCP session on one episode's endpoint. Use as ``async with EpisodeSession(url) as mcp:``."""

    def __init__(self, url: str, *, client: httpx.AsyncClient | None = None, timeout: float = 120.0) -> None:
        self.url = url
        self._own = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)
        self._session_id: str | None = None
        self._next_id = 0
        self.instructions: str = ""
        """The server's instructions (who the agent is, how to answer), from ``initialize``."""

    async def __aenter__(self) -> EpisodeSession:
        await self.initialize()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        if self._session_id is not None:
            headers["Mcp-Session-Id"] = self._session_id
            headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
        return headers

    async def _post(self, payload: dict[str, Any]) -> httpx.Response:
        try:
            return await self._client.post(self.url, json=payload, headers=self._headers())
        except httpx.HTTPError as exc:
            raise RemoteError(f"MCP endpoint {self.url} is unreachable: {type(exc).__name__}: {exc}") from exc

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one JSON-RPC request and return its ``result``.

        Raises:
            MCPRefused: the server refused the request as malformed (the caller's error).
            RemoteError: an HTTP error, or any other JSON-RPC error (its code and message).
        """
        self._next_id += 1
        ident = self._next_id
        response = await self._post({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}})
        message = _response_message(response, ident)
        if message is None:
            raise RemoteError(f"{method}: HTTP {response.status_code} without a JSON-RPC response", status=response.status_code)
        if "error" in message:
            error = message["error"] or {}
            refused = MCPRefused if error.get("code") in CALLER_ERRORS else RemoteError
            raise refused(
                f"{method}: MCP error {error.get('code')}: {error.get('message')}", status=response.status_code,
                code=str(error.get("code")),
            )
        if method == "initialize":
            self._session_id = response.headers.get("mcp-session-id")
        return message.get("result")

    async def initialize(self) -> dict[str, Any]:
        """The ``initialize`` handshake; keeps the session id and the server's instructions."""
        result = await self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "toolgym-remote", "version": "0.1"}},
        )
        self.instructions = (result or {}).get("instructions") or ""
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
        return result or {}

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool of the episode (``name``, ``description``, ``inputSchema`` ...), following pages."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            result = await self.request("tools/list", {"cursor": cursor} if cursor else {})
            tools.extend(result.get("tools", []))
            cursor = result.get("nextCursor")
            if not cursor:
                return tools

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Call one tool. A refused or invalid call is a result with ``is_error`` (the agent's error, data)."""
        result = await self.request("tools/call", {"name": name, "arguments": arguments or {}})
        blocks = result.get("content") or []
        parts = [b.get("text", "") if b.get("type") == "text" else json.dumps(b) for b in blocks]
        structured = result.get("structuredContent")
        if not parts and structured is not None:
            parts.append(json.dumps(structured, ensure_ascii=False))
        return ToolResult(text="\n".join(parts), is_error=bool(result.get("isError")), structured=structured, raw=result)

    async def aclose(self) -> None:
        """End the MCP session (best effort: a released episode has ended it already) and the HTTP client."""
        if self._session_id is not None:
            try:
                await self._client.delete(self.url, headers=self._headers())
            except httpx.HTTPError:
                pass
            self._session_id = None
        if self._own:
            await self._client.aclose()


def _response_message(response: httpx.Response, ident: int) -> dict[str, Any] | None:
    """The JSON-RPC response with id ``ident`` from a JSON or an SSE body."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                try:
                    message = json.loads(line[5:].strip())
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == ident:
                    return message
        return None
    try:
        message = response.json()
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
