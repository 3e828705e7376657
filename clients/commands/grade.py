"""``toolgym grade``: re-grade saved records offline and print the grades."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import anyio
from rich.table import Table

from clients.console import output_console
from clients.regrade import Regraded, record_paths, regrade
from clients.selection import resolve_environment

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "grade"
HELP = "re-grade saved records (files or run folders) offline"
DESCRIPTION = (
    "Rebuild each record's end state from the rows its calls changed and grade it again with the "
    "environment's rubric — no server, no agent. Accepts record files and run folders (their records/)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``grade RECORD... [--json]``."""
    parser.add_argument("records", nargs="+", type=Path, metavar="RECORD", help="record files (*.jsonl) or run folders")
    parser.add_argument("--json", action="store_true", help="print one grade JSON per line instead of a table")
    parser.add_argument("--env", metavar="ENV", help="grade against this environment (name or module:attribute; default: each record's)")


def _total(graded: list[Regraded]) -> str:
    """``12 records · 9 passed · 3 failed · mean score 0.84``: what a reader of a long table wants first."""
    passed = sum(1 for item in graded if item.grade.get("passed"))
    scores = [float(item.grade.get("score", 0.0)) for item in graded]
    mean = f"{sum(scores) / len(scores):.2f}" if scores else "-"
    noun = "record" if len(graded) == 1 else "records"
    return f"{len(graded)} {noun} · {passed} passed · {len(graded) - passed} failed · mean score {mean}"


def run(args: argparse.Namespace) -> int:
    """Grade and print; exit status 1 when some record does not pass."""
    environment = resolve_environment(args.env) if args.env else None
    graded = anyio.run(lambda: regrade(record_paths(args.records), environment=environment))
    console = output_console()  # piped: ids whole; a terminal: long ids fold onto a second line, never cut
    if args.json:
        for item in graded:
            print(json.dumps({"record": str(item.path), **item.grade}, ensure_ascii=False))
    else:
        table = Table(title="grades", title_justify="left", header_style="bold")
        for column in ("record", "task", "seed", "score", "passed", "failed criteria"):
            numeric = column in ("seed", "score")
            table.add_column(column, justify="right" if numeric else "left", no_wrap=numeric, overflow="fold")
        for item in graded:
            grade = item.grade
            failed = [c["name"] for c in grade.get("criteria", []) if isinstance(c, dict) and not c.get("passed")]
            table.add_row(
                item.path.name,
                str(item.record.header.task),
                str(item.record.header.seed),
                f"{float(grade.get('score', 0.0)):.2f}",
                "[green]yes[/green]" if grade.get("passed") else "[red]no[/red]",
                ", ".join(failed) or "-",
            )
        console.print(table)
        console.print(_total(graded))
    return 0 if all(item.grade.get("passed") for item in graded) else 1
