"""A tool call over HTTP at in-process cost: a 2026-07-28 ``tools/call`` answered straight from dispatch.

Most of an episode's HTTP requests are ``tools/call`` POSTs to its own URL. Through the SDK each one is parsed
into pydantic models, routed through the server's request context, middleware and an OpenTelemetry span,
answered as a ``CallToolResult`` model and dumped again: measured, more than the tool's own work. Here the
episode endpoint (``servers/routing.py``) hands such a POST to :func:`answer_tool_call` first, which runs the
SDK's own validation ladder on it — the same functions in the same order as
``mcp/server/_streamable_http_modern.py``: transport security, ``Accept``, the JSON-RPC envelope,
duplicated routing headers, ``classify_inbound_request`` (envelope ``_meta``, ``MCP-Protocol-Version`` /
``Mcp-Method`` / ``Mcp-Name`` headers, supported version) and the ``Mcp-Param-*`` headers — then calls
:func:`servers.dispatch.call_tool` and writes the JSON-RPC response itself: the tool's result serialised
once for the text content and once for ``structuredContent``, the bytes the SDK path writes for the same
call (a test compares them).

Only a server answering in plain JSON (``json_response``, the default) offers it: in SSE mode the SDK streams
keep-alive pings while a slow call runs. Anything else — another method, another protocol era, a handshake
session, any request the ladder would refuse, or a process where an OpenTelemetry tracer provider is set (the
SDK's spans are then wanted) — returns False untouched, and the SDK serves it exactly as before, refusals
included.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import mcp_types as types
from mcp_types import SERVER_INFO_META_KEY
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
    x_mcp_header_map,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from opentelemetry import trace
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from fixtures.errors import RecordUnwritable
from servers.dispatch import call_tool
from servers.environment import Environment
from servers.episodes import Episode
from servers.mcp_server import RECORD_UNWRITABLE, answer_payload, answer_text, build_mcp_server

__all__ = ["answer_tool_call", "eligible", "passes_ladder"]

log = logging.getLogger("toolgym.mcp")

_VERSION = MCP_PROTOCOL_VERSION_HEADER.encode("ascii")
_SESSION = b"mcp-session-id"


def _tracing() -> bool:
    """Whether an OpenTelemetry tracer provider is set (then the SDK path runs, with its spans)."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def eligible(scope: Scope) -> bool:
    """Whether a request may take the direct path at all (cheap header test, before the body is parsed)."""
    if scope.get("method") != "POST" or _tracing():
        return False
    version = None
    for key, value in scope["headers"]:
        if key == _VERSION:
            version = value.decode("latin-1")
        elif key == _SESSION:
            return False
    return version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS


@lru_cache(maxsize=None)
def _header_schemas(environment: Environment) -> dict[str, Any]:
    """The input schemas of the tools that declare ``x-mcp-header`` properties (others have nothing to check)."""
    return {spec.name: spec.input_schema for spec in environment.tool_specs.values() if x_mcp_header_map(spec.input_schema)}


async def answer_tool_call(
    episode: Episode, security: TransportSecuritySettings | None, scope: Scope, body: bytes, receive: Receive, send: Send
) -> bool:
    """Answer a valid 2026-07-28 ``tools/call`` of ``episode`` directly; False (nothing sent) for anything else."""
    if b'"tools/call"' not in body:
        return False  # another method (or one spelled with escapes): the SDK's, without running the ladder here
    passed = await passes_ladder(security, scope, body, receive)
    if passed is None or passed[0].get("method") != "tools/call":
        return False
    decoded, request = passed
    request_id, params = decoded["id"], decoded.get("params")
    if not isinstance(params, dict):
        return False
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
        return False
    schema = _header_schemas(episode.environment).get(name)
    if schema is not None and validate_mcp_param_headers(schema, arguments or {}, request.headers) is not None:
        return False
    if not _plain_params(params):
        return False
    await _respond(episode, request_id, name, arguments, scope, receive, send)
    return True


async def passes_ladder(
    security: TransportSecuritySettings | None, scope: Scope, body: bytes, receive: Receive
) -> tuple[dict[str, Any], Request] | None:
    """The request parsed, when the SDK's validation ladder would let it through to its handler (transport
    security, ``Accept``, the JSON-RPC envelope, duplicated routing headers, ``classify_inbound_request``);
    None when the SDK must answer it (a refusal, an error, anything unusual). Method-specific checks are the
    caller's."""
    if not eligible(scope):
        return None
    request = _Request(scope, receive)
    if await TransportSecurityMiddleware(security).validate_request(request, is_post=True) is not None:
        return None
    has_json, _ = check_accept_headers(request)
    if not has_json:
        return None
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict) or decoded.get("jsonrpc") != "2.0":
        return None
    request_id = decoded.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str) or not _envelope(decoded):
        return None
    if find_duplicated_routing_header(request.headers.items()) is not None:
        return None
    if isinstance(classify_inbound_request(decoded, headers=dict(request.headers)), InboundLadderRejection):
        return None
    return decoded, request


