"""A loaded HTTP server: 500 concurrent sessions × 30 calls, a 500-create burst, and the memory that comes back.

Usage: ``python bench/load.py [--env finance|support] [--sessions 500] [--calls 30] [--background 32]``

The server runs as ``serve --transport http`` in a child process (``--reap-interval 1``); this process is
its client. Phases, in order:

1. **idle** — the server after startup and a warm-up of one finished episode per task instance the load
   will play (its per-instance grading caches, meant to stay, are then part of the idle size), after a
   reaper pass: its resident memory is the baseline.
2. **burst** — ``--background`` sessions call tools in a loop; after a quiet window that is their baseline,
   ``--sessions`` episodes are created at once through the control API. Reported: latency of the
   background calls before and during the burst (p50, p99, max), and how long the burst took.
3. **load** — every created episode is played by its own MCP client, concurrently: the task's oracle
   (its writes) and then reads up to ``--calls`` calls. Reported: errors (must be 0) and call latency;
   memory with every episode live after its writes, per episode against the fixture's size (target
   ≤ 1.2×).
4. **release** — one ``finish`` per episode (close, grade, record, release); every record must be complete
   (all calls, footer). After a reaper pass, resident memory again — with the clients' kept-alive
   connections still open, and once the clients have gone (target ≤ 1.3× idle).

``--allocator python`` runs the server on pymalloc instead of the C library's malloc (``servers/malloc.py``):
less CPU per call, but most of a burst's memory stays resident.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from runner import start_server  # noqa: E402
from servers.http import new_token  # noqa: E402
from servers.registry import load_environment  # noqa: E402
from servers.tool_cache import ToolCache  # noqa: E402

__all__ = ["main"]


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A process's resident memory (or peak, ``VmHWM``) in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} for pid {pid}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Load:
    """The client side: a control client, one HTTP client for every MCP client, one tool cache."""

    def __init__(self, url: str, token: str, connections: int) -> None:
        self.control = httpx.AsyncClient(
            base_url=f"{url}/control",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        )
        # Several small pools: one pool's bookkeeping is linear in its connections per request, which would
        # make the client, not the server, the bottleneck at 500 sessions.
        limits = httpx2.Limits(max_connections=32, max_keepalive_connections=32)
        self.mcps = [httpx2.AsyncClient(timeout=httpx2.Timeout(120.0), limits=limits) for _ in range(connections // 32 + 1)]
        self._next = 0
        self.tools = ToolCache()
        self.errors: list[str] = []

    async def create(self, task: str | None, seed: int) -> dict[str, Any]:
        response = await self.control.post("/episodes", json={"task": task, "seed": seed, "oracle": task is not None})
        response.raise_for_status()
        return response.json()

    async def finish(self, ident: str) -> dict[str, Any]:
        response = await self.control.post(f"/episodes/{ident}/finish", json={})
        response.raise_for_status()
        return response.json()

    async def calls(self, url: str, plan: list[tuple[str, dict[str, Any]]], latencies: list[float], stop: anyio.Event | None = None) -> int:
        """Play ``plan`` (in a loop until ``stop`` when given) on one MCP client; returns calls made."""
        made = 0
        self._next += 1
        async with self.tools.connect(url, self.mcps[self._next % len(self.mcps)]) as client:
            while True:
                for name, arguments in plan:
                    started = time.perf_counter()
                    try:
                        result = await client.call_tool(name, arguments)
                        if result.is_error:
                            self.errors.append(f"{name}: {result.content}")
                    except Exception as exc:  # noqa: BLE001 - every failure is a reported error
                        self.errors.append(f"{name}: {type(exc).__name__}: {exc}")
                    latencies.append((time.perf_counter() - started) * 1000)
                    made += 1
                    if stop is not None and stop.is_set():
                        return made
                if stop is None:
                    return made


READS: dict[str, list[tuple[str, str, str, str]]] = {
    "finance": [("get_customer", "customer_id", "customers", "customer_id"), ("get_account", "account_id", "accounts", "account_id")],
    "support": [("get_customer", "customer_id", "customers", "customer_id"), ("get_order", "order_id", "orders", "order_id")],
}
"""Per environment: two read tools, each with its argument and the table and column its valid values come from."""


def read_targets(environment: Any, world: Any) -> list[tuple[str, str, list[str]]]:
    """The load's read tools with the values they are called on (the environment's own ids, so no call fails)."""
    if environment.name not in READS:
        raise SystemExit(f"bench/load.py knows the read tools of {', '.join(READS)}, not {environment.name!r}")
    return [
        (tool, argument, [r[column] for r in world.query(f'SELECT "{column}" FROM "{table}"')])
        for tool, argument, table, column in READS[environment.name]
    ]


def read_plan(targets: list[tuple[str, str, list[str]]], rng: random.Random, count: int) -> list[tuple[str, dict[str, Any]]]:
    """``count`` read calls with valid arguments, alternating between the targets' tools."""
    plan: list[tuple[str, dict[str, Any]]] = []
    for i in range(count):
        tool, argument, values = targets[i % len(targets)]
        plan.append((tool, {argument: rng.choice(values)}))
    return plan


