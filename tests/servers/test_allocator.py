"""Memory that comes back on a long-lived HTTP server: the system allocator by default, and a reaper that
collects and trims once episodes are released and their connections closed (servers/malloc.py)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import anyio
import httpx
import pytest

from servers import malloc
from servers.http import running_http
from tests.servers.test_cli import read_banner
from tests.toy_env import environment as toy_environment

REPO = Path(__file__).resolve().parents[2]
LINUX_GLIBC = sys.platform.startswith("linux") and malloc.configure()

pytestmark = pytest.mark.skipif(not LINUX_GLIBC, reason="the allocator switch and malloc_trim are glibc-only")


def environ_of(pid: int) -> dict[str, str]:
    """The environment the process ``pid`` runs with now (after any exec), from /proc."""
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


async def serve_and_read(*flags: str, env: dict[str, str] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """Start the toy HTTP server with ``flags``; its banner and its environment, read once it serves."""
    base = {key: value for key, value in os.environ.items() if key != "PYTHONMALLOC"}
    command = [sys.executable, "-m", "tests.toy_env", "serve", "--transport", "http", "--port", "0", "--no-token", *flags]
    with anyio.fail_after(60):
        async with await anyio.open_process(command, cwd=REPO, env={**base, **(env or {})}) as process:
            try:
                banner = await read_banner(process)
                async with httpx.AsyncClient() as http:  # it serves, and from the pid we started
                    health = await http.get(f"{banner['control API'].split()[0].rstrip('/')}/health")
                    assert health.status_code == 200
                seen = environ_of(process.pid)
            finally:
                process.terminate()
            await process.wait()
    return banner, seen


async def test_an_http_server_runs_on_the_system_allocator_by_default_in_the_same_process() -> None:
    banner, seen = await serve_and_read()
    assert seen.get("PYTHONMALLOC") == "malloc"
    assert banner["allocator"].startswith("system malloc")


async def test_allocator_python_keeps_pymalloc() -> None:
    banner, seen = await serve_and_read("--allocator", "python")
    assert "PYTHONMALLOC" not in seen
    assert banner["allocator"].startswith("pymalloc")


async def test_an_operators_pythonmalloc_is_left_alone() -> None:
    banner, seen = await serve_and_read(env={"PYTHONMALLOC": "pymalloc"})
    assert seen.get("PYTHONMALLOC") == "pymalloc"
    assert banner["allocator"].startswith("pymalloc")


def test_the_switch_never_restarts_a_process_that_is_not_its_own_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process server (tests, a trainer embedding it) must never be replaced by a re-exec."""
    calls: list[object] = []
    monkeypatch.setattr(os, "execve", lambda *args: calls.append(args))
    monkeypatch.setenv("PYTHONMALLOC", "malloc")
    malloc.use_system_allocator()
    monkeypatch.delenv("PYTHONMALLOC")
    monkeypatch.setattr(sys, "orig_argv", [])
    malloc.use_system_allocator()
    assert calls == []


async def test_the_reaper_collects_and_trims_once_episodes_are_released_and_connections_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collected: list[float] = []
    monkeypatch.setattr(malloc, "collect_and_trim", lambda: collected.append(time.monotonic()) or True)
    monkeypatch.setattr(malloc, "trim", lambda: True)

    async def quiet_passes(count: int) -> None:
        await anyio.sleep(0.05 * count)

    async def until_collected(times: int) -> None:
        with anyio.fail_after(10):
            while len(collected) < times:
                await anyio.sleep(0.01)

    # worlds pooled by earlier tests of this process would be freed by the first pass (and collected): not ours
    toy_environment.fixture.shrink_pool(idle=-1.0)
    with anyio.fail_after(60):
        async with running_http(toy_environment, reap_interval=0.05) as server:
            await quiet_passes(4)
            assert collected == []  # nothing was released: an idle server does not collect over and over
            async with httpx.AsyncClient(base_url=server.control_url, headers=server.control_headers) as http:
                for _ in range(3):
                    created = await http.post("/episodes", json={"task": "pay_back"})
                    assert created.status_code == 201, created.text
                    finished = await http.post(f"/episodes/{created.json()['id']}/finish", json={"grade": True, "release": True})
                    assert finished.status_code == 200, finished.text
                await until_collected(1)  # on the first quiet pass after the server went idle
                await quiet_passes(6)
                assert len(collected) == 1  # and not again while nothing changes
            # The client closed its kept-alive connection: what it held is freed now, so trimmed again.
            await until_collected(2)
            await quiet_passes(6)
            assert len(collected) == 2
