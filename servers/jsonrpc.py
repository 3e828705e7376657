"""JSON-RPC messages the SDK would leave unanswered, found and answered: every request gets a reply.

The SDK's message model reads an object with a ``method`` and an ``id`` of the wrong type (an object, a
float, ``true``, ``null``) as a *notification* (the extra ``id`` is ignored), so over HTTP it answers 202
with no body and over stdio nothing at all — and the client waits forever for a response to its request.
JSON-RPC 2.0 owes such a request an ``Invalid Request`` error (with ``id: null``, since its id is unusable);
MCP allows only strings and integers as ids. :func:`request_id_problem` tells such messages apart;
:func:`error_message` builds the answer both transports send.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["INVALID_REQUEST", "PARSE_ERROR", "error_bytes", "error_message", "request_id_problem"]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def request_id_problem(decoded: Any) -> str | None:
    """Why a decoded message is a request with an unusable id (None when it is not one).

    A request is an object with a ``method`` and an ``id`` member; its id must be a string or an integer
    (MCP: never null, never a float or a boolean).
    """
    if not isinstance(decoded, dict) or "id" not in decoded or "method" not in decoded:
        return None
    ident = decoded["id"]
    if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)):
        return None
    kind = "null" if ident is None else {bool: "a boolean", float: "a number with a fraction"}.get(type(ident), f"a JSON {_json_type(ident)}")
    return f"Invalid Request: a request id must be a string or an integer, not {kind}"


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array"}.get(type(value), type(value).__name__)


def error_message(request_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error response (``request_id`` None when the request's id is unknown or unusable)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def error_bytes(request_id: Any, code: int, message: str) -> bytes:
    """:func:`error_message` as compact JSON bytes."""
    return json.dumps(error_message(request_id, code, message), separators=(",", ":")).encode()
