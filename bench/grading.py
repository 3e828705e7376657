"""Grading time per episode, and how it changes with a 10× larger fixture, against a full-table diff.

    python bench/grading.py [ENV ...] [--seeds N] [--repeat N] [--max-templates N]

For each environment (default: the grader tests' toy help desk, and ``finance`` when it has task
templates), each template and seed: clone a world at scale 1 and 10, apply the task's setup, play the
oracle through the dispatcher, then time

* ``grade`` — :func:`graders.grading.grade_episode` with the expected change set cached (steady state),
* ``first grade`` — the same with the cache cleared (includes replaying the oracle once),
* ``baseline`` — a full-table diff of the same start and end worlds (every row of every table compared),
  which is what grading would cost without the change log.

Grading should stay flat from scale 1 to 10 (it reads changed rows only); the baseline grows with the data.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from anywhere: the toy lives in tests/

from fixtures.hashing import primary_key, user_tables
from graders.detached import detached_task_episode
from graders.grading import grade_episode
from graders.resolve import resolve_environment
from servers.dispatch import call_tool
from servers.environment import Environment
from servers.episodes import Episode
from servers.record import ClosedEvent

TOY = "tests.graders.toy:environment"


def full_diff(before: sqlite3.Connection, after: sqlite3.Connection) -> int:
    """Compare every row of every table of two databases; returns the number of differing rows."""
    differing = 0
    for table in user_tables(after):
        order = ", ".join(f'"{c}"' for c in primary_key(after, table))
        old = {row[: len(order.split(","))]: row for row in before.execute(f'SELECT {order}, * FROM "{table}"')}
        for row in after.execute(f'SELECT {order}, * FROM "{table}"'):
            key = row[: len(order.split(","))]
            if old.pop(key, None) != row:
                differing += 1
        differing += len(old)
    return differing


async def oracle_episode(environment: Environment, template_id: str, seed: int, scale: int) -> tuple[Episode, bytes]:
    """A closed episode of (template, seed) on a world of ``scale`` with its oracle played; and its start bytes."""
    episode = detached_task_episode(environment, template_id, seed, scale=scale, label="bench")
    world, instance = episode.world, episode.task
    assert instance is not None
    start = world.conn.serialize()
    for step in instance.oracle:
        await call_tool(episode, step.tool, step.arguments)
    episode.record.events.append(ClosedEvent(end_hash="(not hashed)", tool_calls=episode.seq))
    episode.state = "closed"
    return episode, start


def median_ms(samples: list[float]) -> float:
    """Median of seconds, in milliseconds."""
    return statistics.median(samples) * 1000


def spread(templates: list[Any], limit: int) -> list[Any]:
    """At most ``limit`` templates, evenly spaced (categories are usually grouped, so this samples them all)."""
    if limit <= 0 or len(templates) <= limit:
        return templates
    step = len(templates) / limit
    return [templates[int(i * step)] for i in range(limit)]


async def measure(environment: Environment, scale: int, seeds: int, repeat: int, limit: int) -> dict[str, Any]:
    """Timings for one environment at one scale, over (a spread of) its templates and seeds."""
    grade_s: list[float] = []
    first_s: list[float] = []
    base_s: list[float] = []
    rows = 0
    changed = 0
    for template in spread(list(environment.task_templates().values()), limit):
        for seed in range(seeds):
            episode, start_bytes = await oracle_episode(environment, template.id, seed, scale)
            template._expected.clear()
            began = time.perf_counter()
            await grade_episode(episode, judge_from_env=False)
            first_s.append(time.perf_counter() - began)
            for _ in range(repeat):
                began = time.perf_counter()
                await grade_episode(episode, judge_from_env=False)
                grade_s.append(time.perf_counter() - began)
            before = sqlite3.connect(":memory:")
            before.deserialize(start_bytes)
            for _ in range(max(1, repeat // 10)):
                began = time.perf_counter()
                changed = full_diff(before, episode.world.conn)
                base_s.append(time.perf_counter() - began)
            before.close()
            rows = sum(episode.world.conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in user_tables(episode.world.conn))
            episode.world.release()
    return {"grade": median_ms(grade_s), "first": median_ms(first_s), "baseline": median_ms(base_s), "rows": rows, "changed": changed}


async def run(envs: list[str], seeds: int, repeat: int, limit: int) -> None:
    """Measure and print the table."""
    table = Table(title="grading time per episode (median over templates × seeds × repeats)", title_justify="left", header_style="bold")
    for column in ("env", "scale", "rows", "grade ms", "first grade ms", "baseline: full diff ms", "baseline / grade"):
        table.add_column(column, justify="left" if column == "env" else "right")
    for ref in envs:
        environment = resolve_environment(ref)
        if not environment.task_templates():
            table.add_row(environment.name, "-", "-", "no task templates", "", "", "")
            continue
        for scale in (1, 10):
            result = await measure(environment, scale, seeds, repeat, limit)
            table.add_row(
                environment.name,
                f"{scale}×",
                f"{result['rows']:,}",
                f"{result['grade']:.3f}",
                f"{result['first']:.3f}",
                f"{result['baseline']:.3f}",
                f"{result['baseline'] / result['grade']:.0f}×",
            )
    Console(soft_wrap=True).print(table)


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("envs", nargs="*", default=[TOY, "finance"], help="environment names or module:attribute")
    parser.add_argument("--seeds", type=int, default=2, help="seeds per template (default 2)")
    parser.add_argument("--repeat", type=int, default=30, help="timed gradings per episode (default 30)")
    parser.add_argument("--max-templates", type=int, default=8, help="templates per environment, evenly spread (0: all)")
    args = parser.parse_args()
    anyio.run(run, args.envs, args.seeds, args.repeat, args.max_templates)


if __name__ == "__main__":
    main()
