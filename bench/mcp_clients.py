"""Server CPU per episode when every episode gets its own real MCP client, as external agents connect.

A client per episode sends ``server/discover`` and ``tools/list`` before its first call. toolgym answers both from
the bytes the SDK wrote for the first one (``servers/fastlist.py``); a bare SDK server validates and dumps its
whole listing every time. Two server processes, measured side by side in interleaved rounds (A B A B ...):

* ``toolgym``: ``python -m envs.<env> serve --transport http``; per episode a control-API create, an
  ``mcp.Client`` on the episode's URL (discover, ``tools/list``, one call), and finish (graded, released).
* ``bare MCP SDK``: the SDK's own streamable-HTTP app on uvicorn (JSON responses, stateless), listing the very
  same tools (``servers.mcp_server.mcp_tools``), answering the call with a constant; per episode the same
  ``mcp.Client`` (discover, ``tools/list``, one call). No world, no record, no grading.

Server CPU comes from ``/proc/<pid>/stat`` (user + system) around each round; medians and the ratio are printed.

    python bench/mcp_clients.py [--env finance] [--episodes 60] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from allocator import cpu_seconds  # noqa: E402
from mcp import Client  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from runner import start_server  # noqa: E402

from servers.http import new_token  # noqa: E402
from servers.server_client import ServerClient  # noqa: E402


def serve_bare(env_name: str, port: int) -> None:
    """(In the child) the SDK's streamable-HTTP app listing ``env_name``'s tools on ``port``."""
    import mcp_types as types
    import uvicorn
    from mcp.server.lowlevel import Server

    from servers.mcp_server import mcp_tools
    from servers.registry import load_environment

    tools = mcp_tools(load_environment(env_name))

    async def on_list_tools(ctx: object, params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        text = types.TextContent(type="text", text='{"error": "not_found"}')
        return types.CallToolResult(content=[text], is_error=True)

    server = Server("bare", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    app = server.streamable_http_app(json_response=True, stateless_http=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", http="httptools", loop="asyncio")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_bare(env_name: str) -> tuple[subprocess.Popen[bytes], str]:
    """The bare SDK server in a child process; returns it and its MCP URL once it accepts connections."""
    port = _free_port()
    child = subprocess.Popen([sys.executable, __file__, "--serve-bare", env_name, "--port", str(port)], cwd=ROOT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return child, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)
    child.kill()
    raise SystemExit("the bare SDK server did not start")


async def toolgym_episodes(url: str, token: str, task: str, call: tuple[str, dict[str, object]], episodes: int) -> None:
    """``episodes`` episodes, each with its own ``mcp.Client``: create, discover, list, one call, finish."""
    control = ServerClient(url, token=token)
    try:
        for _ in range(episodes):
            created = (await control.control("POST", "/episodes", json={"task": task, "seed": 1})).json()
            async with Client(created["mcp_url"]) as client:
                await client.list_tools()
                await client.call_tool(*call)
            finish = {"reason": "closed", "grade": True, "record": False, "release": True}
            await control.control("POST", f"/episodes/{created['id']}/finish", json=finish)
    finally:
        await control.aclose()


async def bare_episodes(url: str, call: tuple[str, dict[str, object]], episodes: int) -> None:
    """The same client work against the bare SDK server."""
    for _ in range(episodes):
        async with Client(url) as client:
            await client.list_tools()
            await client.call_tool(*call)


def main() -> None:
    """Start both servers, run interleaved rounds, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="finance")
    parser.add_argument("--episodes", type=int, default=60, help="episodes per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve-bare", metavar="ENV", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_bare:
        serve_bare(args.serve_bare, args.port)
        return
    from servers.registry import load_environment

    environment = load_environment(args.env)
    task = next(iter(environment.task_templates()))
    tool = next(iter(environment.tool_specs))
    call = (tool, {})  # arguments need not be valid: a refusal is an answer on both sides
    token = new_token()
    toolgym, toolgym_url = start_server(args.env, token)
    bare, bare_url = start_bare(args.env)
    sides = {
        "toolgym (create, client, finish)": (
            toolgym.pid,
            lambda n: toolgym_episodes(toolgym_url, token, task, call, n),
        ),
        "bare MCP SDK (client only)": (bare.pid, lambda n: bare_episodes(bare_url, call, n)),
    }
    samples: dict[str, list[float]] = {name: [] for name in sides}
    try:
        for _, play in sides.values():
            asyncio.run(play(5))  # warm: imports, templates, the listing each server keeps
        for round_ in range(args.rounds):
            for name, (pid, play) in sides.items():
                before = cpu_seconds(pid)
                asyncio.run(play(args.episodes))
                samples[name].append((cpu_seconds(pid) - before) * 1000 / args.episodes)
            shown = ", ".join(f"{name.split(' (')[0]} {values[-1]:.2f} ms" for name, values in samples.items())
            print(f"round {round_ + 1}/{args.rounds}: {shown}")
    finally:
        toolgym.kill()
        bare.kill()
    table = Table(title=f"server CPU per episode, a real MCP client per episode · {args.env} · {args.rounds} rounds")
    table.add_column("server")
    table.add_column("median ms", justify="right")
    table.add_column("min – max", justify="right")
    for name, values in samples.items():
        table.add_row(name, f"{statistics.median(values):.2f}", f"{min(values):.2f} – {max(values):.2f}")
    Console().print(table)
    names = list(samples)
    ratio = statistics.median(samples[names[0]]) / statistics.median(samples[names[1]])
    print(f"toolgym / bare SDK, server CPU per episode: {ratio:.2f}x")


if __name__ == "__main__":
    main()
