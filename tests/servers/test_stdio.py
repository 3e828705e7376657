"""stdio transport: the serve CLI as a subprocess, driven by a real mcp.Client, one episode per process."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from servers import read_record

REPO = Path(__file__).resolve().parents[2]
MODES = ["auto", "legacy"]


def toy_server(*args: str) -> StdioServerParameters:
    """``python -m tests.toy_env serve ARGS`` from the repository root."""
    return StdioServerParameters(command=sys.executable, args=["-m", "tests.toy_env", "serve", *args], cwd=str(REPO))


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
    assert record.closed.tool_calls == 4 and record.closed.reason == "stdin closed"
    assert record.closed.end_hash != record.header.start_hash


async def test_each_stdio_process_is_a_fresh_episode(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        for _ in range(2):
            async with Client(toy_server("--record-dir", str(tmp_path))) as client:
                result = await client.call_tool("transfer", {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.00"})
                assert result.structured_content["id"] == "tr-0001"  # type: ignore[index]
    records = [read_record(p, require_closed=True) for p in sorted(tmp_path.glob("*.jsonl"))]
    assert len(records) == 2
    assert records[0].header.episode_id != records[1].header.episode_id
    assert records[0].header.start_hash == records[1].header.start_hash
    assert records[0].closed.end_hash == records[1].closed.end_hash  # type: ignore[union-attr]  # deterministic
