"""``toolgym check ENV``: meta-evaluate an environment's graders (oracle, no-op, negatives, attacks, determinism)."""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
from rich.console import Console
from rich.table import Table

from clients.console import counted
from clients.errors import RunError
from clients.flags import integer
from clients.selection import parse_seeds
from graders.guessing import GUESS_LIMIT
from graders.metaeval import CONSTANT_POLICY_LIMIT, DEFAULT_SEEDS, CheckReport, check_environment
from graders.parallel import check_in_processes
from graders.priors import PRIOR_CLASSES, PRIOR_LIMIT, REPLAY_LIMIT
from graders.resolve import resolve_environment
from servers.private_tasks import with_private_tasks

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run", "render", "report_json"]

NAME = "check"
HELP = "meta-evaluate an environment's graders: oracle 1.0; no-op, negatives and generated attacks fail; determinism"
DESCRIPTION = (
    "For every task template of ENV and several seeds: the oracle must score exactly 1.0 over real in-memory MCP "
    "clients with no tool error, re-grade offline to the same grade, and still pass without the steps it marks "
    "optional; the no-op and every hand-written negative must fail; every generated attack (answer without work, "
    "outcome lies, keyword stuffing, over-action, forbidden attempts, prefixes, skipped steps, reorderings, "
    "perturbed values, hedged answers) must fail; the same seed must give the same world hash and grade; seeds must "
    "give distinct instances (18 of 20) whose correct declaration varies (no declaration right on more than 70% of "
    "them); task-agnostic constant policies must average a "
    f"reward of at most {CONSTANT_POLICY_LIMIT}; trained-policy attacks learnt from the other seeds (a template prior, "
    "alone and after generic reads; another seed's oracle replayed verbatim and with this prompt's facts substituted) "
    "must average at most 0.05 and pass at most 2% of instances; every alternative path (another read that shows the "
    "same deciding facts, extra reads, a step repeated, reads reordered) must pass; and the guessing attack (the "
    f"best-paying declaration after habit reads) must average at most {GUESS_LIMIT}. Exits 1 listing every violation."
)

MAX_CHECK_SEEDS = 100_000


def check_seeds(text: str) -> int | list[int]:
    """``--seeds``: a count N (seeds 0..N-1, as before) or seeds as ``run`` takes them (``1000-1019``, ``3,5,9``)."""
    term = text.strip()
    if term.isdigit():
        return integer(1, MAX_CHECK_SEEDS)(term)
    try:
        seeds = parse_seeds(term)
    except RunError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--seeds: ")) from None
    if len(seeds) > MAX_CHECK_SEEDS:
        raise argparse.ArgumentTypeError(f"selects {len(seeds)} seeds; check at most {MAX_CHECK_SEEDS}")
    return list(seeds)


