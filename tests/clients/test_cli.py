"""The ``toolgym`` console script's frame: every command has help, errors are one line with exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clients.cli import COMMANDS, build_parser, main
from servers.registry import environment_names

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    out, err = capsys.readouterr()
    return int(exited.value.code or 0), out, err


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "served over MCP" in out
    for name in COMMANDS:
        assert name in out, name


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_and_a_description(capsys: pytest.CaptureFixture[str], command: str) -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001 - argparse keeps subparsers here
    subparser = sub.choices[command]  # type: ignore[index]
    assert subparser.description, f"`toolgym {command}` needs a description"
    for action in subparser._actions:  # noqa: SLF001
        assert action.help, f"`toolgym {command}` flag {action.option_strings or action.dest} needs help text"
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert subparser.description.split()[0] in out


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 2 and out == "" and "usage: toolgym" in err


def test_unknown_command_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "fly")
    assert code == 2 and "invalid choice: 'fly'" in err


def test_unknown_environment_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "serve", "atlantis")
    assert code == 2 and out == ""
    assert err.startswith("toolgym serve: error: no environment 'atlantis'") and err.count("\n") == 1


def test_envs_lists_every_environment(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "envs")
    assert code == 0
    assert "toolgym environments" in out and "tools" in out and "tasks" in out
    for name in environment_names():
        assert name in out


def test_console_script_module_runs() -> None:
    done = subprocess.run([sys.executable, "-m", "clients.cli", "serve", "--help"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0 and "--transport" in done.stdout and done.stderr == ""