class _DecodedHeaders(Headers):
    """Starlette's ``Headers`` of a request, decoded once: the same answers, without a scan per lookup.

    Why: the ladder reads the headers a dozen times (``get``, ``items``, a ``dict`` of them), and Starlette's
    ``Headers`` scans and decodes the whole raw list on every lookup: ~40 decodes, 15-20 µs of a ~60 µs ladder.
    As Starlette's, a lookup lowercases the name and finds the first header sent under it; ``items`` keeps
    every header, duplicates included, in order.
    """

    def __init__(self, scope: Scope) -> None:
        super().__init__(scope=scope)
        self._items = [(key.decode("latin-1"), value.decode("latin-1")) for key, value in self._list]
        first: dict[str, str] = {}
        for key, value in self._items:
            first.setdefault(key, value)
        self._first = first

    def keys(self) -> list[str]:  # type: ignore[override]
        return [key for key, _ in self._items]

    def values(self) -> list[str]:  # type: ignore[override]
        return [value for _, value in self._items]

    def items(self) -> list[tuple[str, str]]:  # type: ignore[override]
        return list(self._items)

    def getlist(self, key: str) -> list[str]:
        wanted = key.lower()
        return [value for name, value in self._items if name == wanted]

    def get(self, key: str, default: Any = None) -> Any:
        return self._first.get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        try:
            return self._first[key.lower()]
        except KeyError:
            raise KeyError(key) from None

    def __contains__(self, key: Any) -> bool:
        return isinstance(key, str) and key.lower() in self._first


class _Request(Request):
    """A Starlette ``Request`` whose ``headers`` are :class:`_DecodedHeaders` (the ladder's many lookups)."""

    @property
    def headers(self) -> Headers:
        headers: Headers | None = self.__dict__.get("_decoded_headers")
        if headers is None:
            headers = self.__dict__["_decoded_headers"] = _DecodedHeaders(self.scope)
        return headers


def _envelope(decoded: dict[str, Any]) -> bool:
    """Whether the body validates as the SDK's ``JSONRPCRequest`` (else the SDK answers ``Invalid Request``)."""
    try:
        types.JSONRPCRequest.model_validate(decoded)
    except ValueError:
        return False
    return True


def _plain_params(params: Mapping[str, Any]) -> bool:
    """Whether ``params`` validates as the SDK's ``CallToolRequestParams`` (else the SDK answers its own error)."""
    try:
        types.CallToolRequestParams.model_validate(params)
    except ValueError:
        return False
    return True


async def _respond(episode: Episode, request_id: int | str, name: str, arguments: dict[str, Any] | None, scope: Scope, receive: Receive,
                   send: Send) -> None:
    try:
        event = await call_tool(episode, name, arguments)
    except RecordUnwritable as exc:
        error = {"code": RECORD_UNWRITABLE, "message": str(exc), "data": {"error": "record_unwritable", "episode": episode.id}}
        await _write({"jsonrpc": "2.0", "id": request_id, "error": error}, ERROR_CODE_HTTP_STATUS.get(RECORD_UNWRITABLE, 200), scope, receive, send)
        return
    except Exception as exc:  # a kit bug outside any tool (tools' own crashes are recorded results)
        log.exception("tools/call %s failed in episode %s", name[:100], episode.id)
        error = {"code": types.INTERNAL_ERROR, "message": f"internal error: {type(exc).__name__}"}
        await _write({"jsonrpc": "2.0", "id": request_id, "error": error}, ERROR_CODE_HTTP_STATUS.get(types.INTERNAL_ERROR, 200), scope, receive,
                     send)
        return
    # The SDK's wire shape for a 2026-07-28 tools/call result, key order included: the per-version surface
    # dumps content items as {text, type}, then isError, resultType, structuredContent; then the serverInfo stamp.
    # Written as text, not dumped from a dict: the result's JSON is the text content already, and — when it is all
    # ASCII, as the SDK's own dump of structuredContent always is — the structured content too, so it is encoded
    # once instead of twice. tests/servers/test_fastcall.py holds the bytes to the SDK's.
    payload, is_error = answer_payload(event)
    text = answer_text(payload)
    parts = ['{"jsonrpc":"2.0","id":', json.dumps(request_id), ',"result":{"content":[{"text":', json.dumps(text),
             ',"type":"text"}],"isError":', "true" if is_error else "false", ',"resultType":"complete"']
    if not is_error and payload is not None:
        parts += [',"structuredContent":', text if text.isascii() else json.dumps(payload, separators=(",", ":"))]
    parts += [',"_meta":', _meta_text(episode.environment), "}}"]
    await Response("".join(parts), status_code=200, media_type="application/json")(scope, receive, send)


@lru_cache(maxsize=None)
def _meta_text(environment: Environment) -> str:
    """The result's ``_meta`` (the serverInfo stamp) as the SDK writes it, once per environment."""
    return json.dumps({SERVER_INFO_META_KEY: _server_info(environment)}, separators=(",", ":"))


@lru_cache(maxsize=None)
def _server_info(environment: Environment) -> dict[str, Any]:
    """The ``serverInfo`` stamp the SDK puts on every 2026-07-28 result, from the environment's own MCP server."""
    return build_mcp_server(environment, _no_episode).server_info_stamp


def _no_episode(_ctx: Any) -> Episode:
    raise RuntimeError("the stamp's server serves no request")


async def _write(message: dict[str, Any], status: int, scope: Scope, receive: Receive, send: Send) -> None:
    """The reply as the SDK writes it: compact JSON, ``application/json``, the status its table maps."""
    await Response(json.dumps(message, separators=(",", ":")), status_code=status, media_type="application/json")(scope, receive, send)
