"""Numeric command-line flags checked against their ranges when they are parsed, before anything runs.

``--timeout -1`` once scored every episode 0 as "timeout", ``--max-turns 0`` and ``--retries -1`` ran as
given, and a flag that is out of range is always the caller's mistake. Each factory here returns an
argparse ``type``: a bad value ends the command at once with argparse's one error line (``toolgym run:
error: argument --timeout: must be a number of seconds > 0, not '-1'``) and exit status 2. Ranges that
are legitimately large (``--seeds 0-99999999``) are planned lazily instead (``clients/selection.py``).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from servers.limits import seconds_problem

__all__ = ["integer", "number", "seconds"]


def integer(low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer within ``[low, high]`` (no upper bound when ``high`` is None)."""
    bound = f"within {low}-{high}" if high is not None else f">= {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, not {text!r}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {bound}, not {text!r}")
        return value

    parse.__name__ = "integer"  # argparse names the type in some messages
    return parse


def number(low: float, high: float | None = None) -> Callable[[str], float]:
    """A finite number within ``[low, high]``."""
    bound = f"within {low:g}-{high:g}" if high is not None else f">= {low:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number {bound}, not {text!r}") from None
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be a number {bound}, not {text!r}")
        return value

    parse.__name__ = "number"
    return parse


def seconds(text: str) -> float:
    """A positive number of seconds, at most a year (the rule every duration flag shares: servers/limits.py)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    problem = seconds_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem}, not {text!r}")
    return value
