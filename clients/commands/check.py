"""``toolgym check ENV``: meta-evaluate an environment's graders (oracle, no-op, negatives, determinism)."""

from __future__ import annotations

import argparse
import json

import anyio
from rich.console import Console
from rich.table import Table

from graders.metaeval import CheckReport, check_environment
from graders.resolve import resolve_environment

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run", "render"]

NAME = "check"
HELP = "meta-evaluate an environment's graders: oracle 1.0, no-op and negatives fail, determinism"
DESCRIPTION = (
    "For every task template of ENV and several seeds, over real in-memory MCP clients: the oracle must "
    "score exactly 1.0 with no tool error, its record must re-grade offline to the same grade, the no-op "
    "and every negative must fail, and the same seed must give the same world hash and grade. Exits 1 "
    "listing every violation."
)


def _console() -> Console:
    """A console; piped output (CI logs) gets 120 columns so the table does not wrap into unreadable cells."""
    console = Console(soft_wrap=True, highlight=False)
    if not console.is_terminal:
        console = Console(soft_wrap=True, highlight=False, width=120)
    return console


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``check ENV [--seeds N] [--templates ID ...] [--judge] [--json]``."""
    parser.add_argument("env", metavar="ENV", help="environment name (see `toolgym envs`) or module:attribute")
    parser.add_argument("--seeds", type=int, default=3, metavar="N", help="check seeds 0..N-1 (default 3)")
    parser.add_argument("--templates", nargs="+", metavar="ID", help="only these template ids (default: all)")
    parser.add_argument("--judge", action="store_true", help="grade LLM-judge criteria with the TOOLGYM_JUDGE_* endpoint")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")


def render(report: CheckReport, console: Console) -> None:
    """Print the report as a table, then every violation and note."""
    table = Table(title=f"toolgym check {report.env}", title_justify="left", header_style="bold")
    table.add_column("template", no_wrap=True)
    for column in ("seeds", "oracle", "noop", "negatives", "determinism", "time"):
        table.add_column(column, justify="right" if column in ("seeds", "time") else "left")
    for t in report.templates:
        style = "" if t.ok else "red"
        table.add_row(
            t.template_id, str(len(t.seeds)), t.oracle, t.noop, t.negatives, t.determinism, f"{t.seconds:.2f}s", style=style
        )
    console.print(table)
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
        console.print(f"[green]ok[/green]: {len(report.templates)} templates × {seeds} seeds, no violation")


def run(args: argparse.Namespace) -> int:
    """Run the checks; exit status 1 when any check is violated."""
    if args.seeds < 1:
        raise SystemExit("toolgym check: --seeds must be at least 1")
    environment = resolve_environment(args.env)
    report = anyio.run(lambda: check_environment(environment, seeds=args.seeds, templates=args.templates, use_judge=args.judge))
    if args.json:
        payload = {
            "env": report.env,
            "ok": report.ok,
            "violations": report.violations,
            "templates": [
                {
                    "template": t.template_id,
                    "seeds": t.seeds,
                    "oracle": t.oracle,
                    "noop": t.noop,
                    "negatives": t.negatives,
                    "determinism": t.determinism,
                    "seconds": round(t.seconds, 3),
                    "notes": t.notes,
                }
                for t in report.templates
            ],
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        render(report, _console())
    return 0 if report.ok else 1
