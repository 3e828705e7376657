"""Runner cost per oracle episode: Python API vs. in-process MCP vs. HTTP, measured interleaved in one run.

Usage: ``python bench/runner.py [--env finance] [--episodes 82] [--rounds 5]``

Each round runs the same plan (every task template × enough seeds for ``--episodes``) through every side,
one after the other — A B C D, A B C D, ... — so a noisy machine slows every side alike, and the table
reports medians over the rounds:

* ``python API``: create, the oracle's calls through the dispatcher, grade, release; no MCP, no runner
  (the floor under everything else);
* ``in-process, c=1`` and ``c=32``: the real runner with the oracle agent on in-memory MCP;
* ``HTTP, c=1``: the real runner with the oracle agent against an HTTP server (control API + each episode's
  MCP URL) running in this process on 127.0.0.1: every request crosses a real socket, uvicorn and the SDK
  on both sides, but no scheduler hop between processes, so the row measures what the HTTP path costs;
* ``HTTP, c=32, server process``: 32 workers against ``serve --transport http`` in a child process, as a
  training job drives one: client and server each get a core.

``ms/episode`` is the median of the episodes' own wall times (the runner's ``wall_ms``; the loop's own
timing for the Python API); ``amortized ms`` is the round's wall time per episode (1000 / episodes/s);
``CPU ms`` is this process's CPU time per episode (what a noisy machine cannot inflate). The ratios at the
bottom are the issue's targets: HTTP ≤ 3× the Python API per episode, in-process c=32 ≥ c=1 in episodes/s.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clients.runner import RunConfig, run  # noqa: E402
from servers.dispatch import call_tool  # noqa: E402
from servers.environment import Environment  # noqa: E402
from servers.episodes import EpisodeManager  # noqa: E402
from servers.http import new_token, running_http  # noqa: E402
from servers.registry import load_environment  # noqa: E402

__all__ = ["main", "start_server", "python_api", "rl_api", "runner"]

Sample = tuple[list[float], float, float]
"""Per-episode wall times (ms), the round's throughput (episodes/s) and this process's CPU ms per episode."""


def _cpu() -> float:
    return time.process_time()  # this process's user + system CPU, at a finer grain than os.times()


def _plan(environment: Environment, episodes: int) -> tuple[list[str], int]:
    tasks = list(environment.task_templates())
    if not tasks:
        raise SystemExit(f"environment {environment.name!r} has no task templates to benchmark")
    return tasks, max(1, math.ceil(episodes / len(tasks)))


async def _sample(tasks: list[str], seeds: int, play: Callable[[str, int], Awaitable[None]], first_seed: int = 0) -> Sample:
    """Every (seed, task) played once by ``play``, seeds from ``first_seed`` on, timed: the loop both in-process sides share."""
    walls: list[float] = []
    cpu = _cpu()
    started = time.perf_counter()
    for seed in range(first_seed, first_seed + seeds):
        for task in tasks:
            begin = time.perf_counter()
            await play(task, seed)
            walls.append((time.perf_counter() - begin) * 1000)
    return walls, len(walls) / (time.perf_counter() - started), (_cpu() - cpu) * 1000 / len(walls)


async def python_api(environment: Environment, tasks: list[str], seeds: int) -> Sample:
    """Create, play the oracle through the dispatcher, grade, release — no MCP, no runner."""
    from graders.grading import grade_episode

    manager = EpisodeManager(environment, history=0)

    async def play(task: str, seed: int) -> None:
        episode = manager.create(task, seed)
        assert episode.task is not None
        for step in episode.task.oracle:
            await call_tool(episode, step.tool, step.arguments)
        manager.close(episode.id)
        await grade_episode(episode)
        manager.release(episode.id)

    return await _sample(tasks, seeds, play)


async def rl_api(environment: Environment, tasks: list[str], seeds: int, first_seed: int = 0) -> Sample:
    """The documented RL API (``clients.rl.open_episode``: a manager of its own per episode), the oracle's steps
    on seeds ``first_seed`` to ``first_seed + seeds - 1``; an oracle that does not pass stops the bench."""
    from clients.rl import open_episode

    async def play(task: str, seed: int) -> None:
        async with open_episode(environment, task, seed) as episode:
            instance = episode._episode.task  # noqa: SLF001 - the oracle is the bench's agent
            assert instance is not None
            for step in instance.oracle:
                await episode.step(step.tool, step.arguments)
            if not (await episode.finish()).passed:
                raise SystemExit(f"{environment.name} {task} seed {seed}: the oracle did not pass")

    return await _sample(tasks, seeds, play, first_seed)


async def runner(environment: Environment, tasks: list[str], seeds: int, out: Path, concurrency: int, server: tuple[str, str] | None = None) -> Sample:
    """The real runner with the oracle agent, in process or against ``server`` (url, token)."""
    remote = {"server": server[0], "token": server[1]} if server is not None else {}
    config = RunConfig(
        env=environment, agent="oracle", tasks=tasks, seeds=f"0-{seeds - 1}", concurrency=concurrency, out=out, overwrite=True, **remote
    )
    cpu = _cpu()
    started = time.perf_counter()
    outcome = await run(config)
    elapsed = time.perf_counter() - started
    cpu = (_cpu() - cpu) * 1000 / max(1, len(outcome.lines))
    errored = [line for line in outcome.lines if line.status == "errored"]
    if errored:
        raise SystemExit(f"{out.name}: {len(errored)} episodes errored (e.g. {errored[0].task}: {errored[0].error})")
    return [line.wall_ms for line in outcome.lines], len(outcome.lines) / elapsed, cpu


def start_server(env_name: str, token: str, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """``python -m envs.<env> serve --transport http --port 0`` in a child process; returns it and its URL."""
    command = [sys.executable, "-m", f"envs.{env_name}", "serve", "--transport", "http", "--port", "0", *extra]
    child = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "TOOLGYM_TOKEN": token}, stderr=subprocess.PIPE)
    assert child.stderr is not None
    deadline = time.monotonic() + 180
    for raw in child.stderr:
        line = raw.decode()
        if "MCP (one episode per session):" in line:
            url = line.split(": ", 1)[1].strip().removesuffix("/mcp")
            httpx.get(f"{url}/control/health", headers={"Authorization": f"Bearer {token}"}, timeout=30).raise_for_status()
            return child, url
        if time.monotonic() > deadline:
            break
    child.kill()
    raise SystemExit(f"the {env_name} server did not start")


async def bench(env_name: str, episodes: int, rounds: int, out_root: Path, url: str, token: str) -> dict[str, list[Sample]]:
    """Warm every side, then ``rounds`` interleaved rounds; returns each side's samples."""
    environment = load_environment(env_name)
    tasks, seeds = _plan(environment, episodes)
    manager = EpisodeManager(environment, max_live=256, history=16)
    async with running_http(environment, manager=manager, token=token) as local:
        sides = {
            "python API": lambda: python_api(environment, tasks, seeds),
            "in-process, c=1": lambda: runner(environment, tasks, seeds, out_root / "mem1", 1),
            "in-process, c=32": lambda: runner(environment, tasks, seeds, out_root / "mem32", 32),
            "HTTP, c=1": lambda: runner(environment, tasks, seeds, out_root / "http1", 1, (local.url, token)),
            "HTTP, c=32, server process": lambda: runner(environment, tasks, seeds, out_root / "http32p", 32, (url, token)),
        }
        for side in sides.values():  # warm-up: templates, expected change sets, validators, server caches
            await side()
        samples: dict[str, list[Sample]] = {label: [] for label in sides}
        for _ in range(rounds):
            for label, side in sides.items():
                samples[label].append(await side())
    return samples


