"""Deadlines on HTTP connections: a request's head, its body and a response the client will not read.

uvicorn times out only idle keep-alive connections *between* requests. A connection that opens and sends
nothing, a head that stops half-way, a body announced and never sent, a response nobody reads: each holds a
descriptor (and for a body or a response, a task) forever — any local process could hold them all. This
module's protocol class adds what is missing, with timers on the event loop (no per-read cost):

- **head**: from the connection's start (or the first byte of a next request) to the end of the request's
  headers, at most ``head_timeout``; then ``408 Request Timeout`` and the connection is closed.
- **body**: from the end of the headers to the end of the body, at most ``body_timeout``; then ``408`` and
  close (the application sees a disconnect, never a body that will not come).
- **write**: a response the client stops reading (the transport's buffer stays above its high-water mark)
  gets ``write_timeout`` to drain; then the connection is dropped.

Idle keep-alive connections keep uvicorn's own ``timeout_keep_alive``. The class works on uvicorn's
httptools and h11 protocols alike: it watches which request cycle the parser started, nothing parser-specific.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from servers.dropped import connection_closed

__all__ = ["DEFAULT_BODY_TIMEOUT", "DEFAULT_HEAD_TIMEOUT", "DEFAULT_WRITE_TIMEOUT", "with_deadlines"]

DEFAULT_HEAD_TIMEOUT = 30.0
"""Seconds a connection has to send a request's headers (generous: a loaded loop may read them late)."""

DEFAULT_BODY_TIMEOUT = 60.0
"""Seconds a request has to send its body once its headers arrived."""

DEFAULT_WRITE_TIMEOUT = 60.0
"""Seconds a response waits for a client that stopped reading it."""

_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n%s"
)


def _timeout_response(what: str, seconds: float) -> bytes:
    body = b'{"error":"request_timeout","message":"the request %s did not arrive within %gs"}' % (what.encode(), seconds)
    return _TIMEOUT_RESPONSE % (len(body), body)


@functools.cache
def with_deadlines(base: type[asyncio.Protocol], head_timeout: float, body_timeout: float, write_timeout: float) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's HTTP protocol class ``base`` that enforces the three deadlines."""

    class DeadlineProtocol(base):  # type: ignore[valid-type, misc]
        _head_timer: asyncio.TimerHandle | None = None
        _body_timer: asyncio.TimerHandle | None = None
        _write_timer: asyncio.TimerHandle | None = None
        _seen_cycle: Any = None

        def _loop(self) -> asyncio.AbstractEventLoop:
            return self.loop  # type: ignore[attr-defined, no-any-return]

        def _in_request(self) -> bool:
            cycle = self.cycle  # type: ignore[attr-defined]
            return cycle is not None and not cycle.response_complete

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._head_timer = self._loop().call_later(head_timeout, self._head_expired)

        def data_received(self, data: bytes) -> None:
            if self._head_timer is None and not self._in_request():
                # The first bytes of a next request on a kept-alive connection: its head has a deadline too.
                self._head_timer = self._loop().call_later(head_timeout, self._head_expired)
            super().data_received(data)
            cycle = self.cycle  # type: ignore[attr-defined]
            if cycle is not None and cycle is not self._seen_cycle:
                self._seen_cycle = cycle  # the parser finished a head and started a request cycle
                self._cancel("_head_timer")
                if cycle.more_body and self._body_timer is None:
                    self._body_timer = self._loop().call_later(body_timeout, self._body_expired, cycle)
            if self._body_timer is not None and (cycle is None or not cycle.more_body):
                self._cancel("_body_timer")

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._write_timer is None:
                self._write_timer = self._loop().call_later(write_timeout, self._write_expired)

        def resume_writing(self) -> None:
            super().resume_writing()
            self._cancel("_write_timer")

        def connection_lost(self, exc: Exception | None) -> None:
            for name in ("_head_timer", "_body_timer", "_write_timer"):
                self._cancel(name)
            connection_closed(getattr(self, "client", None), exc)  # an answer never read is undone (servers/dropped.py)
            super().connection_lost(exc)

        def _cancel(self, name: str) -> None:
            timer = getattr(self, name)
            if timer is not None:
                timer.cancel()
                setattr(self, name, None)

        def _head_expired(self) -> None:
            self._head_timer = None
            transport = self.transport  # type: ignore[attr-defined]
            if transport.is_closing() or self._in_request():
                return
            transport.write(_timeout_response("head", head_timeout))
            transport.close()

        def _body_expired(self, cycle: Any) -> None:
            self._body_timer = None
            transport = self.transport  # type: ignore[attr-defined]
            if transport.is_closing() or cycle is not self.cycle or not cycle.more_body:  # type: ignore[attr-defined]
                return
            if not cycle.response_started:
                transport.write(_timeout_response("body", body_timeout))
            # The application waiting for the body sees a disconnect; whatever it sends now is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
            transport.close()

        def _write_expired(self) -> None:
            self._write_timer = None
            transport = self.transport  # type: ignore[attr-defined]
            if not transport.is_closing():
                transport.abort()  # nothing more can be sent: drop what the client did not read

    DeadlineProtocol.__name__ = DeadlineProtocol.__qualname__ = f"Deadline{base.__name__}"
    return DeadlineProtocol
