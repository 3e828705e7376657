"""The console a command prints to: a terminal's own width, or no width limit at all when output is piped.

rich lays tables out for a width and crops what does not fit. A terminal has a width (and wraps a line
longer than it); a pipe — a CI log, ``| tee``, a file — has none, yet rich assumes 80 columns there, so
a summary table loses its last columns and cells (``toke``, ``446,3``) and ids are cut. Output that is not
a terminal is therefore laid out for a width nothing reaches: tables keep their natural width and lines
are never cropped or wrapped.
"""

from __future__ import annotations

from rich.console import Console

__all__ = ["output_console", "counted", "MIN_TERMINAL_WIDTH", "PIPE_WIDTH"]

MIN_TERMINAL_WIDTH = 100
"""Columns a terminal is assumed to have at least (the summary table needs ~100; a terminal wraps the rest)."""

PIPE_WIDTH = 100_000
"""The width output that is not a terminal is laid out for: wider than any line we print."""


def output_console(*, stderr: bool = False) -> Console:
    """A ``Console`` for a command's output (no highlighting of numbers; see the module docstring for widths)."""
    console = Console(highlight=False, stderr=stderr)
    console.width = max(console.width, MIN_TERMINAL_WIDTH) if console.is_terminal else PIPE_WIDTH
    return console


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 episode``, ``2 episodes``: a count with its noun agreeing (``plural`` when not ``noun + "s"``)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
