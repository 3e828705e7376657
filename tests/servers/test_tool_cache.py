"""Tools listed once per client (or process), validators compiled once per process, compact output schemas."""

from __future__ import annotations

import json
from collections.abc import Callable

import anyio
import httpx2
import pytest
from jsonschema.validators import validator_for
from mcp import Client

from servers import EpisodeManager, connect_in_memory
from servers.dispatch import call_tool
from servers.http import running_http
from servers.mcp_server import compact_schema, mcp_tools
from servers.memory import SharedClient
from servers.tool_cache import ToolCache
from tests.toy_env import environment


def methods(requests: list[bytes]) -> list[str]:
    return [json.loads(body)["method"] for body in requests]


async def test_http_clients_of_one_cache_list_once_and_then_send_nothing_before_a_call() -> None:
    sent: list[bytes] = []

    async def hook(request: httpx2.Request) -> None:
        sent.append(request.content)

    cache = ToolCache()
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx2.AsyncClient(event_hooks={"request": [hook]}) as http:
            first, second = server.manager.create(), server.manager.create()
            async with cache.connect(server.episode_url(first.id), http) as client:
                await client.call_tool("get_account", {"account_id": "acc-001"})
                validators = client.session._tool_output_validators  # noqa: SLF001
            assert methods(sent) == ["server/discover", "tools/list", "tools/call"]
            sent.clear()
            async with cache.connect(server.episode_url(second.id), http) as again:
                result = await again.call_tool("get_account", {"account_id": "acc-002"})
                assert again.session._tool_output_validators is validators  # noqa: SLF001 - compiled once
            assert methods(sent) == ["tools/call"] and not result.is_error
            assert cache.listings == 1 and "get_account" in validators
            assert [c.tool for c in second.record.tool_calls] == ["get_account"]


async def test_concurrent_episodes_on_a_shared_client_never_list_tools(sdk_listings: Callable[[], int]) -> None:
    manager = EpisodeManager(environment)
    episodes = [manager.create() for _ in range(8)]

    async def play(shared: SharedClient, index: int) -> None:
        with shared.bind(episodes[index]) as client:
            assert not (await client.call_tool("get_account", {"account_id": "acc-001"})).is_error

    with anyio.fail_after(20):
        async with SharedClient(environment) as shared, anyio.create_task_group() as group:
            for index in range(len(episodes)):
                group.start_soon(play, shared, index)
    assert sdk_listings() == 0
    async with connect_in_memory(episodes[0]) as client:  # a client per episode is primed too
        await client.call_tool("get_account", {"account_id": "acc-001"})
    assert sdk_listings() == 0
    manager.close_all()


async def test_compact_output_schemas_validate_what_the_full_ones_do() -> None:
    full = {t.name: t.output_schema for t in mcp_tools(environment, "full")}
    compact = {t.name: t.output_schema for t in mcp_tools(environment)}
    assert len(json.dumps(compact)) < len(json.dumps(full))
    assert "title" not in json.dumps(compact) and compact["transfer"] == compact_schema(full["transfer"])
    manager = EpisodeManager(environment)
    episode = manager.create()
    event = await call_tool(episode, "list_accounts", {})
    for schemas in (full, compact):
        validator = validator_for(schemas["list_accounts"])(schemas["list_accounts"])
        assert validator.is_valid(event.result)
        assert not validator.is_valid({"accounts": "nope"})
    assert all(t.output_schema is None for t in mcp_tools(environment, "none"))
    with pytest.raises(ValueError, match="output_schemas"):
        mcp_tools(environment, "tiny")  # type: ignore[arg-type]
    manager.close_all()


async def test_a_server_without_output_schemas_still_returns_structured_results() -> None:
    with anyio.fail_after(20):
        async with running_http(environment, output_schemas="none") as server:
            episode = server.manager.create()
            async with Client(server.episode_url(episode.id)) as client:
                assert all(t.output_schema is None for t in (await client.list_tools()).tools)
                result = await client.call_tool("get_account", {"account_id": "acc-001"})
            assert result.structured_content is not None and result.structured_content["id"] == "acc-001"


async def test_a_session_installed_without_validation_takes_a_result_its_schema_would_refuse() -> None:
    # A listing whose get_account schema demands a property the tool never returns: the SDK client refuses the
    # result when the schemas are installed, and takes it when they are left out (the runner's own client).
    tools = []
    for tool in mcp_tools(environment):
        if tool.name == "get_account":
            schema = {**(tool.output_schema or {}), "required": ["never_returned"]}
            tool = tool.model_copy(update={"output_schema": schema})
        tools.append(tool)
    manager = EpisodeManager(environment)
    episode = manager.create()
    with anyio.fail_after(20):
        async with connect_in_memory(episode) as client:
            ToolCache.of(tools).install(client)
            with pytest.raises(RuntimeError, match="Invalid structured content"):
                await client.call_tool("get_account", {"account_id": "acc-001"})
            ToolCache.of(tools).install(client, validate=False)
            result = await client.call_tool("get_account", {"account_id": "acc-001"})
            assert not result.is_error and result.structured_content is not None
            assert result.structured_content["id"] == "acc-001"
            assert client.session._tool_output_schemas == dict.fromkeys(t.name for t in tools)  # noqa: SLF001
    manager.close_all()
