"""A small HTTP/1.1 client for toolgym's own clients of a toolgym server: keep-alive connections, nothing more.

Why not httpx: per POST to a toolgym server on the same machine, measured client CPU (2 cores, loaded):
httpx 0.29 1.2-1.7 ms (its httpcore 1.0 retries a failed ``import sniffio`` four times per request when
sniffio is absent: +1.7 ms), httpx2 1.2-1.4 ms, the SDK ``Client`` on httpx2 2.5-3.4 ms, this client
0.2 ms. An oracle episode is 6-7 requests, so the client alone was most of an HTTP episode's cost.

What it does: one origin per connection, one request at a time per connection, the request written in one
``send``; responses framed by ``Content-Length``, chunked transfer coding, or the end of the connection (one
framer, :class:`Framer`, for both kinds of connection: straight on asyncio's transport when the loop is
asyncio's, through anyio's streams otherwise — the first costs ~0.15 ms less client CPU per request);
idle connections kept for :data:`KEEPALIVE_EXPIRY` seconds, less than any server it talks to keeps them
(toolgym: 75 s; uvicorn's default: 5 s), so a request is never written on a connection the server is
closing. A failed request is never retried here (a ``tools/call`` is not idempotent): callers see a
:class:`TransportError` and decide.

What it does not: TLS, proxies, redirects, cookies, compression. :func:`supports` says whether a URL is in
scope (``http://`` and no proxy configured for its host); anything else is for httpx2 / the SDK client.
"""

from __future__ import annotations

import asyncio
import json as _json
import time
import urllib.request
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, cast
from urllib.parse import urlsplit

import anyio
import anyio.abc

from servers.http_framing import MAX_HEAD_BYTES, Framer, Response, TransportError

__all__ = ["KEEPALIVE_EXPIRY", "MAX_HEAD_BYTES", "HttpClient", "Response", "TransportError", "supports"]

KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle connection is kept for reuse: below every server keep-alive it meets (uvicorn's default 5 s)."""

_Origin = tuple[str, int]

_BROKEN = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError)
"""What a connection that broke mid-exchange raises (through anyio's streams or asyncio's transport)."""


@lru_cache(maxsize=1024)
def _split(url: str) -> tuple[_Origin, str, str]:
    """(host, port), request target and Host header of an ``http://`` URL."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"only http:// URLs are served by this client, not {url!r}")
    port = parts.port or 80
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    host = parts.hostname
    shown = f"[{host}]" if ":" in host else host
    return (host, port), target, shown if parts.port is None else f"{shown}:{port}"


def supports(url: str) -> bool:
    """Whether ``url`` is one this client serves: ``http://``, and no proxy configured for its host."""
    try:
        (host, _), _, _ = _split(url)
    except ValueError:
        return False
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get("http") or proxies.get("all")):
        return True
    return bool(urllib.request.proxy_bypass_environment(host, proxies))


class _Connection:
    """A keep-alive connection through anyio's streams (any backend): the fallback off asyncio."""

    __slots__ = ("stream", "idle_since")

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self.stream = stream
        self.idle_since = time.monotonic()

    def usable(self) -> bool:
        """Whether this connection may carry a request of the running event loop."""
        return True

    async def exchange(self, request: bytes, method: str, timeout: float) -> tuple[Response, bool]:
        """Send one request, read its whole response; returns it and whether the connection can be reused."""
        with anyio.fail_after(timeout):
            await self.stream.send(request)
            framer = Framer(method)
            while True:
                try:
                    data = await self.stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return framer.eof(), False
                response = framer.feed(data)
                if response is not None:
                    return response, framer.keep

    async def close(self) -> None:
        """Close the connection at once."""
        await anyio.aclose_forcefully(self.stream)


class _Protocol(asyncio.Protocol):
    """A keep-alive connection straight on asyncio's transport: a request is one ``write`` and one future.

    Why not anyio's stream here: per request, its buffered reads, locks and cancel scope cost ~0.15 ms of
    client CPU (measured against a bare Starlette app, client + server CPU per request: 0.35 ms through anyio,
    0.20 ms like this, 0.16 ms for a bare protocol with no timeout or pool), and an episode over HTTP is ~7 requests.
    """

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()
        self.framer: Framer | None = None
        self.waiter: asyncio.Future[Response] | None = None
        self.lost = False
        self.idle_since = time.monotonic()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not an isinstance check: uvloop's TCP transport has write/abort/is_closing but is no asyncio.Transport
        # subclass, and a user's own loop (an RL trainer under uvloop) must work as asyncio's does.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        framer, waiter = self.framer, self.waiter
        if framer is None or waiter is None or waiter.done():
            self.lost = True  # bytes outside any exchange: never reuse this connection
            return
        try:
            response = framer.feed(data)
        except TransportError as exc:
            waiter.set_exception(exc)
            return
        if response is not None:
            waiter.set_result(response)

    def eof_received(self) -> bool:
        self._ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended()

    def _ended(self) -> None:
        self.lost = True
        framer, waiter = self.framer, self.waiter
        if framer is not None and waiter is not None and not waiter.done():
            try:
                waiter.set_result(framer.eof())
            except TransportError as exc:
                waiter.set_exception(exc)

    def usable(self) -> bool:
        """Whether this connection may carry a request of the running event loop."""
        transport = self.transport
        return not self.lost and transport is not None and not transport.is_closing() and _asyncio_loop() is self.loop

    async def exchange(self, request: bytes, method: str, timeout: float) -> tuple[Response, bool]:
        """Send one request, read its whole response; returns it and whether the connection can be reused."""
        assert self.transport is not None
        waiter = self.waiter = self.loop.create_future()
        framer = self.framer = Framer(method)
        timer = self.loop.call_later(timeout, _expire, waiter)
        try:
            self.transport.write(request)
            response = await waiter
        finally:
            timer.cancel()
            self.waiter = self.framer = None
        return response, framer.keep and not self.lost

    async def close(self) -> None:
        """Close the connection at once."""
        if self.transport is not None:
            self.transport.abort()


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio event loop, or None under another anyio backend (trio): then anyio's streams."""
    return asyncio._get_running_loop()  # the public get_running_loop raises instead


