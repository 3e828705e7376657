"""``toolgym play``: play one task instance by hand, see its grade, and record whether the task is fair."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clients.errors import RunError
from clients.flags import integer
from clients.play.driver import (
    PlayOptions,
    play_interactive,
    play_session_step,
    setup_readline,
    stdin_reader,
    terminal_ask,
)
from clients.play.lines import COMMANDS
from clients.play.output import JsonOutput, TextOutput
from clients.play.session import read_session
from clients.selection import MAX_SEED, resolve_environment

__all__ = ["NAME", "HELP", "DESCRIPTION", "INTERMIXED", "add_arguments", "run"]

NAME = "play"
INTERMIXED = True
"""``toolgym play ENV --session FILE 'TOOL {json}'``: the command follows the options (clients/cli.py)."""
HELP = "play one task instance by hand: the prompt, the tools, your calls, then the grade with its evidence"
DESCRIPTION = (
    "Play one instance (--task, --seed) as an agent would, without its oracle: the prompt and the server's "
    "instructions, `policy`, `tools`, `help TOOL`, calls typed as `TOOL {json arguments}`, the counterpart's "
    "answers through its tools; `submit_answer {...}` ends the episode (or `quit`). Then the grade is shown with "
    "every criterion's evidence, and the episode is saved as a run folder (runs/play-<time> unless --out). "
    "Commands come from the terminal or a pipe (one per line). With --session FILE, each invocation plays one "
    "command given on the command line: the file's calls are replayed (and must reproduce their results), the "
    "new one is played and appended. With --validate, the play is recorded in the environment's validation file "
    "(who played, the outcome, any task defect): `toolgym tasks` counts them, `--tasks verified` selects by them."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``play ENV --task T --seed N [--session FILE [COMMAND]] [--out DIR] [--json] [--validate ...]``."""
    parser.add_argument("env", metavar="ENV", help="environment name (see `toolgym envs`) or module:attribute")
    parser.add_argument(
        "line",
        nargs="*",
        metavar="COMMAND",
        help='with --session: the one command to play now, e.g. \'get_account {"account_id": "ACC-100231"}\'',
    )
    parser.add_argument(
        "--task",
        metavar="ID",
        help="the task template (`toolgym tasks ENV` lists them); with an existing --session, its own",
    )
    parser.add_argument(
        "--seed",
        type=integer(0, MAX_SEED),
        metavar="N",
        help="the instance's seed (default 0; with an existing --session, its own)",
    )
    parser.add_argument(
        "--session",
        type=Path,
        metavar="FILE",
        help="play one command per invocation, keeping the calls in FILE (JSONL)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="run folder for the record and grade (default: runs/play-<time>)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace a run already in --out")
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object per line (for programs) instead of text"
    )
    validate = parser.add_argument_group("validation (recorded in the environment's validation.jsonl after the grade)")
    validate.add_argument(
        "--validate", action="store_true", help="record this play in the environment's validation file"
    )
    validate.add_argument("--player", metavar="NAME", help="who plays: your name, or the agent or model id")
    validate.add_argument(
        "--player-kind",
        choices=["human", "agent"],
        help="human or agent (default human at a terminal; required otherwise)",
    )
    verdict = validate.add_mutually_exclusive_group()
    verdict.add_argument(
        "--fair", action="store_true", help="the task is fair: clear prompt, consistent world, a grade that fits"
    )
    verdict.add_argument("--defect", metavar="TEXT", help="what is wrong with the task (an open defect until resolved)")


def run(args: argparse.Namespace) -> int:
    """Play, then print the grade; exit status 0 once the episode was played (whatever its score)."""
    environment = resolve_environment(args.env)
    interactive = sys.stdin.isatty()
    task, seed = args.task, args.seed
    if args.session is not None:
        session = read_session(args.session)
        if session is not None:
            if session.header.get("env") != environment.name:
                raise RunError(f"session {args.session} plays environment {session.header.get('env')!r}, not {environment.name!r}")
            if task is not None and task != session.task:
                raise RunError(
                    f"session {args.session} plays task {session.task!r}, not {task!r}; give another --session FILE"
                )
            if seed is not None and seed != session.seed:
                raise RunError(
                    f"session {args.session} plays seed {session.seed}, not {seed}; give another --session FILE"
                )
            task, seed = session.task, session.seed
    elif args.line:
        raise RunError("a command on the command line needs --session FILE (or pipe commands on stdin, one per line)")
    if task is None:
        raise RunError(f"--task is required (`toolgym tasks {args.env}` lists the templates)")
    environment.task_template(task)  # an unknown task: one line naming some that exist
    options = PlayOptions(
        environment=environment,
        task=task,
        seed=0 if seed is None else seed,
        out=args.out,
        overwrite=args.overwrite,
        validate=args.validate,
        player=args.player,
        player_kind=args.player_kind,
        fair=args.fair,
        defect=args.defect,
        interactive=interactive,
    )
    output = JsonOutput() if args.json else TextOutput()
    ask = terminal_ask if interactive else None
    if args.session is not None:
        return play_session_step(options, args.session, " ".join(args.line), output, ask)
    if interactive:
        setup_readline(lambda: [*environment.tool_specs, *COMMANDS])
    reader = stdin_reader("play> " if interactive and not args.json else "" if interactive else None)
    return play_interactive(options, output, reader, ask)
