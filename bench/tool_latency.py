"""Per-call latency of a typical read tool through toolgym vs a bare ``MCPServer`` tool, same SQL, same run.

Both sides run the very same tool body against a clone of the same world; what differs is the path a call
takes: the SDK's own ``MCPServer`` (function-metadata validation, result serialisation) versus toolgym's
dispatch (validation, episode routing, read-only guard, the record). Measured in memory and over
streamable HTTP on 127.0.0.1, plus episode creation over the HTTP control API.

    python bench/tool_latency.py [--calls N] [--tool get_account]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import time
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import uvicorn
from mcp import Client
from mcp.server import MCPServer
from rich.console import Console
from rich.table import Table

from servers import EpisodeManager, ToolContext, connect_in_memory, load_environment
from servers.http import running_http


async def timed(call: Callable[[], Awaitable[Any]], calls: int) -> list[float]:
    """Latencies in ms of ``calls`` sequential awaits of ``call`` (after 20 warm-up calls)."""
    for _ in range(20):
        await call()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def bare_server(environment: Any, tool_name: str) -> tuple[MCPServer, dict[str, Any]]:
    """A plain SDK server exposing one tool that runs toolgym's tool body on its own world clone."""
    spec = environment.tool_specs[tool_name]
    world = environment.fixture.world(0)
    ctx = ToolContext(world=world, episode_id="bare")
    account_id = world.query("SELECT account_id FROM accounts WHERE status = 'open' ORDER BY account_id LIMIT 1")[0]["account_id"]
    server = MCPServer("bare", log_level="WARNING")

    async def bare_tool(account_id):  # type: ignore[no-untyped-def]
        return await spec.fn(ctx, account_id)

    # The same argument and result types as the toolgym tool, so the SDK builds equivalent schemas.
    bare_tool.__annotations__ = {"account_id": str, "return": typing.get_type_hints(spec.fn)["return"]}
    bare_tool.__doc__ = spec.description
    server.add_tool(bare_tool, name=tool_name)
    return server, {"account_id": account_id}


def bind() -> socket.socket:
    """A loopback socket with TCP_NODELAY (without it each HTTP call waits ~40 ms on delayed ACKs)."""
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


async def main() -> None:
    """Measure and print the comparison table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--tool", default="get_account")
    args = parser.parse_args()

    environment = load_environment("finance")
    bare, arguments = bare_server(environment, args.tool)
    manager = EpisodeManager(environment)
    episode = manager.create(seed=0)
    rows: list[tuple[str, str, list[float]]] = []

    async with Client(bare) as client:
        rows.append(("in-memory", "bare MCPServer", await timed(lambda: client.call_tool(args.tool, arguments), args.calls)))
    async with connect_in_memory(episode) as client:
        rows.append(("in-memory", "toolgym", await timed(lambda: client.call_tool(args.tool, arguments), args.calls)))

    sock = bind()
    app = bare.streamable_http_app(json_response=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        while not server.started:
            await anyio.sleep(0.01)
        async with Client(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp") as client:
            rows.append(("http", "bare MCPServer", await timed(lambda: client.call_tool(args.tool, arguments), args.calls)))
        server.should_exit = True

    async with running_http(environment) as http:
        async with httpx.AsyncClient(base_url=http.url, headers=http.control_headers) as control:
            created = (await control.post("/control/episodes", json={"task": None, "seed": 0})).json()
            async with Client(created["mcp_url"]) as client:
                rows.append(("http", "toolgym", await timed(lambda: client.call_tool(args.tool, arguments), args.calls)))
            rows.append(("http control", "GET /control/health (baseline)", await timed(lambda: control.get("/control/health"), 200)))

            async def create_and_release() -> None:
                response = await control.post("/control/episodes", json={"task": None, "seed": 0})
                await control.delete(f"/control/episodes/{response.json()['id']}")

            async def create_only() -> None:
                response = await control.post("/control/episodes", json={"task": None, "seed": 0})
                response.raise_for_status()
                http.manager.release(response.json()["id"])  # keep the manager small without a second request

            rows.append(("http control", "POST /control/episodes", await timed(create_only, 200)))
            rows.append(("http control", "create + DELETE episode", await timed(create_and_release, 200)))

    table = Table(title=f"finance `{args.tool}` latency, {args.calls} sequential calls per row")
    for column in ("transport", "path", "median ms", "p90 ms", "ratio"):
        table.add_column(column, justify="left" if column in ("transport", "path") else "right")
    baseline: dict[str, float] = {}
    for transport, path, samples in rows:
        median = statistics.median(samples)
        baseline.setdefault(transport, median)
        table.add_row(transport, path, f"{median:.3f}", f"{statistics.quantiles(samples, n=10)[-1]:.3f}", f"{median / baseline[transport]:.2f}x")
    Console().print(table)
    print("goal: toolgym / bare MCPServer <= 1.3x per transport")


if __name__ == "__main__":
    anyio.run(main)
