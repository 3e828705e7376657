"""Live progress of a run: a rich progress bar with passed / failed / errored counts.

The runner reports to a :class:`Reporter`; :class:`RichReporter` draws the bar (on a terminal it animates,
elsewhere rich prints nothing until the end), :class:`SilentReporter` is for library use and tests.
"""

from __future__ import annotations

from typing import Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from clients.results import ResultLine

__all__ = ["Reporter", "SilentReporter", "RichReporter"]


class Reporter(Protocol):
    """Receives a run's progress."""

    def start(self, total: int, done: int) -> None:
        """The run has ``total`` episodes, ``done`` of them already finished (resume)."""
        ...

    def finished(self, line: ResultLine) -> None:
        """One episode finished (graded or errored)."""
        ...

    def retrying(self, line: ResultLine) -> None:
        """An attempt errored and the episode will run again."""
        ...

    def stop(self) -> None:
        """The run is over (normally or not)."""
        ...


class SilentReporter:
    """Reports nothing."""

    def start(self, total: int, done: int) -> None:
        """Nothing to show."""

    def finished(self, line: ResultLine) -> None:
        """Nothing to show."""

    def retrying(self, line: ResultLine) -> None:
        """Nothing to show."""

    def stop(self) -> None:
        """Nothing to stop."""


class _Counts(ProgressColumn):
    def render(self, task: Task) -> Text:
        """``✓passed ✗failed !errored ↻retries``."""
        fields = task.fields
        text = Text(no_wrap=True)
        text.append(f"✓{fields.get('passed', 0)}", style="green")
        text.append(" ")
        text.append(f"✗{fields.get('failed', 0)}", style="red")
        text.append(" ")
        text.append(f"!{fields.get('errored', 0)}", style="magenta")
        if fields.get("retries"):
            text.append(f" ↻{fields['retries']}", style="dim")
        return text


class RichReporter:
    """A progress bar on ``console``: episodes done / total, passed, failed, errored, retries, elapsed."""

    def __init__(self, console: Console, description: str = "episodes") -> None:
        self.console = console
        self.description = description
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=30),
            MofNCompleteColumn(),
            _Counts(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._task: TaskID | None = None
        self._counts = {"passed": 0, "failed": 0, "errored": 0, "retries": 0}

    def start(self, total: int, done: int) -> None:
        """Show the bar."""
        self._progress.start()
        self._task = self._progress.add_task(self.description, total=total, completed=done, **self._counts)

    def finished(self, line: ResultLine) -> None:
        """Advance the bar and the counts."""
        if line.status == "errored":
            self._counts["errored"] += 1
        elif line.passed:
            self._counts["passed"] += 1
        else:
            self._counts["failed"] += 1
        if self._task is not None:
            self._progress.update(self._task, advance=1, **self._counts)

    def retrying(self, line: ResultLine) -> None:
        """Count a retry."""
        self._counts["retries"] += 1
        if self._task is not None:
            self._progress.update(self._task, **self._counts)

    def stop(self) -> None:
        """Leave the final bar on screen."""
        self._progress.stop()
