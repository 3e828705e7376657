"""Running out of file descriptors: the server stops accepting without spinning, and health still answers.

Issue 19: with ``ulimit -n 256`` and 300 connections, the server spun at 85% CPU on its accept loop, its
health endpoint stopped answering until clients closed, and it logged 200,000+ errors per report.
"""

from __future__ import annotations

import socket

import anyio
import httpx

from tests.faults.limited import cpu_seconds, limited_server

LIMIT = 256
CONNECTIONS = 300
WINDOW = 3.0
"""Seconds over which the server's CPU time is measured while it is full."""


def _open(address: tuple[str, int], count: int) -> list[socket.socket]:
    """``count`` TCP connections that send nothing (each one a descriptor in the server, once accepted)."""
    return [socket.create_connection(address, timeout=10) for _ in range(count)]


async def test_out_of_descriptors_the_server_backs_off_and_answers_health() -> None:
    with anyio.fail_after(180):
        async with limited_server("tests.toy_env", "--allocator", "python", limits={"RLIMIT_NOFILE": LIMIT}) as server:
            pid = server.process.pid
            async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=1)) as existing:
                created = await existing.post(f"{server.url}/control/episodes", json={}, headers=server.headers)  # its connection stays open
                assert created.status_code == 201, created.text
                episode = created.json()["id"]

                held = await anyio.to_thread.run_sync(_open, server.address, CONNECTIONS)
                try:
                    await anyio.sleep(1.0)  # let the server take what it can
                    before = cpu_seconds(pid)
                    await anyio.sleep(WINDOW)
                    spent = cpu_seconds(pid) - before
                    # measured: 0.01-0.02 s now; 0.7 s (2 cores, 24%) to 85% of a core before, spinning on accept
                    assert spent < WINDOW * 0.1, f"the server spent {spent:.2f} s of CPU in {WINDOW} s while full"

                    # a connection it already had still works
                    again = await existing.get(f"{server.url}/control/episodes/{episode}", headers=server.headers)
                    assert again.status_code == 200, again.text

                    # a monitor's new connection gets its health (the overflow lane), others a clear 503
                    # (before: no answer until the silent connections' 30 s head deadline freed descriptors)
                    async with httpx.AsyncClient(timeout=10) as monitor:
                        health = await monitor.get(f"{server.url}/control/health", headers=server.headers)
                        assert health.status_code == 200 and health.json()["status"] == "ok", health.text
                        connections = health.json()["limits"]["connections"]
                        assert connections["open"] <= connections["max"] and connections["pauses"] >= 1, connections
                        other = await monitor.post(f"{server.url}/control/episodes", json={}, headers=server.headers)
                        assert other.status_code in (201, 503)
                        if other.status_code == 503:
                            assert other.json()["error"] == "connection_limit"
                finally:
                    for sock in held:
                        sock.close()

                # once clients close, new connections are accepted and served again
                with anyio.fail_after(30):
                    while True:
                        async with httpx.AsyncClient(timeout=30) as fresh:
                            response = await fresh.post(f"{server.url}/control/episodes", json={}, headers=server.headers)
                        if response.status_code == 201:
                            break
                        await anyio.sleep(0.2)
            assert server.process.returncode is None
            lines = [line for line in server.log().splitlines() if "connection limit reached" in line or "out of file descriptors" in line]
            assert 1 <= len(lines) <= 3, lines  # one line per interval, not one per failed accept
            assert "Traceback" not in server.log(), server.log()[-3000:]
