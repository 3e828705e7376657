"""Accepting connections within the process's file descriptors: back off, never spin; health still answers.

Every connection is a file descriptor. asyncio's own accept loop, on ``EMFILE``, removes the listening
socket's reader and schedules a retry a second later — but then keeps calling ``accept`` up to the backlog
(2048 here) in the same pass, each failure logging and scheduling one more retry (CPython 3.11). Out of
descriptors, the retries multiply: measured with ``ulimit -n 256`` and 300 connections, the server spun at
85% CPU, logged 200,000+ errors per report, and its health endpoint stopped answering until clients left.

:class:`Acceptor` replaces that loop on the listening socket and never lets connections take every descriptor:

- up to ``max_connections`` (the open-files limit less the descriptors open at start-up, a margin for
  record files and SQLite, and the overflow lane) are served as usual;
- beyond them, :data:`OVERFLOW_SLOTS` more connections are accepted into an *overflow lane*: a short head
  deadline, answered by :class:`OverflowGate` — ``/control/health`` as usual, anything else a quick
  ``503 connection_limit`` — and closed after one response. So a monitor's new connection gets its health,
  and other clients learn at once that the server is full instead of waiting unanswered;
- with the overflow lane full too, accepting pauses (the socket's reader is removed, no CPU is spent) and
  resumes the moment a connection closes; new clients wait in the kernel's listen queue;
- an ``EMFILE``/``ENFILE`` anyway (descriptors taken elsewhere) pauses accepting with a backoff from
  :data:`RETRY_FIRST` to :data:`RETRY_MAX` seconds, resumed early when a connection closes.

Connections already accepted are never touched. Both conditions log one line per ``FD_LOG_INTERVAL``
seconds, with how many times it happened since the last line.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import resource
import socket
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from servers.limits import FD_LOG_INTERVAL

__all__ = [
    "Acceptor",
    "OverflowGate",
    "OVERFLOW_KEY",
    "OVERFLOW_SLOTS",
    "OVERFLOW_HEAD_TIMEOUT",
    "connection_budget",
    "open_descriptors",
]

log = logging.getLogger("toolgym.http")

OVERFLOW_KEY = "toolgym.overflow"
"""Key of the per-connection ASGI ``state`` that marks a connection of the overflow lane."""

OVERFLOW_SLOTS = 16
"""Connections accepted beyond ``max_connections``, each answered once and closed."""

OVERFLOW_HEAD_TIMEOUT = 0.5
"""Seconds an overflow connection has to send its request head. It waited in the listen queue, so a client
that sent one has it there already; silent ones must not keep a monitor queued behind them for long."""

RETRY_FIRST = 0.05
RETRY_MAX = 1.0
"""Backoff bounds, in seconds, after ``accept`` failed for lack of descriptors."""

MIN_FD_MARGIN = 16
"""Descriptors always kept for what is not a connection (record files, SQLite, pipes), at least."""

_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_BATCH = 64  # connections accepted per readiness event, so one busy socket never holds the loop long


def open_descriptors() -> int:
    """Descriptors this process has open now (0 where ``/proc/self/fd`` is unavailable)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 0


