"""The keep-alive HTTP/1.1 client against raw TCP servers on 127.0.0.1 that send exactly the bytes a test scripts."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from servers import http_client
from servers.http_client import MAX_HEAD_BYTES, HttpClient, TransportError, supports

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
PROXY_VARIABLES = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "REQUEST_METHOD"]


@pytest.fixture(autouse=True, params=["asyncio protocol", "anyio streams"])
def connection_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test on both kinds of connection: asyncio's transport (the fast path) and anyio's streams (the
    path off asyncio, e.g. under trio), which share one framer."""
    if request.param == "anyio streams":
        monkeypatch.setattr(http_client, "_asyncio_loop", lambda: None)
    return str(request.param)


@dataclass
class Request:
    """One request as the server read it off the wire."""

    line: str
    headers: dict[str, str]
    body: bytes
    connection: int
    """Which accepted connection (1, 2, ...) it came on."""


@dataclass
class Server:
    """A raw TCP server: its URL, the connections it accepted and every request it read."""

    url: str
    connections: int = 0
    requests: list[Request] = field(default_factory=list)
    closed_by_client: list[int] = field(default_factory=list)
    """Connections on which the server, waiting for a request, read end-of-stream (the client closed its end)."""
    finished: int = 0
    """Connections the server has closed."""


@dataclass
class Peer:
    """The server's end of one accepted connection."""

    number: int
    stream: anyio.abc.ByteStream
    reader: BufferedByteReceiveStream
    server: Server

    async def request(self) -> Request | None:
        """The next request on this connection, or None once the client closed it."""
        try:
            head = await self.reader.receive_until(b"\r\n\r\n", 1 << 20)
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError):
            self.server.closed_by_client.append(self.number)
            return None
        line, *rest = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(":") for h in rest)}
        body = await self.reader.receive_exactly(int(headers.get("content-length", "0")))
        request = Request(line, headers, body, self.number)
        self.server.requests.append(request)
        return request

    async def send(self, data: bytes) -> None:
        await self.stream.send(data)


Handler = Callable[[Peer], Awaitable[None]]


@asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[Server]:
    """Serve ``handler`` on an ephemeral port of 127.0.0.1 until the block exits."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    server = Server(url=f"http://127.0.0.1:{port}")

    async def accept(stream: anyio.abc.ByteStream) -> None:
        server.connections += 1
        peer = Peer(server.connections, stream, BufferedByteReceiveStream(stream), server)
        async with stream:
            try:
                await handler(peer)
            except (anyio.BrokenResourceError, anyio.EndOfStream, anyio.IncompleteRead, anyio.ClosedResourceError):
                pass  # the client went away mid-script: what some tests provoke
        server.finished += 1

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, accept)
        try:
            yield server
        finally:
            tg.cancel_scope.cancel()


def scripted(*responses: bytes, close: bool = False) -> Handler:
    """Answer requests, on whichever connection they come, with ``responses`` in turn; ``close``: close after each."""
    queue = list(responses)

    async def handler(peer: Peer) -> None:
        while await peer.request() is not None:
            await peer.send(queue.pop(0))
            if close:
                return

    return handler


async def closed_by_client(server: Server, connection: int) -> None:
    """Wait until the server saw the client close ``connection``."""
    with anyio.fail_after(10):  # a guard against a hang, sized for a busy machine
        while connection not in server.closed_by_client:
            await anyio.sleep(0.01)


async def test_a_content_length_body_is_read_whole_with_headers_lowercased_and_joined() -> None:
    body = json.dumps({"answer": 42}).encode()
    response = (
        b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Tag: a\r\nx-tag: b\r\nContent-Length: %d\r\n\r\n%s"
        % (len(body), body)
    )
    with anyio.fail_after(5):
        async with serving(scripted(response)) as server, HttpClient(server.url) as http:
            got = await http.get("/things?x=1")
    assert got.status_code == 201 and got.content == body and got.json() == {"answer": 42}
    assert got.headers["content-type"] == "application/json" and got.headers["x-tag"] == "a, b"
    (request,) = server.requests
    assert request.line == "GET /things?x=1 HTTP/1.1"
    assert request.headers["host"] == server.url.removeprefix("http://") and http.requests == 1


async def test_a_chunked_body_with_extensions_and_trailers_is_joined_and_the_connection_reused() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4;name=value\r\nWiki\r\n"
        b"6 ; other\r\npedia \r\n"
        b"E\r\nin chunks.\r\n\r\n\r\n"
        b"0;last\r\nX-Checksum: abc\r\nX-More: 1\r\n\r\n"
    )
    with anyio.fail_after(5):
        async with serving(scripted(chunked, OK)) as server, HttpClient(server.url) as http:
            first = await http.get("/a")
            second = await http.get("/b")
    assert first.content == b"Wikipedia in chunks.\r\n\r\n"
    # The trailers were consumed to their empty line: the next response on the connection is read cleanly.
    assert second.content == b"ok" and server.connections == 1


async def test_a_body_ended_by_the_connection_closing_is_read_whole_and_the_connection_not_reused() -> None:
    body = b"until the end, " + b"x" * 100_000
    response = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body
    with anyio.fail_after(5):
        async with serving(scripted(response, response, close=True)) as server, HttpClient(server.url) as http:
            first = await http.get("/")
            second = await http.get("/")
    assert first.content == second.content == body
    assert server.connections == 2 and [r.connection for r in server.requests] == [1, 2]


async def test_interim_1xx_responses_are_skipped() -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
    with anyio.fail_after(5):
        async with (
            serving(scripted(interim + b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfinal", OK)) as server,
            HttpClient(server.url) as http,
        ):
            got = await http.post("/", json={})
            after = await http.get("/")
    assert got.status_code == 200 and got.content == b"final" and "link" not in got.headers
    assert after.content == b"ok" and server.connections == 1


async def test_head_204_and_304_have_no_body_whatever_their_headers_say() -> None:
    responses = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n",
        b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\n\r\n",
        OK,
    ]
    with anyio.fail_after(5):
        async with serving(scripted(*responses)) as server, HttpClient(server.url) as http:
            head = await http.request("HEAD", "/")
            empty = await http.delete("/thing")
            unchanged = await http.get("/")
            last = await http.get("/")
    assert (head.status_code, head.content, head.headers["content-length"]) == (200, b"", "10")
    assert (empty.status_code, empty.content) == (204, b"")
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    # Nothing after a bodiless response was taken for its body: the fourth response is intact.
    assert last.content == b"ok" and server.connections == 1


async def test_sequential_requests_reuse_one_connection() -> None:
    with anyio.fail_after(5):
        async with serving(scripted(OK, OK, OK)) as server, HttpClient(server.url) as http:
            for path in ("/1", "/2", "/3"):
                assert (await http.get(path)).content == b"ok"
    assert server.connections == 1 and [r.line.split()[1] for r in server.requests] == ["/1", "/2", "/3"]
    assert http.requests == 3


async def test_an_idle_connection_older_than_keepalive_expiry_is_not_reused() -> None:
    with anyio.fail_after(30):
        # an expiry of a second: "at once" stays within it even on a busy machine
        async with serving(scripted(OK, OK, OK)) as server, HttpClient(server.url, keepalive_expiry=1.0) as http:
            await http.get("/")
            await http.get("/")  # at once: the same connection
            await anyio.sleep(1.2)
            await http.get("/")  # after the expiry: a new one
            await closed_by_client(server, 1)  # the expired connection was closed, not leaked
    assert [r.connection for r in server.requests] == [1, 1, 2]


async def test_connection_close_from_the_server_is_honoured() -> None:
    closing = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"
    with anyio.fail_after(5):
        async with serving(scripted(closing, OK)) as server, HttpClient(server.url) as http:
            await http.get("/")
            await closed_by_client(server, 1)  # the server left its end open; the client closed its own
            await http.get("/")
    assert [r.connection for r in server.requests] == [1, 2]


async def test_an_http_1_0_response_is_not_kept_alive() -> None:
    with anyio.fail_after(5):
        async with (
            serving(scripted(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", OK)) as server,
            HttpClient(server.url) as http,
        ):
            await http.get("/")
            await http.get("/")
    assert [r.connection for r in server.requests] == [1, 2]


@pytest.mark.parametrize(
    "partial",
    [
        b"HTTP/1.1 200 OK\r\nContent-Le",
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part of it",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n",
    ],
    ids=["in-head", "in-body", "in-chunk", "between-chunks"],
)
async def test_a_server_closing_mid_response_is_a_transport_error(partial: bytes) -> None:
    with anyio.fail_after(5):
        async with serving(scripted(partial, partial, close=True)) as server, HttpClient(server.url) as http:
            with pytest.raises(TransportError, match=r"GET /x: the connection closed before a whole response arrived"):
                await http.get("/x")
            # The broken connection was not pooled: the next request opens a new one.
            with pytest.raises(TransportError):
                await http.get("/x")
    assert server.connections == 2 and http.requests == 0


async def test_a_request_whose_connection_closes_before_its_answer_fails_and_is_not_retried() -> None:
    async def answer_once(peer: Peer) -> None:
        await peer.request()
        await peer.send(OK)
        await peer.request()  # read, never answered: the server goes away with the request

    with anyio.fail_after(5):
        async with serving(answer_once) as server, HttpClient(server.url) as http:
            await http.get("/")
            # Retrying could repeat a tools/call, which is not idempotent: the caller sees the failure.
            with pytest.raises(TransportError, match="closed before a whole response"):
                await http.post("/", json={"method": "tools/call"})
    assert server.connections == 1 and len(server.requests) == 2 and http.requests == 1


async def test_an_idle_connection_the_server_closed_is_not_written_to_once_its_end_was_seen(connection_kind: str) -> None:
    """On asyncio's transport the client sees the server's end of an idle connection and opens another: the
    request was never sent, so this is no retry. Through anyio's streams nothing reads an idle connection, so
    the request fails on it and is not retried."""
    with anyio.fail_after(5):
        async with serving(scripted(OK, OK, close=True)) as server, HttpClient(server.url) as http:
            await http.get("/")
            (idle,) = [c for connections in http._idle.values() for c in connections]  # noqa: SLF001
            with anyio.fail_after(2):
                while not server.finished or (connection_kind == "asyncio protocol" and idle.usable()):
                    await anyio.sleep(0.01)
            if connection_kind == "asyncio protocol":
                assert (await http.post("/", json={"method": "tools/call"})).content == b"ok"
                assert server.connections == 2 and http.requests == 2
            else:
                with pytest.raises(TransportError, match="closed before a whole response"):
                    await http.post("/", json={"method": "tools/call"})
                assert server.connections == 1 and http.requests == 1
    assert len(server.requests) == 1 + (connection_kind == "asyncio protocol")


async def test_a_response_that_is_not_http_is_a_transport_error() -> None:
    with anyio.fail_after(5):
        async with serving(scripted(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")) as server, HttpClient(server.url) as http:
            with pytest.raises(TransportError, match="not an HTTP response: 'SSH-2.0-OpenSSH_9.6'"):
                await http.get("/")


async def test_a_response_head_over_the_limit_is_a_transport_error() -> None:
    huge = b"HTTP/1.1 200 OK\r\n" + b"".join(
        b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000) for i in range(MAX_HEAD_BYTES // 1000 + 8)
    )
    with anyio.fail_after(5):
        async with serving(scripted(huge + b"Content-Length: 2\r\n\r\nok")) as server, HttpClient(server.url) as http:
            with pytest.raises(TransportError, match=f"response head larger than {MAX_HEAD_BYTES} bytes"):
                await http.get("/")


@pytest.mark.parametrize(
    "length", [b"abc", b"-1", b"1.5", b"0x10", b"\xb2"], ids=["word", "negative", "decimal", "hex", "superscript-two"]
)
async def test_a_malformed_content_length_is_a_transport_error(length: bytes) -> None:
    with anyio.fail_after(5):
        async with (
            serving(scripted(b"HTTP/1.1 200 OK\r\nContent-Length: " + length + b"\r\n\r\n12")) as server,
            HttpClient(server.url) as http,
        ):
            with pytest.raises(TransportError, match="malformed Content-Length"):
                await http.get("/")


@pytest.mark.parametrize(
    "size",
    [b"zz", b"", b"2 2", b"-2", b"1_0"],
    ids=["not-hex", "empty", "two-numbers", "negative", "underscore"],
)
async def test_a_malformed_chunk_size_is_a_transport_error(size: bytes) -> None:
    response = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\nok\r\n0\r\n\r\n"
    with anyio.fail_after(5):
        async with serving(scripted(response)) as server, HttpClient(server.url, timeout=0.3) as http:
            with pytest.raises(TransportError, match="malformed chunk size"):
                await http.get("/")


async def test_a_refused_connection_is_a_transport_error_naming_host_and_port() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # The port is free again and nothing listens on it.
    with anyio.fail_after(5):
        async with HttpClient() as http:
            with pytest.raises(TransportError, match=f"cannot connect to 127.0.0.1:{port}"):
                await http.get(f"http://127.0.0.1:{port}/")
    assert http.requests == 0


async def test_no_answer_within_the_timeout_is_a_timeout_error_and_closes_the_connection() -> None:
    async def silent(peer: Peer) -> None:
        await peer.request()
        await peer.request()  # never answers; waits for the client to give up

    with anyio.fail_after(5):
        async with serving(silent) as server, HttpClient(server.url, timeout=0.1) as http:
            with pytest.raises(TimeoutError):
                await http.get("/")
            with pytest.raises(TimeoutError):
                await http.get("/", timeout=0.05)  # the per-request timeout wins
            await closed_by_client(server, 1)
            await closed_by_client(server, 2)
    assert server.connections == 2 and http.requests == 0


@pytest.mark.parametrize(
    "headers",
    [
        {"x-evil": "a\r\nx-injected: 1"},
        {"x-evil": "a\nb"},
        {"x-evil\r\nx-injected": "1"},
        {"x:evil": "1"},
        {"x-evil": "a\0"},
    ],
    ids=["crlf-value", "lf-value", "crlf-name", "colon-name", "nul-value"],
)
async def test_a_header_with_a_line_break_is_refused_before_anything_is_sent(headers: dict[str, str]) -> None:
    with anyio.fail_after(5):
        async with serving(scripted(OK)) as server, HttpClient(server.url) as http:
            with pytest.raises(ValueError, match="invalid HTTP header"):
                await http.get("/", headers=headers)
            with pytest.raises(ValueError, match="invalid HTTP header"):
                HttpClient(server.url, headers=headers)
            assert (await http.get("/")).content == b"ok"  # the client is still fine
    assert len(server.requests) == 1 and server.connections == 1


@pytest.mark.parametrize(
    "url", ["https://127.0.0.1/x", "ftp://127.0.0.1/x", "http:///no-host", "/relative-without-base"]
)
async def test_a_url_other_than_http_is_a_value_error(url: str) -> None:
    async with HttpClient() as http:
        with pytest.raises(ValueError, match="only http:// URLs"):
            await http.get(url)
    assert not supports(url)


def test_supports_plain_http_unless_a_proxy_is_configured_for_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert (
        supports("http://127.0.0.1:8765/control") and supports("http://example.com/") and supports("http://[::1]:80/")
    )
    assert not supports("https://example.com/") and not supports("not a url")

    monkeypatch.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    assert not supports("http://127.0.0.1:8765/control") and not supports("http://example.com/")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    assert supports("http://127.0.0.1:8765/control") and supports("http://localhost:1/")
    assert not supports("http://example.com/")

    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.setenv("ALL_PROXY", "socks5://proxy.internal:1080")
    assert not supports("http://example.com/") and supports("http://127.0.0.1:8765/")


async def test_a_json_body_is_utf8_without_escapes_with_its_content_type_and_length() -> None:
    payload = {"name": "Zoë", "note": "naïve → ✓", "n": [1, 2.5, None, True]}
    with anyio.fail_after(5):
        async with (
            serving(scripted(OK, OK, OK)) as server,
            HttpClient(server.url, headers={"authorization": "Bearer t"}) as http,
        ):
            await http.post("/json", json=payload)
            await http.post("/typed", json=payload, headers={"content-type": "application/vnd.x+json"})
            await http.post("/empty")
    as_json, typed, empty = server.requests
    assert as_json.body == json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert "Zoë".encode() in as_json.body and b"\\u" not in as_json.body and json.loads(as_json.body) == payload
    assert as_json.headers["content-type"] == "application/json"
    assert (
        as_json.headers["content-length"] == str(len(as_json.body)) and as_json.headers["authorization"] == "Bearer t"
    )
    assert typed.headers["content-type"] == "application/vnd.x+json"  # a caller's content type is kept
    assert empty.headers["content-length"] == "0" and empty.body == b""


async def test_concurrent_requests_respect_max_connections() -> None:
    in_flight = peak = 0

    async def slow(peer: Peer) -> None:
        nonlocal in_flight, peak
        while await peer.request() is not None:
            in_flight += 1
            peak = max(peak, in_flight)
            await anyio.sleep(0.05)
            in_flight -= 1
            await peer.send(OK)

    results: list[bytes] = []
    with anyio.fail_after(5):
        async with serving(slow) as server, HttpClient(server.url, max_connections=2) as http:

            async def one() -> None:
                results.append((await http.get("/")).content)

            async with anyio.create_task_group() as tg:
                for _ in range(6):
                    tg.start_soon(one)
    assert results == [b"ok"] * 6 and len(server.requests) == 6
    assert peak == 2 and server.connections == 2  # two at a time, on two reused connections


@pytest.mark.parametrize(
    "response",
    [
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\nhe\r\n3\r\nllo\r\n0\r\nX-Trailer: t\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    ],
    ids=["interim then length", "chunks and trailers", "chunks"],
)
async def test_a_response_arriving_a_byte_at_a_time_is_read_whole_and_the_connection_reused(response: bytes) -> None:
    async def trickle(peer: Peer) -> None:
        while await peer.request() is not None:
            for i in range(len(response)):
                await peer.send(response[i : i + 1])
                await anyio.lowlevel.checkpoint()

    async with serving(trickle) as server, HttpClient(server.url) as http:
        for _ in range(2):
            got = await http.get("/")
            assert (got.status_code, got.content) == (200, b"hello")
    assert server.connections == 1


async def test_bytes_after_a_whole_response_mean_the_connection_is_not_reused() -> None:
    async with serving(scripted(OK + b"HTTP/1.1 200 OK\r\n", OK)) as server, HttpClient(server.url) as http:
        assert (await http.get("/")).content == b"ok"
        assert (await http.get("/")).content == b"ok"
    assert server.connections == 2
