"""Routing's own answers: refusals read a bounded part of the body; resource templates are listed."""

from __future__ import annotations

import anyio
import httpx
import pytest
from mcp import Client

from servers import EpisodeManager, connect_in_memory
from servers.http import running_http
from servers.routing import ERROR_BODY_LIMIT, _request_id
from tests.toy_env import environment


async def test_finding_a_request_id_never_reads_a_whole_body() -> None:
    read = 0

    async def endless():  # type: ignore[no-untyped-def]
        nonlocal read
        read += 65536
        return {"type": "http.request", "body": b"x" * 65536, "more_body": True}

    scope = {"type": "http", "method": "POST", "headers": []}
    assert await _request_id(scope, endless) is None
    assert read <= ERROR_BODY_LIMIT + 65536
    declared = {"type": "http", "method": "POST", "headers": [(b"content-length", b"300000000")]}
    assert await _request_id(declared, endless) is None and read <= ERROR_BODY_LIMIT + 65536  # not read at all

    async def small():  # type: ignore[no-untyped-def]
        return {"type": "http.request", "body": b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}', "more_body": False}

    assert await _request_id(scope, small) == 7


async def test_a_large_body_to_an_unknown_episode_gets_its_404_quickly() -> None:
    with anyio.fail_after(20):
        async with running_http(environment) as server, httpx.AsyncClient() as http:
            body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (2 * ERROR_BODY_LIMIT) + b'"}'
            response = await http.post(server.episode_url("ep-nothere"), content=body, headers={"content-type": "application/json"})
            assert response.status_code == 404 and response.json()["id"] is None


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_resource_templates_are_listed_not_refused(mode: str) -> None:
    manager = EpisodeManager(environment)
    episode = manager.create()
    async with connect_in_memory(episode, mode=mode) as client:
        assert (await client.list_resource_templates()).resource_templates == []
    with anyio.fail_after(20):
        async with running_http(environment, manager=manager) as server:
            async with Client(server.episode_url(episode.id), mode=mode) as client:
                assert client.server_capabilities.resources is not None
                assert (await client.list_resource_templates()).resource_templates == []
    manager.close_all()
