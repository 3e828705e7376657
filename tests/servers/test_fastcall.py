"""The direct ``tools/call`` path answers byte for byte what the SDK path answers, and leaves everything else to it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from opentelemetry import trace

import servers.routing
from servers import EpisodeManager
from servers.fastcall import eligible
from servers.http import running_http
from tests.toy_env import environment

VERSION = "2026-07-28"


def _request(tool: str, arguments: Any, *, request_id: Any = 7, **header_overrides: str) -> tuple[dict[str, str], bytes]:
    params: dict[str, Any] = {"name": tool, "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION,
                                                      "io.modelcontextprotocol/clientCapabilities": {}}}
    if arguments is not None:
        params["arguments"] = arguments
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", "mcp-protocol-version": VERSION,
               "mcp-method": "tools/call", "mcp-name": tool, **header_overrides}
    return headers, json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


CASES = [
    ("list_accounts", {}, {}),
    ("get_account", {"account_id": "acc-001"}, {}),
    ("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "5.00"}, {}),
    ("get_account", {"account_id": 12}, {}),  # invalid arguments: an error result
    ("get_account", {"account_id": "acc-999"}, {}),  # refused by the tool
    ("no_such_tool", {}, {}),
    ("explode", None, {}),  # a tool that crashes: an internal error result
    ("submit_answer", {"text": "Zoë — ünïcode ✓"}, {}),
    ("get_account", {"account_id": "acc-001"}, {"mcp-name": "list_accounts"}),  # header mismatch: the SDK refuses
    ("get_account", {"account_id": "acc-001"}, {"mcp-protocol-version": "2099-01-01"}),  # unsupported: the SDK refuses
    ("get_account", {"account_id": "acc-001"}, {"accept": "text/html"}),  # 406 from the SDK
]


async def _exchange(http: httpx.AsyncClient, url: str, cases: list[tuple[str, Any, dict[str, str]]], text_ids: bool = False) -> list[tuple[int, str, bytes]]:
    answers = []
    for n, (tool, arguments, overrides) in enumerate(cases):
        request_id: Any = f'req-{n} "ü" \u2028' if text_ids else n  # a text id with a quote, non-ASCII, a line separator
        headers, body = _request(tool, arguments, request_id=request_id, **overrides)
        response = await http.post(url, headers=headers, content=body)
        answers.append((response.status_code, response.headers.get("content-type", ""), response.content))
    return answers


def _count_direct_answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per request the direct path was offered, whether it answered (True) or left it to the SDK (False)."""
    taken: list[bool] = []
    real = servers.routing.answer_tool_call

    async def counted(*args: Any) -> bool:
        taken.append(await real(*args))
        return taken[-1]

    monkeypatch.setattr(servers.routing, "answer_tool_call", counted)
    return taken


async def test_direct_answers_are_the_sdk_answers_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(environment)
    taken = _count_direct_answers(monkeypatch)
    with anyio.fail_after(60):
        async with running_http(environment, manager=manager) as server, httpx.AsyncClient() as http:
            direct_episode, sdk_episode = manager.create(seed=0), manager.create(seed=0)
            direct = await _exchange(http, server.episode_url(direct_episode.id), CASES)
            direct += await _exchange(http, server.episode_url(direct_episode.id), CASES, text_ids=True)
            assert taken == ([True] * 8 + [False] * 3) * 2
            monkeypatch.setattr(servers.routing, "eligible", lambda scope: False)
            through_sdk = await _exchange(http, server.episode_url(sdk_episode.id), CASES)
            through_sdk += await _exchange(http, server.episode_url(sdk_episode.id), CASES, text_ids=True)
            for case, mine, theirs in zip(CASES * 2, direct, through_sdk, strict=True):
                assert mine == theirs, case
            assert _calls(direct_episode) == _calls(sdk_episode) and len(_calls(direct_episode)) == 16
            assert direct_episode.world.hash() == sdk_episode.world.hash() != direct_episode.record.header.start_hash
    manager.close_all()


def _calls(episode: Any) -> list[dict[str, Any]]:
    """The episode's recorded calls without their timings."""
    return [{k: v for k, v in e.items() if k not in ("started_ms", "duration_ms")} for e in episode.record.model_dump()["events"]]


