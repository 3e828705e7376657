"""A small HTTP/1.1 client for toolgym's own clients of a toolgym server: keep-alive connections, nothing more.

Why not httpx: per POST to a toolgym server on the same machine, measured client CPU (2 cores, loaded):
httpx 0.29 1.2-1.7 ms (its httpcore 1.0 retries a failed ``import sniffio`` four times per request when
sniffio is absent: +1.7 ms), httpx2 1.2-1.4 ms, the SDK ``Client`` on httpx2 2.5-3.4 ms, this client
0.2 ms. An oracle episode is 6-7 requests, so the client alone was most of an HTTP episode's cost.

What it does: one origin per connection, one request at a time per connection, the request written in one
``send``; responses framed by ``Content-Length``, chunked transfer coding, or the end of the connection;
idle connections kept for :data:`KEEPALIVE_EXPIRY` seconds, less than any server it talks to keeps them
(toolgym: 75 s; uvicorn's default: 5 s), so a request is never written on a connection the server is
closing. A failed request is never retried here (a ``tools/call`` is not idempotent): callers see a
:class:`TransportError` and decide.

What it does not: TLS, proxies, redirects, cookies, compression. :func:`supports` says whether a URL is in
scope (``http://`` and no proxy configured for its host); anything else is for httpx2 / the SDK client.
"""

from __future__ import annotations

import json as _json
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = ["HttpClient", "Response", "TransportError", "supports", "KEEPALIVE_EXPIRY"]

KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle connection is kept for reuse: below every server keep-alive it meets (uvicorn's default 5 s)."""

MAX_HEAD_BYTES = 64 * 1024
"""Largest response head (status line and headers) accepted."""

_Origin = tuple[str, int]


class TransportError(ConnectionError):
    """The server could not be reached, or the connection broke before a whole response arrived."""


@dataclass
class Response:
    """One HTTP response, read whole."""

    status_code: int
    headers: dict[str, str]
    """Header names in lower case; repeated headers joined with ``", "``."""
    content: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return _json.loads(self.content)

    @property
    def text(self) -> str:
        """The body as text (UTF-8)."""
        return self.content.decode("utf-8", errors="replace")


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


@dataclass
class _Connection:
    stream: anyio.abc.ByteStream
    reader: BufferedByteReceiveStream
    idle_since: float = field(default_factory=time.monotonic)

    async def exchange(self, request: bytes, method: str) -> tuple[Response, bool]:
        """Send one request, read its whole response; returns it and whether the connection can be reused."""
        await self.stream.send(request)
        while True:
            status, version, headers = _parse_head(await self.reader.receive_until(b"\r\n\r\n", MAX_HEAD_BYTES))
            if not 100 <= status < 200:
                break
        keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        if method == "HEAD" or status in (204, 304):
            return Response(status, headers, b""), keep
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return Response(status, headers, await self._chunked()), keep
        length = headers.get("content-length")
        if length is not None:
            if not length.isdecimal():  # isdigit() also accepts "²", which int() refuses
                raise TransportError(f"malformed Content-Length {length[:40]!r}")
            return Response(status, headers, await self.reader.receive_exactly(int(length))), keep
        return Response(status, headers, await self._until_closed()), False

    async def _chunked(self) -> bytes:
        body = bytearray()
        while True:
            try:
                line = await self.reader.receive_until(b"\r\n", 1024)
            except anyio.DelimiterNotFound:
                raise TransportError("malformed chunk size: a line longer than 1024 bytes") from None
            token = line.split(b";", 1)[0].strip()
            # Hex digits only: int(x, 16) would also take a sign or underscores ("-2", "1_0") and then wait
            # for bytes that never come.
            if not token or token.strip(b"0123456789abcdefABCDEF"):
                raise TransportError(f"malformed chunk size {line[:40]!r}")
            size = int(token, 16)
            if size == 0:
                while await self.reader.receive_until(b"\r\n", MAX_HEAD_BYTES):  # trailers, up to the empty line
                    pass
                return bytes(body)
            body += await self.reader.receive_exactly(size)
            await self.reader.receive_exactly(2)

    async def _until_closed(self) -> bytes:
        body = bytearray(self.reader.buffer)
        try:
            while True:
                body += await self.stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            return bytes(body)

    async def close(self) -> None:
        await anyio.aclose_forcefully(self.stream)


def _parse_head(head: bytes) -> tuple[int, str, dict[str, str]]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/") or not code.isdigit():
        raise TransportError(f"not an HTTP response: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            continue
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return int(code), version, headers


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
        self._idle: dict[_Origin, list[_Connection]] = {}
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
        with anyio.fail_after(self.timeout if timeout is None else timeout):
            async with self._limit:
                connection = await self._checkout(origin)
                try:
                    response, keep = await connection.exchange(data, method)
                except BaseException as exc:
                    await connection.close()
                    if isinstance(exc, (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError)):
                        raise TransportError(f"{method} {url}: the connection closed before a whole response arrived") from exc
                    if isinstance(exc, anyio.DelimiterNotFound):
                        raise TransportError(f"{method} {url}: response head larger than {MAX_HEAD_BYTES} bytes") from exc
                    raise
                self.requests += 1
                if keep:
                    await self._checkin(origin, connection)
                else:
                    await connection.close()
                return response

    async def _checkin(self, origin: _Origin, connection: _Connection) -> None:
        now = connection.idle_since = time.monotonic()
        idle = self._idle.setdefault(origin, [])
        # Oldest first: connections left idle by a burst are closed here, not kept until aclose.
        while idle and now - idle[0].idle_since >= self.keepalive_expiry:
            await idle.pop(0).close()
        idle.append(connection)

    async def _checkout(self, origin: _Origin) -> _Connection:
        idle = self._idle.get(origin)
        now = time.monotonic()
        while idle:
            connection = idle.pop()
            if now - connection.idle_since < self.keepalive_expiry:
                return connection
            await connection.close()
        try:
            stream = await anyio.connect_tcp(*origin)
        except OSError as exc:
            raise TransportError(f"cannot connect to {origin[0]}:{origin[1]}: {exc}") from exc
        return _Connection(stream, BufferedByteReceiveStream(stream))
