"""Peak memory and time of ``toolgym new`` on a database with a million-row table.

The database is tests/new/messy_dbs.py ``big_shop`` (a shop with ``--lines`` order lines, one customer per 50 lines
with names shared by many people, one order per 10 lines), built once into ``--work``. Each side runs in its own
process, so its peak resident set (``ru_maxrss`` from ``wait4``) is its own:

- ``baseline``: Python opening the same file and copying it with SQLite's backup API into memory (what merely holding
  the data costs);
- ``new --no-check``: read, type, copy the data, write the package, derive and build every template on 2 seeds;
- ``new --seeds N``: the same, then ``toolgym check`` of every template (default N=2, no attacks: the memory path is
  the same as with them, only longer).

Sides are interleaved (A B C A B C ...) for ``--repeat`` rounds on a shared, noisy machine; medians are printed, with
the target: every ``new`` side under 600 MB.

    python bench/new_memory.py                 # a million lines (builds ~70 MB once)
    python bench/new_memory.py --lines 200000 --repeat 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_MB = 600


def run(argv: list[str], cwd: Path) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit status) of one child process."""
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0 and process.stderr is not None:
        sys.stderr.write(process.stderr.read().decode()[-2000:])
    return usage.ru_maxrss / 1024, time.perf_counter() - started, process.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1_000_000, help="order lines in the big table (default a million)")
    parser.add_argument("--seeds", type=int, default=2, help="seeds the checked side plays per template (default 2)")
    parser.add_argument("--repeat", type=int, default=2, help="interleaved rounds (default 2)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "toolgym-bench-new", help="where the database and packages go")
    parser.add_argument("--no-checked-side", action="store_true", help="skip the side that runs the check (it takes longest)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    db = args.work / f"big_shop_{args.lines}.sqlite"
    if not db.exists():
        sys.path.insert(0, str(REPO))
        from tests.new.messy_dbs import big_shop

        print(f"building {db} ({args.lines:,} order lines)...", flush=True)
        big_shop(db.with_suffix(".part"), args.lines)
        db.with_suffix(".part").replace(db)
    toolgym = [sys.executable, "-m", "clients.cli"]
    sides = {
        "baseline (backup into memory)": [sys.executable, "-c", "import sqlite3, sys; s = sqlite3.connect(sys.argv[1]); "
                                          "m = sqlite3.connect(':memory:'); s.backup(m); print(m.execute('select count(*) from order_lines').fetchone())", str(db)],
        "new --no-check": [*toolgym, "new", "bigshop", "--from", str(db), "--out", str(args.work / "nocheck"), "--no-check"],
    }
    if not args.no_checked_side:
        sides[f"new --seeds {args.seeds} --no-attacks"] = [*toolgym, "new", "bigshop", "--from", str(db), "--out", str(args.work / "checked"),
                                                            "--seeds", str(args.seeds), "--no-attacks"]
    results: dict[str, list[tuple[float, float, int]]] = {name: [] for name in sides}
    for round_ in range(args.repeat):
        for name, argv in sides.items():
            for folder in ("nocheck", "checked"):
                subprocess.run(["rm", "-rf", str(args.work / folder)], check=True)
            results[name].append(run(argv, REPO))
            mb, seconds, status = results[name][-1]
            print(f"round {round_ + 1}: {name}: {mb:.0f} MB peak, {seconds:.1f} s, exit {status}", flush=True)
    print(f"\n{'side':40s} {'peak MB (median)':>17s} {'seconds (median)':>17s}  target")
    base = statistics.median(r[0] for r in results[next(iter(sides))])
    for name, rows in results.items():
        mb, seconds = statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
        verdict = "-" if name.startswith("baseline") else ("ok" if mb < TARGET_MB and all(r[2] == 0 for r in rows) else "OVER" if mb >= TARGET_MB else "FAILED")
        print(f"{name:40s} {mb:17.0f} {seconds:17.1f}  {verdict} (x{mb / base:.1f} the baseline)")


if __name__ == "__main__":
    main()
