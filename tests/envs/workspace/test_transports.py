"""The workspace environment as users serve it: ``python -m envs.workspace serve`` over stdio and over HTTP, with
the real SDK client (both protocol eras over stdio are covered for every environment in tests/servers/test_stdio.py)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from servers import load_environment, read_record

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def child_env(template_cache: str) -> dict[str, str]:
    """Environment for the server subprocesses: the run's template cache, so only the first one builds it."""
    return {**os.environ, "TOOLGYM_CACHE_DIR": template_cache, "TOOLGYM_TOKEN": ""}


async def test_workspace_over_stdio(tmp_path: Path, child_env: dict[str, str]) -> None:
    record_path = tmp_path / "workspace.jsonl"
    params = StdioServerParameters(command=sys.executable, args=["-m", "envs.workspace", "serve", "--record", str(record_path)],
                                   cwd=str(REPO), env=child_env)
    with anyio.fail_after(90):
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            made = await client.call_tool("create_issue", {"project_id": "PRJ-02", "title": "From stdio", "description": "Hello"})
            found = await client.call_tool("search_issues", {"query": "From stdio"})
            bad = await client.call_tool("get_issue", {"issue_id": 1})
    assert tools == set(load_environment("workspace").tool_specs)
    assert not made.is_error, made.content
    assert found.structured_content["total"] == 1  # type: ignore[index]
    assert bad.is_error and '"error":"invalid_arguments"' in bad.content[0].text  # type: ignore[union-attr]
    record = read_record(record_path, expect_env="workspace", require_closed=True)
    assert [c.tool for c in record.tool_calls] == ["create_issue", "search_issues", "get_issue"]
    assert record.tool_calls[2].changes == []


async def test_workspace_over_http_cli(child_env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "envs.workspace", "serve", "--transport", "http", "--port", "0"]
    with anyio.fail_after(90):
        async with await anyio.open_process(command, cwd=REPO, env=child_env) as process:
            assert process.stderr is not None
            banner = ""
            async for chunk in process.stderr:
                banner += chunk.decode()
                if "claude mcp add" in banner and banner.endswith("\n"):
                    break
            mcp_url = next(line.split(": ", 1)[1].strip() for line in banner.splitlines() if "MCP (one episode" in line)
            async with Client(mcp_url) as client:
                teams = await client.call_tool("list_teams", {})
            assert not teams.is_error and len(teams.structured_content["teams"]) == 11  # type: ignore[index]
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
