"""The lean MCP client and ServerClient against a real toolgym HTTP server, compared with the SDK's ``mcp.Client``."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from servers.environment import Environment
from servers.episode_client import PROTOCOL_VERSION, EpisodeClient, ServerListing, _message, fetch_listing
from servers.http import HTTP_PROTOCOL, HttpServer, running_http
from servers.http_client import HttpClient, _Connection, _Protocol
from servers.mcp_server import EPISODE_NOT_FOUND
from servers.server_client import ServerClient
from servers.tools import ToolContext, tool
from tests.clients.toyenv import environment
from tests.toy_env.fixture import fixture
from tests.toy_env.tools import TOOLS

PROXY_VARIABLES = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "REQUEST_METHOD"]


async def create(http: HttpClient, server: HttpServer, task: str = "pay_back", seed: int = 0) -> dict[str, Any]:
    """A task episode through the control API, with its oracle."""
    response = await http.post(
        f"{server.control_url}/episodes",
        json={"task": task, "seed": seed, "oracle": True},
        headers=server.control_headers,
    )
    assert response.status_code == 201, response.text
    return response.json()


def plays(created: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Calls covering success, a domain refusal, invalid arguments and an unknown tool, then the oracle."""
    payer = created["oracle"][0]["arguments"]["from_account"]
    return [
        ("list_accounts", {}),
        ("get_account", {"account_id": payer}),
        ("get_account", {"account_id": "acc-999"}),  # a tool error: no such account
        ("transfer", {"from_account": payer}),  # invalid arguments: fields missing
        ("transfer", {"from_account": payer, "to_account": "acc-002", "amount": 5}),  # invalid arguments: a number
        ("no_such_tool", {}),
        *[(step["tool"], step["arguments"]) for step in created["oracle"]],
        ("list_accounts", {}),
    ]


def seen(result: types.CallToolResult) -> tuple[Any, ...]:
    """What an agent sees of a result."""
    return [c.model_dump(mode="json") for c in result.content], result.structured_content, result.is_error


@pytest.fixture
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy configured (the tests that want one set it)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


async def test_fetch_listing_has_the_tools_the_sdk_client_lists(no_proxy: pytest.MonkeyPatch) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, HttpClient() as http:
            url = (await create(http, server))["mcp_url"]
            listing = await fetch_listing(http, url)
            async with Client(url) as client:
                sdk = await client.list_tools()
                assert client.protocol_version == PROTOCOL_VERSION
            lean = EpisodeClient(http, url, listing)
            sent = http.requests
            listed = await lean.list_tools()
            assert http.requests == sent  # listed once per server, not per client
    assert [t.model_dump(mode="json") for t in listing.tools] == [t.model_dump(mode="json") for t in sdk.tools]
    assert {t.name for t in listing.tools} == {
        "list_accounts",
        "get_account",
        "transfer",
        "submit_answer",
        "flaky_balance",
    }
    assert listed.tools == listing.tools and listed.tools is not listing.tools
    assert PROTOCOL_VERSION in listing.discover.supported_versions
    assert lean.instructions == listing.instructions == environment.instructions
    assert listing.header_maps == {}  # no toy tool mirrors an argument into a header


async def test_call_tool_results_equal_the_sdk_clients_on_twin_episodes(no_proxy: pytest.MonkeyPatch) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, HttpClient() as http:
            by_sdk, by_lean = await create(http, server), await create(http, server)
            assert by_sdk["start_hash"] == by_lean["start_hash"] and by_sdk["oracle"] == by_lean["oracle"]
            calls = plays(by_sdk)
            async with Client(by_sdk["mcp_url"]) as client:
                expected = [seen(await client.call_tool(name, arguments)) for name, arguments in calls]
            lean = EpisodeClient(http, by_lean["mcp_url"], await fetch_listing(http, by_lean["mcp_url"]))
            got = [seen(await lean.call_tool(name, arguments)) for name, arguments in calls]
            worlds = [server.manager.get(created["id"]).world.hash() for created in (by_sdk, by_lean)]
            recorded = [c.tool for c in server.manager.get(by_lean["id"]).record.tool_calls]
    assert got == expected
    assert [is_error for _, _, is_error in got] == [False, False, True, True, True, True, False, False, False]
    assert '"error":"account_not_found"' in got[2][0][0]["text"] and got[2][1] is None
    assert (
        '"error":"invalid_arguments"' in got[3][0][0]["text"] and '"error":"invalid_arguments"' in got[4][0][0]["text"]
    )
    assert got[6][1]["id"] == "tr-0001"  # the oracle's transfer, structured
    assert worlds[0] == worlds[1] != by_sdk["start_hash"]  # the same calls left the same world
    assert recorded[-3:] == ["transfer", "submit_answer", "list_accounts"]


