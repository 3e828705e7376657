"""The plain /mcp endpoint: one episode per handshake-era MCP session, released when the session ends."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from servers import Episode, EpisodeManager
from servers.http import HttpServer, running_http
from servers.routing import EPISODE_LIMIT_REACHED
from tests.toy_env import environment

MODES = ["auto", "legacy"]
ACCEPT = {"Accept": "application/json, text/event-stream"}


def live_ids(server: HttpServer) -> set[str]:
    return {e.id for e in server.manager.list()}


_CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "list_accounts", "arguments": {}}}


@asynccontextmanager
async def posting(http: httpx.AsyncClient, server: HttpServer, url: str, headers: dict[str, str], episode: Episode) -> AsyncIterator[None]:
    """A tool call of this session held in flight for the block (its episode's lock is taken), then answered."""
    sessions = server.app.state.router.sessions
    async with anyio.create_task_group() as tg:
        async with episode.lock:
            tg.start_soon(functools.partial(http.post, url, json=_CALL, headers=headers))
            while not sessions._posting.get(headers["mcp-session-id"]):  # noqa: SLF001 - in flight at the server
                await anyio.sleep(0.01)
            yield


async def raw_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    """Open a handshake-era session by hand (no client library); returns the headers later requests need."""
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    response = await http.post(url, json=init, headers=ACCEPT)
    assert response.status_code == 200, response.text
    headers = {**ACCEPT, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    note = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert note.status_code == 202
    return headers


@pytest.mark.parametrize("mode", MODES)
async def test_two_clients_get_two_episodes(mode: str) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            async with Client(server.mcp_url, mode=mode) as first, Client(server.mcp_url, mode=mode) as second:
                assert first.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS  # auto fell back to the handshake
                one = await first.call_tool("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.00"})
                two = await second.call_tool("transfer", {"from_account": "acc-003", "to_account": "acc-004", "amount": "2.00"})
                again = await first.call_tool("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.00"})
                assert one.structured_content["id"] == "tr-0001"  # type: ignore[index]
                assert two.structured_content["id"] == "tr-0001"  # type: ignore[index]  # a world of its own
                assert again.structured_content["id"] == "tr-0002"  # type: ignore[index]  # state kept in the session
                episodes = server.manager.list()
                assert len(episodes) == 2
                calls = sorted(len(e.record.tool_calls) for e in episodes)
                assert calls == [1, 2]
            assert server.manager.list() == []  # both released when their clients closed


@pytest.mark.parametrize("mode", MODES)
async def test_closing_the_client_releases_its_episode(mode: str) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            kept = server.manager.create()  # a control-API episode is not touched by /mcp sessions
            async with Client(server.mcp_url, mode=mode) as client:
                await client.call_tool("list_accounts", {})
                (ident,) = live_ids(server) - {kept.id}
            assert live_ids(server) == {kept.id}
            record = server.manager.record(ident)
            assert record.closed is not None and [c.tool for c in record.tool_calls] == ["list_accounts"]


async def test_sessionless_request_is_told_to_use_the_handshake() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            body = {"jsonrpc": "2.0", "id": 42, "method": "tools/list", "params": {}}
            response = await http.post(server.mcp_url, json=body, headers={**ACCEPT, "mcp-protocol-version": "2026-07-28"})
            assert response.status_code == 400
            error = response.json()
            assert error["id"] == 42
            assert error["error"]["code"] == -32022
            assert error["error"]["data"] == {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": "2026-07-28"}
            assert "POST /control/episodes" in error["error"]["message"]
            assert server.manager.list() == []


async def test_sdk_dropping_an_idle_session_releases_its_episode() -> None:
    with anyio.fail_after(20):
        async with running_http(environment, session_idle_timeout=0.2, reap_interval=0.05) as server:
            released = anyio.Event()
            server.manager.on_release.append(lambda episode: released.set())
            async with httpx.AsyncClient() as http:
                headers = await raw_session(http, server.mcp_url)
                listed = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
                assert listed.status_code == 200 and "transfer" in listed.text
                (ident,) = live_ids(server)
                await released.wait()  # the session goes idle; the SDK drops it; the reaper frees the world
                assert live_ids(server) == set()
                assert server.manager.record(ident).closed is not None
                gone = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers)
                assert gone.status_code == 404


