"""A server's listing over HTTP at the cost of a copy: 2026-07-28 ``server/discover`` and ``tools/list`` answered
with the bytes the SDK wrote for the first one.

An MCP client that connects to an episode asks who the server is and what tools it has: on the 2026-07-28
protocol, a ``server/discover`` and a ``tools/list`` per connection. Neither answer depends on the episode or
the request (the handlers ignore the cursor; the listing is built once per environment), yet the SDK
validates and dumps the whole result each time: measured, 9 ms of server CPU for finance's 75 KB listing, more
than the rest of an oracle episode. A client per episode, as external agents connect, paid it per episode.

:class:`ListingCache` (one per HTTP app) lets the SDK answer the first such request of each (method,
protocol version, client capabilities) and keeps what it wrote: the status, the headers and the JSON text of
the ``result``. Later requests that pass the SDK's own ladder (:func:`servers.fastcall.passes_ladder`) and
its validation of the method's params get that answer with their own id, the bytes the SDK would write (a
test compares them).
Anything else — a refusal, invalid params, another method, a tracer provider set, SSE mode — goes to the SDK
as before, and an answer that is not a plain success is never kept.
"""

from __future__ import annotations

import json

import mcp_types as types
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.methods import validate_client_request
from pydantic import BaseModel, ValidationError
from starlette.types import Message, Receive, Scope, Send

from servers.fastcall import passes_ladder

__all__ = ["ListingCache"]

_PARAMS: dict[str, type[BaseModel]] = {
    "server/discover": types.RequestParams,
    "tools/list": types.PaginatedRequestParams,
}
"""The methods answered from the cache and the params type the SDK's handler validates them with."""

_HEAD = b'{"jsonrpc":"2.0","id":'
_RESULT = b',"result":'

_Key = tuple[str, str, str]

MAX_KEPT = 16
"""Answers kept at most (a key per method, protocol version and client capabilities): past that, the SDK answers,
so clients that vary their capabilities cannot grow the cache."""


class ListingCache:
    """The SDK's answers to ``server/discover`` and ``tools/list``, per method, protocol version and client
    capabilities."""

    def __init__(self) -> None:
        self._answers: dict[_Key, tuple[int, list[tuple[bytes, bytes]], bytes]] = {}

    async def serve(
        self, security: TransportSecuritySettings | None, scope: Scope, body: bytes, receive: Receive, send: Send
    ) -> tuple[bool, Send]:
        """Answer a listing request from the cache: ``(True, send)`` when answered; otherwise ``(False, send')``,
        where ``send'`` is what the SDK should answer through (it keeps a cacheable answer, else it is ``send``)."""
        if not _is_listing(body):
            return False, send
        passed = await passes_ladder(security, scope, body, receive)
        if passed is None:
            return False, send
        decoded, request = passed
        method, params = decoded["method"], decoded.get("params")
        if method not in _PARAMS:
            return False, send
        version = request.headers.get("mcp-protocol-version", "")
        try:
            validate_client_request(method, version, params)
            _PARAMS[method].model_validate({} if params is None else params, by_name=False)
        except (KeyError, ValueError, ValidationError):
            return False, send  # the SDK answers with its error
        # The answers do not depend on the client's capabilities today; keyed by them all the same, so a client
        # can never be handed what the SDK would have shaped for another.
        meta = params.get("_meta") if isinstance(params, dict) else None
        capabilities = meta.get("io.modelcontextprotocol/clientCapabilities") if isinstance(meta, dict) else None
        key = (method, version, json.dumps(capabilities, sort_keys=True))
        request_id = json.dumps(decoded["id"]).encode()
        answer = self._answers.get(key)
        if answer is None:
            return False, (self._keeping(key, request_id, send) if len(self._answers) < MAX_KEPT else send)
        status, headers, result = answer
        content = b"".join((_HEAD, request_id, _RESULT, result, b"}"))
        length = (b"content-length", str(len(content)).encode())
        await send({"type": "http.response.start", "status": status, "headers": [*headers, length]})
        await send({"type": "http.response.body", "body": content})
        return True, send

    def _keeping(self, key: _Key, request_id: bytes, send: Send) -> Send:
        """``send``, keeping the answer it carries when it is a plain ``200`` JSON-RPC result for ``request_id``."""
        start: Message | None = None
        parts: list[bytes] = []

        async def keep(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
            elif message["type"] == "http.response.body":
                parts.append(message.get("body", b""))
                if not message.get("more_body", False) and start is not None:
                    self._keep(key, request_id, start, b"".join(parts))
            await send(message)

        return keep

    def _keep(self, key: _Key, request_id: bytes, start: Message, content: bytes) -> None:
        head = _HEAD + request_id + _RESULT
        headers = [(name, value) for name, value in start.get("headers", []) if name.lower() != b"content-length"]
        if start.get("status") != 200 or not content.startswith(head) or not content.endswith(b"}"):
            return
        if not any(n.lower() == b"content-type" and v.startswith(b"application/json") for n, v in headers):
            return
        self._answers[key] = (200, headers, content[len(head) : -1])


def _is_listing(body: bytes) -> bool:
    """A cheap look before parsing: whether the body may be a request for one of the cached methods."""
    return b'"server/discover"' in body or b'"tools/list"' in body
