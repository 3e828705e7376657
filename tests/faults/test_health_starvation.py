"""Health tells a slow event loop from a stuck one (issue 28): a loop whose beats come seconds late while it keeps
answering requests is ``ok`` with its lag; only a loop that makes no progress at all is ``stalled`` (503). On main
a liveness probe got 503 from a server that was only starved of CPU. A real server process (the toy bank plus a
tool that holds the loop), its health listener, real clients."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx

from tests.faults.processes import MODERN, HttpServer, http_server, tool_call

CLIENTS = 12
"""Episodes crunching at once: their calls land in one pass of the loop, 12 × 150 ms without a heartbeat."""


async def _crunch(server: HttpServer, http: httpx.AsyncClient, episode: str, ms: int, ident: int = 1) -> None:
    body = tool_call(ident, "crunch", {"ms": ms}, modern=True)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN,
               "Mcp-Method": "tools/call", "Mcp-Name": "crunch"}
    answer = await http.post(f"{server.url}/episodes/{episode}/mcp", content=json.dumps(body), headers=headers)
    assert answer.status_code == 200 and "error" not in answer.json(), answer.text


async def _probe(server: HttpServer, http: httpx.AsyncClient, seen: list[tuple[int, dict[str, Any]]], until: anyio.Event) -> None:
    assert server.health_url is not None
    while not until.is_set():
        answer = await http.get(server.health_url, headers=server.headers, timeout=5)
        seen.append((answer.status_code, answer.json()))
        await anyio.sleep(0.1)


async def test_a_slow_loop_is_ok_with_its_lag_and_only_a_stuck_one_is_stalled() -> None:
    async with http_server("--health-port", "0", "--stall-after", "1", module="tests.faults.busy_env") as server:
        async with httpx.AsyncClient(timeout=30) as http:
            episodes = [(await server.create(http)).json()["id"] for _ in range(CLIENTS)]

            # Slow: every pass of the loop runs a dozen 150 ms calls back to back (~1.8 s without a beat, beyond
            # --stall-after), yet requests are answered all along.
            slow: list[tuple[int, dict[str, Any]]] = []
            done = anyio.Event()

            async def client(episode: str) -> None:
                with anyio.move_on_after(3):
                    for ident in range(1000):
                        await _crunch(server, http, episode, 150, ident)

            async with anyio.create_task_group() as tg:
                tg.start_soon(_probe, server, http, slow, done)
                async with anyio.create_task_group() as clients:
                    for episode in episodes:
                        clients.start_soon(client, episode)
                done.set()
            assert slow and all(status == 200 for status, _ in slow), [(s, b["loop"]) for s, b in slow if s != 200][:3]
            assert max(body["loop"]["lag_ms"] for _, body in slow) >= 1000  # it was slow, and health said how slow

            # Stuck: one call holds the loop for 2.5 s; nothing progresses, and after --stall-after health says so.
            stuck: list[tuple[int, dict[str, Any]]] = []
            done = anyio.Event()
            async with anyio.create_task_group() as tg:
                tg.start_soon(_probe, server, http, stuck, done)
                await _crunch(server, http, episodes[0], 2500)
                done.set()
            stalled = [body for status, body in stuck if status == 503]
            assert stalled and all(body["status"] == "stalled" for body in stalled)
            assert max(body["loop"]["no_progress_ms"] for body in stalled) >= 1000
            await anyio.sleep(0.5)
            answer = await http.get(server.health_url, headers=server.headers)  # type: ignore[arg-type]
            assert answer.status_code == 200 and answer.json()["status"] == "ok"  # back to normal once it runs again
        assert "Traceback" not in server.log()
