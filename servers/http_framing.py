"""Reading one HTTP/1.1 response out of bytes as they arrive: the framing rules of :mod:`servers.http_client`.

Both of that client's kinds of connection (asyncio's transport, anyio's streams) feed a :class:`Framer`, so
what counts as a whole response, and what is malformed, is decided in one place.
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_HEAD_BYTES", "Framer", "Response", "TransportError"]

MAX_HEAD_BYTES = 64 * 1024
"""Largest response head (status line and headers) accepted."""


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


class Framer:
    """One response read out of bytes as they arrive: the head (1xx interim responses skipped), then a body
    framed by ``Content-Length``, chunked transfer coding, or the end of the connection.

    Both kinds of connection feed it, so the framing rules live once. Feeding a whole response costs one
    pass; a response split across reads resumes where it stopped.
    """

    __slots__ = ("body", "buffer", "chunked", "headers", "keep", "length", "method", "scanned", "status", "version")

    def __init__(self, method: str) -> None:
        self.method = method
        self.buffer = bytearray()
        self.status = 0
        self.version = ""
        self.headers: dict[str, str] | None = None
        self.length: int | None = None
        """The body's length (``Content-Length``; 0 for HEAD, 204 and 304), or None when framed otherwise."""
        self.chunked = False
        self.body = bytearray()
        self.keep = False
        self.scanned = 0
        """Bytes of ``buffer`` already searched for the end of a head (a head trickling in is not searched anew)."""

    def feed(self, data: bytes) -> Response | None:
        """Take more bytes; returns the response once it is whole.

        Raises:
            TransportError: not an HTTP response, a head over ``MAX_HEAD_BYTES``, a malformed length or chunk.
        """
        self.buffer += data
        while self.headers is None:
            end = self.buffer.find(b"\r\n\r\n", self.scanned)
            if end < 0:
                if len(self.buffer) > MAX_HEAD_BYTES:
                    raise TransportError(f"response head larger than {MAX_HEAD_BYTES} bytes")
                self.scanned = max(0, len(self.buffer) - 3)
                return None
            self.scanned = 0
            if end + 4 > MAX_HEAD_BYTES:
                raise TransportError(f"response head larger than {MAX_HEAD_BYTES} bytes")
            status, version, headers = _parse_head(bytes(self.buffer[:end]))
            del self.buffer[: end + 4]
            if 100 <= status < 200:
                continue  # an interim response: the final one follows
            self._start(status, version, headers)
        return self._body()

    def _start(self, status: int, version: str, headers: dict[str, str]) -> None:
        self.status, self.version, self.headers = status, version, headers
        self.keep = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
        if self.method == "HEAD" or status in (204, 304):
            self.length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self.chunked = True
        elif (length := headers.get("content-length")) is not None:
            if not length.isdecimal():  # isdigit() also accepts "²", which int() refuses
                raise TransportError(f"malformed Content-Length {length[:40]!r}")
            self.length = int(length)
        else:
            self.keep = False  # ended by the connection closing

    def _body(self) -> Response | None:
        assert self.headers is not None
        if self.length is not None:
            if len(self.buffer) < self.length:
                return None
            body = bytes(self.buffer[: self.length])
            if len(self.buffer) > self.length:
                self.keep = False  # bytes nobody asked for: the connection's framing cannot be trusted
            return self._finish(body)
        if self.chunked:
            return self._chunks()
        return None  # until the connection closes

    def _chunks(self) -> Response | None:
        buffer = self.buffer
        while True:
            end = buffer.find(b"\r\n")
            if end < 0:
                if len(buffer) > 1024:
                    raise TransportError("malformed chunk size: a line longer than 1024 bytes")
                return None
            line = bytes(buffer[:end])
            token = line.split(b";", 1)[0].strip()
            # Hex digits only: int(x, 16) would also take a sign or underscores ("-2", "1_0") and then wait
            # for bytes that never come.
            if not token or token.strip(b"0123456789abcdefABCDEF"):
                raise TransportError(f"malformed chunk size {line[:40]!r}")
            size = int(token, 16)
            if size == 0:
                start = end + 2  # then trailers, up to the empty line
                if buffer.startswith(b"\r\n", start):
                    stop = start + 2
                else:
                    stop = buffer.find(b"\r\n\r\n", max(start, self.scanned)) + 4
                if stop < start + 2:
                    if len(buffer) > MAX_HEAD_BYTES:
                        raise TransportError(f"response trailers larger than {MAX_HEAD_BYTES} bytes")
                    self.scanned = max(0, len(buffer) - 3)
                    return None
                if len(buffer) > stop:
                    self.keep = False  # bytes nobody asked for
                return self._finish(bytes(self.body))
            if len(buffer) < end + 2 + size + 2:
                return None
            self.body += buffer[end + 2 : end + 2 + size]
            del buffer[: end + 2 + size + 2]

    def eof(self) -> Response:
        """The connection ended: the response, if the end of the connection is what frames it.

        Raises:
            TransportError: the connection ended before a whole response arrived.
        """
        if self.headers is not None and self.length is None and not self.chunked:
            return self._finish(bytes(self.buffer), keep=False)
        raise TransportError("the connection closed before a whole response arrived")

    def _finish(self, body: bytes, keep: bool | None = None) -> Response:
        assert self.headers is not None
        if keep is not None:
            self.keep = keep
        return Response(self.status, self.headers, body)


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
