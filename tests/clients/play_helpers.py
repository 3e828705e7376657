"""Shared by the ``toolgym play`` tests: environments whose validation file lives in a temporary folder, and the CLI
run as a real subprocess (piped stdin, or a pseudo-terminal)."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["REPO", "PlayPackages", "make_packages", "Terminal", "strip_ansi"]

REPO = Path(__file__).resolve().parents[2]

_INIT = """\"\"\"{base}'s environment, its tasks (and so its validation file) in this folder: a test's copy.\"\"\"
from dataclasses import replace

from {module} import {attribute} as _base

environment = replace(_base, tasks_module="{name}.tasks")
"""


@dataclass(frozen=True)
class PlayPackages:
    """A folder of environment packages (``playtoy``, ``playfin``, ``playsup``) and how to run the CLI with them."""

    root: Path

    def validation_file(self, package: str) -> Path:
        """Where the package's environment keeps its validation file."""
        return self.root / package / "validation.jsonl"

    def env(self, home: Path) -> dict[str, str]:
        """The environment of a CLI subprocess: these packages importable, readline's history kept in ``home``."""
        paths = [str(self.root), str(REPO), os.environ.get("PYTHONPATH", "")]
        return {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in paths if p),
            "XDG_CACHE_HOME": str(home),
            "COLUMNS": "200",
        }

    def toolgym(self, *argv: str, cwd: Path, stdin: str = "", timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """``toolgym ARGV`` in a subprocess with ``stdin`` piped in; its output captured."""
        return subprocess.run(
            [sys.executable, "-m", "clients.cli", *argv],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=cwd,
            env=self.env(cwd),
            timeout=timeout,
        )


def make_packages(root: Path) -> PlayPackages:
    """Write the packages: each wraps an environment, with its tasks module (hence validation file) in ``root``."""
    bases = {
        "playtoy": ("tests.toy_env", "environment", "tests.toy_env.tasks"),
        "playfin": ("envs.finance", "environment", "envs.finance.tasks"),
        "playsup": ("envs.support", "environment", "envs.support.tasks"),
    }
    for name, (module, attribute, tasks) in bases.items():
        package = root / name
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(_INIT.format(base=module, module=module, attribute=attribute, name=name))
        (package / "tasks.py").write_text(f"from {tasks} import TEMPLATES  # noqa: F401\n")
    return PlayPackages(root=root)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def strip_ansi(text: str) -> str:
    """Terminal output without colour and cursor codes (and carriage returns)."""
    return _ANSI.sub("", text)


class Terminal:
    """A CLI subprocess on a pseudo-terminal: what a person at a terminal sees and types."""

    def __init__(self, packages: PlayPackages, *argv: str, cwd: Path) -> None:
        import pty

        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "clients.cli", *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env={**packages.env(cwd), "TERM": "xterm"},
            close_fds=True,
        )
        os.close(slave)
        self.seen = ""
        self._mark = 0
        """Where the next :meth:`expect` starts looking in the text read (past what an earlier one matched)."""

    def expect(self, text: str, timeout: float = 120) -> str:
        """Read until ``text`` shows after what earlier calls matched (colour codes ignored); returns all read so far."""
        deadline = time.monotonic() + timeout
        while (found := strip_ansi(self.seen).find(text, self._mark)) == -1:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"no {text!r} within {timeout} s; the terminal shows:\n{strip_ansi(self.seen)[-3000:]}"
                )
            ready, _, _ = select.select([self.master], [], [], min(left, 1.0))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk and self.process.poll() is not None:
                    raise AssertionError(f"the process ended before {text!r} showed:\n{strip_ansi(self.seen)[-3000:]}")
                self.seen += chunk.decode("utf-8", "replace")
        self._mark = found + len(text)
        return strip_ansi(self.seen)

    def send(self, line: str) -> None:
        """Type ``line`` and Enter."""
        os.write(self.master, (line + "\n").encode())

    def finish(self, timeout: float = 60) -> int:
        """Wait for the process to end (reading what it still prints); its exit status."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:
                    break
        code = self.process.wait(timeout=max(1.0, deadline - time.monotonic()))
        os.close(self.master)
        return code
