"""``toolgym serve ENV ...``: serve an environment over stdio or HTTP (same flags as ``python -m envs.ENV serve``)."""

from __future__ import annotations

import argparse

from servers.cli import SERVE_DESCRIPTION, add_serve_arguments, run_serve
from servers.registry import load_environment

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "serve"
HELP = "serve an environment's tools over MCP (stdio or HTTP)"
DESCRIPTION = SERVE_DESCRIPTION


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The environment name, then the serve flags."""
    parser.add_argument("env", metavar="ENV", help="environment name (see `toolgym envs`)")
    add_serve_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Load the environment and serve it until interrupted (stdio: until stdin closes)."""
    return run_serve(load_environment(args.env), args)