async def test_delete_ends_the_session_and_its_episode() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            headers = await raw_session(http, server.mcp_url)
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_accounts", "arguments": {}}}
            assert (await http.post(server.mcp_url, json=call, headers=headers)).status_code == 200
            (ident,) = live_ids(server)
            deleted = await http.delete(server.mcp_url, headers=headers)
            assert deleted.status_code in (200, 204)
            assert live_ids(server) == set()
            assert len(server.manager.record(ident).tool_calls) == 1


async def test_a_session_past_the_session_cap_gets_a_clear_error() -> None:
    with anyio.fail_after(20):
        async with running_http(environment, max_sessions=1) as server, httpx.AsyncClient() as http:
            busy = await raw_session(http, server.mcp_url)
            init = {
                "jsonrpc": "2.0", "id": 9, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
            }
            assert (await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=busy)).status_code == 200
            (episode,) = server.manager.list()
            # a tool call in flight keeps the only session busy, so it cannot make room (an idle one would)
            async with posting(http, server, server.mcp_url, busy, episode):
                refused = await http.post(server.mcp_url, json=init, headers=ACCEPT)
                assert refused.status_code == 503 and "mcp-session-id" not in refused.headers
                error = refused.json()
                assert error["id"] == 9 and error["error"]["code"] == EPISODE_LIMIT_REACHED
                assert "all 1 MCP sessions on /mcp" in error["error"]["message"]
                for mode in MODES:
                    with pytest.RaisesGroup(pytest.RaisesExc(MCPError, match="serving a request right now"), flatten_subgroups=True):
                        async with Client(server.mcp_url, mode=mode) as client:
                            await client.list_tools()


async def test_idle_sessions_never_starve_control_episodes() -> None:
    with anyio.fail_after(30):
        manager = EpisodeManager(environment, max_live=2)
        async with running_http(environment, manager=manager, max_sessions=3) as server, httpx.AsyncClient() as http:
            sessions = []
            for _ in range(3):  # every /mcp session the cap allows, each holding a world, then idle
                headers = await raw_session(http, server.mcp_url)
                listed = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
                assert listed.status_code == 200
                sessions.append(headers)
            assert len(server.manager) == 3

            control = f"{server.control_url}/episodes"
            for _ in range(2):  # the control API still has all of its own room
                created = await http.post(control, json={"task": "pay_back"}, headers=server.control_headers)
                assert created.status_code == 201, created.text
            full = await http.post(control, json={}, headers=server.control_headers)
            assert full.status_code == 503 and full.json()["error"] == "episode_limit"  # max_live still holds

            async with Client(server.mcp_url, mode="legacy") as client:  # the fourth session replaces the idlest
                assert not (await client.call_tool("list_accounts", {})).is_error
                assert len(server.manager) == 5  # 3 /mcp worlds (one replaced) and the 2 control episodes
            gone = await http.post(server.mcp_url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=sessions[0])
            assert gone.status_code == 404  # the least recently used session made room
            assert (await http.delete(server.mcp_url, headers=sessions[1])).status_code in (200, 204)
            assert len(server.manager) == 3


async def test_sessions_can_serve_a_task() -> None:
    with anyio.fail_after(20):
        async with running_http(environment, session_task="pay_back", session_seed=4) as server:
            async with Client(server.mcp_url) as client:
                await client.call_tool("list_accounts", {})
                (episode,) = server.manager.list()
                assert episode.record.header.task == "pay_back" and episode.record.header.seed == 4
                assert episode.task is not None and "owes" in episode.task.prompt
