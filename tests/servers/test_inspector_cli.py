"""MCP Inspector's CLI, run again and again against one server: the same answer every time (issue 19).

The Inspector's CLI opens a handshake-era session per run and exits without a DELETE. With the session caps
of old, the fifth run on an episode's URL and the sixty-fifth on ``/mcp`` were refused; now the least
recently used idle session makes room. The Inspector (npm) is installed once into a cache
(``tests/integrations/venvs.py``); without the registry the test skips, and fails under ``CI``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from envs.finance import environment as finance
from servers.http import HttpServer, running_http
from tests.integrations.venvs import ensure_npm

pytestmark = pytest.mark.slow(reason="the MCP Inspector CLI, an npm package from the registry, run repeatedly")

INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"
RUNS = 3
"""Runs per endpoint: past the caps below (2), so the last run needs an eviction."""


async def inspector(folder: Path, url: str, *args: str) -> dict[str, Any]:
    """One ``mcp-inspector --cli`` run; its JSON answer."""
    command = [str(folder / "node_modules" / ".bin" / "mcp-inspector"), "--cli", url, "--transport", "http", *args]
    done = await anyio.run_process(command, check=False)
    assert done.returncode == 0, (done.stdout.decode()[-2000:], done.stderr.decode()[-2000:])
    return json.loads(done.stdout)  # type: ignore[no-any-return]


async def health(server: HttpServer) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{server.control_url}/health", headers=server.control_headers)
    return response.json()["limits"]  # type: ignore[no-any-return]


async def test_inspector_cli_runs_repeatedly_on_mcp_and_on_an_episode_url() -> None:
    folder = await anyio.to_thread.run_sync(ensure_npm, "mcp-inspector", [INSPECTOR])
    with anyio.fail_after(240):
        async with running_http(finance, max_sessions=2, sessions_per_episode=2) as server:
            listed = [await inspector(folder, server.mcp_url, "--method", "tools/list") for _ in range(RUNS)]
            assert all(answer == listed[0] for answer in listed) and any(t["name"] == "submit_answer" for t in listed[0]["tools"])

            episode = server.manager.create()
            url = server.episode_url(episode.id)
            call = ("--method", "tools/call", "--tool-name", "list_accounts", "--tool-arg", "customer_id=CUS-00001")
            called = [await inspector(folder, url, *call) for _ in range(RUNS)]
            assert all(answer == called[0] for answer in called) and called[0]["isError"] is False

            # the answer tool from a simple client: no values given
            answer = ("--method", "tools/call", "--tool-name", "submit_answer", "--tool-arg", "answer=nothing to do",
                      "--tool-arg", "outcome=completed")
            submitted = await inspector(folder, url, *answer)
            assert submitted["isError"] is False and submitted["structuredContent"]["value_names"] == []

            limits = await health(server)
            assert limits["mcp_sessions"]["open"] <= 2 and limits["episode_sessions"]["open"] <= 2
            assert limits["sessions_evicted"] >= 2 * (RUNS - 2)
            assert len(server.manager.list()) <= 3  # the episode and at most two /mcp worlds: none per dead session
            assert len(episode.record.tool_calls) == RUNS + 1
