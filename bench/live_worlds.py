"""Live worlds at scale: memory per live episode, world creation, a call on a 10x world, HTTP vs in-process CPU.

Usage: ``python bench/live_worlds.py [--env finance] [--lives 100,1000,10000] [--baseline-max 1000] [--rounds 3] [--skip-http]``

Four sections, each measured side by side in one run, interleaved rounds (A B C, A B C, ...), medians:

1. **Memory per live world** at each ``--lives`` count N: in a fresh child process per side and round, N live
   finance episodes are created and each answers one call (its oracle's first step), then the process's PSS
   (``/proc/self/smaps_rollup``: a page shared by many worlds is split between them, as the kernel
   accounts it; RSS would count it once per world) and page tables (``VmPTE``) are read; the figure is
   (after - before) / N, the shared template image counted once in "before". Sides:

   * ``toolgym``: ``EpisodeManager.create(task, seed)`` and ``call_tool`` (copy-on-write worlds when
     ``fixtures.cow.status()`` is on);
   * ``bare SQLite copy``: ``sqlite3.connect`` + ``deserialize(template)`` + the same kind of read, per episode;
   * ``bare MCP SDK``: an in-memory ``mcp.Client`` session per episode on one ``MCPServer`` whose tool runs
     the same search on that episode's own ``deserialize`` copy (what a plain SDK server holds per session).

   The bare sides hold a whole copy each (8.5 MB for finance), so they run up to ``--baseline-max`` only.
2. **Creating a world** (median ms, same child processes): a brand-new world plus its first query (SQLite
   parses the schema for each new connection), a world from the pool (a released one, its written pages
   dropped), a world asked for while every other world is live (with ``serve``'s spare worlds made ahead on a
   background thread, ``fixtures/spares.py``), and the bare copy; plus a whole toolgym episode create (task setup
   included: each live episode here is a new instance, so its setup is built).
3. **A call on a 10x world**: every finance oracle's calls through the dispatcher on worlds of scale 1 and
   10, interleaved; median per call and of ``search_customers``, and their ratios.
4. **HTTP vs in-process, CPU per task**: ``bench/runner.py``'s Python API episode (create, oracle calls,
   grade, release), the documented RL API (``clients.rl.open_episode``, steps answered in process as an MCP
   client receives them), and the real runner with the oracle agent over HTTP to a server in the same process
   (so one CPU clock holds client and server), with ``tools/call`` answered straight from dispatch
   (``servers/fastcall.py``) and, as before, through the SDK.

Goal (issue 27): <= 2 MB per live finance world at 1,000 and 10,000 live episodes, create <= 1 ms, a call on
a 10x world <= 1.5x. The 10,000-episode child takes a few minutes and ~10 GB: run it with ``nice``.
"""

from __future__ import annotations

import argparse
import contextvars
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

ENV = os.environ.get("TOOLGYM_BENCH_ENV", "finance")
"""The environment measured (``--env``; children read it from the environment they inherit)."""
SEARCH = ("SELECT * FROM customers WHERE first_name || ' ' || last_name LIKE ? OR email LIKE ? "
          "ORDER BY last_name, first_name, customer_id LIMIT 20")
"""What a bare side's episode answers (a customer search; environments without customers read a page of rows)."""


def _bare_search(conn: sqlite3.Connection, text: str) -> list[tuple[Any, ...]]:
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'customers'").fetchone():
        return conn.execute(SEARCH, (f"%{text}%", f"%{text}%")).fetchall()
    table = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' ORDER BY name").fetchone()[0]
    return conn.execute(f'SELECT * FROM "{table}" LIMIT 20').fetchall()


def _kib(field: str, path: str) -> int:
    with open(path) as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _memory() -> dict[str, int]:
    return {"pss": _kib("Pss", "/proc/self/smaps_rollup"), "pte": _kib("VmPTE", "/proc/self/status"), "rss": _kib("VmRSS", "/proc/self/status")}


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000 if samples else float("nan")


