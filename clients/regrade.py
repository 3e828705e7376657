"""Re-grading saved records offline: rebuild each episode's end state from its record and grade it again.

``toolgym grade RECORD...`` uses this. A record carries every row its calls changed, so grading needs no
server and no agent: only the environment (found by the record's ``env``) and ``graders.grading``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clients.backends import grade_json
from clients.errors import RunError
from fixtures.errors import EnvironmentNotFound, GradingError, RecordError
from servers.environment import Environment
from servers.record import Record, read_record
from servers.registry import load_environment

__all__ = ["Regraded", "record_paths", "regrade"]


@dataclass(frozen=True)
class Regraded:
    """One record and its new grade."""

    path: Path
    record: Record
    grade: dict[str, Any]


def record_paths(items: list[Path]) -> list[Path]:
    """Record files named directly, or found in ``records/`` of run folders given instead.

    Raises:
        RunError: a path does not exist, or a folder holds no records.
    """
    paths: list[Path] = []
    for item in items:
        if item.is_dir():
            folder = item / "records" if (item / "records").is_dir() else item
            found = sorted(folder.glob("*.jsonl"))
            if not found:
                raise RunError(f"{item} holds no record files (*.jsonl)")
            paths.extend(found)
        elif item.is_file():
            paths.append(item)
        else:
            raise RunError(f"no record file or run folder at {item}")
    return paths


async def regrade(paths: list[Path], *, environment: Environment | None = None) -> list[Regraded]:
    """Grade every record again with ``graders.grading.grade_record``.

    Raises:
        RunError: a record is unreadable or unfinished, or its environment is not installed.
        GradingError: the grader failed on a record (the message names it).
    """
    from graders.grading import grade_record

    environments: dict[str, Environment] = {}
    done: list[Regraded] = []
    for path in paths:
        try:
            record = read_record(path, require_closed=True)
        except RecordError as exc:
            raise RunError(str(exc)) from None
        env = environment
        if env is None or env.name != record.header.env:
            name = record.header.env
            if name not in environments:
                try:
                    environments[name] = load_environment(name)
                except EnvironmentNotFound as exc:
                    raise RunError(f"record {path}: {exc}") from None
            env = environments[name]
        try:
            grade = grade_record(env, record)
            if inspect.isawaitable(grade):
                grade = await grade
        except GradingError as exc:  # the kit's failure, not the record's: one line naming the record
            raise GradingError(f"record {path} could not be graded (a bug of the grader, not of the agent): {exc}") from None
        done.append(Regraded(path=path, record=record, grade=grade_json(grade)))
    return done
