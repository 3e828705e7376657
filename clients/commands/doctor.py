"""``toolgym doctor``: start a probe agent in the sandbox ``cmd:`` agents get, and print what it could reach."""

from __future__ import annotations

import argparse

import anyio
from rich.console import Console

from clients.doctor import examine
from clients.sandbox import MODES

__all__ = ["NAME", "HELP", "DESCRIPTION", "add_arguments", "run"]

NAME = "doctor"
HELP = "check the sandbox of cmd: agents from inside: what a probe agent can reach"
DESCRIPTION = (
    "Start a probe agent exactly as `toolgym run --agent cmd:...` starts one (same --sandbox and --sandbox-bind), "
    "beside a real server sealed by a control token, and print what it could reach: other processes, the runner's "
    "memory, the kit's source (task templates and oracles), the template cache, a run folder, the control token "
    "(environment, command lines, files), /control, and anything the kit wrote (earlier runs, records, results, exports, "
    "reports), searched for over the whole filesystem the sandbox shows. With --agent 'cmd:...' the sandbox is the one that "
    "command gets (its program's folder, the folders its arguments name, --sandbox-bind) and the probe runs in its place. "
    "Exit status 1 when anything leaks."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``doctor [--agent 'cmd:...'] [--sandbox MODE] [--sandbox-bind PATH[:ro] ...] [--env NAME]``."""
    parser.add_argument(
        "--agent",
        metavar="'cmd:COMMAND'",
        help="the cmd: agent to check: the probe runs in the very sandbox `toolgym run --agent` would give it "
        "(default: the probe itself is the command)",
    )
    parser.add_argument("--sandbox", choices=MODES, default="auto", help="the sandbox to check, as `toolgym run` takes it (default: auto)")
    parser.add_argument("--sandbox-bind", action="append", default=[], metavar="PATH[:ro]", help="as `toolgym run` takes it; repeatable")
    parser.add_argument("--env", default="finance", help="environment the probe's server serves, by name or "
                        "package.module:attribute (default: finance)")


def run(args: argparse.Namespace) -> int:
    """Probe, print one line per vector, exit 1 on any leak."""
    console = Console(highlight=False)
    findings, how = anyio.run(lambda: examine(sandbox=args.sandbox, binds=tuple(args.sandbox_bind), env=args.env, agent=args.agent))
    console.print(f"toolgym doctor: {how}", soft_wrap=True)
    for finding in findings:
        mark = "[bold red]LEAK[/bold red]" if finding.leaked else "[green]ok[/green]  "
        console.print(f"  {mark}  {finding.vector}: {finding.detail}", soft_wrap=True)
    console.print("  [yellow]note[/yellow]  network: shared with the runner (its MCP URL and model provider are reachable, and so is "
                  "any other local port)", soft_wrap=True)
    leaks = [f for f in findings if f.leaked]
    if leaks:
        console.print(f"[bold red]{len(leaks)} leak(s)[/bold red]")
        return 1
    console.print("[green]no leak[/green]")
    return 0