def _expire(waiter: asyncio.Future[Response]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


def _header_lines(headers: Mapping[str, str]) -> str:
    lines = []
    for name, value in headers.items():
        if any(c in name or c in value for c in "\r\n\0") or ":" in name:
            raise ValueError(f"invalid HTTP header {name!r}")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines)


class HttpClient:
    """Keep-alive HTTP/1.1 connections to ``http://`` servers; ``request`` sends one request and reads it whole.

    Args:
        base_url: prefix of relative request URLs (e.g. ``http://127.0.0.1:8000/control``).
        headers: sent with every request (e.g. the control API's ``Authorization``).
        timeout: seconds one request may take, connecting included.
        max_connections: connections open at once (further requests wait for one).
        keepalive_expiry: seconds an idle connection stays reusable.

    Use as ``async with HttpClient(...) as http`` or call :meth:`aclose`. Closing ends idle connections;
    requests in flight keep theirs until they finish.
    """

    def __init__(
        self,
        base_url: str = "",
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        max_connections: int = 100,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.keepalive_expiry = keepalive_expiry
        self._headers = _header_lines({"user-agent": "toolgym", **(headers or {})})
        self._idle: dict[_Origin, list[_Connection | _Protocol]] = {}
        self._limit = anyio.CapacityLimiter(max_connections)
        self.requests = 0
        """Requests sent so far (tests and benchmarks read it)."""

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every idle connection."""
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                await connection.close()

    async def get(self, url: str, **options: Any) -> Response:
        """``request("GET", url, ...)``."""
        return await self.request("GET", url, **options)

    async def post(self, url: str, **options: Any) -> Response:
        """``request("POST", url, ...)``."""
        return await self.request("POST", url, **options)

    async def delete(self, url: str, **options: Any) -> Response:
        """``request("DELETE", url, ...)``."""
        return await self.request("DELETE", url, **options)

    async def request(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Response:
        """Send one request and read its response whole (any status: callers check ``status_code``).

        Raises:
            TransportError: the server could not be reached, or the connection broke mid-exchange.
            TimeoutError: ``timeout`` seconds passed.
            ValueError: not an ``http://`` URL, or a header with a line break.
        """
        origin, target, host = _split(url if "://" in url else f"{self.base_url}{url}")
        extra = dict(headers) if headers else {}
        if json is not None:
            content = _json.dumps(json, separators=(",", ":"), ensure_ascii=False).encode()
            extra.setdefault("content-type", "application/json")
        if content is not None or method in ("POST", "PUT", "PATCH"):
            extra["content-length"] = str(len(content or b""))
        head = f"{method} {target} HTTP/1.1\r\nhost: {host}\r\n{self._headers}{_header_lines(extra)}\r\n"
        data = head.encode("latin-1") + (content or b"")
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        try:
            self._limit.acquire_nowait()
        except anyio.WouldBlock:
            with anyio.fail_after(limit):
                await self._limit.acquire()
        try:
            connection = await self._checkout(origin, deadline)
            try:
                response, keep = await connection.exchange(data, method, max(0.0, deadline - time.monotonic()))
            except BaseException as exc:
                await connection.close()
                if isinstance(exc, TransportError):
                    raise TransportError(f"{method} {url}: {exc}") from None
                if isinstance(exc, _BROKEN):
                    closed = "the connection closed before a whole response arrived"
                    raise TransportError(f"{method} {url}: {closed}") from exc
                raise
            self.requests += 1
            if keep:
                await self._checkin(origin, connection)
            else:
                await connection.close()
            return response
        finally:
            self._limit.release()

    async def _checkin(self, origin: _Origin, connection: _Connection | _Protocol) -> None:
        now = connection.idle_since = time.monotonic()
        idle = self._idle.setdefault(origin, [])
        # Oldest first: connections left idle by a burst are closed here, not kept until aclose.
        while idle and now - idle[0].idle_since >= self.keepalive_expiry:
            await idle.pop(0).close()
        idle.append(connection)

    async def _checkout(self, origin: _Origin, deadline: float) -> _Connection | _Protocol:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if now - connection.idle_since < self.keepalive_expiry and connection.usable():
                return connection
            await connection.close()
        try:
            with anyio.fail_after(max(0.0, deadline - now)):
                loop = _asyncio_loop()
                if loop is not None:
                    _, protocol = await loop.create_connection(_Protocol, *origin)
                    return protocol
                return _Connection(await anyio.connect_tcp(*origin))
        except OSError as exc:
            raise TransportError(f"cannot connect to {origin[0]}:{origin[1]}: {exc}") from exc
