"""``toolgym show``: one episode's timeline and grade in the terminal."""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio
from rich.console import Console
from rich.text import Text

from clients.errors import RunError
from clients.view import is_record_file
from clients.view.data import read_record_file
from clients.view.report import offline_grade
from clients.view.terminal import ShownEpisode, episode_table, find_episode, render_episode, run_lines

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "show"
HELP = "print one episode (timeline, changed rows, grade) in the terminal"
DESCRIPTION = (
    "Print an episode's prompt, its messages and tool calls in order (arguments, results, errors, the rows "
    "each call changed) and its grade, failing gates first. Give a record file, or a run folder and "
    "--episode (an id, a record name, or a unique part of one); a run folder alone lists its episodes."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``show RECORD|RUN_DIR [--episode ID] [--full] [--no-grade]``."""
    parser.add_argument("path", type=Path, metavar="RECORD|RUN_DIR", help="a record file or a run folder")
    parser.add_argument("--episode", metavar="ID", help="which episode of a run folder (id, record name, or a unique part)")
    parser.add_argument("--full", action="store_true", help="print tool results whole (default: first lines only)")
    parser.add_argument("--no-grade", action="store_true", help="for a record file: do not grade it offline")


def run(args: argparse.Namespace) -> int:
    """Print the episode (or the run's episode list)."""
    console = Console(highlight=False)
    path: Path = args.path
    if path.is_dir():
        if args.episode is None:
            console.print(episode_table(run_lines(path)))
            console.print(Text("choose one with --episode ID", style="dim"))
            return 0
        shown = find_episode(path, args.episode)
    elif is_record_file(path):
        record = read_record_file(path)
        grade, note = anyio.run(lambda: offline_grade(path, record, grade=not args.no_grade))
        shown = ShownEpisode(record=record, grade=grade, grade_note=note)
    else:
        raise RunError(f"{path} is neither a run folder nor a record file")
    render_episode(console, shown, full=args.full)
    return 0
