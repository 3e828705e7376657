"""Clients that go away: their work stops, nothing of theirs is kept, and the operator sees a count, not tracebacks.

Under load, clients give up: a timeout closes the connection mid-request, a cancelled call sends
``notifications/cancelled`` and then ``DELETE`` ends the session while the notification is still being handed
to it. None of that is a fault of the server, yet each used to print a traceback (measured: 101 for 500
workspace sessions whose clients gave up): the SDK's POST handler logged the ``anyio.ClosedResourceError`` of
the session that had just ended, then answered a response that was already complete, and uvicorn logged
"Exception in ASGI application" for the ``RuntimeError`` that caused. Here:

- :class:`DropGuard` (ASGI, around the whole app) drops a message sent after its response completed (a
  second answer to a request already answered), and swallows what a request raises because its client or
  its session is gone (:data:`GONE`), or after its answer was complete: each is counted, never logged above
  debug. Any other exception still reaches uvicorn, traceback and 500 included: that is a bug of ours.
- :class:`GoneFilter` drops the SDK's own log records of those races (an exception of :data:`GONE`), counted.
- :func:`until_client_leaves` runs work a client waits for (creating an episode) and cancels it when the
  client disconnects, so a create nobody waits for any more never makes an episode nobody holds;
  :func:`undo_if_unread` covers the client that gives up just as its answer is sent: a connection reset
  before the client's next request means the answer was never read (a socket closed with unread data is
  reset, not closed), and the work is undone (measured: 53 of 54 such episodes, each kept until
  ``--idle-timeout`` before, came with a reset; the 54th client was still connected).

``GET /control/health`` reports the counts (``dropped``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from servers.health import PROGRESS

__all__ = [
    "GONE",
    "DROPS",
    "DropCounts",
    "DropGuard",
    "GoneFilter",
    "install_gone_filter",
    "until_client_leaves",
    "undo_if_unread",
    "connection_closed",
]

log = logging.getLogger("toolgym.http")

T = TypeVar("T")

GONE: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ClientDisconnect,
    ConnectionError,
)
"""Exceptions that mean the other end is gone: the client's connection, or the MCP session it was using."""

SETTLE_PASSES = 6
"""Passes of the event loop a finished create waits for a disconnect already on its way in (microseconds idle)."""

SDK_LOGGERS = (
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server._streamable_http_modern",
    "mcp.shared.jsonrpc_dispatcher",
    "mcp.shared.dispatcher",
)
"""The SDK loggers that report a vanished client or session with a traceback."""