@tool(pure=False)  # its wait is the point: never answered from memory
async def slow_echo(ctx: ToolContext, text: str) -> str:
    """Say ``text`` back after a short wait."""
    await anyio.sleep(0.1)
    return text


slow_environment = Environment(
    name="toy-slow",
    description="The toy bank with a slow tool (SSE tests).",
    fixture=fixture,
    tools=[*TOOLS, slow_echo],
)


async def test_a_call_answered_as_an_sse_stream_reads_like_the_sdk_clients(no_proxy: pytest.MonkeyPatch) -> None:
    bodies: list[tuple[str, bytes]] = []
    read = _message

    def reading(content: bytes, content_type: str, request_id: int) -> dict[str, Any] | None:
        bodies.append((content_type, content))
        return read(content, content_type, request_id)

    no_proxy.setattr("servers.episode_client._message", reading)
    # The server commits to an SSE stream (keep-alive pings, then the response) once a call outlasts this.
    no_proxy.setattr("mcp.server._streamable_http_modern._SSE_PING_INTERVAL", 0.02)
    with anyio.fail_after(20):
        async with running_http(slow_environment, json_response=False) as server, HttpClient() as http:
            sdk, lean = server.manager.create(), server.manager.create()
            async with Client(server.episode_url(sdk.id)) as client:
                expected = [
                    seen(await client.call_tool("slow_echo", {"text": "Zoë ✓"})),
                    seen(await client.call_tool("list_accounts", {})),
                ]
            listing = await fetch_listing(http, server.episode_url(lean.id))
            bodies.clear()
            episode = EpisodeClient(http, server.episode_url(lean.id), listing)
            got = [
                seen(await episode.call_tool("slow_echo", {"text": "Zoë ✓"})),
                seen(await episode.call_tool("list_accounts", {})),
            ]
    assert got == expected and got[0][1] == {"result": "Zoë ✓"} and not got[0][2]
    (slow_type, slow_body), _ = bodies
    assert slow_type.startswith("text/event-stream") and b": ping" in slow_body and b"event: message" in slow_body


async def test_a_call_on_a_closed_or_unknown_episode_is_an_mcp_error(no_proxy: pytest.MonkeyPatch) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, HttpClient() as http:
            created = await create(http, server)
            listing = await fetch_listing(http, created["mcp_url"])
            lean = EpisodeClient(http, created["mcp_url"], listing)
            assert not (await lean.call_tool("list_accounts")).is_error
            closing = await http.post(
                f"{server.control_url}/episodes/{created['id']}/close", headers=server.control_headers
            )
            assert closing.status_code == 200, closing.text
            with pytest.raises(MCPError, match="is closed") as closed:
                await lean.call_tool("list_accounts", {})
            unknown = EpisodeClient(http, server.episode_url("ep-000000000000"), listing)
            with pytest.raises(MCPError, match="no episode 'ep-000000000000'") as missing:
                await unknown.call_tool("list_accounts", {})
            with pytest.raises(MCPError, match="no episode"):
                await fetch_listing(http, server.episode_url("ep-000000000000"))
    assert closed.value.code == missing.value.code == EPISODE_NOT_FOUND


def sse(*events: dict[str, Any] | str) -> bytes:
    return "".join(
        f"event: message\r\ndata: {e if isinstance(e, str) else json.dumps(e)}\r\n\r\n" for e in events
    ).encode()


