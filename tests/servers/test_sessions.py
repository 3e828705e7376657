"""Sessions tied to episodes: closing or releasing an episode ends its MCP sessions; caps apart; health."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from servers import EpisodeManager
from servers.http import KEEP_ALIVE, HttpServer, running_http
from servers.routing import EPISODE_LIMIT_REACHED
from tests.servers.test_plain_mcp import ACCEPT, posting, raw_session
from tests.toy_env import environment

CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_accounts", "arguments": {}}}


def sdk_sessions(server: HttpServer) -> set[str]:
    manager = server.app.state.router.session_manager
    return set(manager._server_instances)  # noqa: SLF001


async def health(http: httpx.AsyncClient, server: HttpServer) -> dict[str, object]:
    response = await http.get(f"{server.control_url}/health", headers=server.control_headers)
    return response.json()["limits"]


async def test_closing_an_episode_ends_the_sessions_on_its_url() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            episode = server.manager.create()
            headers = await raw_session(http, server.episode_url(episode.id))
            assert (await http.post(server.episode_url(episode.id), json=CALL, headers=headers)).status_code == 200
            assert headers["mcp-session-id"] in sdk_sessions(server)
            assert (await health(http, server))["episode_sessions"]["open"] == 1
            closed = await http.post(f"{server.control_url}/episodes/{episode.id}/close", headers=server.control_headers)
            assert closed.status_code == 200
            assert headers["mcp-session-id"] not in sdk_sessions(server)  # ended at once, not after 30 minutes
            assert (await health(http, server))["episode_sessions"]["open"] == 0
            again = await http.post(server.episode_url(episode.id), json=CALL, headers=headers)
            assert again.status_code == 404
            assert len(episode.record.tool_calls) == 1


async def test_stale_sessions_never_block_new_clients() -> None:
    with anyio.fail_after(30):
        manager = EpisodeManager(environment, max_live=2)
        async with running_http(environment, manager=manager, max_sessions=1) as server, httpx.AsyncClient() as http:
            for _ in range(4):  # what used to leave four stale sessions behind, each counted against the SDK cap
                episode = server.manager.create()
                await raw_session(http, server.episode_url(episode.id))
                server.manager.release(episode.id)
            assert sdk_sessions(server) == set()
            async with Client(server.mcp_url, mode="legacy") as client:  # a new handshake client on /mcp
                assert not (await client.call_tool("list_accounts", {})).is_error


async def test_releasing_a_plain_sessions_episode_ends_the_session() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            headers = await raw_session(http, server.mcp_url)
            assert (await http.post(server.mcp_url, json=CALL, headers=headers)).status_code == 200
            (episode,) = server.manager.list()
            server.manager.release(episode.id)
            assert sdk_sessions(server) == set()
            assert (await health(http, server))["mcp_sessions"]["open"] == 0
            assert (await http.post(server.mcp_url, json=CALL, headers=headers)).status_code == 404


INIT = {
    "jsonrpc": "2.0", "id": 5, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


async def test_sessions_per_episode_are_capped_apart_from_mcp_sessions() -> None:
    with anyio.fail_after(20):
        async with running_http(environment, sessions_per_episode=1, max_sessions=1) as server, httpx.AsyncClient() as http:
            episode = server.manager.create()
            busy = await raw_session(http, server.episode_url(episode.id))
            async with posting(http, server, server.episode_url(episode.id), busy, episode):  # in flight: not evictable
                refused = await http.post(server.episode_url(episode.id), json=INIT, headers=ACCEPT)
            assert refused.status_code == 503 and refused.json()["error"]["code"] == EPISODE_LIMIT_REACHED
            message = refused.json()["error"]["message"]
            assert refused.json()["id"] == 5 and "has 1 open MCP sessions" in message
            assert "reuse the client you have" in message and "2026-07-28" in message  # what to do, with the client in hand
            async with Client(server.episode_url(episode.id)) as modern:  # 2026-07-28 needs no session
                assert not (await modern.call_tool("list_accounts", {})).is_error
            await raw_session(http, server.mcp_url)  # /mcp has its own room
            limits = await health(http, server)
            assert limits["episode_sessions"] == {"open": 1, "max_per_episode": 1}
            assert limits["mcp_sessions"] == {"open": 1, "max": 1}
            assert limits["episodes"] == {"open": 1, "max": 1024}  # the /mcp session's episode is not counted


async def test_clients_that_never_delete_do_not_lock_an_episode_out() -> None:
    """Inspector's CLI, the conformance suite, TypeScript apps: a session per run, never a DELETE (issue 19)."""
    with anyio.fail_after(30):
        async with running_http(environment, sessions_per_episode=2) as server, httpx.AsyncClient() as http:
            episode = server.manager.create()
            url = server.episode_url(episode.id)
            abandoned = []
            for _ in range(6):  # three times the cap: every run opens a session and leaves it
                headers = await raw_session(http, url)
                assert (await http.post(url, json=CALL, headers=headers)).status_code == 200
                abandoned.append(headers)
            async with Client(url, mode="legacy") as client:  # a live handshake client still gets in
                assert not (await client.call_tool("list_accounts", {})).is_error
            limits = await health(http, server)
            assert limits["episode_sessions"]["open"] <= 2 and limits["sessions_evicted"] >= 5
            # the least recently used went first; the evicted client is told its session is gone (404: re-initialize)
            assert (await http.post(url, json=CALL, headers=abandoned[0])).status_code == 404
            assert len(episode.record.tool_calls) == 7  # one world, every call kept


