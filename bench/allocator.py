"""Server CPU per oracle episode: ``serve --allocator system`` (the default) vs ``--allocator python``, interleaved.

Usage: ``python bench/allocator.py [--env finance] [--rounds 9] [--seeds 2] [--concurrency 8]``

Two ``serve --transport http`` processes run side by side, one per allocator (``servers/malloc.py``: the C
library's malloc lets released episodes' memory go back to the system; pymalloc is cheaper per object).
Each round runs the runner's oracle over every task × ``--seeds`` seeds against one server, then the other,
alternating which goes first (A B, B A, ...), and reads each server's CPU time from ``/proc``: what the
server spends per episode, whatever the client or the machine's noise does to wall time. The first round
is warm-up and left out. ``bench/load.py --allocator ...`` gives the memory side of the same choice.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import anyio
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from clients.progress import SilentReporter  # noqa: E402
from clients.runner import RunConfig, run  # noqa: E402
from runner import start_server  # noqa: E402
from servers.http import new_token  # noqa: E402
from servers.registry import load_environment  # noqa: E402

SIDES = ("system", "python")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_round(env_name: str, url: str, token: str, pid: int, seeds: int, concurrency: int) -> float:
    """Server CPU ms per episode of one oracle run over every task × ``seeds`` seeds."""
    environment = load_environment(env_name)
    with tempfile.TemporaryDirectory() as out:
        before = cpu_seconds(pid)
        config = RunConfig(
            env=environment,
            agent="oracle",
            seeds=f"0-{seeds - 1}",
            concurrency=concurrency,
            out=Path(out),
            overwrite=True,
            server=url,
            token=token,
        )
        outcome = await run(config, SilentReporter())
        errored = [line for line in outcome.lines if line.status == "errored"]
        if errored:
            raise SystemExit(f"{len(errored)} episodes errored (e.g. {errored[0].task}: {errored[0].error})")
        return (cpu_seconds(pid) - before) * 1000 / len(outcome.lines)


def main() -> None:
    """Start both servers, run interleaved rounds, print medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--env", default="finance")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    servers = {}
    try:
        for side in SIDES:
            token = new_token()
            child, url = start_server(args.env, token, "--allocator", side)
            servers[side] = (child, url, token)
        samples: dict[str, list[float]] = {side: [] for side in SIDES}
        for number in range(args.rounds + 1):
            for side in SIDES if number % 2 == 0 else tuple(reversed(SIDES)):
                child, url, token = servers[side]
                ms = anyio.run(one_round, args.env, url, token, child.pid, args.seeds, args.concurrency)
                if number > 0:  # round 0 warms both servers up
                    samples[side].append(ms)
            if number > 0:
                print(f"round {number}/{args.rounds}: " + ", ".join(f"{s} {samples[s][-1]:.2f} ms" for s in SIDES), flush=True)
    finally:
        for child, _, _ in servers.values():
            child.terminate()
            child.wait()
    table = Table(title=f"server CPU per oracle episode · {args.env} · {args.rounds} interleaved rounds", title_justify="left")
    for column in ("--allocator", "median ms", "min – max"):
        table.add_column(column, justify="right" if column != "--allocator" else "left")
    for side in SIDES:
        values = samples[side]
        table.add_row(side, f"{statistics.median(values):.2f}", f"{min(values):.2f} – {max(values):.2f}")
    console = Console()
    console.print(table)
    ratios = [a / b for a, b in zip(samples["system"], samples["python"], strict=True)]
    console.print(
        f"system / python, server CPU per episode: {statistics.median(samples['system']) / statistics.median(samples['python']):.2f}x "
        f"(per round: {', '.join(f'{r:.2f}' for r in ratios)})"
    )


if __name__ == "__main__":
    main()