RESPONSE = {"jsonrpc": "2.0", "id": 3, "result": {"content": [], "isError": False}}
NOTIFICATION = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}


def test_message_reads_a_plain_json_body() -> None:
    assert _message(json.dumps(RESPONSE).encode(), "application/json", 3) == RESPONSE
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad request"}}
    # An error the server could not tie to a request (id null) is still read, so it surfaces as an MCPError.
    assert _message(json.dumps(error).encode(), "application/json", 3) == error


def test_message_picks_the_matching_event_of_an_sse_stream() -> None:
    stream = sse(NOTIFICATION, {**RESPONSE, "id": 2}, RESPONSE)
    assert _message(stream, "text/event-stream", 3) == RESPONSE
    assert _message(stream, "text/event-stream; charset=utf-8", 2) == {**RESPONSE, "id": 2}
    # LF line ends, no space after "data:", a comment line, one JSON document split over two data lines.
    split = b': keep-alive\n\nid: 7\ndata:{"jsonrpc": "2.0", "id": 3,\ndata: "result": {"ok": true}}\n\n'
    assert _message(split, "text/event-stream", 3) == {"jsonrpc": "2.0", "id": 3, "result": {"ok": True}}
    utf8 = 'data: {"jsonrpc":"2.0","id":3,"result":{"t":"Zoë"}}\n\n'.encode()
    assert _message(utf8, "text/event-stream", 3) == {"jsonrpc": "2.0", "id": 3, "result": {"t": "Zoë"}}


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (sse(NOTIFICATION, {**RESPONSE, "id": 4}), "text/event-stream"),  # only another request's response
        (sse(NOTIFICATION), "text/event-stream"),
        (sse("not json", "{broken"), "text/event-stream"),
        (b"", "text/event-stream"),
        (b"<html>502 Bad Gateway</html>", "text/html"),
        (b"{broken", "application/json"),
        (b"[1, 2]", "application/json"),
        (b'"a string"', "application/json"),
        (b"\xff\xfe", "application/json"),
    ],
    ids=[
        "sse-other-id",
        "sse-notification-only",
        "sse-garbage",
        "sse-empty",
        "html",
        "broken-json",
        "json-list",
        "json-string",
        "not-utf8",
    ],
)
def test_message_is_none_without_a_response_to_this_request(content: bytes, content_type: str) -> None:
    assert _message(content, content_type, 3) is None


def test_a_plain_json_response_to_another_request_is_not_taken() -> None:
    assert _message(json.dumps({**RESPONSE, "id": 4}).encode(), "application/json", 3) is None


@dataclass
class Sent:
    """What ServerClient sent: HttpClient.request calls and the raw bytes of every request on the wire."""

    calls: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    wire: list[bytes] = field(default_factory=list)

    def methods(self) -> list[str]:
        return [
            json.loads(raw.split(b"\r\n\r\n", 1)[1])["method"]
            for raw in self.wire
            if b" /episodes/" in raw.split(b"\r\n", 1)[0]
        ]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Sent:
    record = Sent()
    request = HttpClient.request

    async def spy_request(self, method, url, **options):  # type: ignore[no-untyped-def]
        record.calls.append((method, url, dict(options.get("headers") or {})))
        return await request(self, method, url, **options)

    monkeypatch.setattr(HttpClient, "request", spy_request)
    for kind in (_Protocol, _Connection):  # asyncio's transport, anyio's streams: whichever the loop gets
        exchange = kind.exchange

        async def spy_exchange(self, data, method, timeout, exchange=exchange):  # type: ignore[no-untyped-def]
            record.wire.append(data)
            return await exchange(self, data, method, timeout)

        monkeypatch.setattr(kind, "exchange", spy_exchange)
    return record