async def test_mcp_sessions_at_the_cap_replace_the_least_recently_used() -> None:
    with anyio.fail_after(30):
        async with running_http(environment, max_sessions=2) as server, httpx.AsyncClient() as http:
            opened = []
            for _ in range(5):
                headers = await raw_session(http, server.mcp_url)
                assert (await http.post(server.mcp_url, json=CALL, headers=headers)).status_code == 200
                opened.append(headers)
            assert len(server.manager.list()) == 2  # never a world per dead session
            assert (await http.post(server.mcp_url, json=CALL, headers=opened[0])).status_code == 404
            assert (await http.post(server.mcp_url, json=CALL, headers=opened[-1])).status_code == 200
            limits = await health(http, server)
            assert limits["mcp_sessions"] == {"open": 2, "max": 2} and limits["sessions_evicted"] == 3


async def test_mcp_refuses_only_when_every_session_is_busy() -> None:
    with anyio.fail_after(30):
        async with running_http(environment, max_sessions=1) as server, httpx.AsyncClient() as http:
            headers = await raw_session(http, server.mcp_url)
            assert (await http.post(server.mcp_url, json=CALL, headers=headers)).status_code == 200
            (episode,) = server.manager.list()
            # an open notification stream (GET) does not make a session busy: abandoned clients leave theirs
            async with http.stream("GET", server.mcp_url, headers={**headers, "accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200
                async with posting(http, server, server.mcp_url, headers, episode):  # a tool call in flight does
                    refused = await http.post(server.mcp_url, json=INIT, headers=ACCEPT)
                assert refused.status_code == 503 and refused.json()["error"]["code"] == EPISODE_LIMIT_REACHED
                assert "serving a request right now" in refused.json()["error"]["message"]
                await raw_session(http, server.mcp_url)  # the call answered: the session, stream open, makes room
            assert server.app.state.router.sessions.evicted == 1


async def test_handshake_sessions_idle_out_well_before_episodes() -> None:
    async with running_http(environment) as server:
        sdk = server.app.state.router.session_manager
        assert sdk.session_idle_timeout is not None and sdk.session_idle_timeout * 5 <= server.manager.idle_timeout


async def test_a_session_left_with_its_stream_open_idles_out() -> None:
    """The SDK's idle timeout never fires while a GET stream is open; POSTs are what count."""
    with anyio.fail_after(30):
        async with running_http(environment, session_idle_timeout=0.3, reap_interval=0.05) as server, httpx.AsyncClient() as http:
            released = anyio.Event()
            server.manager.on_release.append(lambda episode: released.set())
            headers = await raw_session(http, server.mcp_url)
            assert (await http.post(server.mcp_url, json=CALL, headers=headers)).status_code == 200
            async with http.stream("GET", server.mcp_url, headers={**headers, "accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200
                await released.wait()  # the abandoned session ended, its world released, though its stream is open
            assert sdk_sessions(server) == set() and server.manager.list() == []


async def test_a_client_can_delete_its_session_after_the_episode_closed() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            episode = server.manager.create()
            async with Client(server.episode_url(episode.id), mode="legacy") as client:
                await client.list_tools()
                server.manager.close(episode.id)
                with pytest.raises(MCPError):
                    await client.call_tool("list_accounts", {})
            assert sdk_sessions(server) == set()


async def test_keep_alive_outlasts_client_pools() -> None:
    async with running_http(environment) as server:
        assert server._server.config.timeout_keep_alive >= KEEP_ALIVE > httpx.Limits().keepalive_expiry  # type: ignore[operator]  # noqa: SLF001