async def bench(args: argparse.Namespace, url: str, token: str, pid: int) -> dict[str, Any]:
    """Every phase; returns what the tables show."""
    environment = load_environment(args.env)
    world = environment.fixture.world(environment.task_fixture_seed)
    targets = read_targets(environment, world)
    fixture_mb = len(environment.fixture.template(environment.task_fixture_seed).data) / 2**20
    world.release()
    tasks = list(environment.task_templates())
    rng = random.Random(0)
    load = Load(url, token, connections=args.sessions + args.background + 16)
    out: dict[str, Any] = {"fixture_mb": fixture_mb}

    plan = [(tasks[i % len(tasks)], i // len(tasks)) for i in range(args.sessions)]
    # Warm-up: one finished episode of every task instance the load will play, so the server's per-instance
    # grading caches (expected change sets, no-op baselines), which are meant to stay, are in the idle size.
    one_at_a_time = anyio.Lock()

    async def warm(task: str, seed: int) -> None:
        async with one_at_a_time:  # sequential: the idle size must not be a loaded server's
            body = await load.create(task, seed)
            await load.calls(body["mcp_url"], [(s["tool"], s["arguments"]) for s in body["oracle"]], [])
            await load.finish(body["id"])

    async with anyio.create_task_group() as group:
        for task, seed in plan:
            group.start_soon(warm, task, seed)
    load.errors.clear()
    await anyio.sleep(args.settle)
    out["idle_mb"] = rss_mb(pid)

    # Phase 2: background sessions, then the burst.
    background: list[float] = []
    stop = anyio.Event()
    created: list[dict[str, Any]] = []
    async with anyio.create_task_group() as group:
        sessions = [await load.create(None, 0) for _ in range(args.background)]
        for body in sessions:
            group.start_soon(load.calls, body["mcp_url"], read_plan(targets, rng, 10), background, stop)
        await anyio.sleep(args.quiet)
        quiet = list(background)
        mark = len(background)
        started = time.perf_counter()

        async def create(task: str, seed: int) -> None:
            created.append(await load.create(task, seed))

        async with anyio.create_task_group() as burst:
            for task, seed in plan:
                burst.start_soon(create, task, seed)
        out["burst_s"] = time.perf_counter() - started
        during = background[mark:]
        stop.set()
    for body in sessions:
        await load.finish(body["id"])
    out["background_quiet"] = quiet
    out["background_burst"] = during

    # Phase 3: every episode played at once.
    latencies: list[float] = []
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for body in created:
            oracle = [(s["tool"], s["arguments"]) for s in body["oracle"]]
            plan_calls = oracle + read_plan(targets, rng, args.calls - len(oracle))
            body["calls"] = len(plan_calls)
            group.start_soon(load.calls, body["mcp_url"], plan_calls, latencies)
    out["load_s"] = time.perf_counter() - started
    out["load_latency"] = latencies
    out["errors"] = list(load.errors)
    out["peak_live_mb"] = rss_mb(pid)

    # Phase 4: finish every episode; check its record.
    incomplete = 0
    async with anyio.create_task_group() as group:

        async def finish(body: dict[str, Any]) -> None:
            nonlocal incomplete
            result = await load.finish(body["id"])
            events = result["record"]["events"]
            calls = [e for e in events if e["type"] == "tool_call"]
            if len(calls) != body["calls"] or events[-1]["type"] != "closed" or any(e["error"] for e in calls):
                incomplete += 1

        for body in created:
            group.start_soon(finish, body)
    out["incomplete"] = incomplete
    out["peak_mb"] = rss_mb(pid, "VmHWM")
    await anyio.sleep(args.settle)
    out["after_connected_mb"] = rss_mb(pid)
    # The clients go away: the MCP clients' kept-alive connections close, and so do the control client's
    # (the 500 finishes at once opened hundreds); one fresh control connection reads the health after.
    for http in load.mcps:
        await http.aclose()
    await load.control.aclose()
    await anyio.sleep(args.settle)
    out["after_mb"] = rss_mb(pid)
    async with httpx.AsyncClient(base_url=f"{url}/control", headers={"Authorization": f"Bearer {token}"}, timeout=60) as control:
        out["health"] = (await control.get("/health")).json()
    return out


def main() -> None:
    """Start the server, run the phases, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="finance")
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--background", type=int, default=8, help="sessions calling tools through the burst")
    parser.add_argument("--quiet", type=float, default=3.0, help="seconds of background calls before the burst")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds given to the reaper before reading memory")
    parser.add_argument(
        "--allocator", choices=["system", "python"], default="system", help="the server's --allocator (default: system, as serve's)"
    )
    args = parser.parse_args()
    token = new_token()
    child, url = start_server(
        args.env, token, "--reap-interval", "1", "--max-episodes", str(args.sessions + 64), "--allocator", args.allocator
    )
    try:
        out = anyio.run(bench, args, url, token, child.pid)
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(timeout=60)

    console = Console(width=max(Console().width, 110))
    calls = Table(title=f"load · {args.env} · {args.sessions} sessions × {args.calls} calls", title_justify="left")
    for column in ("phase", "calls", "p50 ms", "p99 ms", "max ms", "note"):
        calls.add_column(column, justify="left" if column in ("phase", "note") else "right")
    rows = [
        ("background, before the burst", out["background_quiet"], "baseline"),
        (f"background, during {args.sessions} creates", out["background_burst"], f"burst took {out['burst_s']:.1f} s"),
        (f"{args.sessions} sessions at once", out["load_latency"], f"{out['load_s']:.1f} s"),
    ]
    for label, samples, note in rows:
        calls.add_row(label, str(len(samples)), f"{_pct(samples, 0.5):.1f}", f"{_pct(samples, 0.99):.1f}", f"{max(samples, default=0):.1f}", note)
    console.print(calls)
    errors = out["errors"]
    print(f"errors: {len(errors)}{' (e.g. ' + errors[0] + ')' if errors else ''}; incomplete records: {out['incomplete']} of {args.sessions}")

    memory = Table(title=f"server memory (resident) · --allocator {args.allocator}", title_justify="left")
    for column in ("when", "MB", "ratio", "target"):
        memory.add_column(column, justify="left" if column in ("when", "target") else "right")
    per_episode = (out["peak_live_mb"] - out["idle_mb"]) / args.sessions
    memory.add_row("idle (after warm-up and a reaper pass)", f"{out['idle_mb']:.0f}", "1.00", "")
    memory.add_row(f"{args.sessions} episodes live, after their writes", f"{out['peak_live_mb']:.0f}", f"{out['peak_live_mb'] / out['idle_mb']:.2f}", "")
    memory.add_row("per live episode vs the fixture", f"{per_episode:.2f}", f"{per_episode / out['fixture_mb']:.2f}", "<= 1.2")
    memory.add_row("peak (VmHWM)", f"{out['peak_mb']:.0f}", f"{out['peak_mb'] / out['idle_mb']:.2f}", "")
    connected = out["after_connected_mb"]
    memory.add_row("after releasing every episode, clients connected", f"{connected:.0f}", f"{connected / out['idle_mb']:.2f}", "")
    memory.add_row("after releasing every episode, clients gone", f"{out['after_mb']:.0f}", f"{out['after_mb'] / out['idle_mb']:.2f}", "<= 1.3")
    console.print(memory)
    print(f"fixture: {out['fixture_mb']:.1f} MB; /control/health after: {out['health']['limits']}")
    print(f"released episodes remembered: {out['health'].get('released')}; event loop: {out['health'].get('loop')}")


if __name__ == "__main__":
    main()