def connection_budget(limit: int | None = None, in_use: int | None = None) -> tuple[int, int]:
    """(connections served as usual, overflow slots) under the open-files ``limit`` with ``in_use`` open already.

    Kept apart: a tenth of the limit (at least :data:`MIN_FD_MARGIN`) for files, and the overflow lane
    (:data:`OVERFLOW_SLOTS`, fewer under a small limit).
    """
    if limit is None:
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if in_use is None:
        in_use = open_descriptors()
    margin = max(MIN_FD_MARGIN, limit // 10)
    overflow = max(1, min(OVERFLOW_SLOTS, limit // 16))
    return max(1, limit - in_use - margin - overflow), overflow


class _Throttled:
    """One log line per interval, counting the occurrences in between."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._last = float("-inf")
        self._count = 0

    def __call__(self, message: str) -> None:
        self._count += 1
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        more = f" ({self._count - 1} more times since the last report)" if self._count > 1 else ""
        self._last, self._count = now, 0
        log.warning("%s%s", message, more)


class Acceptor:
    """Accepts connections on a listening socket within ``max_connections`` plus the overflow lane.

    Args:
        loop: the running event loop (a selector loop: readers on file descriptors).
        sock: the listening socket (non-blocking).
        make_protocol: builds the protocol of one accepted connection; ``True`` for the overflow lane.
        max_connections: connections served as usual (see :func:`connection_budget`).
        overflow_slots: connections of the overflow lane.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        sock: socket.socket,
        make_protocol: Callable[[bool], asyncio.Protocol],
        max_connections: int,
        overflow_slots: int = OVERFLOW_SLOTS,
        *,
        log_interval: float = FD_LOG_INTERVAL,
    ) -> None:
        self.loop = loop
        self.sock = sock
        self.make_protocol = make_protocol
        self.max_connections = max_connections
        self.overflow_slots = overflow_slots
        self.open = 0
        """Connections served as usual, open now."""
        self.overflow = 0
        """Overflow-lane connections open now."""
        self.pauses = 0
        """Times accepting paused (full, or out of descriptors), since start."""
        self._fd = sock.fileno()
        self._reading = False
        self._closed = False
        self._retry: asyncio.TimerHandle | None = None
        self._delay = RETRY_FIRST
        self._log = _Throttled(log_interval)

    def start(self) -> None:
        """Start accepting (the listening socket must have no other reader)."""
        self._resume()

    def close(self) -> None:
        """Stop accepting for good (the server is shutting down); open connections are left to it."""
        self._closed = True
        self._pause()
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None

    def counts(self) -> dict[str, int]:
        """Open connections and their bounds, for health and tests."""
        return {"open": self.open, "max": self.max_connections, "overflow": self.overflow, "pauses": self.pauses}

    # -- reading the listening socket -----------------------------------------------------------------

    def _resume(self) -> None:
        if self._closed or self._reading or self.sock.fileno() < 0:
            return
        self.loop.add_reader(self._fd, self._on_readable)
        self._reading = True

    def _pause(self) -> None:
        if self._reading:
            self._reading = False
            if self.sock.fileno() >= 0:
                self.loop.remove_reader(self._fd)

    def _on_readable(self) -> None:
        for _ in range(_BATCH):
            overflow = self.open >= self.max_connections
            if overflow and self.overflow >= self.overflow_slots:
                self._pause()  # resumed when a connection closes
                self.pauses += 1
                self._log(
                    f"connection limit reached: {self.open} connections and {self.overflow} overflow connections open "
                    f"(open files limit {resource.getrlimit(resource.RLIMIT_NOFILE)[0]}); new connections wait until "
                    "some close; raise the limit (ulimit -n) or lower the clients' concurrency"
                )
                return
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                if exc.errno in _OUT_OF_DESCRIPTORS:
                    self._out_of_descriptors(exc)
                else:
                    log.warning("accept failed: %s", exc)
                return
            self._delay = RETRY_FIRST
            conn.setblocking(False)
            self._serve(conn, overflow)

    def _out_of_descriptors(self, exc: OSError) -> None:
        # Linux keeps reporting the socket readable: without a pause this would spin.
        self._pause()
        self.pauses += 1
        if self._retry is None:
            self._retry = self.loop.call_later(self._delay, self._retry_now)
            self._delay = min(RETRY_MAX, self._delay * 2)
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        self._log(
            f"out of file descriptors (limit {limit}; {os.strerror(exc.errno or 0)}): not accepting new connections "
            f"for now ({self.open} open); raise the limit (ulimit -n) or lower the clients' concurrency"
        )

    def _retry_now(self) -> None:
        self._retry = None
        self._resume()

    # -- one connection -------------------------------------------------------------------------------

    def _serve(self, conn: socket.socket, overflow: bool) -> None:
        if overflow:
            self.overflow += 1
        else:
            self.open += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            if overflow:
                self.overflow -= 1
            else:
                self.open -= 1
            if self._retry is not None:  # a descriptor came back: no need to wait out the backoff
                self._retry.cancel()
                self._retry = None
            self._resume()

        try:
            protocol = self.make_protocol(overflow)
        except Exception:
            conn.close()
            release()
            raise
        lost = protocol.connection_lost

        def connection_lost(exc: Exception | None) -> None:
            try:
                lost(exc)
            finally:
                release()

        protocol.connection_lost = connection_lost  # type: ignore[method-assign]
        self.loop.create_task(self._connect(conn, protocol, release))

    async def _connect(self, conn: socket.socket, protocol: asyncio.Protocol, release: Callable[[], None]) -> None:
        try:
            await self.loop.connect_accepted_socket(lambda: protocol, conn)
        except Exception as exc:  # the peer left before the transport was made: nothing to serve
            log.debug("accepted connection failed before it was served: %s", exc)
            conn.close()
            release()


class OverflowGate:
    """ASGI middleware: on an overflow-lane connection, health as usual, anything else 503; then close."""

    def __init__(self, app: ASGIApp, health_path: str = "/control/health") -> None:
        self.app = app
        self.health_path = health_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI event (lifespan and regular connections pass through untouched)."""
        if scope["type"] != "http" or not scope.get("state", {}).get(OVERFLOW_KEY):
            await self.app(scope, receive, send)
            return

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        if scope["path"] == self.health_path:
            await self.app(scope, receive, closing)
            return
        body = json.dumps(
            {
                "error": "connection_limit",
                "message": "the server holds as many connections as its open-files limit allows; retry shortly, "
                "or reuse a keep-alive connection",
            }
        ).encode()
        await closing(
            {
                "type": "http.response.start",
                "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})
