"""HTTP transport, per-episode endpoints: real uvicorn on 127.0.0.1, real mcp.Clients in both protocol eras."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from servers.http import HttpServer, running_http
from servers.mcp_server import EPISODE_NOT_FOUND
from tests.toy_env import environment

MODES = ["auto", "legacy"]


def pay(amount: str) -> dict[str, str]:
    return {"from_account": "acc-001", "to_account": "acc-002", "amount": amount}


async def create(http: httpx.AsyncClient, server: HttpServer, **body: object) -> dict[str, object]:
    response = await http.post(f"{server.control_url}/episodes", json=body, headers=server.control_headers)
    assert response.status_code == 201, response.text
    return response.json()


@pytest.mark.parametrize("mode", MODES)
async def test_episode_endpoint_lists_calls_and_keeps_state(mode: str) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            created = await create(http, server)
            episode = server.manager.get(str(created["id"]))
            start = episode.world.hash()
            async with Client(str(created["mcp_url"]), mode=mode) as client:
                tools = await client.list_tools()
                assert {t.name for t in tools.tools} == {"list_accounts", "get_account", "transfer", "submit_answer"}
                first = await client.call_tool("transfer", pay("1.00"))
                second = await client.call_tool("transfer", pay("2.00"))
                assert not first.is_error and not second.is_error
                # State carries across calls: the second transfer is the world's second.
                assert first.structured_content["id"] == "tr-0001"  # type: ignore[index]
                assert second.structured_content["id"] == "tr-0002"  # type: ignore[index]
            assert episode.world.hash() != start
            assert [c.tool for c in episode.record.tool_calls] == ["transfer", "transfer"]
            assert len(episode.world.diff()) == 4  # two accounts updated, two transfers inserted


@pytest.mark.parametrize("mode", MODES)
async def test_bad_input_over_http_changes_nothing(mode: str) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            episode = server.manager.create()
            start = episode.world.hash()
            async with Client(server.episode_url(episode.id), mode=mode) as client:
                wrong_type = await client.call_tool("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": 5})
                missing = await client.call_tool("transfer", {"from_account": "acc-001"})
            for result in (wrong_type, missing):
                assert result.is_error
                assert '"error":"invalid_arguments"' in result.content[0].text  # type: ignore[union-attr]
            assert episode.world.hash() == start


async def test_concurrent_episodes_each_see_only_their_own_change() -> None:
    with anyio.fail_after(30):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            a, b = await create(http, server), await create(http, server)
            start = server.manager.get(str(a["id"])).world.query("SELECT balance_minor FROM accounts WHERE id = 'acc-001'")[0]["balance_minor"]
            seen: dict[str, str] = {}

            async def play(info: dict[str, object], amount: str, mode: str) -> None:
                async with Client(str(info["mcp_url"]), mode=mode) as client:
                    for _ in range(3):  # interleave with the other episode's calls
                        await client.call_tool("list_accounts", {})
                    result = await client.call_tool("transfer", pay(amount))
                    assert not result.is_error, result.content
                    shown = await client.call_tool("get_account", {"account_id": "acc-001"})
                    seen[amount] = shown.structured_content["balance"]  # type: ignore[index]

            async with anyio.create_task_group() as tg:
                tg.start_soon(play, a, "10.00", "auto")
                tg.start_soon(play, b, "25.00", "legacy")
            assert seen["10.00"] == f"{(start - 1000) / 100:.2f}"
            assert seen["25.00"] == f"{(start - 2500) / 100:.2f}"
            for info, minor in ((a, 1000), (b, 2500)):
                world = server.manager.get(str(info["id"])).world
                assert world.query("SELECT amount_minor FROM transfers") == [{"amount_minor": minor}]


async def test_unknown_episode_endpoint_is_404_naming_the_id() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            response = await http.post(server.episode_url("ep-nothere"), json={"jsonrpc": "2.0", "id": 7, "method": "ping"})
            assert response.status_code == 404
            body = response.json()
            assert body["id"] == 7
            assert body["error"]["code"] == EPISODE_NOT_FOUND
            assert body["error"]["data"] == {"error": "episode_not_found", "episode": "ep-nothere"}
            assert "no episode 'ep-nothere'" in body["error"]["message"]
            for mode in MODES:
                with pytest.RaisesGroup(pytest.RaisesExc(MCPError, match="no episode 'ep-nothere'"), flatten_subgroups=True):
                    async with Client(server.episode_url("ep-nothere"), mode=mode) as client:
                        await client.list_tools()


@pytest.mark.parametrize("mode", MODES)
async def test_closed_episode_stops_answering(mode: str) -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            episode = server.manager.create()
            async with Client(server.episode_url(episode.id), mode=mode) as client:
                await client.call_tool("list_accounts", {})
                closed = await http.post(f"{server.control_url}/episodes/{episode.id}/close", headers=server.control_headers)
                assert closed.status_code == 200 and closed.json()["state"] == "closed"
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("list_accounts", {})
                assert caught.value.error.code == EPISODE_NOT_FOUND and "is closed" in caught.value.error.message
            assert len(episode.record.tool_calls) == 1
            response = await http.post(server.episode_url(episode.id), json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert response.status_code == 404 and "is closed" in response.json()["error"]["message"]


async def test_resolver_refuses_a_released_episode_mid_session() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server:
            episode = server.manager.create()
            async with Client(server.episode_url(episode.id), mode="legacy") as client:
                await client.list_tools()
                server.manager.release(episode.id)
                with pytest.raises(MCPError) as caught:
                    await client.call_tool("list_accounts", {})
            assert caught.value.error.code == EPISODE_NOT_FOUND
            assert episode.id in caught.value.error.message
            assert episode.record.tool_calls == []


async def test_dns_rebinding_protection_on_loopback() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            episode = server.manager.create()
            body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            for url in (server.episode_url(episode.id), server.mcp_url):
                rebound = await http.post(url, json=body, headers={"Host": "evil.example:80"})
                assert rebound.status_code == 421, rebound.text
                cross_origin = await http.post(url, json=body, headers={"Origin": "http://evil.example"})
                assert cross_origin.status_code == 403, cross_origin.text
            assert episode.record.tool_calls == []
