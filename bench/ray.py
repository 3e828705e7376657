"""Oracle episodes/s through the runner: in process vs. 1 environment actor vs. 2 actors on Ray, same run.

Usage: ``python bench/ray.py [--env finance] [--episodes 123] [--rounds 5] [--cpus 2]``

Each round runs the same plan — every task template × enough seeds for ``--episodes`` — through each side,
one after the other (A B C, A B C, ...), so a shared, noisy machine slows every side alike; the table gives
medians over the rounds. Every round uses fresh seeds, so no side profits from a grader cache warmed by an
earlier round (each process replays an oracle once per task instance it grades).

* ``in process``: ``toolgym run`` as it is, concurrency 8 (one core);
* ``1 actor`` / ``2 actors``: ``toolgym run --ray`` on a pool of environment actors kept warm across rounds
  (the actors' start, ~2 s each, is not timed), 4 episodes in flight per actor. The driver (this process)
  plans, writes results and records, and draws nothing.

The local cluster gets ``--cpus`` CPUs (default: the machine's); the two pools exist at once, but only one
works at a time. The ratios at the bottom are the issue's target: 2 actors ≥ 1.6× one actor on 2 cores.
``CPU ms/ep`` is CPU time per episode of the driver and of the actors (read from ``/proc``): what a noisy
machine cannot inflate, so it tells whether actors cost more per episode than a local run, apart from how
many cores they got; ``other cores busy`` is what every other process used meanwhile (Ray's own daemons
included), on average: above ~0.3, the 2-actor figure measures a machine with less than 2 cores to spare, so
the ratio is also given over the quiet rounds alone. Memory per actor is each actor process's resident set
(RSS, and PSS with shared pages split) after its last round.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
# This file is named ray.py: its folder (sys.path[0] when run as a script) must not shadow the ray package.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT / "bench"]

import ray  # noqa: E402

from clients.ray import EnvPool  # noqa: E402
from clients.runner import RunConfig, run  # noqa: E402
from servers.registry import load_environment  # noqa: E402

SIDES = ("in process", "1 actor", "2 actors")

QUIET = 0.3
"""Cores busy with other processes (Ray's daemons included) below which a round counts as quiet."""


def _mb(value: float) -> str:
    return f"{value / 2**20:,.0f} MB"


def _cpu(pid: int | None = None) -> float:
    """CPU seconds (user + system) of this process, or of process ``pid`` on this machine."""
    if pid is None:
        times = os.times()
        return times.user + times.system
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_busy() -> float:
    """CPU seconds every process of this machine has used since boot (``/proc/stat``: all but idle and iowait)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


Results = dict[str, dict[str, list[float]]]
"""Per side, one value per round: episodes/s, driver and actors' CPU ms per episode, other cores busy."""


async def bench(env: str, episodes: int, rounds: int, out: Path) -> tuple[Results, list[dict[str, int]], int]:
    """Run the rounds; the figures per side, the actors' memory after the last round, the driver's RSS."""
    tasks = list(load_environment(env).task_templates())
    per_round = max(1, math.ceil(episodes / len(tasks)))
    results: Results = {side: {"rate": [], "driver": [], "actors": [], "others": []} for side in SIDES}
    async with EnvPool(env, actors=1) as one, EnvPool(env, actors=2) as two:
        pools = {"1 actor": one, "2 actors": two}
        pids = {side: [(await h.ping.remote())["pid"] for h in pool.handles] for side, pool in pools.items()}
        # Warm every process alike (template loaded, tools built) on seeds no timed round uses.
        warm = f"{10_000}-{10_000 + 1}"
        await run(RunConfig(env=env, agent="oracle", seeds=warm, out=out / "warm-local"))
        for side, pool in pools.items():
            await run(RunConfig(env=env, agent="oracle", seeds=warm, out=out / f"warm-{side}", ray=pool))
        for index in range(rounds):
            seeds = f"{index * per_round}-{(index + 1) * per_round - 1}"
            for side in SIDES:
                config = RunConfig(
                    env=env, agent="oracle", seeds=seeds, out=out / f"r{index}-{side}", ray=pools.get(side)
                )
                actors = pids.get(side, [])
                cpu = (_cpu(), sum(_cpu(pid) for pid in actors), _machine_busy())
                started = time.perf_counter()
                outcome = await run(config)
                elapsed = time.perf_counter() - started
                ours = _cpu() - cpu[0] + sum(_cpu(pid) for pid in actors) - cpu[1]
                assert all(line.status == "graded" and line.passed for line in outcome.lines), (
                    f"{side}: not every oracle passed"
                )
                count = len(outcome.lines)
                figures = results[side]
                figures["rate"].append(count / elapsed)
                figures["driver"].append((_cpu() - cpu[0]) * 1000 / count)
                figures["actors"].append((sum(_cpu(pid) for pid in actors) - cpu[1]) * 1000 / count)
                figures["others"].append((_machine_busy() - cpu[2] - ours) / elapsed)
                print(
                    f"round {index + 1}/{rounds} {side:>10}: {count} episodes, {figures['rate'][-1]:6.1f}/s",
                    file=sys.stderr,
                )
        memory = [await handle.memory.remote() for pool in (one, two) for handle in pool.handles]
    return results, memory, _rss()


def main() -> None:
    """Start a local cluster, run the rounds, print the table, the ratios and memory per actor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="finance")
    parser.add_argument(
        "--episodes", type=int, default=123, help="episodes per side per round (default: 123, 3 seeds of finance)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpus", type=int, default=os.cpu_count() or 2, help="CPUs of the local Ray cluster")
    args = parser.parse_args()
    # 3 logical CPUs at least: both pools (1 + 2 actors) exist at once, though only one works at a time
    ray.init(
        address="local", num_cpus=max(args.cpus, 3), include_dashboard=False, logging_level="ERROR", log_to_driver=False
    )
    try:
        with tempfile.TemporaryDirectory(prefix="toolgym-bench-ray-") as tmp:
            results, memory, driver = anyio.run(bench, args.env, args.episodes, args.rounds, Path(tmp))
    finally:
        ray.shutdown()
    console = Console(width=max(Console().width, 110))
    cores = os.cpu_count()
    table = Table(
        title=f"oracle episodes/s · {args.env} · {args.rounds} interleaved rounds · {cores} cores (medians)",
        title_justify="left",
    )
    columns = ("side", "ep/s", "min – max", "× local", "× 1 actor", "CPU ms/ep driver", "actors", "other cores busy")
    for column in columns:
        table.add_column(column, justify="left" if column == "side" else "right")
    rates = {side: results[side]["rate"] for side in SIDES}
    median = {side: statistics.median(values) for side, values in rates.items()}
    for side in SIDES:
        table.add_row(
            side,
            f"{median[side]:.1f}",
            f"{min(rates[side]):.1f} – {max(rates[side]):.1f}",
            f"{median[side] / median['in process']:.2f}",
            f"{median[side] / median['1 actor']:.2f}",
            f"{statistics.median(results[side]['driver']):.1f}",
            f"{statistics.median(results[side]['actors']):.1f}" if side != "in process" else "",
            f"{statistics.median(results[side]['others']):.2f}",
        )
    console.print(table)
    paired = [two / one for one, two in zip(rates["1 actor"], rates["2 actors"], strict=True)]
    target = "met" if median["2 actors"] / median["1 actor"] >= 1.6 else "NOT met"
    console.print(
        f"2 actors / 1 actor: {median['2 actors'] / median['1 actor']:.2f}× "
        f"(per round: {', '.join(f'{r:.2f}' for r in paired)}); target ≥ 1.6× on 2 cores: {target}"
    )
    # Rounds in which nothing else took a share of the cores from either Ray side: the scaling of actors proper.
    others = zip(results["1 actor"]["others"], results["2 actors"]["others"], strict=True)
    quiet = [ratio for ratio, (one, two) in zip(paired, others, strict=True) if max(one, two) <= QUIET]
    if quiet:
        console.print(
            f"rounds with other processes under {QUIET:g} cores busy: {len(quiet)} of {len(paired)}, "
            f"2 actors / 1 actor there: median {statistics.median(quiet):.2f}×"
        )
    else:
        console.print(f"no round had other processes under {QUIET:g} cores busy: the machine was never quiet")
    memory_table = Table(title="memory per actor after its last round", title_justify="left")
    for column in ("actor", "RSS", "PSS"):
        memory_table.add_column(column, justify="left" if column == "actor" else "right")
    for name, found in zip(("1 actor #0", "2 actors #0", "2 actors #1"), memory, strict=True):
        memory_table.add_row(name, _mb(found["rss"]), _mb(found["pss"]))
    memory_table.add_row("driver (this process)", _mb(driver), "")
    console.print(memory_table)


if __name__ == "__main__":
    main()
