"""Per-episode cost of each environment — create, one tool call, grading — measured interleaved in one run.

Usage: ``python bench/episode_cost.py [ENV ...] [--episodes 80] [--rounds 7]`` (default: finance support workspace)

Each round plays, for every environment in turn (A B C, A B C, ...), the same plan: every task template × enough
seeds for ``--episodes`` oracle episodes, through the Python API (no MCP, no runner), timing separately

* ``create``: ``EpisodeManager.create`` — clone the cached template world, apply the task's setup, seed ids;
* ``call``: one tool call through the dispatcher (validation, the tool on the world, the record event with its
  changed rows), the mean over the oracle's calls of the episode;
* ``grade``: close and :func:`graders.grading.grade_episode` with the expected change set cached (steady state).

A first pass builds every task instance and fills every cache; its create and grade medians (a task instance's
setup, the oracle replayed once for the expected change set) are printed under the table.

The table gives each environment's median per round, then the median over rounds, and each figure as a ratio
to the first environment (the baseline, ``finance`` by default). A noisy machine slows every side alike, since
the sides alternate within each round. The world's size (rows, template bytes) is printed beside it.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import anyio
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.hashing import user_tables  # noqa: E402
from graders.grading import grade_episode  # noqa: E402
from servers.dispatch import call_tool  # noqa: E402
from servers.environment import Environment  # noqa: E402
from servers.episodes import EpisodeManager  # noqa: E402
from servers.registry import load_environment  # noqa: E402

__all__ = ["main"]

Round = dict[str, float]
"""One environment's medians in one round: create_ms, call_ms, grade_ms, episode_ms, calls."""


def _plan(environment: Environment, episodes: int) -> list[tuple[str, int]]:
    tasks = list(environment.task_templates())
    seeds = max(1, math.ceil(episodes / len(tasks)))
    return [(task, seed) for seed in range(seeds) for task in tasks][:max(episodes, len(tasks))]


async def one_round(manager: EpisodeManager, plan: list[tuple[str, int]]) -> Round:
    """Play ``plan`` once; the medians of its episodes."""
    create, call, grade, whole, calls = [], [], [], [], []
    for task, seed in plan:
        t0 = time.perf_counter()
        episode = manager.create(task, seed)
        t1 = time.perf_counter()
        assert episode.task is not None
        steps = episode.task.oracle
        for step in steps:
            await call_tool(episode, step.tool, step.arguments)
        t2 = time.perf_counter()
        manager.close(episode.id)
        grade_ = await grade_episode(episode)
        t3 = time.perf_counter()
        manager.release(episode.id)
        if not grade_.passed:
            raise SystemExit(f"{task} seed {seed}: the oracle did not pass ({grade_.score})")
        create.append((t1 - t0) * 1000)
        call.append((t2 - t1) * 1000 / max(1, len(steps)))
        grade.append((t3 - t2) * 1000)
        whole.append((t3 - t0) * 1000)
        calls.append(len(steps))
    return {"create_ms": statistics.median(create), "call_ms": statistics.median(call), "grade_ms": statistics.median(grade),
            "episode_ms": statistics.median(whole), "calls": statistics.median(calls)}


def world_size(environment: Environment) -> tuple[int, float]:
    """Rows over the environment's user tables and the template world's size in MB."""
    world = environment.fixture.world()
    rows = sum(world.query(f'SELECT count(*) AS n FROM "{t}"')[0]["n"] for t in user_tables(world.conn))
    pages = world.query("PRAGMA page_count")[0]["page_count"] * world.query("PRAGMA page_size")[0]["page_size"]
    return rows, pages / 1e6


async def bench(names: list[str], episodes: int, rounds: int) -> tuple[dict[str, list[Round]], dict[str, tuple[int, float, int, int]], dict[str, Round]]:
    """Warm up, then ``rounds`` interleaved rounds over ``names``."""
    envs = {name: load_environment(name) for name in names}
    managers = {name: EpisodeManager(env, history=0) for name, env in envs.items()}
    plans = {name: _plan(env, episodes) for name, env in envs.items()}
    results: dict[str, list[Round]] = {name: [] for name in names}
    cold: dict[str, Round] = {}
    for name in names:  # the first pass builds every instance and fills every cache: reported as "first"
        cold[name] = await one_round(managers[name], plans[name])
    for _ in range(rounds):
        for name in names:
            results[name].append(await one_round(managers[name], plans[name]))
    sizes = {name: (*world_size(env), len(env.tools), len(list(env.task_templates()))) for name, env in envs.items()}
    return results, sizes, cold


def main(argv: list[str] | None = None) -> None:
    """Print the table: per environment, medians over rounds and ratios to the first environment."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="*", default=["finance", "support", "workspace"])
    parser.add_argument("--episodes", type=int, default=80, help="oracle episodes per environment per round")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    results, sizes, cold = anyio.run(bench, args.envs, args.episodes, args.rounds)
    console = Console(width=220)
    base = args.envs[0]
    med = {name: {k: statistics.median(r[k] for r in rounds) for k in rounds[0]} for name, rounds in results.items()}
    table = Table(title=f"per-episode cost, oracle episodes, Python API ({args.rounds} interleaved rounds × {args.episodes} episodes; "
                        f"ratios to {base})")
    for column in ("environment", "templates", "tools", "rows", "world MB", "calls/episode", "create ms", "× ", "call ms", "×  ", "grade ms", "×   ",
                   "episode ms", "×    "):
        table.add_column(column, justify="left" if column == "environment" else "right")
    for name in args.envs:
        m, b = med[name], med[base]
        rows, mb, tools, templates = sizes[name]
        table.add_row(name, str(templates), str(tools), f"{rows:,}", f"{mb:.1f}", f"{m['calls']:.0f}",
                      f"{m['create_ms']:.2f}", f"{m['create_ms'] / b['create_ms']:.2f}", f"{m['call_ms']:.3f}", f"{m['call_ms'] / b['call_ms']:.2f}",
                      f"{m['grade_ms']:.2f}", f"{m['grade_ms'] / b['grade_ms']:.2f}", f"{m['episode_ms']:.2f}", f"{m['episode_ms'] / b['episode_ms']:.2f}")
    console.print(table)
    console.print("first pass (every instance built, expected change sets computed), medians: " + "; ".join(
        f"{n} create {c['create_ms']:.2f} ms, grade {c['grade_ms']:.2f} ms" for n, c in cold.items()))
    spread = {name: (min(r["episode_ms"] for r in rounds), max(r["episode_ms"] for r in rounds)) for name, rounds in results.items()}
    console.print("episode ms per round, min–max: " + "; ".join(f"{n} {lo:.2f}–{hi:.2f}" for n, (lo, hi) in spread.items()))


if __name__ == "__main__":
    main()
