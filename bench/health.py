"""Health latency under load: ``GET /control/health`` on the event loop vs the health listener's own process.

Usage: ``python bench/health.py [--env finance] [--sessions 500] [--seconds 20] [--interval 0.25]``

A ``serve --transport http --health-port 0`` child process gets ``--sessions`` episodes, each played by its
own MCP client calling read tools in a loop (``bench/load.py``'s client), so the server's event loop is as
busy as it gets. Meanwhile a separate probe process asks for health the way a liveness probe does — a new
connection each time, a 30 s timeout — alternating the two endpoints (A: ``/control/health`` on the main
port, B: ``/health`` on ``--health-port``; A B A B ...), before the load (idle) and during it. The table
gives each side's median, p90, p99 and max; the target is B within 100 ms whatever the load. The probes
run in a process of their own so that neither the load's client nor its interpreter lock delays them.
"""

from __future__ import annotations

import argparse
import http.client
import multiprocessing
import os
import random
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from load import Load, read_plan, read_targets  # noqa: E402

from servers.http import new_token  # noqa: E402
from servers.registry import load_environment  # noqa: E402

__all__ = ["main"]

SIDES = ("A: /control/health (event loop)", "B: --health-port (own process)")


def start(env_name: str, token: str, sessions: int) -> tuple[subprocess.Popen[bytes], str, str]:
    """The server process, its base URL and its health listener's URL (its stderr drained by a thread)."""
    command = [
        sys.executable, "-m", f"envs.{env_name}", "serve", "--transport", "http", "--port", "0", "--health-port", "0",
        "--max-episodes", str(sessions + 64), "--reap-interval", "5",
    ]
    child = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "TOOLGYM_TOKEN": token}, stderr=subprocess.PIPE)
    assert child.stderr is not None
    url = health = None
    for raw in child.stderr:
        line = raw.decode()
        if "MCP (one episode per session):" in line:
            url = line.split(": ", 1)[1].strip().removesuffix("/mcp")
        if "health (off the event loop):" in line:
            health = line.split(": ", 1)[1].split()[0]
        if "Claude Code:" in line:
            break
    if url is None or health is None:
        child.kill()
        raise SystemExit(f"the {env_name} server did not start with a health listener")
    threading.Thread(target=lambda: [None for _ in child.stderr], daemon=True).start()  # type: ignore[union-attr]
    return child, url, health


def probe(urls: tuple[str, str], token: str, interval: float, stop: Any, phase: Any, out: Any) -> None:
    """In a process of its own: A B A B ... probes, each on a new connection; (phase, side, ms) to ``out``."""
    headers = {"Authorization": f"Bearer {token}"}
    targets = [urlsplit(url) for url in urls]
    side = 0
    while not stop.is_set():
        target = targets[side]
        started = time.perf_counter()
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)  # a new connection, as a probe
        try:
            connection.request("GET", target.path, headers=headers)
            response = connection.getresponse()
            response.read()
            status = response.status
        except OSError:
            status = 0
        finally:
            connection.close()
        elapsed = (time.perf_counter() - started) * 1000
        out.put((phase.value, side, elapsed if status == 200 else float("inf")))
        side = 1 - side
        time.sleep(interval)


async def drive(args: argparse.Namespace, url: str, token: str, phase: Any) -> int:
    """Create the sessions' episodes, then keep every one of them calling tools for ``--seconds``."""
    environment = load_environment(args.env)
    world = environment.fixture.world(environment.task_fixture_seed)
    targets = read_targets(environment, world)
    world.release()
    load = Load(url, token, connections=args.sessions + 16)
    bodies = [await load.create(None, environment.task_fixture_seed) for _ in range(args.sessions)]
    latencies: list[float] = []
    stop = anyio.Event()
    phase.value = 1
    async with anyio.create_task_group() as group:
        for i, body in enumerate(bodies):
            plan = read_plan(targets, random.Random(i), 10)
            group.start_soon(load.calls, body["mcp_url"], plan, latencies, stop)
        await anyio.sleep(args.seconds)
        stop.set()
    phase.value = 2
    for body in bodies:
        await load.finish(body["id"])
    return len(latencies)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    """Start the server, probe while idle and under load, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="finance")
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of load")
    parser.add_argument("--idle", type=float, default=3.0, help="seconds of probes before the load")
    parser.add_argument("--interval", type=float, default=0.25, help="seconds between two probes")
    args = parser.parse_args()
    token = new_token()
    child, url, health = start(args.env, token, args.sessions)
    context = multiprocessing.get_context("spawn")
    stop, phase, out = context.Event(), context.Value("i", 0), context.Queue()
    prober = context.Process(target=probe, args=((f"{url}/control/health", health), token, args.interval, stop, phase, out), daemon=True)
    try:
        prober.start()
        time.sleep(args.idle)
        calls = anyio.run(drive, args, url, token, phase)
    finally:
        stop.set()
        prober.join(timeout=60)
        child.send_signal(signal.SIGINT)
        child.wait(timeout=60)
    samples: dict[tuple[int, int], list[float]] = {}
    while not out.empty():
        when, side, ms = out.get()
        samples.setdefault((when, side), []).append(ms)

    table = Table(title=f"health latency · {args.env} · {args.sessions} sessions calling tools for {args.seconds:g} s ({calls} calls)", title_justify="left")
    for column in ("endpoint", "phase", "probes", "p50 ms", "p90 ms", "p99 ms", "max ms", "≤ 100 ms"):
        table.add_column(column, justify="left" if column in ("endpoint", "phase") else "right")
    for side, label in enumerate(SIDES):
        for when, name in ((0, "idle"), (1, "under load")):
            values = samples.get((when, side), [])
            within = sum(1 for v in values if v <= 100) / len(values) if values else float("nan")
            table.add_row(label, name, str(len(values)), f"{pct(values, 0.5):.1f}", f"{pct(values, 0.9):.1f}", f"{pct(values, 0.99):.1f}",
                          f"{max(values, default=float('nan')):.1f}", f"{within:.0%}")
    Console(width=max(Console().width, 120)).print(table)
    under = samples.get((1, 1), [])
    if under:
        print(f"B under load: median {statistics.median(under):.1f} ms, max {max(under):.1f} ms (target: within 100 ms)")


if __name__ == "__main__":
    main()
