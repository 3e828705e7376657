"""In-memory MCP: a real mcp.Client bound to one episode, in both protocol eras; one client shared by many episodes."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from servers import Episode, EpisodeManager, connect_in_memory
from servers.mcp_server import EPISODE_NOT_FOUND
from servers.memory import SharedClient
from tests.toy_env import environment as toy_environment

MODES = ["auto", "legacy"]
PAY = {"from_account": "acc-001", "to_account": "acc-002", "amount": "3.00"}


def balance(episode: Episode, account: str) -> int:
    return int(episode.world.query("SELECT balance_minor FROM accounts WHERE id = ?", (account,))[0]["balance_minor"])


@pytest.mark.parametrize("mode", MODES)
async def test_list_tools_shows_schemas_and_hints(toy_episode: Episode, mode: str) -> None:
    async with connect_in_memory(toy_episode, mode=mode) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"list_accounts", "get_account", "transfer", "submit_answer"}
    transfer = tools["transfer"]
    assert transfer.description and "overdraw" in transfer.description
    assert transfer.input_schema["required"] == ["from_account", "to_account", "amount"]
    assert transfer.input_schema["additionalProperties"] is False
    assert transfer.annotations is not None
    assert transfer.annotations.read_only_hint is False and transfer.annotations.destructive_hint is True
    assert tools["list_accounts"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["transfer"].output_schema is not None


@pytest.mark.parametrize("mode", MODES)
async def test_call_tool_changes_the_world(toy_episode: Episode, mode: str) -> None:
    before = balance(toy_episode, "acc-002")
    async with connect_in_memory(toy_episode, mode=mode) as client:
        result = await client.call_tool("transfer", PAY)
        assert not result.is_error
        assert result.structured_content is not None and result.structured_content["id"] == "tr-0001"
        assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
        shown = await client.call_tool("get_account", {"account_id": "acc-002"})
    assert balance(toy_episode, "acc-002") == before + 300
    assert shown.structured_content is not None
    assert shown.structured_content["balance"] == f"{(before + 300) // 100}.{(before + 300) % 100:02d}"


@pytest.mark.parametrize("mode", MODES)
async def test_bad_input_is_an_error_result_and_changes_nothing(toy_episode: Episode, mode: str) -> None:
    start = toy_episode.world.hash()
    async with connect_in_memory(toy_episode, mode=mode) as client:
        for arguments in (
            {"from_account": "acc-001", "to_account": 2, "amount": "1.00"},
            {"from_account": "acc-001"},
            {**PAY, "amount": 5},
            {**PAY, "extra": True},
        ):
            result = await client.call_tool("transfer", arguments)
            assert result.is_error, arguments
            body = json.loads(result.content[0].text)  # type: ignore[union-attr]
            assert body["error"] == "invalid_arguments" and body["message"], arguments
        unknown = await client.call_tool("launch_rockets", {})
        refused = await client.call_tool("transfer", {**PAY, "amount": "9999999.99"})
    assert unknown.is_error and json.loads(unknown.content[0].text)["error"] == "unknown_tool"  # type: ignore[union-attr]
    assert refused.is_error and json.loads(refused.content[0].text)["error"] == "insufficient_funds"  # type: ignore[union-attr]
    assert toy_episode.world.hash() == start
    assert len(toy_episode.record.tool_calls) == 6


@pytest.mark.parametrize("mode", MODES)
async def test_resources_are_readable(toy_episode: Episode, mode: str) -> None:
    async with connect_in_memory(toy_episode, mode=mode) as client:
        listed = await client.list_resources()
        assert [str(r.uri) for r in listed.resources] == ["toy://policy"]
        read = await client.read_resource("toy://policy")
        assert "never overdraws" in read.contents[0].text  # type: ignore[union-attr]
        with pytest.raises(MCPError, match="no resource"):
            await client.read_resource("toy://secrets")


@pytest.mark.parametrize("mode", MODES)
async def test_closed_episode_refuses_calls(toy_manager: EpisodeManager, mode: str) -> None:
    episode = toy_manager.create()
    async with connect_in_memory(episode, mode=mode) as client:
        await client.call_tool("list_accounts", {})
        toy_manager.close(episode.id)
        with pytest.raises(MCPError) as caught:
            await client.call_tool("list_accounts", {})
    assert caught.value.error.code == EPISODE_NOT_FOUND
    assert episode.id in caught.value.error.message
    assert len(episode.record.tool_calls) == 1


async def test_two_episodes_are_isolated(toy_manager: EpisodeManager) -> None:
    first, second = toy_manager.create(), toy_manager.create()
    start = balance(second, "acc-001")
    async with connect_in_memory(first) as a, connect_in_memory(second) as b:
        await a.call_tool("transfer", PAY)
        seen = await b.call_tool("get_account", {"account_id": "acc-001"})
    assert balance(first, "acc-001") == start - 300
    assert balance(second, "acc-001") == start
    assert seen.structured_content is not None and len(second.record.tool_calls) == 1


async def test_a_shared_client_routes_each_binding_to_its_episode(toy_manager: EpisodeManager) -> None:
    first, second = toy_manager.create(), toy_manager.create()
    start = balance(second, "acc-001")
    async with SharedClient(toy_environment) as shared:
        with shared.bind(first) as client:
            await client.call_tool("transfer", PAY)
        with shared.bind(second) as same_client:
            seen = await same_client.call_tool("get_account", {"account_id": "acc-001"})
    assert same_client is client  # one client, two episodes
    assert balance(first, "acc-001") == start - 300 and balance(second, "acc-001") == start
    assert seen.structured_content is not None and seen.structured_content["balance"] == f"{start // 100}.{start % 100:02d}"
    assert [e.tool for e in first.record.tool_calls] == ["transfer"]
    assert [e.tool for e in second.record.tool_calls] == ["get_account"]


async def test_concurrent_tasks_bound_to_two_episodes_never_see_each_others_world(toy_manager: EpisodeManager) -> None:
    episodes = {"1.00": toy_manager.create(), "2.00": toy_manager.create()}
    start = balance(episodes["1.00"], "acc-001")
    started = {amount: anyio.Event() for amount in episodes}
    shown: dict[str, str] = {}

    async def agent(shared: SharedClient, amount: str, other: str) -> None:
        with shared.bind(episodes[amount]) as client:
            await client.call_tool("transfer", {**PAY, "amount": amount})
            started[amount].set()
            await started[other].wait()  # both bindings are live at once from here on
            for _ in range(2):
                await client.call_tool("transfer", {**PAY, "amount": amount})
                await anyio.sleep(0)
            seen = await client.call_tool("get_account", {"account_id": "acc-001"})
        assert seen.structured_content is not None
        shown[amount] = seen.structured_content["balance"]

    with anyio.fail_after(10):
        async with SharedClient(toy_environment) as shared, anyio.create_task_group() as tasks:
            tasks.start_soon(agent, shared, "1.00", "2.00")
            tasks.start_soon(agent, shared, "2.00", "1.00")
    for amount, episode in episodes.items():
        end = start - 3 * int(amount.replace(".", ""))
        assert balance(episode, "acc-001") == end
        assert shown[amount] == f"{end // 100}.{end % 100:02d}"
        transfers = [e.arguments["amount"] for e in episode.record.tool_calls if e.tool == "transfer"]
        assert transfers == [amount] * 3 and len(episode.record.tool_calls) == 4


async def test_a_shared_client_outside_any_binding_fails_clearly(toy_manager: EpisodeManager) -> None:
    episode = toy_manager.create()
    unopened = SharedClient(toy_environment)
    with pytest.raises(RuntimeError, match="the shared client is not open"):
        with unopened.bind(episode):
            pass
    async with SharedClient(toy_environment) as shared:
        with shared.bind(episode) as client:
            await client.call_tool("list_accounts", {})
        with pytest.raises(MCPError) as outside:
            await client.call_tool("transfer", PAY)
        toy_manager.close(episode.id)
        with shared.bind(episode) as client, pytest.raises(MCPError) as closed:
            await client.call_tool("list_accounts", {})
    for caught in (outside, closed):
        assert caught.value.error.code == EPISODE_NOT_FOUND
        assert caught.value.error.message == "no live episode is bound to this request (it was made outside its episode)"
    assert [e.tool for e in episode.record.tool_calls] == ["list_accounts"]
