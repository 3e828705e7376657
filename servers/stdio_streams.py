"""MCP over stdin/stdout, one JSON-RPC message per line, where every request gets an answer.

The SDK's ``stdio_server`` parses each line with pydantic's strict JSON parser and drops what fails, and
reads a request whose id has the wrong type as a notification. So a client that sent a lone surrogate in its
arguments (``"\\ud800"``: legal JSON, refused by that parser), an id that is an object or a float, or a line
that is not JSON at all, waits forever for an answer. These streams answer every line instead:

- a line that parses (Python's own JSON parser: lone surrogates included) and validates goes to the server
  as the SDK would send it — the call with the surrogate reaches dispatch, which refuses it as the agent's
  error (``invalid_text``) and records it escaped (``servers/text.py``), as over HTTP;
- a request with an unusable id gets ``Invalid Request`` (id null), a request that does not validate gets
  ``Invalid Request`` with its id, a line that is not JSON ``Parse error`` (``servers/jsonrpc.py``);
- bytes that are not UTF-8 are read with ``surrogateescape``, so they too arrive as (escaped, lossless)
  surrogates rather than silently replaced;
- a line longer than ``MAX_LINE`` is skipped whole and answered ``Parse error``.

Stray output of the process never reaches the wire: while serving, fd 1 points at stderr and messages go to
a private duplicate of the original stdout. Reads and writes run in worker threads (a client that stops
reading blocks a thread, never the event loop).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from servers.jsonrpc import INVALID_REQUEST, PARSE_ERROR, error_message, request_id_problem
from servers.text import escape_value

__all__ = ["MAX_LINE", "parse_line", "stdio_streams"]

log = logging.getLogger("toolgym.stdio")

MAX_LINE = 4 * 2**20
"""Longest message line read (the HTTP transport's body limit); a longer one is skipped and answered."""

_TOO_LONG = object()


def parse_line(line: bytes) -> SessionMessage | dict[str, Any] | None:
    """One line from the client: a message for the server, an error response to send back, or None (nothing
    to do: a blank line, or a notification that does not validate — notifications get no answer)."""
    text = line.decode("utf-8", "surrogateescape").strip()
    if not text:
        return None
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return error_message(None, PARSE_ERROR, f"Parse error: {exc}"[:300])
    problem = request_id_problem(decoded)
    if problem is not None:
        return error_message(None, INVALID_REQUEST, problem)
    try:
        message = types.jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except (ValidationError, RecursionError) as exc:
        if isinstance(decoded, dict) and "method" in decoded and "id" in decoded:
            detail = exc.errors(include_url=False)[0]["msg"] if isinstance(exc, ValidationError) else "too deeply nested"
            return error_message(decoded["id"], INVALID_REQUEST, f"Invalid Request: {detail}"[:300])
        if isinstance(decoded, dict) and "id" not in decoded:
            log.debug("dropped a notification that does not validate")
            return None
        return error_message(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC message")
    return SessionMessage(message)


def _read_line(stream: BinaryIO) -> bytes | object | None:
    """The next line (None at end of input; ``_TOO_LONG`` for a line past ``MAX_LINE``, skipped whole)."""
    line = stream.readline(MAX_LINE + 1)
    if not line:
        return None
    if len(line) <= MAX_LINE or line.endswith(b"\n"):
        return line
    while True:  # skip the rest of the oversized line without holding it
        rest = stream.readline(MAX_LINE)
        if not rest or rest.endswith(b"\n"):
            return _TOO_LONG


def _dump(message: Any) -> bytes:
    """A message as one line; text no strict encoder accepts (a lone surrogate) is escaped, never lost."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
    except PydanticSerializationError:
        data = escape_value(message.model_dump(mode="json", by_alias=True, exclude_unset=True))
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _write_all(stream: BinaryIO, data: bytes) -> None:
    stream.write(data)
    stream.flush()


def _claim_stdout() -> tuple[BinaryIO, int]:
    """A private duplicate of stdout for the wire, and fd 1 pointed at stderr (stray prints miss the wire)."""
    sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    return os.fdopen(wire, "wb", buffering=0), wire


@asynccontextmanager
async def stdio_streams(
    stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]]:
    """``(read, write)`` streams for ``Server.run`` over this process's stdin and stdout (or the given ones).

    The read stream ends when stdin does.
    """
    wire: int | None = None
    if stdout is None:
        stdout, wire = _claim_stdout()
    source = stdin if stdin is not None else sys.stdin.buffer
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    out_lock = anyio.Lock()
    out = stdout

    async def emit(data: bytes) -> None:
        async with out_lock:
            try:
                await anyio.to_thread.run_sync(_write_all, out, data, abandon_on_cancel=True)
            except (BrokenPipeError, ValueError):  # the client closed its end: nothing more can reach it
                log.debug("stdout is closed; a message was not delivered")

    async def reader() -> None:
        async with read_send:
            while True:
                line = await anyio.to_thread.run_sync(_read_line, source, abandon_on_cancel=True)
                if line is None:
                    return
                if line is _TOO_LONG:
                    await emit(json.dumps(error_message(None, PARSE_ERROR, f"a message line is at most {MAX_LINE} bytes")).encode() + b"\n")
                    continue
                item = parse_line(line)  # type: ignore[arg-type]
                if isinstance(item, SessionMessage):
                    await read_send.send(item)
                elif item is not None:
                    await emit(json.dumps(item, separators=(",", ":")).encode() + b"\n")

    written = anyio.Event()

    async def writer() -> None:
        try:
            async with write_receive:
                async for session_message in write_receive:
                    await emit(_dump(session_message.message))
        finally:
            written.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_receive, write_send
            finally:
                # The server is done: let the writer send what it still holds, then stop reading stdin (a
                # blocking read no cancellation interrupts: its thread is abandoned).
                write_send.close()
                with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                    await written.wait()
                tg.cancel_scope.cancel()
    finally:
        if wire is not None:
            os.dup2(wire, 1)
            stdout.close()