async def play_oracle(client: ServerClient, task: str = "pay_back", seed: int = 0) -> tuple[Any, dict[str, Any]]:
    """Create, play the oracle through ``client.connect`` and finish one episode; the MCP client used and the finish."""
    response = await client.control("POST", "/episodes", json={"task": task, "seed": seed, "oracle": True})
    assert response.status_code == 201, response.text
    created = response.json()
    async with client.connect(created["mcp_url"]) as mcp:
        assert {t.name for t in (await mcp.list_tools()).tools} >= {"transfer", "submit_answer"}
        for step in created["oracle"]:
            result = await mcp.call_tool(step["tool"], step["arguments"])
            assert not result.is_error, result.content
    finished = await client.control("POST", f"/episodes/{created['id']}/finish", json={"reason": "done"})
    assert finished.status_code == 200, finished.text
    return mcp, finished.json()


async def test_server_client_lean_path_lists_once_and_sends_the_token_on_control_requests_only(
    sent: Sent, no_proxy: pytest.MonkeyPatch
) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            client = ServerClient(f"{server.url}/", token=server.token)
            try:
                assert client.lean
                first, one = await play_oracle(client)
                second, two = await play_oracle(client, seed=1)
                assert client.requests == len(sent.wire) == len(sent.calls)
            finally:
                await client.aclose()
            assert len(server.manager) == 0
    assert isinstance(first, EpisodeClient) and isinstance(second, EpisodeClient)
    assert isinstance(client.listing, ServerListing) and first.listing is second.listing is client.listing
    assert one["grade"]["passed"] and two["grade"]["passed"] and one["released"]
    # Discover and tools/list once for the server, then only the calls.
    assert sent.methods() == ["server/discover", "tools/list", "tools/call", "tools/call", "tools/call", "tools/call"]
    control = [(method, url, headers) for method, url, headers in sent.calls if "/control/" in url]
    episodes = [
        (method, url, headers) for method, url, headers in sent.calls if "/episodes/" in url and "/control/" not in url
    ]
    assert len(control) == 4 and len(episodes) == 6
    assert all(headers == {"authorization": f"Bearer {server.token}"} for _, _, headers in control)
    assert all("authorization" not in {name.lower() for name in headers} for _, _, headers in episodes)
    # On the wire as well: the token appears in the control requests' bytes and in no MCP request's.
    token = server.token.encode()  # type: ignore[union-attr]
    assert sum(token in raw for raw in sent.wire) == 4
    assert not any(
        token in raw or b"authorization" in raw.lower()
        for raw in sent.wire
        if b" /episodes/" in raw.split(b"\r\n", 1)[0]
    )


@dataclass
class Proxy:
    """A TCP relay standing in for an HTTP forward proxy: it passes bytes through and keeps what clients sent."""

    url: str
    connections: int = 0
    received: bytearray = field(default_factory=bytearray)


@asynccontextmanager
async def relaying_proxy(upstream: str) -> AsyncIterator[Proxy]:
    """A forward proxy for one origin: every connection is relayed to ``upstream`` (``http://host:port``)."""
    host, port = upstream.removeprefix("http://").rsplit(":", 1)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    proxy = Proxy(url=f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}")

    async def relay(client: anyio.abc.SocketStream) -> None:
        proxy.connections += 1
        async with client, await anyio.connect_tcp(host, int(port)) as server, anyio.create_task_group() as tg:

            async def one_way(source: anyio.abc.SocketStream, sink: anyio.abc.SocketStream, keep: bool) -> None:
                with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
                    async for chunk in source:
                        if keep:
                            proxy.received.extend(chunk)
                        await sink.send(chunk)
                tg.cancel_scope.cancel()

            tg.start_soon(one_way, client, server, True)
            tg.start_soon(one_way, server, client, False)

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, relay)
        try:
            yield proxy
        finally:
            tg.cancel_scope.cancel()


