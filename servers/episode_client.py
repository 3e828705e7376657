"""A lean MCP client for the episodes of a toolgym server: 2026-07-28 requests as plain JSON-RPC POSTs.

Why: the SDK ``Client`` over HTTP costs 2.5-3.4 ms of client CPU per tool call (a task group and memory
streams per client, httpx2 and h11, a jsonschema validation of every result), several times what the
server spends answering it. Toolgym's own runner talks to toolgym's own server, so it can do with less.

What stays the same on the wire: every request is a complete 2026-07-28 MCP request to the episode's own
URL — the ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` headers and the
``_meta`` envelope (protocol version, client info, capabilities) the SDK client sends, built with the
SDK's own helpers — answered by the SDK's server code like any other client's request. What it leaves out
is client-side work: ``server/discover`` and ``tools/list`` happen once per server (:class:`ServerListing`),
not per client; results are not re-validated against output schemas the server's dispatcher already
enforces (every tool returns a pydantic model); no per-client task group or streams. External clients (the
SDK ``Client``, the TypeScript SDK, Claude Code) are untouched: they talk to the same server.

An :class:`EpisodeClient` has the part of ``mcp.Client``'s surface agents use (``call_tool``,
``list_tools``, ``instructions``), so the runner's agents play through either.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    encode_header_value,
    find_invalid_x_mcp_header,
    mcp_param_headers,
    x_mcp_header_map,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from servers.http_client import HttpClient, TransportError

__all__ = ["EpisodeClient", "ServerListing", "fetch_listing", "PROTOCOL_VERSION", "CALL_TIMEOUT"]

PROTOCOL_VERSION = MODERN_PROTOCOL_VERSIONS[-1]
"""The protocol every request speaks (2026-07-28: no sessions, each request stands alone)."""

CALL_TIMEOUT = 300.0
"""Seconds one MCP request may take (a tool call on a large world included)."""

_ENVELOPE = {
    types.PROTOCOL_VERSION_META_KEY: PROTOCOL_VERSION,
    types.CLIENT_INFO_META_KEY: {"name": "toolgym", "version": "0.1.0"},
    types.CLIENT_CAPABILITIES_META_KEY: {},
}
_ACCEPT = "application/json, text/event-stream"
_PAGE_CAP = 100


@dataclass(frozen=True)
class ServerListing:
    """What every episode of one server shares: its discover result and its tools, fetched once."""

    discover: types.DiscoverResult
    tools: list[types.Tool]
    header_maps: dict[str, dict[tuple[str, ...], str]] = field(default_factory=dict)
    """Tool name → the ``x-mcp-header`` properties its calls mirror into ``Mcp-Param-*`` headers."""

    @property
    def instructions(self) -> str | None:
        """The server's instructions."""
        return self.discover.instructions


async def _post(http: HttpClient, url: str, request_id: int, method: str, params: dict[str, Any], headers: dict[str, str]) -> Any:
    """One JSON-RPC request; returns its ``result``.

    Raises:
        MCPError: the server answered with a JSON-RPC error.
        TransportError: no answer, or one that is not a JSON-RPC response to this request.
    """
    body = json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": {**params.get("_meta", {}), **_ENVELOPE}}},
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    headers = {
        "accept": _ACCEPT,
        "content-type": "application/json",
        MCP_PROTOCOL_VERSION_HEADER: PROTOCOL_VERSION,
        MCP_METHOD_HEADER: method,
        **headers,
    }
    response = await http.request("POST", url, content=body, headers=headers, timeout=CALL_TIMEOUT)
    message = _message(response.content, response.headers.get("content-type", ""), request_id)
    if message is None:
        raise TransportError(f"{method} {url}: HTTP {response.status_code} without a JSON-RPC response ({response.text[:200]!r})")
    error = message.get("error")
    if isinstance(error, dict):
        raise MCPError(int(error.get("code", types.INTERNAL_ERROR)), str(error.get("message", "")), error.get("data"))
    if "result" not in message:
        raise TransportError(f"{method} {url}: a JSON-RPC response with neither result nor error")
    return message["result"]


