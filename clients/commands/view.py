"""``toolgym view``: one self-contained HTML report of a run, a comparison of two runs, or one record."""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from pathlib import Path

import anyio

from clients.console import counted, output_console
from clients.selection import resolve_environment
from clients.view import build_report, default_out

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "view"
HELP = "write an HTML report of a run, of two runs compared, or of one record"
DESCRIPTION = (
    "Write one self-contained HTML file (no server, no network: open it offline, mail it, attach it). "
    "RUN_DIR: the run page (pass rates with intervals, scores per task and category, the task × trial grid, "
    "what failed) and every episode (timeline of messages and tool calls with the rows they changed, the "
    "grade with evidence). RUN_A RUN_B: per-task pass-rate deltas, regressions first, and episodes side by "
    "side. RECORD.jsonl: that one episode, graded offline when it has a task."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``view PATH [PATH] [--out FILE] [--open] [--pack auto|yes|no] [--no-grade] [--env ENV]``."""
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a run folder, two run folders (A then B), or a record file")
    parser.add_argument("--out", type=Path, metavar="FILE", help="where to write (default: RUN_DIR/report.html, RUN_B/compare-A.html, RECORD.html)")
    parser.add_argument("--open", action="store_true", help="open the report in the default browser")
    parser.add_argument(
        "--pack", choices=["auto", "yes", "no"], default="auto",
        help="deflate episode details inside the file (auto: when they exceed 1 MB)",
    )
    parser.add_argument("--no-grade", action="store_true", help="for a record file: do not grade it offline")
    parser.add_argument("--env", metavar="ENV", help="environment for task metadata (name or module:attribute; default: the run's)")


def has_display() -> bool:
    """Whether a graphical browser could open here: always on macOS and Windows; elsewhere only with an X11 or
    Wayland display (over SSH, in a container or CI, a browser started without one fails without a word)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(out: Path) -> str:
    """Open the report in the default browser when there is a display; say what happened, and where the file is."""
    uri = out.resolve().as_uri()
    if not has_display():
        return f"no display here to open a browser on (DISPLAY and WAYLAND_DISPLAY are unset): open {uri} on a machine with one"
    try:
        opened = webbrowser.open(uri)
    except webbrowser.Error:
        opened = False
    return f"opened {uri} in the default browser" if opened else f"no browser could be started: open {uri} yourself"


def run(args: argparse.Namespace) -> int:
    """Build the report, write it, say where."""
    environment = resolve_environment(args.env) if args.env else None
    compress = {"auto": None, "yes": True, "no": False}[args.pack]
    paths: list[Path] = args.paths
    report = anyio.run(lambda: build_report(paths, environment=environment, compress=compress, grade=not args.no_grade))
    out = report.write(args.out or default_out(paths))
    size = out.stat().st_size
    console = output_console()
    console.print(f"{report.kind} report: {counted(report.episodes, 'episode')}, {size / 1e6:.1f} MB → {out}")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    if args.open:
        console.print(open_in_browser(out))
    return 0
