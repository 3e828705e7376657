"""What a finished episode is worth to a framework: a grade the agent earned, or an infrastructure failure.

toolgym's blame model (``clients/blame.py``) decides it for its own runner, and an adapter must decide it the
same way, or a framework would train on — or report — the kit's failures as the model's: a grade the server
could not give (``grade_error``), or a tool that crashed (``internal_errors``), is never a score.
"""

from __future__ import annotations

import json
from typing import Any

from toolgym_remote._control import RemoteError

__all__ = ["NotScored", "graded", "record_jsonl"]


class NotScored(RemoteError):
    """The episode ended without a grade the agent earned: infrastructure, never a zero."""


def graded(finished: dict[str, Any]) -> dict[str, Any]:
    """The grade of a ``ControlClient.finish`` answer.

    Raises:
        NotScored: the server could not grade the episode, or one of its tools crashed (a kit bug the agent did
            not cause); the message says which, in one line.
    """
    grade = finished.get("grade")
    episode = finished.get("id", "?")
    if grade is None:
        error = finished.get("grade_error") or {}
        raise NotScored(
            f"toolgym could not grade episode {episode}: {error.get('error', 'no grade')}: {error.get('message', '')}".rstrip(": "),
            code=error.get("error"),
        )
    if int(grade.get("internal_errors") or 0) > 0:
        raise NotScored(
            f"episode {episode}: {grade['internal_errors']} tool call(s) crashed inside toolgym (a kit bug, not the agent's "
            "doing): not scored",
            code="internal",
        )
    return grade


def record_jsonl(record: dict[str, Any]) -> str:
    """A ``finish(record=True)`` record as toolgym's record-file text (``toolgym grade FILE`` grades it again)."""
    lines = [record["header"], *record.get("events", [])]
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
