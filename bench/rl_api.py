"""CPU per oracle episode through the documented RL API, part by part: create, steps, grade, release.

Usage: ``python bench/rl_api.py [--envs finance,support,workspace] [--seeds 2] [--rounds 5]``

For each environment, every task template × ``--seeds`` seeds is played through ``clients.rl.open_episode`` (a
manager of its own per episode, as the README shows it; steps answered in process, ``servers/direct.py``): the
oracle's steps, ``finish`` (close and grade), then the release. A first pass builds every instance (cold: the
setups, the expected change sets, the no-op baselines); then ``--rounds`` warm passes, and the table shows the
median over them of the CPU per episode (``time.process_time``) spent in each part, and the cold pass's total.
Each environment runs in a fresh child process, so one environment's caches never warm another's.

Goal (issue 27): >= 100x less CPU per task than tau2-bench retail (263 ms per task measured on 2026-12-03, gold
actions replayed and rewarded), i.e. <= 2.6 ms warm. That figure is fixed here; ``bench/tau2_side_by_side.py``
measures tau2-bench in the same rounds as toolgym, the fair reading on a machine of any speed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PARTS = ("create", "steps", "grade", "release")
TAU2_MS = 263.0
"""tau2-bench retail, CPU per task (gold actions replayed and rewarded), measured on this kind of machine on 2026-12-03."""


async def _pass(environment: Any, tasks: list[str], seeds: int) -> dict[str, float]:
    from clients.rl import open_episode

    spent = dict.fromkeys(PARTS, 0.0)
    for seed in range(seeds):
        for task in tasks:
            started = time.process_time()
            opened = open_episode(environment, task, seed)
            episode = await opened.__aenter__()
            created = time.process_time()
            instance = episode._episode.task  # noqa: SLF001 - the oracle is the bench's agent
            assert instance is not None
            for step in instance.oracle:
                await episode.step(step.tool, step.arguments)
            stepped = time.process_time()
            done = await episode.finish()
            graded = time.process_time()
            await opened.__aexit__(None, None, None)
            released = time.process_time()
            if not done.passed:
                raise SystemExit(f"{environment.name} {task} seed {seed}: the oracle did not pass ({done.reward})")
            for part, (a, b) in zip(PARTS, ((started, created), (created, stepped), (stepped, graded), (graded, released)), strict=True):
                spent[part] += b - a
    count = len(tasks) * seeds
    return {part: value * 1000 / count for part, value in spent.items()}


async def _child(env_name: str, seeds: int, rounds: int) -> dict[str, Any]:
    from servers.registry import load_environment

    environment = load_environment(env_name)
    tasks = list(environment.task_templates())
    cold = await _pass(environment, tasks, seeds)
    warm = [await _pass(environment, tasks, seeds) for _ in range(rounds)]
    return {"cold": sum(cold.values()), "parts": {p: statistics.median(r[p] for r in warm) for p in PARTS},
            "total": statistics.median(sum(r.values()) for r in warm), "best": min(sum(r.values()) for r in warm)}


def main() -> None:
    """Run each environment in a child process and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default="finance,support,workspace")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(anyio.run(_child, args.child, args.seeds, args.rounds)))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"CPU ms per oracle episode through clients.rl.open_episode (warm: median of {args.rounds} rounds)")
    for column in ("environment", *PARTS, "warm total", "best round", f"x below tau2 ({TAU2_MS:.0f} ms)", "cold total"):
        table.add_column(column, justify="left" if column == "environment" else "right")
    for env_name in args.envs.split(","):
        out = subprocess.run([sys.executable, __file__, "--child", env_name, "--seeds", str(args.seeds), "--rounds", str(args.rounds)],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        table.add_row(env_name, *(f"{got['parts'][p]:.2f}" for p in PARTS), f"{got['total']:.2f}", f"{got['best']:.2f}",
                      f"{TAU2_MS / got['total']:.0f}x", f"{got['cold']:.2f}")
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