async def _toolgym(lives: int) -> dict[str, Any]:
    from fixtures import cow, tracking
    from fixtures.hashing import user_tables
    from servers.dispatch import call_tool
    from servers.episodes import EpisodeManager
    from servers.registry import load_environment

    environment = load_environment(ENV)
    fixture = environment.fixture
    manager = EpisodeManager(environment, max_live=lives + 8, history=0)
    tasks = list(environment.task_templates())
    warm = manager.create(tasks[0], 0)  # the template, its image, the tool specs: shared, counted in "before"
    manager.release(warm.id)
    pooled = []
    for _ in range(20):  # a world from the pool: take one back after its release dropped its written pages
        world = fixture.world(environment.task_fixture_seed)
        table = user_tables(world.conn)[0]
        world.execute(f'UPDATE "{table}" SET rowid = rowid WHERE rowid = (SELECT min(rowid) FROM "{table}")')  # one written page
        world.release()
        started = time.perf_counter()
        world = fixture.world(environment.task_fixture_seed)
        world.query("SELECT 1 FROM sqlite_master LIMIT 1")
        pooled.append(time.perf_counter() - started)
        world.release()
    while fixture.pooled:
        fixture.shrink_pool(idle=-1.0)
    from servers.http import SPARE_WORLDS

    fixture.spare = SPARE_WORLDS  # as `serve --transport http` runs: new worlds made ahead (fixtures/spares.py)
    before = _memory()
    fresh, spared, creates, answered = [], [], [], 0
    for n in range(lives):
        if n % 10 == 0:  # a brand-new world, once the filler is done: its thread would share the cores with this one
            _wait_for_spares(fixture, environment.task_fixture_seed)
            started = time.perf_counter()
            world = fixture.new_world(environment.task_fixture_seed)
            world.query("SELECT 1 FROM sqlite_master LIMIT 1")
            fresh.append(time.perf_counter() - started)
            world.close()
        # a world taken while every other world is live (a spare): not at the first create, before which no world
        # was asked for and so no spare made (that one would measure a brand-new world again)
        if n % 10 == 5:
            started = time.perf_counter()
            world = fixture.world(environment.task_fixture_seed)
            world.query("SELECT 1 FROM sqlite_master LIMIT 1")
            spared.append(time.perf_counter() - started)
            world.close()
        started = time.perf_counter()
        episode = manager.create(tasks[n % len(tasks)], n // len(tasks))
        creates.append(time.perf_counter() - started)
        assert episode.task is not None
        step = episode.task.oracle[0]
        event = await call_tool(episode, step.tool, step.arguments)
        answered += event.error is None or event.error.error_class != "internal"
    after = _memory()
    while fixture.pooled:  # the spares left over are not live worlds
        fixture.shrink_pool(idle=-1.0)
    return {"before": before, "after": after, "answered": answered, "world_ms": _median_ms(fresh), "pooled_ms": _median_ms(pooled),
            "spare_ms": _median_ms(spared),
            "create_ms": _median_ms(creates), "cow": cow.status(), "image": cow.shared_bytes(),
            "tracking": tracking.status()}


def _wait_for_spares(fixture: Any, seed: int, limit: float = 5.0) -> None:
    """Until the spare-world filler has topped the pool up (it is idle then), at most ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while fixture.spare and fixture.pooled_for(seed) < fixture.spare and time.monotonic() < deadline:
        time.sleep(0.001)


def _bare_world(data: bytes) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.deserialize(data)
    return conn


async def _bare_sqlite(lives: int) -> dict[str, Any]:
    from servers.registry import load_environment

    data = load_environment(ENV).fixture.template(0).data
    _bare_world(data).close()
    before = _memory()
    worlds, times = [], []
    for n in range(lives):
        started = time.perf_counter()
        conn = _bare_world(data)
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        times.append(time.perf_counter() - started)
        _bare_search(conn, str(n % 7))
        worlds.append(conn)
    after = _memory()
    return {"before": before, "after": after, "answered": len(worlds), "world_ms": _median_ms(times)}


async def _bare_sdk(lives: int) -> dict[str, Any]:
    from mcp import Client
    from mcp.server import MCPServer

    from servers.registry import load_environment

    data = load_environment(ENV).fixture.template(0).data
    current: contextvars.ContextVar[sqlite3.Connection] = contextvars.ContextVar("world")
    server = MCPServer("bare", log_level="WARNING")

    @server.tool()
    async def search_customers(query: str) -> list[dict[str, Any]]:
        """Customers whose name or e-mail contains ``query``."""
        return [{"row": list(map(str, row))} for row in _bare_search(current.get(), query)]

    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(Client(server))
        token = current.set(_bare_world(data))
        await client.call_tool("search_customers", {"query": "an"})
        current.reset(token)
        before = _memory()
        answered, worlds = 0, []
        for n in range(lives):
            client = await stack.enter_async_context(Client(server))  # the episode's session, kept open
            worlds.append(_bare_world(data))  # and its world, kept as long as the session
            token = current.set(worlds[-1])
            result = await client.call_tool("search_customers", {"query": str(n % 7)})
            answered += not result.is_error
            current.reset(token)
        after = _memory()
    return {"before": before, "after": after, "answered": answered}


CHILDREN = {"toolgym": _toolgym, "bare SQLite copy": _bare_sqlite, "bare MCP SDK": _bare_sdk}


def _child(side: str, lives: int) -> dict[str, Any]:
    """Run one side at one count in a fresh process (so each starts from the same memory)."""
    out = subprocess.run([sys.executable, __file__, "--child", side, str(lives)], capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"{side} at {lives} live worlds failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    per = {k: (result["after"][k] - result["before"][k]) / lives for k in ("pss", "pte", "rss")}
    return {**result, "per": per}


async def _calls_on_a_larger_world(rounds: int) -> dict[str, dict[int, list[float]]]:
    from graders.detached import detached_task_episode
    from servers.dispatch import call_tool
    from servers.registry import load_environment

    from fixtures.errors import TaskError
    from servers.read_cache import READS

    READS.key = lambda *args: None  # type: ignore[method-assign]  # every call does its work: the tools are measured
    environment = load_environment(ENV)
    samples: dict[str, dict[int, list[float]]] = defaultdict(lambda: {1: [], 10: []})
    tasks = []
    for task in environment.task_templates():  # those whose setup finds what it needs on both worlds
        try:
            for scale in (1, 10):
                detached_task_episode(environment, task, 0, scale=scale, label="bench").world.release()
        except TaskError:
            continue
        tasks.append(task)
    for _ in range(rounds):
        for scale in (1, 10):  # interleaved: A B, A B, ...
            for task in tasks:
                episode = detached_task_episode(environment, task, 0, scale=scale, label="bench")
                assert episode.task is not None
                for step in episode.task.oracle:
                    started = time.perf_counter()
                    await call_tool(episode, step.tool, step.arguments)
                    elapsed = time.perf_counter() - started
                    samples["every call"][scale].append(elapsed)
                    samples[step.tool][scale].append(elapsed)
                episode.world.release()
    return samples


async def _http_vs_api(rounds: int) -> dict[str, list[float]]:
    from runner import python_api, rl_api, runner  # bench/runner.py

    from servers import routing
    from servers.episodes import EpisodeManager
    from servers.fastcall import eligible
    from servers.http import new_token, running_http
    from servers.registry import load_environment

    environment = load_environment(ENV)
    tasks, seeds = list(environment.task_templates()), 1
    token = new_token()
    direct, through_sdk = "HTTP, tools/call answered from dispatch", "HTTP, every request through the SDK (before)"
    documented = "RL API (clients.rl.open_episode, a manager per episode)"
    cpu: dict[str, list[float]] = {"Python API": [], documented: [], direct: [], through_sdk: []}
    with tempfile.TemporaryDirectory() as folder:
        manager = EpisodeManager(environment, max_live=256, history=16)
        async with running_http(environment, manager=manager, token=token) as local:

            async def over_http(fast: bool) -> Any:
                # servers/fastcall.py takes a call only where routing finds it eligible: off, the SDK serves it all
                routing.eligible = eligible if fast else (lambda scope: False)
                try:
                    return await runner(environment, tasks, seeds, Path(folder) / "http", 1, (local.url, token))
                finally:
                    routing.eligible = eligible

            sides = {"Python API": lambda: python_api(environment, tasks, seeds), documented: lambda: rl_api(environment, tasks, seeds),
                     direct: lambda: over_http(True), through_sdk: lambda: over_http(False)}
            for side in sides.values():
                await side()  # warm: templates, expected change sets, validators
            for _ in range(rounds):
                for label, side in sides.items():
                    cpu[label].append((await side())[2])
    return cpu


def main() -> None:
    """Run the sections and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=2, metavar=("SIDE", "LIVES"), help=argparse.SUPPRESS)
    parser.add_argument("--env", default=ENV, help="environment (default finance; the bare sides run finance's search SQL)")
    parser.add_argument("--lives", default="100,1000,10000", help="live episode counts (comma-separated)")
    parser.add_argument("--baseline-max", type=int, default=1000, help="largest count the whole-copy baselines run at")
    parser.add_argument("--rounds", type=int, default=3, help="rounds at counts up to 1,000 (one round above)")
    parser.add_argument("--skip-http", action="store_true", help="leave out section 4")
    args = parser.parse_args()
    if args.env != ENV:  # re-run with the environment set, so every child process measures the same one
        os.execvpe(sys.executable, [sys.executable, __file__, *sys.argv[1:]], {**os.environ, "TOOLGYM_BENCH_ENV": args.env})
    if args.child:
        side, lives = args.child[0], int(args.child[1])
        print(json.dumps(anyio.run(CHILDREN[side], lives)))
        return

    from rich.console import Console
    from rich.table import Table

    console = Console(width=200)
    counts = [int(n) for n in args.lives.split(",")]
    memory = Table(title=f"{ENV}: memory per live episode (PSS, page tables) and world creation; medians over rounds")
    for column in ("live episodes", "side", "rounds", "PSS MB / world", "+ page tables", "RSS MB / world", "vs toolgym",
                   "new world ms", "pooled world ms", "world, all live ms", "episode create ms", "answered"):
        memory.add_column(column, justify="left" if column == "side" else "right")
    notes = set()
    for lives in counts:
        rounds = args.rounds if lives <= 1000 else 1
        sides = [s for s in CHILDREN if s == "toolgym" or lives <= args.baseline_max]
        got: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
        for _ in range(rounds):
            for side in sides:  # interleaved rounds
                got[side].append(_child(side, lives))
        base = statistics.median(r["per"]["pss"] + r["per"]["pte"] for r in got["toolgym"])
        for side, results in got.items():
            pss = statistics.median(r["per"]["pss"] for r in results)
            pte = statistics.median(r["per"]["pte"] for r in results)
            rss = statistics.median(r["per"]["rss"] for r in results)
            cell = lambda key: f"{statistics.median(r[key] for r in results):.3f}" if key in results[0] else "-"  # noqa: E731
            memory.add_row(f"{lives:,}", side, str(rounds), f"{pss / 2**20:.2f}", f"{(pss + pte) / 2**20:.2f}", f"{rss / 2**20:.2f}",
                           f"{(pss + pte) / base:.1f}x", cell("world_ms"), cell("pooled_ms"), cell("spare_ms"), cell("create_ms"),
                           f"{min(r['answered'] for r in results):,}/{lives:,}")
            if side == "toolgym":
                notes.add(f"copy-on-write: {results[0]['cow']}; shared template image {results[0]['image'] / 2**20:.1f} MB (once per process)")
                notes.add(f"change tracking: {results[0].get('tracking', '?')}")
        for side in CHILDREN:
            if side not in sides:
                whole = got["toolgym"][0]["image"]  # the template's bytes: what each whole copy holds at least
                memory.add_row(f"{lives:,}", side, "-", "not run: a whole copy each would need "
                               f"{lives * whole / 2**30:,.0f} GB", "", "", "", "", "", "", "", "")
    console.print(memory)
    for note in sorted(notes):
        console.print(note)

    calls = anyio.run(_calls_on_a_larger_world, args.rounds)
    larger = Table(title=f"{ENV}: a call on a 10x world vs the normal one (every oracle's calls, {args.rounds} interleaved rounds)")
    for column in ("calls", "x1 median ms", "x10 median ms", "x10 / x1"):
        larger.add_column(column, justify="left" if column == "calls" else "right")
    searches = ("search_customers", "search_products", "search_messages", "search_people", "search_issues", "search_pages")
    for label in [label for label in ("every call", *searches) if calls.get(label)]:
        one, ten = _median_ms(calls[label][1]), _median_ms(calls[label][10])
        larger.add_row(label, f"{one:.3f}", f"{ten:.3f}", f"{ten / one:.2f}x")
    frequent = [t for t in calls if t != "every call" and min(len(calls[t][1]), len(calls[t][10])) >= 15]
    worst = max(frequent, key=lambda t: _median_ms(calls[t][10]) / _median_ms(calls[t][1]))
    larger.add_row(f"slowest to grow: {worst}", f"{_median_ms(calls[worst][1]):.3f}", f"{_median_ms(calls[worst][10]):.3f}",
                   f"{_median_ms(calls[worst][10]) / _median_ms(calls[worst][1]):.2f}x")
    console.print(larger)

    if not args.skip_http:
        cpu = anyio.run(_http_vs_api, args.rounds)
        http = Table(title=f"{ENV}: CPU ms per oracle task (create, calls, grade, release), {args.rounds} interleaved rounds")
        for column in ("side", "CPU ms / task", "vs Python API"):
            http.add_column(column, justify="left" if column == "side" else "right")
        api = statistics.median(cpu["Python API"])
        for label, values in cpu.items():
            http.add_row(label, f"{statistics.median(values):.2f}", f"{statistics.median(values) / api:.2f}x")
        console.print(http)


if __name__ == "__main__":
    main()