def _console() -> Console:
    """A console; piped output (CI logs) gets 200 columns so the table does not wrap into unreadable cells."""
    console = Console(soft_wrap=True, highlight=False)
    if not console.is_terminal:
        console = Console(soft_wrap=True, highlight=False, width=200)
    return console


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``check ENV [--seeds N] [--templates ID ...] [--no-attacks] [--jobs N] [--judge] [--json]``."""
    parser.add_argument("env", metavar="ENV", help="environment name (see `toolgym envs`) or module:attribute")
    parser.add_argument("--seeds", type=check_seeds, default=DEFAULT_SEEDS, metavar="N|SEEDS",
                        help=f"a count N checks seeds 0..N-1 (default {DEFAULT_SEEDS}; CI checks 20); held-out seeds as run takes "
                             "them: 1000-1019, 3,5,9 or 0-4,7")
    parser.add_argument("--templates", nargs="+", metavar="ID", help="only these template ids (default: all)")
    parser.add_argument("--no-attacks", action="store_true", help="skip the generated attacks and constant policies (faster)")
    parser.add_argument("--jobs", type=integer(1, 1024), default=1, metavar="N", help="split the templates over N processes (default 1; one per core)")
    parser.add_argument("--judge", action="store_true", help="grade LLM-judge criteria with the TOOLGYM_JUDGE_* endpoint")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of tables")
    parser.add_argument("--private-tasks", action="append", default=[], metavar="PATH",
                        help="also check held-out templates from a folder of modules, a .py file or a module name; repeatable")


def render(report: CheckReport, console: Console) -> None:
    """Print the templates table, the attack classes, the constant policies, then every violation and note."""
    table = Table(title=f"toolgym check {report.env}", title_justify="left", header_style="bold")
    table.add_column("template", no_wrap=True)
    numeric = ("seeds", "distinct", "majority", "max attack", "prior", "replays", "guess", "time")
    for column in ("seeds", "distinct", "outcomes", "majority", "oracle", "noop", "negatives", "attacks", "max attack", "prior",
                   "replays", "alt paths", "guess", "determinism", "time"):
        table.add_column(column, justify="right" if column in numeric else "left")
    for t in report.templates:
        style = "" if t.ok else "red"
        table.add_row(t.template_id, str(len(t.seeds)), str(t.distinct), str(len(t.declarations)), f"{t.majority_share:.2f}", t.oracle,
                      t.noop, t.negatives, t.attack_summary, f"{t.worst_attack:.3f}", f"{t.prior_reward:.3f}", str(t.replays_passed),
                      t.alternatives_summary, f"{t.guess.reward:.3f}", t.determinism, f"{t.seconds:.2f}s", style=style)
    console.print(table)
    console.print("distinct: distinct instances over the seeds; outcomes: distinct correct declarations; majority: share of seeds "
                  "of the most frequent one; prior: mean reward of the template-prior policies; replays: seeds another seed's "
                  "oracle passed (graders/priors.py); alt paths: should-pass variants passed/tried (graders/alternatives.py); "
                  "guess: the best-paying declaration's mean reward after habit reads (graders/guessing.py)")
    attacks = Table(title="generated attacks (each counted one must fail)", title_justify="left", header_style="bold")
    attacks.add_column("class", no_wrap=True)
    for column in ("generated", "counted", "passed", "highest reward"):
        attacks.add_column(column, justify="right")
    for kind, stats in report.attacks.items():
        attacks.add_row(kind, str(stats.generated), str(stats.counted), str(stats.passed), f"{stats.max_reward:.3f}",
                        style="red" if stats.passed else "")
    if any(s.generated for s in report.attacks.values()):
        console.print(attacks)
    for name, mean in report.constant_policies.items():
        flag = "[red]over the limit[/red]" if mean > CONSTANT_POLICY_LIMIT else "ok"
        console.print(f"constant policy {name}: mean reward {mean:.4f} over every task (limit {CONSTANT_POLICY_LIMIT}) {flag}")
    for kind, (mean, passed, played) in report.trained_policies.items():
        limit = f"limit mean {PRIOR_LIMIT}" if kind in PRIOR_CLASSES else f"limit {REPLAY_LIMIT:.0%} passed"
        over = mean > PRIOR_LIMIT if kind in PRIOR_CLASSES else passed > REPLAY_LIMIT * played
        console.print(f"trained policy {kind}: mean reward {mean:.4f}, passed {passed}/{played} ({limit}) "
                      f"{'[red]over the limit[/red]' if over else 'ok'}")
    for kind, stats in report.alternatives.items():
        if stats.tried:
            console.print(f"alternative path {kind}: {stats.passed}/{stats.tried} passed {'ok' if stats.passed == stats.tried else '[red]FAIL[/red]'}")
    if any(t.guess.best != "-" for t in report.templates):
        template, share = report.majority_share
        flag = "[red]over the limit[/red]" if report.guess_mean > GUESS_LIMIT else "ok"
        console.print(f"guessing attack: mean best reward {report.guess_mean:.4f} over the templates (limit {GUESS_LIMIT}) {flag}; "
                      f"largest majority share {share:.2f} ({template})")
    for t in report.templates:
        for note in t.notes:
            console.print(f"note: {t.template_id}: {note}")
    if report.violations:
        console.print(f"[bold red]{len(report.violations)} violation(s):[/bold red]")
        for violation in report.violations:
            console.print(f"  [red]✗[/red] {violation}", markup=True)
    elif not report.templates:
        console.print(f"[yellow]note[/yellow]: environment {report.env!r} has no task templates: nothing to check")
    else:
        seeds = len(report.templates[0].seeds)
        console.print(f"[green]ok[/green]: {counted(len(report.templates), 'template')} × {counted(seeds, 'seed')}, no violation")


def report_json(report: CheckReport) -> dict[str, Any]:
    """The report as JSON-ready data (``--json``)."""
    return {
        "env": report.env,
        "ok": report.ok,
        "violations": report.violations,
        "constant_policies": {name: round(mean, 6) for name, mean in report.constant_policies.items()},
        "trained_policies": {kind: {"mean_reward": round(mean, 6), "passed": passed, "played": played}
                             for kind, (mean, passed, played) in report.trained_policies.items()},
        "attacks": {kind: vars(stats) for kind, stats in report.attacks.items()},
        "alternative_paths": {kind: vars(stats) for kind, stats in report.alternatives.items()},
        "guessing": {"mean_best_reward": round(report.guess_mean, 6), "limit": GUESS_LIMIT,
                     "largest_majority_share": round(report.majority_share[1], 6), "largest_majority_template": report.majority_share[0]},
        "templates": [
            {
                "template": t.template_id,
                "seeds": t.seeds,
                "oracle": t.oracle,
                "noop": t.noop,
                "negatives": t.negatives,
                "determinism": t.determinism,
                "distinct_instances": t.distinct,
                "declarations": t.declarations,
                "trained_policies": {kind: {"mean_reward": round(sum(r) / len(r), 6) if r else 0.0,
                                            "passed": t.trained_passed.get(kind, 0)} for kind, r in t.trained.items()},
                "attacks": {kind: vars(stats) for kind, stats in t.attacks.items()},
                "max_attack_reward": t.worst_attack,
                "majority_share": round(t.majority_share, 6),
                "alternative_paths": {kind: vars(stats) for kind, stats in t.alternatives.items()},
                "guess": {"declaration": t.guess.best, "mean_reward": round(t.guess.reward, 6), "share": round(t.guess.share, 6),
                          "rewards": {k: round(v, 6) for k, v in t.guess.rewards.items()}},
                "seconds": round(t.seconds, 3),
                "notes": t.notes,
            }
            for t in report.templates
        ],
    }


def run(args: argparse.Namespace) -> int:
    """Run the checks; exit status 1 when any check is violated."""
    if args.jobs < 1:
        raise SystemExit("toolgym check: --jobs must be at least 1")
    environment = with_private_tasks(resolve_environment(args.env), args.private_tasks)
    if args.jobs > 1:
        report = check_in_processes(args.env, jobs=args.jobs, seeds=args.seeds, templates=args.templates, use_judge=args.judge,
                                    attacks=not args.no_attacks, private_tasks=args.private_tasks)
    else:
        report = anyio.run(lambda: check_environment(environment, seeds=args.seeds, templates=args.templates, use_judge=args.judge,
                                                     attacks=not args.no_attacks))
    if args.json:
        print(json.dumps(report_json(report), ensure_ascii=False, indent=2))
    else:
        render(report, _console())
    return 0 if report.ok else 1
