"""The memory budget: sizes, limits found in the process's surroundings, refusals that name the figures."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from servers import EpisodeManager
from servers import admission
from servers.admission import MemoryBudget, MemoryLimitReached, parse_size
from servers.http import running_http
from tests.toy_env import environment

MB = 2**20


def test_sizes() -> None:
    assert parse_size("2G") == 2 * 2**30 and parse_size("512M") == 512 * MB and parse_size("1.5GiB") == int(1.5 * 2**30)
    assert parse_size("4096") == 4096 and parse_size("64mb") == 64 * MB
    for bad in ("", "lots", "-1G", "0", "inf"):
        with pytest.raises(ValueError, match="size|positive"):
            parse_size(bad)


def test_the_address_space_limit_is_found() -> None:
    code = (
        "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30));"
        "from servers.admission import MemoryBudget; b = MemoryBudget.resolve(None); print(b.limit, b.source)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith(f"{3 << 30} ") and "RLIMIT_AS" in out
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        budget = MemoryBudget.resolve(None)
        assert budget is None or "cgroup" in budget.source  # no rlimit here: only a container's limit remains


def test_a_refusal_counts_worlds_being_made_and_names_the_figures() -> None:
    budget = MemoryBudget(limit=1000 * MB, source="--max-memory (1,000 MB)", measure=lambda: 700 * MB)
    budget.size_worlds(10 * MB)  # a world: 15 MB; the reserve: 150 MB
    budget.admit()  # 700 + 15 + 150 fits
    with pytest.raises(MemoryLimitReached) as refused:
        budget.admit(pending=10)  # 700 + 11 * 15 + 150 does not
    message = str(refused.value)
    assert "memory limit reached: 700 MB in use of --max-memory (1,000 MB)" in message
    assert "15 MB (and 10 more are being made)" in message and "150 MB kept in reserve" in message
    assert budget.refused == 1


async def test_the_control_api_and_mcp_refuse_cleanly_and_live_episodes_go_on() -> None:
    used = [0]
    budget = MemoryBudget(limit=1000 * MB, source="--max-memory (1,000 MB)", measure=lambda: used[0])
    manager = EpisodeManager(environment, memory=budget)
    with anyio.fail_after(30):
        async with running_http(environment, manager=manager) as server, httpx.AsyncClient() as http:
            created = await http.post(f"{server.control_url}/episodes", json={}, headers=server.control_headers)
            assert created.status_code == 201
            used[0] = 990 * MB  # the process is now nearly full
            refused = await http.post(f"{server.control_url}/episodes", json={}, headers=server.control_headers)
            assert refused.status_code == 503 and refused.json()["error"] == "memory_limit"
            assert "memory limit reached: 990 MB in use of --max-memory" in refused.json()["message"]
            with pytest.RaisesGroup(pytest.RaisesExc(Exception, match="memory limit reached"), flatten_subgroups=True):
                async with Client(server.mcp_url, mode="legacy") as client:
                    await client.call_tool("list_accounts", {})
            async with Client(created.json()["mcp_url"]) as client:  # the live episode is untouched
                assert not (await client.call_tool("list_accounts", {})).is_error
            health = (await http.get(f"{server.control_url}/health", headers=server.control_headers)).json()
            assert health["limits"]["memory"]["refused"] == 2 and health["limits"]["memory"]["used_bytes"] == 990 * MB


def test_a_cgroup_limit_is_found_and_its_page_cache_not_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "memory.max").write_text(f"{1024 * MB}\n")
    (tmp_path / "memory.current").write_text(f"{900 * MB}\n")
    (tmp_path / "memory.stat").write_text(f"anon {300 * MB}\ninactive_file {500 * MB}\nactive_file {100 * MB}\n")
    monkeypatch.setattr(admission, "CGROUP", tmp_path)
    monkeypatch.setattr(admission, "_own_cgroup", lambda: tmp_path)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    budget = MemoryBudget.resolve(None)
    assert budget is not None and budget.limit == 1024 * MB and "cgroup" in budget.source
    assert budget.measure() == 400 * MB  # a container that read many files is not full
    (tmp_path / "memory.max").write_text("max\n")
    assert MemoryBudget.resolve(None) is None  # no limit, no budget
