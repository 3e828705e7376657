"""Records on a disk that fills up or is read-only: a call's world change and its record line succeed or
fail together, the client is told which with a valid JSON-RPC error, and the record never holds a torn line.

Both record modes, as real server processes on a real tmpfs: stdio ``--record`` and HTTP ``--record-dir``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx

from fixtures.outputs import MARKER
from graders.replay import apply_changes
from servers.record import Record, ToolCallEvent
from tests.faults.conftest import Disk
from tests.faults.processes import REPO, http_server, stdio_server, tool_call
from tests.toy_env import environment

PAY = {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.00"}
RECORD_UNWRITABLE = -32006
"""``servers.mcp_server.RECORD_UNWRITABLE`` (spelled out: the suite must also run, and fail, against code without it)."""


def whole_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a record file, parsed; the file ends at a line boundary (no torn line)."""
    data = path.read_bytes()
    assert data.endswith(b"\n"), f"{path} ends with a torn line: {data[-80:]!r}"
    return [json.loads(line) for line in data.splitlines()]


def replayed_hash(lines: list[dict[str, Any]]) -> str:
    """The world a record describes: its free-play start plus every recorded change, hashed."""
    header = lines[0]
    world = environment.new_world(header["fixture_seed"])
    try:
        for line in lines[1:]:
            if line["type"] == "tool_call":
                apply_changes(world, ToolCallEvent.model_validate(line).changes)
        return world.hash()
    finally:
        world.release()


async def test_stdio_record_on_a_full_disk_keeps_world_and_record_together(small_disk: Disk) -> None:
    record = small_disk.path / "episode.jsonl"
    answered_ok = 0
    errors: list[dict[str, Any]] = []
    with anyio.fail_after(60):
        async with stdio_server("--record", str(record)) as server:
            small_disk.fill()
            for ident in range(1, 41):
                reply = await server.request(tool_call(ident, "transfer", PAY))
                if "error" in reply:
                    errors.append(reply["error"])
                else:
                    assert not reply["result"]["isError"], reply
                    answered_ok += 1
            small_disk.free()  # space back: the episode still refuses (its record stopped at a line)
            after = await server.request(tool_call(99, "list_accounts", {}))
            assert await server.close() == 0
    assert errors, "the disk never filled up"
    assert all(e["code"] == RECORD_UNWRITABLE and "record" in e["message"] for e in errors), errors  # valid codes
    assert "undone" in errors[0]["message"] and "takes no more calls" in errors[1]["message"]
    assert after["error"]["code"] == RECORD_UNWRITABLE
    lines = whole_lines(record)
    calls = [line for line in lines if line["type"] == "tool_call"]
    assert len(calls) == answered_ok and all(c["error"] is None for c in calls)  # exactly the calls answered OK
    # The world the process ended with is the one its record describes (it logs the end hash it closed with).
    closing = next(line for line in server.stderr if "has no footer" in line)
    assert f"end hash {replayed_hash(lines)}" in closing and "Traceback" not in "\n".join(server.stderr)


async def test_http_record_dir_on_a_full_disk(small_disk: Disk) -> None:
    records = small_disk.path / "records"
    async with http_server("--record-dir", str(records)) as server, httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            first = (await server.create(http)).json()["id"]
            small_disk.fill()
            answered_ok = 0
            codes = []
            for ident in range(1, 41):
                reply = (await server.call(http, first, tool_call(ident, "transfer", PAY, modern=True))).json()
                if "error" in reply:
                    codes.append(reply["error"]["code"])
                else:
                    answered_ok += 1
            assert codes and set(codes) == {RECORD_UNWRITABLE}

            # A create cannot write its record's header: a clear JSON error, no file left behind.
            refused = await server.create(http)
            assert refused.status_code == 500 and refused.json()["error"] == "record_unwritable", refused.text
            assert sorted(p.name for p in records.iterdir() if p.name != MARKER) == [f"{first}.jsonl"]

            # finish: graded (free play: not gradable), the record returned whole, the world kept for it.
            finished = await http.post(f"{server.url}/control/episodes/{first}/finish", json={}, headers=server.headers)
            assert finished.status_code == 200, finished.text
            body = finished.json()
            assert body["released"] is False and body["record_error"]["error"] == "record_unwritable"
            memory = Record.model_validate(body["record"])
            assert len(memory.tool_calls) == answered_ok and memory.closed is not None

            lines = whole_lines(records / f"{first}.jsonl")
            assert [c for c in lines if c["type"] == "tool_call"] == [
                json.loads(e.model_dump_json()) for e in memory.tool_calls
            ]  # the file holds exactly what memory holds, minus the footer it could not write
            assert replayed_hash(lines) == memory.closed.end_hash  # world and record agree

            health = await http.get(f"{server.url}/control/health", headers=server.headers)
            assert health.status_code == 200 and health.json()["status"] == "ok"
            small_disk.free()
            again = await server.create(http)  # space is back: new episodes are recorded again
            assert again.status_code == 201, again.text
        assert "Traceback" not in server.log(), server.log()


def test_a_read_only_record_folder_is_one_line_at_startup(small_disk: Disk) -> None:
    small_disk.read_only()
    for args in (["--record", str(small_disk.path / "e.jsonl")], ["--transport", "http", "--port", "0", "--record-dir", str(small_disk.path / "r")]):
        done = subprocess.run(
            [sys.executable, "-m", "tests.toy_env", "serve", *args], cwd=REPO, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False
        )
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and ("not writable" in lines[0] or "Read-only file system" in lines[0]), done.stderr