@pytest.mark.skipif(
    HTTP_PROTOCOL != "httptools", reason="uvicorn's h11 protocol does not route absolute-form request targets"
)
async def test_server_client_uses_the_sdk_client_through_a_proxy_and_still_plays(
    sent: Sent, no_proxy: pytest.MonkeyPatch
) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, relaying_proxy(server.url) as proxy:
            no_proxy.setenv("HTTP_PROXY", proxy.url)
            client = ServerClient(server.url, token=server.token)
            try:
                assert not client.lean and client.requests is None
                mcp, finished = await play_oracle(client)
            finally:
                await client.aclose()
    assert isinstance(mcp, Client) and finished["grade"]["passed"]
    assert sent.calls == [] and sent.wire == []  # nothing went through the lean client
    # Everything went through the proxy, as absolute-form requests; the token only on control requests.
    assert proxy.connections >= 2
    heads = re.findall(rb"(?:GET|POST|DELETE) (\S+) HTTP/1\.1\r\n(.*?)\r\n\r\n", bytes(proxy.received), re.DOTALL)
    control = [head.lower() for target, head in heads if target.startswith(f"{server.url}/control/".encode())]
    episode = [head.lower() for target, head in heads if target.startswith(f"{server.url}/episodes/".encode())]
    methods = [method for head in episode for method in re.findall(rb"mcp-method: (\S+)", head)]
    assert len(control) == 2 and methods[0] == b"server/discover" and methods.count(b"tools/call") == 2
    assert all(f"authorization: bearer {server.token}".lower().encode() in head for head in control)
    assert not any(b"authorization" in head for head in episode)


async def test_server_client_falls_back_to_the_sdk_client_for_a_server_without_2026_07_28(
    sent: Sent, no_proxy: pytest.MonkeyPatch
) -> None:
    async def old_server(http: HttpClient, url: str) -> ServerListing:
        raise MCPError(types.METHOD_NOT_FOUND, "Method not found: server/discover")

    no_proxy.setattr("servers.server_client.fetch_listing", old_server)
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            client = ServerClient(server.url, token=server.token)
            try:
                assert client.lean
                mcp, finished = await play_oracle(client)
                assert not client.lean and client.listing is None
                again, _ = await play_oracle(client, seed=1)
            finally:
                await client.aclose()
    assert isinstance(mcp, Client) and isinstance(again, Client) and finished["grade"]["passed"]
    assert client.tools.listings == 1  # the SDK path lists once per server too
    assert all("/control/" in url for _, url, _ in sent.calls)  # control stays on the lean HTTP client


async def test_server_client_raises_a_discover_error_that_is_not_about_the_protocol(
    no_proxy: pytest.MonkeyPatch,
) -> None:
    async def broken(http: HttpClient, url: str) -> ServerListing:
        raise MCPError(types.INTERNAL_ERROR, "boom")

    no_proxy.setattr("servers.server_client.fetch_listing", broken)
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            client = ServerClient(server.url, token=server.token)
            try:
                created = (await client.control("POST", "/episodes", json={"task": "pay_back"})).json()
                with pytest.raises(MCPError, match="boom"):
                    async with client.connect(created["mcp_url"]):
                        pass
                assert client.lean  # not mistaken for an older server
            finally:
                await client.aclose()


async def _play_over_http() -> tuple[list[tuple[Any, ...]], int]:
    """An episode's plays through the lean client against a real server, on whatever loop runs this."""
    async with running_http(environment) as server, HttpClient() as http:
        created = await create(http, server)
        lean = EpisodeClient(http, created["mcp_url"], await fetch_listing(http, created["mcp_url"]))
        got = [seen(await lean.call_tool(name, arguments)) for name, arguments in plays(created)]
        return got, http.requests


def test_the_lean_client_and_the_server_play_alike_on_uvloop(no_proxy: pytest.MonkeyPatch) -> None:
    # A trainer may run its loop on uvloop: its TCP transport is no asyncio.Transport subclass, and the client once
    # refused it (an assertion), so no request got through.
    import asyncio

    import uvloop

    with asyncio.Runner() as runner:
        expected = runner.run(asyncio.wait_for(_play_over_http(), 20))
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        assert isinstance(runner.get_loop(), uvloop.Loop)
        got = runner.run(asyncio.wait_for(_play_over_http(), 20))
    assert got == expected
    assert [is_error for _, _, is_error in got[0]] == [False, False, True, True, True, True, False, False, False]