async def test_a_real_client_goes_the_direct_way(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(environment)
    taken = _count_direct_answers(monkeypatch)
    with anyio.fail_after(60):
        async with running_http(environment, manager=manager) as server:
            episode = manager.create(seed=0)
            async with Client(server.episode_url(episode.id)) as client:
                result = await client.call_tool("get_account", {"account_id": "acc-001"})
                assert not result.is_error and result.structured_content["id"] == "acc-001"
                assert (await client.list_tools()).tools  # not a tools/call: the SDK's
    assert taken.count(True) == 1  # the call; the discovery and the listing went to the SDK
    manager.close_all()


def test_a_tracer_provider_sends_calls_through_the_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    scope = {"method": "POST", "headers": [(b"mcp-protocol-version", VERSION.encode())]}
    assert eligible(scope)
    assert not eligible({**scope, "headers": [*scope["headers"], (b"mcp-session-id", b"abc")]})
    assert not eligible({"method": "POST", "headers": [(b"mcp-protocol-version", b"2025-06-18")]})

    class Provider(trace.TracerProvider):
        def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
            return trace.NoOpTracer()

    monkeypatch.setattr(trace, "get_tracer_provider", lambda: Provider())
    assert not eligible(scope)


@pytest.mark.parametrize("result", [{"name": "Zoë ✓", "line": "\u2028", "n": 3}, {"plain": "ascii only", "list": [1, 2.5, None]}, None])
async def test_the_written_answer_is_the_dump_of_the_sdks_shape(monkeypatch: pytest.MonkeyPatch, result: Any) -> None:
    import servers.fastcall
    from mcp_types import SERVER_INFO_META_KEY
    from servers.record import ToolCallEvent

    async def call_tool(episode: Any, name: str, arguments: Any) -> ToolCallEvent:
        return ToolCallEvent(seq=1, tool=name, arguments={}, result=result, started_ms=0.0, duration_ms=0.0)

    monkeypatch.setattr(servers.fastcall, "call_tool", call_tool)
    manager = EpisodeManager(environment)
    episode = manager.create(seed=0)
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    scope = {"type": "http", "method": "POST", "headers": [], "path": "/", "query_string": b""}
    await servers.fastcall._respond(episode, 'id "ü"', "get_account", {}, scope, receive, send)  # noqa: SLF001
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    shape: dict[str, Any] = {"content": [{"text": text, "type": "text"}], "isError": False, "resultType": "complete"}
    if result is not None:
        shape["structuredContent"] = result
    shape["_meta"] = {SERVER_INFO_META_KEY: servers.fastcall._server_info(environment)}  # noqa: SLF001
    assert body == json.dumps({"jsonrpc": "2.0", "id": 'id "ü"', "result": shape}, separators=(",", ":")).encode()
    manager.close_all()


HEADER_LISTS = [
    [],
    [(b"host", b"127.0.0.1:9"), (b"accept", b"application/json"), (b"mcp-name", b"a"), (b"mcp-name", b"b")],  # a duplicate
    [(b"Mcp-Name", b"upper-case as sent"), (b"mcp-name", b"lower"), (b"x-latin", "caf\u00e9".encode("latin-1"))],
    [(b"content-type", b"application/json"), (b"mcp-protocol-version", b"2026-07-28"), (b"mcp-param-region", b"")],
]


@pytest.mark.parametrize("raw", HEADER_LISTS)
def test_the_ladders_decoded_headers_answer_as_starlettes(raw: list[tuple[bytes, bytes]]) -> None:
    from starlette.datastructures import Headers

    from servers.fastcall import _DecodedHeaders

    theirs, mine = Headers(scope={"headers": list(raw)}), _DecodedHeaders({"headers": list(raw)})
    assert mine.items() == theirs.items() and mine.keys() == theirs.keys() and mine.values() == theirs.values()
    assert dict(mine) == dict(theirs) and len(mine) == len(theirs) and mine == theirs and mine.raw == theirs.raw
    for name in ("host", "HOST", "mcp-name", "MCP-NAME", "Mcp-Name", "x-latin", "mcp-param-region", "absent", ""):
        assert mine.get(name) == theirs.get(name) and mine.get(name, "d") == theirs.get(name, "d"), name
        assert (name in mine) == (name in theirs) and mine.getlist(name) == theirs.getlist(name), name
        if name in theirs:
            assert mine[name] == theirs[name]
        else:
            with pytest.raises(KeyError):
                mine[name]


async def test_duplicated_or_oddly_cased_routing_headers_get_the_sdks_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(environment)
    taken = _count_direct_answers(monkeypatch)
    headers, body = _request("get_account", {"account_id": "acc-001"})
    sent = {
        "duplicate": [*headers.items(), ("mcp-name", "get_account")],
        "upper case": [(name.upper(), value) for name, value in headers.items()],
    }
    with anyio.fail_after(60):
        async with running_http(environment, manager=manager) as server, httpx.AsyncClient() as http:
            direct_episode, sdk_episode = manager.create(seed=0), manager.create(seed=0)
            direct = [(await http.post(server.episode_url(direct_episode.id), headers=h, content=body)) for h in sent.values()]
            monkeypatch.setattr(servers.routing, "eligible", lambda scope: False)
            through_sdk = [(await http.post(server.episode_url(sdk_episode.id), headers=h, content=body)) for h in sent.values()]
    for case, mine, theirs in zip(sent, direct, through_sdk, strict=True):
        assert (mine.status_code, mine.content) == (theirs.status_code, theirs.content), case
    assert direct[0].status_code == 400  # the SDK refuses a duplicated routing header; the direct path left it
    assert direct[1].status_code == 200 and taken == [False, True]  # header names arrive lower-cased (ASGI)
    manager.close_all()
