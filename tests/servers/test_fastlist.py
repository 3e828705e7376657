"""The listing cache answers ``server/discover`` and ``tools/list`` byte for byte as the SDK does, keeps only plain
successes, and leaves every other request to the SDK."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

import servers.routing
from servers import EpisodeManager
from servers.fastlist import MAX_KEPT, ListingCache
from servers.http import running_http
from tests.toy_env import environment

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
CAPABLE = {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "roots": {"listChanged": True}}}


def _request(method: str, params: Any, request_id: Any, **overrides: str) -> tuple[dict[str, str], bytes]:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", "mcp-protocol-version": VERSION,
               "mcp-method": method, **overrides}
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return headers, json.dumps(message).encode()


CASES: list[tuple[str, Any, dict[str, str]]] = [
    ("tools/list", {"_meta": META}, {}),
    ("server/discover", {"_meta": META}, {}),
    ("tools/list", {"_meta": META, "cursor": "anything"}, {}),  # the handler ignores the cursor
    ("tools/list", {"_meta": META, "cursor": 5}, {}),  # invalid params: the SDK's error
    ("tools/list", {"_meta": {**META, "progressToken": [1]}}, {}),  # an invalid progress token
    ("tools/list", {"_meta": META}, {"mcp-method": "tools/call"}),  # header mismatch: the SDK refuses
    ("tools/list", {"_meta": META}, {"mcp-protocol-version": "2099-01-01"}),  # unsupported version
    ("tools/list", {"_meta": META}, {"accept": "text/html"}),  # 406
    ("tools/list", None, {}),  # no envelope _meta: refused
    ("server/discover", {"_meta": META}, {}),
    ("tools/list", {"_meta": META}, {}),
    ("tools/list", {"_meta": CAPABLE}, {}),  # other client capabilities: kept apart
    ("tools/list", {"_meta": CAPABLE}, {}),
]
IDS: list[Any] = [0, 7, 2**53, 'req "ü" \u2028', "\ud800"]  # ints, and text with a quote, non-ASCII, a separator, a lone surrogate


async def _exchange(http: httpx.AsyncClient, url: str) -> list[tuple[int, str, bytes]]:
    answers = []
    for request_id in IDS:
        for method, params, overrides in CASES:
            headers, body = _request(method, params, request_id, **overrides)
            response = await http.post(url, headers=headers, content=body)
            answers.append((response.status_code, response.headers.get("content-type", ""), response.content))
    return answers


def _count_cache_answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    answered: list[bool] = []
    real = ListingCache.serve

    async def counted(self: ListingCache, *args: Any) -> tuple[bool, Any]:
        outcome = await real(self, *args)
        answered.append(outcome[0])
        return outcome

    monkeypatch.setattr(ListingCache, "serve", counted)
    return answered


async def test_cached_answers_are_the_sdk_answers_byte_for_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(environment)
    answered = _count_cache_answers(monkeypatch)
    with anyio.fail_after(60):
        async with running_http(environment, manager=manager) as server, httpx.AsyncClient() as http:
            cached_episode, sdk_episode = manager.create(seed=0), manager.create(seed=0)
            cached = await _exchange(http, server.episode_url(cached_episode.id))
            # The first of each method was the SDK's (and kept); then every plain request came from the cache.
            plain = [n for n, (_, params, overrides) in enumerate(CASES) if not overrides and params and set(params) <= {"_meta", "cursor"}
                     and params["_meta"] in (META, CAPABLE) and not isinstance(params.get("cursor"), int)]
            hits = [n for n, hit in enumerate(answered) if hit]
            firsts = {0, 1, len(CASES) - 2}  # the first tools/list, discover and tools/list with other capabilities
            expected = [i * len(CASES) + n for i in range(len(IDS)) for n in plain if i or n not in firsts]
            assert hits == expected
            monkeypatch.setattr(servers.routing, "eligible", lambda scope: False)
            through_sdk = await _exchange(http, server.episode_url(sdk_episode.id))
    for n, (mine, theirs) in enumerate(zip(cached, through_sdk, strict=True)):
        assert mine == theirs, (IDS[n // len(CASES)], CASES[n % len(CASES)])
    assert {status for status, _, _ in cached} >= {200, 400, 406}
    manager.close_all()


async def test_an_answer_that_is_not_a_plain_success_is_never_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(environment)
    answered = _count_cache_answers(monkeypatch)
    with anyio.fail_after(60):
        async with running_http(environment, manager=manager) as server, httpx.AsyncClient() as http:
            url = server.episode_url(manager.create(seed=0).id)
            for params in ({"_meta": META, "cursor": 5}, {"_meta": META}, {"_meta": META}):
                headers, body = _request("tools/list", params, 1)
                await http.post(url, headers=headers, content=body)
            closed = manager.create(seed=0)
            manager.close(closed.id)
            headers, body = _request("tools/list", {"_meta": META}, 2)
            gone = await http.post(server.episode_url(closed.id), headers=headers, content=body)
    # The invalid request's error was not kept; the next was the SDK's, kept; the third came from the cache.
    assert answered == [False, False, True]
    assert gone.status_code == 404 and json.loads(gone.content)["error"]["data"]["error"] == "episode_not_found"
    manager.close_all()


async def test_a_real_client_lists_through_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(environment)
    answered = _count_cache_answers(monkeypatch)
    with anyio.fail_after(60):
        async with running_http(environment, manager=manager) as server:
            listings = []
            for _ in range(2):
                async with Client(server.episode_url(manager.create(seed=0).id)) as client:
                    listings.append((await client.list_tools()).tools)
                    assert client.server_info.name == f"toolgym-{environment.name}" and client.protocol_version == VERSION
    assert listings[0] == listings[1] and {tool.name for tool in listings[0]} >= {"get_account", "transfer"}
    assert answered.count(True) >= 2  # the second client's discovery and listing came from the cache
    manager.close_all()


async def test_clients_that_vary_their_capabilities_cannot_grow_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = EpisodeManager(environment)
    answered = _count_cache_answers(monkeypatch)
    with anyio.fail_after(60):
        async with running_http(environment, manager=manager) as server, httpx.AsyncClient() as http:
            url = server.episode_url(manager.create(seed=0).id)
            for n in range(MAX_KEPT + 4):
                meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"experimental": {f"x{n}": {}}}}
                headers, body = _request("tools/list", {"_meta": meta}, n)
                assert (await http.post(url, headers=headers, content=body)).status_code == 200
            cache = next(r.app for r in server.app.routes if getattr(r, "path", "") == "/episodes/{episode_id}/mcp").listings
    assert answered == [False] * (MAX_KEPT + 4) and len(cache._answers) == MAX_KEPT  # noqa: SLF001
    manager.close_all()
