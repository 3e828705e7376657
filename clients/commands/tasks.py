"""``toolgym tasks ENV``: the task templates of an environment, with their metadata and how often each was validated."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from clients.errors import RunError
from clients.validation import (
    Line,
    TemplateValidations,
    append_line,
    new_resolution,
    open_defects,
    read_validations,
    template_validations,
    validation_path,
)
from graders.resolve import resolve_environment

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "tasks"
HELP = "list an environment's task templates (difficulty, category, split, tags, tools, validations)"
DESCRIPTION = (
    "List the task templates of ENV (a registered name, or module:attribute) with difficulty, category, "
    "split, tags, the number of tools each needs, and what the environment's validation file says: plays "
    "without the oracle (instances, players), open defects, and whether the template is verified (a play "
    "judged fair since its last fix, no open defect; `--tasks verified` selects those). Filter with --split / "
    "--tag / --verified; --defects lists the open defects; --resolve closes one."
)


def _console() -> Console:
    """A console; piped output (CI logs) gets 160 columns so the table does not wrap into unreadable cells."""
    console = Console(soft_wrap=True, highlight=False)
    if not console.is_terminal:
        console = Console(soft_wrap=True, highlight=False, width=160)
    return console


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``tasks ENV [--split S] [--tag T] [--verified] [--json] [--defects] [--resolve ID --note TEXT --by NAME]``."""
    parser.add_argument("env", metavar="ENV", help="environment name (see `toolgym envs`) or module:attribute")
    parser.add_argument("--split", choices=["train", "test"], help="only templates of this split")
    parser.add_argument(
        "--tag", action="append", default=[], help="only templates with this tag (repeatable: all must match)"
    )
    parser.add_argument(
        "--verified", action="store_true", help="only verified templates (what --tasks verified selects)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object per template instead of a table")
    parser.add_argument(
        "--defects", action="store_true", help="list the open defects of the validation file, with their ids"
    )
    resolve = parser.add_argument_group("closing a defect (appends a resolution line to the validation file)")
    resolve.add_argument("--resolve", metavar="ID", help="the validation line whose defect is closed (see --defects)")
    resolve.add_argument("--note", metavar="TEXT", help="what was done about it")
    resolve.add_argument("--by", metavar="NAME", help="who closes it")
    resolve.add_argument(
        "--not-a-defect",
        action="store_true",
        help="the report was wrong and nothing changed (default: the task was fixed, so plays before it no longer count)",
    )


def run(args: argparse.Namespace) -> int:
    """Print the templates (or the defects, or close one); exit status 1 when none match the filters."""
    environment = resolve_environment(args.env)
    path = validation_path(environment)
    lines = read_validations(path, environment.name)
    if args.resolve is not None:
        if path is None:
            raise RunError(f"environment {environment.name!r} has no package folder to keep a validation file in")
        if not args.note or not args.by:
            raise RunError("--resolve needs --note TEXT (what was done) and --by NAME (who closes it)")
        line = new_resolution(
            env=environment.name, resolves=args.resolve, by=args.by, fixed=not args.not_a_defect, note=args.note
        )
        append_line(path, line, lines)
        print(f"{line.id}: defect {args.resolve} closed ({'fixed' if line.fixed else 'not a defect'}) → {path}")
        return 0
    if args.not_a_defect or args.note or args.by:
        raise RunError("--note, --by and --not-a-defect go with --resolve ID")
    if args.defects:
        return _print_defects(lines, args.json)
    stats = template_validations(lines)
    rows = []
    for template in environment.task_templates().values():
        summary = template.summary() if hasattr(template, "summary") else {"id": template.id}
        if args.split and summary.get("split") != args.split:
            continue
        if not set(args.tag) <= set(summary.get("tags", ())):
            continue
        validations = stats.get(summary["id"]) or TemplateValidations(template=summary["id"])
        if args.verified and not validations.verified:
            continue
        rows.append({**summary, "validation": validations.as_json()})
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False, sort_keys=True))
        return 0 if rows else 1
    table = Table(title=f"{environment.name}: {len(rows)} task templates", title_justify="left", header_style="bold")
    table.add_column("template", no_wrap=True)
    for column in ("difficulty", "category", "split", "tags"):
        table.add_column(column)
    table.add_column("tools", justify="right")
    for column in ("plays", "seeds", "players"):
        table.add_column(column, justify="right")
    table.add_column("verified", no_wrap=True)
    table.add_column("description", overflow="fold")
    for row in rows:
        table.add_row(
            row["id"],
            str(row.get("difficulty", "-")),
            str(row.get("category", "-")),
            str(row.get("split", "-")),
            ", ".join(row.get("tags", ())),
            str(len(row.get("tools", ()))),
            *_validated(row["validation"]),
            str(row.get("description", "")),
        )
    console = _console()
    console.print(table)
    known = set(environment.task_templates())
    verified = sum(1 for tid, s in stats.items() if tid in known and s.verified)
    plays = sum(s.plays for s in stats.values())
    footer = f"validation file: {path or '(none: no package folder)'} · {plays} plays · {verified} verified templates"
    footer += f" · {len(open_defects(lines))} open defects"
    gone = sorted(set(stats) - known)
    if gone:
        footer += f" · plays of templates {environment.name!r} no longer has: {', '.join(gone)}"
    console.print(Text(footer, style="dim"))
    return 0 if rows else 1


def _validated(validation: dict[str, Any]) -> tuple[str, str, str, Text]:
    """The validation cells: plays, instances (seeds), players, and ``yes`` (verified) or the open defects."""
    plays = int(validation["plays"])
    if not plays:
        return "-", "-", "-", Text("-", style="dim")
    defects = len(validation["open_defects"])
    if defects:
        verdict = Text(f"{defects} defect{'s' if defects != 1 else ''}", style="red")
    else:
        verdict = Text("yes", style="green") if validation["verified"] else Text("no (fixed since)", style="yellow")
    return str(plays), str(validation["instances"]), str(len(validation["players"])), verdict


def _print_defects(lines: Sequence[Line], as_json: bool) -> int:
    """The open defects, one per line (JSON objects with --json); exit status 0."""
    defects = open_defects(lines)
    for defect in defects:
        if as_json:
            print(json.dumps(defect.model_dump(mode="json"), ensure_ascii=False))
        else:
            print(
                f"{defect.id}  {defect.template} seed {defect.seed}  {defect.player} ({defect.player_kind}, {defect.at}): {defect.defect}"
            )
    if not defects and not as_json:
        print("no open defects")
    return 0
