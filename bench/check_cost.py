"""`toolgym check` CPU per template x seed, this tree against an earlier one, interleaved rounds.

Usage::

    git worktree add /tmp/before 127eae2          # the tree to compare against (once)
    python bench/check_cost.py --before /tmp/before [--envs finance,support,workspace] [--templates 0]
                               [--seeds 6] [--rounds 2]

For each environment, the template ids the two trees share (all of them, or ``--templates`` spread evenly over the
list) are checked on seeds
``0..--seeds-1`` in a fresh child process per side and round (``check_environment`` in process, CPU time of the
check alone: imports and the fixture's first build are outside it), sides alternating B A B A ... so load on the
shared machine falls on both. Prints the median CPU per template x seed of each side and the ratio; also how
many violations each side's report holds (the trees check different things, so only this tree's report is
compared across rounds: identical reports every round, or the table says it is not).

Goal (issue 27): ``toolgym check`` CPU per template x seed <= 1/3 of 127eae2's on every environment.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import hashlib, json, sys, time
import anyio
from servers.registry import load_environment
from graders.metaeval import check_environment
env = load_environment(sys.argv[1])
ids = json.loads(sys.argv[2])
seeds = int(sys.argv[3])
env.task_templates()
t0 = time.process_time()
report = anyio.run(lambda: check_environment(env, seeds=seeds, templates=ids))
cpu = time.process_time() - t0
violations = len(report.violations)
text = report.summary()  # every count, reward and violation; no timings
print(json.dumps({"cpu": cpu, "violations": violations, "digest": hashlib.sha256(text.encode()).hexdigest()[:12]}))
"""

LIST = r"""
import json
from servers.registry import load_environment
print(json.dumps(list(load_environment(__import__('sys').argv[1]).task_templates())))
"""


def _python(tree: Path, code: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: child failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1]


def _warm(tree: Path, env: str, ids: list[str]) -> None:
    """Build the environment's fixture (cached on disk) outside any measurement: one seed of the first template."""
    _python(tree, CHILD, env, json.dumps(ids[:1]), "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the tree to compare against")
    parser.add_argument("--now", type=Path, default=ROOT, help="the tree measured against it (default: this one)")
    parser.add_argument("--envs", default="finance,support,workspace")
    parser.add_argument("--templates", type=int, default=0, help="how many templates (0: all)")
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "now": args.now.resolve()}
    rows = []
    for env in args.envs.split(","):
        shared = [t for t in json.loads(_python(sides["now"], LIST, env)) if t in set(json.loads(_python(sides["before"], LIST, env)))]
        # spread over the kinds of task; 0: every template (what `toolgym check` runs: a seed's attack vocabulary,
        # built once per seed from every template, is then shared as in a real check)
        ids = shared[:: max(1, len(shared) // args.templates)][: args.templates] if args.templates else shared
        for tree in sides.values():
            _warm(tree, env, ids)
        cpu: dict[str, list[float]] = {"before": [], "now": []}
        digests: dict[str, set[str]] = {"before": set(), "now": set()}
        violations: dict[str, int] = {}
        for round_ in range(args.rounds):
            order = ["before", "now"] if round_ % 2 == 0 else ["now", "before"]
            for side in order:
                out = json.loads(_python(sides[side], CHILD, env, json.dumps(ids), str(args.seeds)))
                cpu[side].append(out["cpu"] / (len(ids) * args.seeds))
                digests[side].add(out["digest"])
                violations[side] = out["violations"]
                print(f"  {env} round {round_ + 1} {side}: {out['cpu']:.2f} s CPU", file=sys.stderr, flush=True)
        before, now = statistics.median(cpu["before"]), statistics.median(cpu["now"])
        rows.append((env, len(ids), before, now, now / before, violations, len(digests["now"]) == 1))
    print(f"\n{'env':<11} {'templates':>9} {'127eae2-side s':>15} {'now s':>8} {'now/before':>11}  violations (before/now)  same report every round")
    for env, n, before, now, ratio, violations, same in rows:
        print(f"{env:<11} {n:>9} {before:>15.3f} {now:>8.3f} {ratio:>11.2f}  {violations['before']:>6} / {violations['now']:<14}  {'yes' if same else 'NO'}")
    print(f"(CPU per template x seed, medians of {args.rounds} interleaved rounds; {args.seeds} seeds)")


if __name__ == "__main__":
    main()