def main() -> None:
    """Start the server, run the rounds, print the table and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="finance")
    parser.add_argument("--episodes", type=int, default=82, help="episodes per side per round (rounded up to whole seeds)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    token = new_token()
    child, url = start_server(args.env, token)
    try:
        with tempfile.TemporaryDirectory(prefix="toolgym-bench-") as tmp:
            samples = anyio.run(bench, args.env, args.episodes, args.rounds, Path(tmp), url, token)
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)
    table = Table(title=f"runner · {args.env} · oracle · {args.rounds} interleaved rounds (medians)", title_justify="left")
    for column in ("side", "episodes/round", "ms/episode", "p90 ms", "amortized ms", "episodes/s", "CPU ms/episode"):
        table.add_column(column, justify="left" if column == "side" else "right")
    per_episode: dict[str, float] = {}
    throughput: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for label, rows in samples.items():
        walls = [w for round_walls, _, _ in rows for w in round_walls]
        per_episode[label] = statistics.median(walls)
        throughput[label] = statistics.median(rate for _, rate, _ in rows)
        cpu[label] = statistics.median(c for _, _, c in rows)
        p90 = statistics.quantiles(walls, n=10)[-1]
        table.add_row(
            label, str(len(rows[0][0])), f"{per_episode[label]:.2f}", f"{p90:.2f}", f"{1000 / throughput[label]:.2f}",
            f"{throughput[label]:.1f}", f"{cpu[label]:.2f}",
        )
    Console(width=max(Console().width, 130)).print(table)
    base = "python API"
    print(f"HTTP c=1 episode / python API episode (median wall): {per_episode['HTTP, c=1'] / per_episode[base]:.2f}x  (target <= 3x)")
    print(f"HTTP c=1 / python API, CPU per episode (client + server): {cpu['HTTP, c=1'] / cpu[base]:.2f}x")
    amortized = throughput[base] / throughput["HTTP, c=32, server process"]
    print(f"HTTP c=32 (server process) / python API, amortized ms per episode: {amortized:.2f}x")
    print(f"in-process c=32 / c=1 episodes/s: {throughput['in-process, c=32'] / throughput['in-process, c=1']:.2f}x  (target >= 1x)")


if __name__ == "__main__":
    main()
