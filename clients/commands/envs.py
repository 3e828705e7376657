"""``toolgym envs``: the environments installed, with their tool and task counts."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from fixtures.errors import ToolgymError
from servers.registry import environment_names, load_environment

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "envs"
HELP = "list the environments with their tool and task counts"
DESCRIPTION = (
    "List every environment (folders under envs/ and installed packages registering a toolgym.environments entry "
    "point) with its description, number of tools and of task templates."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No arguments."""


def run(args: argparse.Namespace) -> int:
    """Print one table row per environment; a broken environment shows its error instead of stopping the list."""
    table = Table(title="toolgym environments")
    table.add_column("name", style="bold")
    table.add_column("tools", justify="right")
    table.add_column("tasks", justify="right")
    table.add_column("description")
    status = 0
    for name in environment_names():
        try:
            env = load_environment(name)
            table.add_row(name, str(len(env.tool_specs)), str(len(env.task_templates())), env.description)
        except (ToolgymError, ImportError, TypeError) as exc:
            table.add_row(name, "-", "-", f"[red]cannot load: {exc}[/red]")
            status = 1
    Console(soft_wrap=True).print(table)
    return status
