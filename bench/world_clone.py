"""World clone (reset) time for an environment's fixture, against SQLite's backup API in the same run.

    python bench/world_clone.py [ENV] [--repeat N]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from servers.registry import load_environment


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall times in ms of ``repeat`` calls of ``fn`` (after 10 warm-up calls)."""
    for _ in range(10):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    """Print clone, snapshot/restore and hash timings for one environment's template."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("env", nargs="?", default="finance")
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()

    environment = load_environment(args.env)
    started = time.perf_counter()
    template = environment.fixture.template(0)
    build_ms = (time.perf_counter() - started) * 1000
    source = sqlite3.connect(":memory:")
    source.deserialize(template.data)

    def backup_clone() -> None:
        target = sqlite3.connect(":memory:")
        source.backup(target)
        target.close()

    def world_clone() -> None:
        environment.fixture.world(0).close()

    account = environment.fixture.world(0).query("SELECT account_id FROM accounts ORDER BY account_id LIMIT 1")[0]["account_id"]

    def pooled_episode_world() -> None:
        # what an episode costs its world: take one from the pool, change a row, release (rewind)
        pooled = environment.fixture.world(0)
        pooled.execute("UPDATE accounts SET nickname = 'bench' WHERE account_id = ?", (account,))
        pooled.release()

    world = environment.fixture.world(0)
    snap = world.snapshot()

    rows = [
        ("baseline: sqlite backup API copy", timed(backup_clone, args.repeat)),
        ("toolgym: fixture.world(seed) clone", timed(world_clone, args.repeat)),
        ("toolgym: world.snapshot()", timed(world.snapshot, args.repeat)),
        ("toolgym: world.restore(snapshot)", timed(lambda: world.restore(snap), args.repeat)),
        ("toolgym: pooled world: get + 1 write + release (rewind)", timed(pooled_episode_world, args.repeat)),
        ("toolgym: world.hash() (incremental, O(changes))", timed(world.hash, args.repeat)),
        ("toolgym: world.full_hash() (every row)", timed(world.full_hash, 5)),
    ]
    table = Table(title=f"{args.env}: template {len(template.data) / 1e6:.2f} MB, built in {build_ms:.0f} ms (cached after)")
    for column in ("operation", "median ms", "p90 ms", "vs baseline"):
        table.add_column(column, justify="right" if column != "operation" else "left")
    base = statistics.median(rows[0][1])
    for name, samples in rows:
        median = statistics.median(samples)
        p90 = statistics.quantiles(samples, n=10)[-1]
        table.add_row(name, f"{median:.3f}", f"{p90:.3f}", f"{median / base:.2f}x")
    Console().print(table)
    print("goal: world reset median < 1 ms (pooled rewind); a cold clone copies the whole template")


if __name__ == "__main__":
    main()
