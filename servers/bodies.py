"""MCP request bodies over HTTP, read whole before the SDK sees them, and requests it would leave unanswered.

Two things go wrong when the SDK reads a POST body itself:

- a client that drops out mid-body makes it log ``Error handling POST request`` with a ``ClientDisconnect``
  traceback (and try to answer a client that is gone). :func:`read_body` reads the body first; a client that
  left gets nothing and leaves no trace but a debug line. (How long a body may take is the connection's
  body deadline, ``servers/deadlines.py``.)
- a request whose JSON-RPC id has the wrong type is taken for a notification and answered ``202`` with no
  body: the client waits forever. :func:`answer_invalid_ids` replaces exactly that answer with JSON-RPC
  ``Invalid Request`` (``servers/jsonrpc.py``); the body is parsed only then, so other requests pay nothing.
"""

from __future__ import annotations

import json
import logging

from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.types import Message, Receive, Scope, Send

from servers.jsonrpc import INVALID_REQUEST, error_bytes, request_id_problem

__all__ = ["MAX_MCP_BODY", "answer_invalid_ids", "read_body", "replay"]

log = logging.getLogger("toolgym.http")

MAX_MCP_BODY = DEFAULT_MAX_REQUEST_BODY_SIZE
"""Largest MCP request body (the SDK's own limit, 4 MB; a tool's arguments are at most 64 KB)."""


async def read_body(scope: Scope, receive: Receive, send: Send, limit: int = MAX_MCP_BODY) -> bytes | None:
    """The whole body of a request, or None when there is nothing to serve: the client left mid-body (no
    answer, no traceback) or the body passed ``limit`` (answered 413 with a JSON-RPC error)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            log.debug("client %s left before sending its whole request body", scope.get("client"))
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            await _answer(send, 413, error_bytes(None, INVALID_REQUEST, f"a request body is at most {limit} bytes"), close=True)
            return None
        if chunk:
            chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields ``body`` in one message, then whatever the connection sends (a disconnect)."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def answer_invalid_ids(body: bytes, send: Send) -> Send:
    """A ``send`` that answers JSON-RPC ``Invalid Request`` where the SDK would answer a request whose id has
    the wrong type with a bodyless 202; every other response passes through untouched."""
    replaced = False

    async def guarded(message: Message) -> None:
        nonlocal replaced
        if replaced:
            return  # the SDK's own (empty) body of the 202 it meant to send
        if message["type"] == "http.response.start" and message["status"] == 202:
            try:
                problem = request_id_problem(json.loads(body))
            except (ValueError, RecursionError):
                problem = None
            if problem is not None:
                replaced = True
                await _answer(send, 400, error_bytes(None, INVALID_REQUEST, problem))
                return
        await send(message)

    return guarded


async def _answer(send: Send, status: int, body: bytes, *, close: bool = False) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))  # the rest of a refused body is not worth reading
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
