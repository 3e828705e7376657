"""Runner throughput: oracle episodes per second in process and over HTTP, at concurrency 1 and 32.

Usage: ``python bench/runner.py [--env finance] [--episodes 200]``

Each row runs the same plan (every task template × enough seeds for ``--episodes``) through the real
runner — episode creation, MCP client, oracle calls, grading, record files, results lines. The baseline
rows, from the same process and plan, are the floor under them: a bare ``EpisodeManager`` create + release
(world clone + task setup) and create + grade + release without any agent or MCP. A warm-up pass first fills
the per-process caches (templates, expected change sets), so rows compare steady states. Peak memory is the
process's ``ru_maxrss`` after each row (monotone: it is the peak so far).
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from clients.runner import RunConfig, run  # noqa: E402
from servers.environment import Environment  # noqa: E402
from servers.episodes import EpisodeManager  # noqa: E402
from servers.http import HttpServer, running_http  # noqa: E402
from servers.registry import load_environment  # noqa: E402

__all__ = ["main"]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _plan(environment: Environment, episodes: int) -> tuple[list[str], str]:
    tasks = list(environment.task_templates())
    if not tasks:
        raise SystemExit(f"environment {environment.name!r} has no task templates to benchmark")
    seeds = max(1, math.ceil(episodes / len(tasks)))
    return tasks, f"0-{seeds - 1}"


async def _bare(environment: Environment, tasks: list[str], seeds: int, grade: bool) -> int:
    from graders.grading import grade_episode

    manager = EpisodeManager(environment, history=0)
    count = 0
    for task in tasks:
        for seed in range(seeds):
            episode = manager.create(task, seed)
            if grade:
                manager.close(episode.id)
                await grade_episode(episode)
            manager.release(episode.id)
            count += 1
    return count


async def _timed(label: str, body: Callable[[], Awaitable[int]], rows: list[tuple[str, int, float, float]]) -> None:
    started = time.perf_counter()
    count = await body()
    elapsed = time.perf_counter() - started
    rows.append((label, count, elapsed, _peak_mb()))


async def bench(env_name: str, episodes: int, out_root: Path) -> list[tuple[str, int, float, float]]:
    """Run every row; returns (label, episodes, seconds, peak MB)."""
    environment = load_environment(env_name)
    tasks, seeds = _plan(environment, episodes)
    n_seeds = int(seeds.split("-")[1]) + 1
    rows: list[tuple[str, int, float, float]] = []
    failing: set[tuple[str, int]] = set()

    async def runner(label: str, concurrency: int, server: HttpServer | None = None) -> int:
        remote = {"server": server.url, "token": server.token} if server is not None else {}
        config = RunConfig(env=environment, agent="oracle", tasks=tasks, seeds=seeds, concurrency=concurrency, out=out_root / label, overwrite=True, **remote)
        outcome = await run(config)
        errored = [line for line in outcome.lines if line.status == "errored"]
        if errored:
            raise SystemExit(f"{label}: {len(errored)} episodes errored (e.g. {errored[0].task} seed {errored[0].seed}: {errored[0].error})")
        # An oracle that fails is the task's problem, not the runner's: count it, keep measuring.
        failing.update((line.task, line.seed) for line in outcome.lines if not line.passed)
        return len(outcome.lines)

    await runner("warm-up", 32)
    await _timed("baseline: create+release", lambda: _bare(environment, tasks, n_seeds, grade=False), rows)
    await _timed("baseline: create+grade+release", lambda: _bare(environment, tasks, n_seeds, grade=True), rows)
    for concurrency in (1, 32):
        await _timed(f"in-process oracle, c={concurrency}", lambda c=concurrency: runner(f"mem-{c}", c), rows)
    async with running_http(environment, manager=EpisodeManager(environment, max_live=256, history=16)) as server:
        for concurrency in (1, 32):
            await _timed(f"HTTP oracle, c={concurrency}", lambda c=concurrency: runner(f"http-{c}", c, server), rows)
    if failing:
        shown = ", ".join(f"{task}#{seed}" for task, seed in sorted(failing)[:5])
        print(f"note: the oracle does not pass {len(failing)} task instances ({shown}); a task bug, not a runner one")
    return rows


def main() -> None:
    """Parse flags, run, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="finance")
    parser.add_argument("--episodes", type=int, default=200, help="episodes per row (rounded up to whole seeds)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolgym-bench-") as tmp:
        rows = anyio.run(bench, args.env, args.episodes, Path(tmp))
    table = Table(title=f"runner throughput · {args.env} · oracle", title_justify="left")
    for column in ("row", "episodes", "seconds", "episodes/s", "ms/episode", "peak RSS MB"):
        table.add_column(column, justify="left" if column == "row" else "right")
    for label, count, seconds, peak in rows:
        table.add_row(label, str(count), f"{seconds:.2f}", f"{count / seconds:,.0f}", f"{seconds * 1000 / count:.2f}", f"{peak:.0f}")
    Console(width=max(Console().width, 100)).print(table)


if __name__ == "__main__":
    main()