def _message(content: bytes, content_type: str, request_id: int) -> dict[str, Any] | None:
    """The JSON-RPC response in a body: plain JSON, or the matching ``data:`` event of an SSE stream."""
    if content_type.startswith("text/event-stream"):
        found = None
        for event in content.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:"))
            if data:
                parsed = _loads(data)
                if isinstance(parsed, dict) and parsed.get("id") == request_id:
                    found = parsed
        return found
    parsed = _loads(content)
    # A response to this request, or an error the server could not tie to any request (id null).
    return parsed if isinstance(parsed, dict) and parsed.get("id") in (request_id, None) else None


def _loads(data: str | bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


async def fetch_listing(http: HttpClient, url: str) -> ServerListing:
    """``server/discover`` then ``tools/list`` (every page) on one episode URL of a server.

    Raises:
        MCPError: the server refused (e.g. ``UNSUPPORTED_PROTOCOL_VERSION``: it does not speak 2026-07-28).
        TransportError: the server could not be reached.
    """
    discover = types.DiscoverResult.model_validate(await _post(http, url, 0, "server/discover", {}, {}))
    if PROTOCOL_VERSION not in discover.supported_versions:
        raise MCPError(types.UNSUPPORTED_PROTOCOL_VERSION, f"the server does not support protocol {PROTOCOL_VERSION}")
    tools: list[types.Tool] = []
    params: dict[str, Any] = {}
    for page in range(1, _PAGE_CAP + 1):
        listing = types.ListToolsResult.model_validate(await _post(http, url, page, "tools/list", params, {}))
        tools.extend(listing.tools)
        if listing.next_cursor is None:
            break
        params = {"cursor": listing.next_cursor}
    maps = {
        tool.name: found
        for tool in tools
        if find_invalid_x_mcp_header(tool.input_schema) is None and (found := x_mcp_header_map(tool.input_schema))
    }
    return ServerListing(discover=discover, tools=tools, header_maps=maps)


class EpisodeClient:
    """MCP requests to one episode's URL over a shared :class:`HttpClient`, with a server's listing known.

    Construction sends nothing; each method is one POST.
    """

    def __init__(self, http: HttpClient, url: str, listing: ServerListing) -> None:
        self.http = http
        self.url = url
        self.listing = listing
        self._ids = itertools.count(1)

    @property
    def instructions(self) -> str | None:
        """The server's instructions (from its discover result)."""
        return self.listing.instructions

    @property
    def protocol_version(self) -> str:
        """The protocol version every request speaks."""
        return PROTOCOL_VERSION

    async def send(self, method: str, params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None) -> Any:
        """One JSON-RPC request to the episode; its ``result`` as JSON.

        Raises:
            MCPError: the server answered with an error (e.g. -32004, the episode is closed or gone).
            TransportError: the server could not be reached or answered something else.
        """
        return await _post(self.http, self.url, next(self._ids), method, dict(params or {}), dict(headers or {}))

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, meta: Mapping[str, Any] | None = None, **_: Any
    ) -> types.CallToolResult:
        """Call a tool of the episode (a tool's own failure is a result with ``is_error``, not an exception)."""
        arguments = dict(arguments or {})
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = dict(meta)
        headers = {MCP_NAME_HEADER: encode_header_value(name)}
        header_map = self.listing.header_maps.get(name)
        if header_map:
            headers.update(mcp_param_headers(header_map, arguments))
        result = await self.send("tools/call", params, headers)
        return types.CallToolResult.model_validate(result)

    async def list_tools(self, *_: Any, **__: Any) -> types.ListToolsResult:
        """The server's tools (listed once per server; no request)."""
        return types.ListToolsResult(tools=list(self.listing.tools))
