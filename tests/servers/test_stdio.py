"""stdio transport: the serve CLI as a subprocess, driven by a real mcp.Client, one episode per process."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from servers import EpisodeManager, read_record
from servers.dispatch import call_tool
from tests.toy_env import environment

REPO = Path(__file__).resolve().parents[2]
MODES = ["auto", "legacy"]


def toy_server(*args: str) -> StdioServerParameters:
    """``python -m tests.toy_env serve ARGS`` from the repository root, with this run's environment."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tests.toy_env", "serve", *args], cwd=str(REPO), env=dict(os.environ)
    )


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_episode_end_to_end(tmp_path: Path, mode: str) -> None:
    record_path = tmp_path / "episode.jsonl"
    with anyio.fail_after(60):
        async with Client(toy_server("--task", "pay_back", "--seed", "3", "--record", str(record_path)), mode=mode) as client:
            tools = await client.list_tools()
            assert {t.name for t in tools.tools} == {"list_accounts", "get_account", "transfer", "submit_answer"}
            before = await client.call_tool("get_account", {"account_id": "acc-002"})
            paid = await client.call_tool("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "2.50"})
            after = await client.call_tool("get_account", {"account_id": "acc-002"})
            bad = await client.call_tool("transfer", {"from_account": "acc-001", "to_account": 2})
            policy = await client.read_resource("toy://policy")
    assert not paid.is_error and paid.structured_content["id"] == "tr-0001"  # type: ignore[index]
    assert float(after.structured_content["balance"]) - float(before.structured_content["balance"]) == pytest.approx(2.5)  # type: ignore[index]
    assert bad.is_error and '"error":"invalid_arguments"' in bad.content[0].text  # type: ignore[union-attr]
    assert "never overdraws" in policy.contents[0].text  # type: ignore[union-attr]

    # The process has exited: its record is complete, footer included.
    record = read_record(record_path, expect_env="toy", require_closed=True)
    assert record.header.task == "pay_back" and record.header.seed == 3
    assert record.header.prompt is not None and "owes" in record.header.prompt
    assert [c.tool for c in record.tool_calls] == ["get_account", "transfer", "get_account", "transfer"]
    assert [c.error.code if c.error else None for c in record.tool_calls] == [None, None, None, "invalid_arguments"]
    assert [(c.table, c.op) for c in record.tool_calls[1].changes] == [
        ("accounts", "update"), ("accounts", "update"), ("transfers", "insert"),
    ]
    assert record.closed is not None
    assert record.closed.tool_calls == 4
    assert record.closed.reason in ("stdin closed", "SIGTERM")  # a slow exit gets the client's SIGTERM
    assert record.closed.end_hash != record.header.start_hash


async def test_a_stdio_episode_matches_the_same_episode_in_process(tmp_path: Path) -> None:
    pay = {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.00"}
    with anyio.fail_after(60):
        async with Client(toy_server("--record-dir", str(tmp_path))) as client:
            result = await client.call_tool("transfer", pay)
            assert result.structured_content["id"] == "tr-0001"  # type: ignore[index]  # a fresh world
    (path,) = tmp_path.glob("ep-*.jsonl")
    record = read_record(path, require_closed=True)
    local = EpisodeManager(environment).create()
    await call_tool(local, "transfer", pay)
    assert record.header.start_hash == local.record.header.start_hash
    assert record.closed.end_hash == local.world.hash()  # type: ignore[union-attr]  # deterministic across processes


async def test_sigterm_still_writes_the_footer(tmp_path: Path) -> None:
    record_path = tmp_path / "terminated.jsonl"
    command = [sys.executable, "-m", "tests.toy_env", "serve", "--record", str(record_path)]
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=REPO) as process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send((json.dumps(initialize) + "\n").encode())
            reply = b""
            while not reply.endswith(b"\n"):
                reply += await process.stdout.receive()
            assert json.loads(reply)["result"]["serverInfo"]["name"] == "toolgym-toy"
            process.send_signal(signal.SIGTERM)  # stdin stays open: the server must not wait for it
            assert await process.wait() == -signal.SIGTERM
    record = read_record(record_path, require_closed=True)
    assert record.closed is not None and record.closed.reason == "SIGTERM"


async def test_sigint_closes_the_episode_and_the_process(tmp_path: Path) -> None:
    record_path = tmp_path / "interrupted.jsonl"
    command = [sys.executable, "-m", "tests.toy_env", "serve", "--record", str(record_path)]
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=REPO) as process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send((json.dumps(initialize) + "\n").encode())
            reply = b""
            while not reply.endswith(b"\n"):
                reply += await process.stdout.receive()
            process.send_signal(signal.SIGINT)  # Ctrl-C in the terminal that launched it; stdin stays open
            assert await process.wait() == -signal.SIGINT
    record = read_record(record_path, require_closed=True)
    assert record.closed is not None and record.closed.reason == "SIGINT"
