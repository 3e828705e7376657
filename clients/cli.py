"""The ``toolgym`` command line: argparse subcommands, one module each under ``clients/commands/``.

A command module defines ``NAME``, ``HELP`` (one line), ``DESCRIPTION``, ``add_arguments(parser)`` and
``run(args) -> int``; ``INTERMIXED = True`` when its positionals may follow its options (``toolgym play ENV
--session FILE 'TOOL {json}'``: argparse alone stops taking positionals after the first option). To add a
command, write the module and add its name to :data:`COMMANDS`; nothing else changes. Commands stay thin:
parse, call the library, print. A ``ToolgymError`` escaping a command (unknown environment, task, episode...)
is printed as one line with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from fixtures.errors import ToolgymError
from servers.secrecy import attached_token

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: list[str] = [
    "serve",
    "envs",
    "run",
    "grade",
    "export",
    "tasks",
    "check",
    "view",
    "show",
    "play",
    "doctor",
    "new",
]
"""Modules of ``clients.commands``, in the order ``toolgym --help`` lists them."""


def _command_modules() -> list[ModuleType]:
    return [importlib.import_module(f"clients.commands.{name}") for name in COMMANDS]


def build_parser() -> argparse.ArgumentParser:
    """The full ``toolgym`` parser, every command registered."""
    parser = argparse.ArgumentParser(
        prog="toolgym",
        description="RL and evaluation environments for LLM agents, served over MCP.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        command = sub.add_parser(module.NAME, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
        command.set_defaults(run=module.run, intermixed=command if getattr(module, "INTERMIXED", False) else None)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse the command line; a command whose positionals may follow its options is parsed intermixed."""
    given = attached_token(sys.argv[1:] if argv is None else argv, parser)  # a token may begin with "-"
    args, extras = parser.parse_known_args(given)
    if not extras:
        return args
    command: argparse.ArgumentParser | None = getattr(args, "intermixed", None)
    if command is None:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    own = given[given.index(args.command) + 1 :]  # the top-level parser takes no option before the command but -h
    return command.parse_intermixed_args(own, argparse.Namespace(command=args.command, run=args.run, intermixed=command))


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``toolgym`` console script; exits with the command's status."""
    parser = build_parser()
    args = _parse(parser, argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        raise SystemExit(2)
    args.command_line = argv is None  # a process of its own, whose command line can be replayed (serve --allocator)
    terminated: list[int] = []
    if args.command != "serve" and argv is None:
        _stop_on_sigterm(terminated)
    try:
        status = args.run(args)
    except ToolgymError as exc:
        print(f"toolgym {args.command}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        if terminated:
            kept = "; what finished is kept (--resume completes the run)" if args.command == "run" else ""
            print(f"toolgym {args.command}: stopped by SIGTERM{kept}", file=sys.stderr)
            raise SystemExit(128 + signal.SIGTERM) from None
        raise SystemExit(130) from None
    raise SystemExit(status)


def _stop_on_sigterm(terminated: list[int]) -> None:
    """Make SIGTERM stop a command the way Ctrl-C does: work cancelled in order (a run's agents killed, its
    summary written, its server shut down), then one line and exit status 143 — never a traceback, never a
    process killed with its run folder half-written.

    The signal is handled as SIGINT is: by the event loop's own SIGINT handler (asyncio's runner cancels the
    main task), else as KeyboardInterrupt. A process started with SIGINT ignored (a shell's background job)
    gets Python's SIGINT handler back, so that the event loop installs its own: a KeyboardInterrupt raised
    inside a running loop instead would tear its tasks down in no order (seen: tracebacks, and a hang).
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def handle(signum: int, frame: Any) -> None:
        if terminated:
            return
        terminated.append(signum)
        interrupt = signal.getsignal(signal.SIGINT)
        if callable(interrupt) and interrupt is not signal.default_int_handler:
            interrupt(signal.SIGINT, frame)
        else:
            signal.default_int_handler(signal.SIGINT, frame)

    signal.signal(signal.SIGTERM, handle)


if __name__ == "__main__":
    main()