class DropCounts:
    """What was dropped because a client or its session went away (read by health from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.client_left = 0
        """Requests whose client disconnected before their answer (the work was stopped where it could be)."""
        self.session_ended = 0
        """Requests whose MCP session ended while they were being handed to it (the SDK's races, caught)."""
        self.late_answers = 0
        """Requests answered a second time after their answer was complete (the second answer dropped)."""

    def add(self, what: str) -> None:
        """Count one drop of kind ``what`` (an attribute name)."""
        with self._lock:
            setattr(self, what, getattr(self, what) + 1)

    def snapshot(self) -> dict[str, int]:
        """The counts, for ``/control/health``."""
        return {"client_left": self.client_left, "session_ended": self.session_ended, "late_answers": self.late_answers}


DROPS = DropCounts()
"""This process's counts (the SDK's loggers are process-wide, so the counts are too)."""


def _kind(exc: BaseException) -> str:
    return "client_left" if isinstance(exc, (ClientDisconnect, ConnectionError)) else "session_ended"


class DropGuard:
    """ASGI middleware: no late answer reaches uvicorn, no vanished client turns into a traceback (see module)."""

    def __init__(self, app: ASGIApp, counts: DropCounts = DROPS) -> None:
        self.app = app
        self.counts = counts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI event; HTTP requests are guarded, the rest pass through."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        PROGRESS.tick()  # the loop is working: health tells a slow loop from a stuck one by this
        _read_answer(scope.get("client"))  # a new request: the client read the answer before it
        complete = left = late = False

        async def watched() -> Message:
            nonlocal left
            message = await receive()
            if message["type"] == "http.disconnect":
                left = True
            return message

        async def guarded(message: Message) -> None:
            nonlocal complete, late
            if complete:
                if not late:
                    late = True
                    self.counts.add("late_answers")
                return
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                complete = True
            await send(message)

        try:
            await self.app(scope, watched, guarded)
            PROGRESS.tick()
        except Exception as exc:
            gone = left or isinstance(exc, GONE)
            if not (gone or complete):
                raise  # a bug of ours, before any answer: uvicorn logs it with its traceback and answers 500
            if gone:
                if not late:
                    self.counts.add("client_left" if left else _kind(exc))
                log.debug("%s %s: dropped (%s: %s)", scope.get("method"), scope.get("path"), type(exc).__name__, exc)
            else:  # answered already, then failed: worth a line, not a traceback nobody can act on
                log.warning("%s %s failed after its answer was sent: %s: %s", scope.get("method"), scope.get("path"),
                            type(exc).__name__, str(exc)[:300])


class GoneFilter(logging.Filter):
    """Drops (and counts) SDK log records whose exception says the client or session is gone."""

    def __init__(self, counts: DropCounts = DROPS) -> None:
        super().__init__()
        self.counts = counts

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record but those of a vanished client or session."""
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and isinstance(exc, GONE):
            self.counts.add(_kind(exc))
            return False
        return True


_installed: GoneFilter | None = None


def install_gone_filter() -> GoneFilter:
    """Attach :class:`GoneFilter` to the SDK's loggers (once per process)."""
    global _installed
    if _installed is None:
        _installed = GoneFilter()
        for name in SDK_LOGGERS:
            logging.getLogger(name).addFilter(_installed)
    return _installed


_UNREAD: dict[tuple[Any, ...], Callable[[], None]] = {}
"""Client address (host, port: one open connection) → how to undo what its last answer made."""


def undo_if_unread(client: Any, undo: Callable[[], None]) -> None:
    """After answering ``client`` (the ASGI scope's ``client``) with something made for it: call ``undo`` if its
    connection is reset before it sends another request — the answer was never read."""
    if client:
        _UNREAD[tuple(client)] = undo


def _read_answer(client: Any) -> None:
    if client and _UNREAD:
        _UNREAD.pop(tuple(client), None)


def connection_closed(client: Any, exc: BaseException | None) -> None:
    """The HTTP protocol's hook (``servers/deadlines.py``): a connection of ``client`` ended, with ``exc``."""
    if not client or not _UNREAD:
        return
    undo = _UNREAD.pop(tuple(client), None)
    if undo is not None and isinstance(exc, (ConnectionResetError, BrokenPipeError)):
        DROPS.add("client_left")
        try:
            undo()
        except Exception:  # noqa: BLE001 - undoing is best effort: the reaper still closes it when idle
            log.warning("undoing an unread answer failed", exc_info=True)


async def until_client_leaves(receive: Receive, work: Callable[[], Awaitable[T]]) -> tuple[T | None, bool]:
    """Run ``work`` for a client whose request body was read whole; cancel it if the client disconnects first.

    Returns ``(result, left)``: ``left`` is True when the client disconnected (then ``result`` is None when the
    work was cancelled, or the result of work that finished as the client left: the caller undoes it).
    """
    outcome: list[T] = []
    failure: Exception | None = None
    left = False

    async def watch(scope: anyio.CancelScope) -> None:
        nonlocal left
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                left = True
                scope.cancel()
                return

    async with anyio.create_task_group() as tg:
        tg.start_soon(watch, tg.cancel_scope)
        try:
            outcome.append(await work())
            # A client that left while the work finished: its disconnect may already wait in the socket. A few
            # passes of the loop let it be read (the end of the stream), close the transport (connection lost),
            # wake the watcher and run it, so the work is undone rather than answered into a closed connection.
            for _ in range(SETTLE_PASSES):
                if left:
                    break
                await anyio.sleep(0)
        except Exception as exc:  # raised as it is, not inside the task group's ExceptionGroup
            failure = exc
        finally:
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if left:
        DROPS.add("client_left")
    return (outcome[0] if outcome else None), left
