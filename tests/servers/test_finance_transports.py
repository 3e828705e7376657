"""The finance environment as users serve it: ``python -m envs.finance serve`` over stdio and over HTTP."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from servers import load_environment, read_record

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def child_env(template_cache: str) -> dict[str, str]:
    """Environment for the server subprocesses: the run's template cache, so only the first one builds it."""
    return {**os.environ, "TOOLGYM_CACHE_DIR": template_cache, "TOOLGYM_TOKEN": ""}


@pytest.fixture(scope="module")
def first_customer() -> str:
    """A customer id of the finance world on fixture seed 0 (same seed → same world in the subprocess)."""
    world = load_environment("finance").fixture.world(0)
    return str(world.query("SELECT customer_id FROM customers ORDER BY customer_id LIMIT 1")[0]["customer_id"])


async def test_finance_over_stdio(tmp_path: Path, first_customer: str, child_env: dict[str, str]) -> None:
    record_path = tmp_path / "finance.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "envs.finance", "serve", "--record", str(record_path)],
        cwd=str(REPO),
        env=child_env,
    )
    with anyio.fail_after(60):
        async with Client(params) as client:  # both protocol eras over stdio: tests/servers/test_stdio.py
            tools = {t.name for t in (await client.list_tools()).tools}
            added = await client.call_tool("add_note", {"customer_id": first_customer, "body": "called about fees"})
            notes = await client.call_tool("list_notes", {"customer_id": first_customer})
            bad = await client.call_tool("add_note", {"customer_id": 1})
    assert tools == set(load_environment("finance").tool_specs)
    assert not added.is_error, added.content
    assert "called about fees" in [n["body"] for n in notes.structured_content["notes"]]  # type: ignore[index]
    assert bad.is_error and '"error":"invalid_arguments"' in bad.content[0].text  # type: ignore[union-attr]

    record = read_record(record_path, expect_env="finance", require_closed=True)
    assert [c.tool for c in record.tool_calls] == ["add_note", "list_notes", "add_note"]
    assert "notes" in {c.table for c in record.tool_calls[0].changes}
    assert record.tool_calls[2].changes == []  # the refused call wrote nothing
    assert record.closed is not None and record.closed.tool_calls == 3
    assert record.closed.end_hash != record.header.start_hash


async def test_finance_over_http_cli(first_customer: str, child_env: dict[str, str]) -> None:
    command = [sys.executable, "-m", "envs.finance", "serve", "--transport", "http", "--port", "0"]
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=REPO, env=child_env) as process:
            assert process.stderr is not None
            banner = ""
            async for chunk in process.stderr:
                banner += chunk.decode()
                if "claude mcp add" in banner and banner.endswith("\n"):
                    break
            mcp_url = next(line.split(": ", 1)[1].strip() for line in banner.splitlines() if "MCP (one episode" in line)
            assert f"claude mcp add --transport http finance {mcp_url}" in banner
            async with Client(mcp_url) as client:
                shown = await client.call_tool("get_customer", {"customer_id": first_customer})
            assert not shown.is_error, shown.content
            process.send_signal(signal.SIGINT)
            assert await process.wait() == 0
