"""The results file of a run: one JSON line per finished episode, appended and flushed as episodes finish.

``results.jsonl`` is the run's source of truth: the summary is computed from it, ``--resume`` reads it to
skip what is done, ``toolgym export`` reads it to find passing records. Reading is strict — a line that
does not parse is a corrupt file and a :class:`~clients.errors.RunError` (nothing is rewritten) — with one
exception: a last line cut short *without its newline* is the torn write of an interrupted run; it is
reported as such so ``--resume`` can drop it and run that episode again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clients.errors import RunError

__all__ = ["ResultLine", "Tokens", "ResultsRead", "ResultsWriter", "read_results", "latest_by_key", "EpisodeKey"]

EpisodeKey = tuple[str, int, int, str]
"""(task, seed, trial, agent): what identifies an episode of a run across resumes."""


class Tokens(BaseModel):
    """Token usage an agent reported (zero for agents without a model)."""

    model_config = ConfigDict(frozen=True)

    prompt: int = 0
    completion: int = 0
    total: int = 0


class ResultLine(BaseModel):
    """One finished episode of a run."""

    model_config = ConfigDict(frozen=True)

    env: str
    task: str
    seed: int
    trial: int
    """0-based trial index within (task, seed)."""
    agent: str
    """The agent spec string, e.g. ``oracle`` or ``openai:gpt-4o-mini``."""
    episode_id: str
    record: str | None = None
    """Path of the episode's record file, relative to the run folder."""
    status: Literal["graded", "errored"]
    """``errored``: an infrastructure failure; excluded from every score."""
    score: float | None = None
    passed: bool | None = None
    grade: dict[str, Any] | None = None
    """The full grade (score, passed, criteria with evidence) as JSON."""
    error_class: str | None = None
    """For ``errored`` lines: provider / connection / internal / grading / agent."""
    error: str | None = None
    stop_reason: str | None = None
    """Why the agent stopped: done, max_turns, timeout, exit:N (external commands), ..."""
    tool_calls: int = 0
    tool_errors: int = 0
    """Tool calls that returned an error (agent errors and internal ones)."""
    turns: int = 0
    """Model calls made by an LLM agent."""
    tokens: Tokens = Field(default_factory=Tokens)
    wall_ms: float = 0.0
    attempts: int = 1
    """How many times the episode was run (retries after infrastructure errors included)."""

    @property
    def key(self) -> EpisodeKey:
        """(task, seed, trial, agent)."""
        return (self.task, self.seed, self.trial, self.agent)


@dataclass(frozen=True)
class ResultsRead:
    """What :func:`read_results` found."""

    lines: list[ResultLine]
    torn_tail: bool
    """The file ends with an incomplete line (an interrupted write); ``valid_bytes`` excludes it."""
    valid_bytes: int


def read_results(path: Path) -> ResultsRead:
    """Read a results file strictly.

    Raises:
        RunError: the file cannot be read, or a complete line is not a valid result (corrupt file).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ResultsRead(lines=[], torn_tail=False, valid_bytes=0)
    except OSError as exc:
        raise RunError(f"cannot read results file {path}: {exc.strerror or exc}") from exc
    lines: list[ResultLine] = []
    offset = 0
    number = 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        complete = end != -1
        raw = data[offset : end if complete else len(data)]
        number += 1
        if raw.strip():
            try:
                lines.append(ResultLine.model_validate_json(raw))
            except ValidationError as exc:
                if not complete:
                    return ResultsRead(lines=lines, torn_tail=True, valid_bytes=offset)
                problem = exc.errors()[0]
                where = ".".join(str(p) for p in problem["loc"]) or "line"
                raise RunError(
                    f"results file {path} is corrupt at line {number} ({where}: {problem['msg']}); "
                    "it was left untouched — fix or remove that line, or run into a new --out folder"
                ) from None
        offset = end + 1 if complete else len(data)
    return ResultsRead(lines=lines, torn_tail=False, valid_bytes=len(data))


def latest_by_key(lines: Iterable[ResultLine]) -> dict[EpisodeKey, ResultLine]:
    """The last line of each episode key (a resumed errored episode is superseded by its rerun)."""
    latest: dict[EpisodeKey, ResultLine] = {}
    for line in lines:
        latest[line.key] = line
    return latest


class ResultsWriter:
    """Appends result lines, one write + flush each, so an interrupted run keeps every finished episode."""

    def __init__(self, path: Path, *, truncate_to: int | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if truncate_to is not None and path.exists():
            os.truncate(path, truncate_to)
        needs_newline = False
        if path.exists() and path.stat().st_size > 0:
            with path.open("rb") as existing:
                existing.seek(-1, os.SEEK_END)
                needs_newline = existing.read(1) != b"\n"
        self.path = path
        self._file: IO[str] | None = path.open("a", encoding="utf-8")
        if needs_newline:
            self._file.write("\n")

    def write(self, line: ResultLine) -> None:
        """Append one line and flush it."""
        if self._file is None:
            raise RuntimeError("results writer is closed")
        self._file.write(json.dumps(line.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file; idempotent."""
        if self._file is not None:
            self._file.close()
            self._file = None
