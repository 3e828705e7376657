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
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from clients.errors import RunError
from clients.run_files import folder_error
from fixtures import outputs
from servers.lines import LineFile
from servers.text import escape, has_surrogates

__all__ = [
    "ResultLine",
    "Tokens",
    "ResultsRead",
    "ResultsWriter",
    "read_results",
    "latest_by_key",
    "EpisodeKey",
    "check_run_folder",
    "prepare_run_folder",
    "clear_run_folder",
]

EpisodeKey = tuple[str, int, int, str]
"""(task, seed, trial, agent): what identifies an episode of a run across resumes."""


class Tokens(BaseModel):
    """Token usage an agent reported (zero for agents without a model)."""

    model_config = ConfigDict(frozen=True)

    prompt: int = 0
    completion: int = 0
    total: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(prompt=self.prompt + other.prompt, completion=self.completion + other.completion, total=self.total + other.total)


class ResultLine(BaseModel):
    """One finished episode of a run: graded (a score, no error class) or errored (an error class, no score).

    See :mod:`clients.blame` for which it is and why.
    """

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
    """For ``errored`` lines: provider / provider_timeout / connection / internal / grading / kit
    (``agent`` in runs made before it was named ``kit``)."""
    error: str | None = None
    stop_reason: str | None = None
    """How the agent stopped: done, max_turns, max_tool_calls, timeout, context_overflow,
    model_output_rejected, exit:N (external commands) ..."""
    stop_detail: str | None = None
    """What the stop reason means here (the limit reached, the provider's refusal ...)."""
    tool_calls: int = 0
    """Tool calls the agent issued: those that reached the episode plus those it rejected itself."""
    tool_errors: int = 0
    """Tool calls that failed (agent errors, internal ones, and rejected calls)."""
    rejected_calls: int = 0
    """Calls the agent answered itself before they reached the episode (malformed, too large, over the limit)."""
    turns: int = 0
    """Model calls made by an LLM agent."""
    tokens: Tokens = Field(default_factory=Tokens)
    """Tokens of the attempt this line reports."""
    failed_attempt_tokens: Tokens = Field(default_factory=Tokens)
    """Tokens of this episode's earlier attempts, which errored and were re-run."""
    wall_ms: float = 0.0
    provider_wait_ms: float = 0.0
    """Time spent waiting on the LLM provider (requests, retries, backoff): never counted as the agent's."""
    attempts: int = 1
    """How many times the episode was run (retries after infrastructure errors included)."""

    @field_validator("error", "stop_detail")
    @classmethod
    def _storable_text(cls, text: str | None) -> str | None:
        # these quote others' text (a provider's refusal, a model's fault): a lone surrogate in it would make
        # the results line, summary.json and the report unwritable, so it is kept as its \udXXX escape
        return text if text is None or not has_surrogates(text) else escape(text)

    @model_validator(mode="after")
    def _graded_or_errored(self) -> ResultLine:
        if self.status == "graded" and self.error_class is not None:
            raise ValueError("a graded line carries no error class (an episode is graded or errored, never both)")
        if self.status == "errored" and (self.error_class is None or self.score is not None or self.grade is not None):
            raise ValueError("an errored line has an error class and no score or grade (never both)")
        return self

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
    """Appends result lines, each whole or not at all (``servers/lines.py``), so an interrupted run keeps every
    finished episode and a full disk never leaves a torn line.

    Raises:
        RunError: (opening, writing) the system refused; the file ends with the last whole line.
    """

    def __init__(self, path: Path, *, truncate_to: int | None = None) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if truncate_to is not None and path.exists():
                os.truncate(path, truncate_to)
            self._file: LineFile | None = LineFile(path)
            if self._file.size > 0:
                with path.open("rb") as existing:
                    existing.seek(-1, os.SEEK_END)
                    if existing.read(1) != b"\n":  # a torn tail kept by an older writer: end it first
                        self._file.append(b"\n")
        except OSError as exc:
            raise folder_error(path, exc) from None

    def write(self, line: ResultLine) -> None:
        """Append one line (one write: all of it or nothing)."""
        if self._file is None:
            raise RuntimeError("results writer is closed")
        data = json.dumps(line.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            encoded = data.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate quoted from a provider's or agent's text: JSON's own escapes
            encoded = (json.dumps(line.model_dump(mode="json"), separators=(",", ":")) + "\n").encode("ascii")
        try:
            self._file.append(encoded)
        except OSError as exc:
            raise folder_error(self.path, exc) from None

    def close(self) -> None:
        """Close the file after an fsync; idempotent (a failed fsync is reported once, as a RunError)."""
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close(sync=True)
            except OSError as exc:
                raise folder_error(self.path, exc, "store") from None


def check_run_folder(out: Path, *, default: bool, resume: bool, overwrite: bool, env: str) -> tuple[list[ResultLine], int | None]:
    """Read-only check of the run folder: the lines to resume from and where a torn last line starts.

    Raises:
        RunError: a corrupt results file, results of another environment, or a run that would be replaced
            without ``--resume`` / ``--overwrite`` (the default folder is always replaceable).
    """
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out} is a file, not a folder: choose another --out")
    results = out / "results.jsonl"
    if resume:
        found = read_results(results)
        others = sorted({line.env for line in found.lines if line.env != env})
        if others:
            raise RunError(f"{results} holds results of environment {', '.join(others)}, not {env!r}; use another --out")
        return found.lines, found.valid_bytes if found.torn_tail else None
    if results.exists() and not (default or overwrite):
        raise RunError(f"{out} already holds a run; pass --resume to continue it, --overwrite to replace it, or another --out")
    return [], None


def prepare_run_folder(out: Path) -> None:
    """Make sure the run folder exists and takes writes, before any episode runs.

    Raises:
        RunError: one line: a file in the way, a read-only or full filesystem, no permission.
    """
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise folder_error(out, exc, "create the run folder") from None
    probe = out / f".toolgym-probe-{os.getpid()}"
    try:
        file = LineFile(probe)  # a line written and removed: what the run will do, without leaving a trace
        try:
            file.append(b"\n")
        finally:
            file.close()
            probe.unlink()
    except OSError as exc:
        raise folder_error(out, exc) from None
    try:
        outputs.mark(out, "run")  # found again wherever it goes: sandboxed agents never see it (fixtures/outputs.py)
    except OSError as exc:
        raise folder_error(out, exc) from None


def clear_run_folder(out: Path) -> None:
    """Remove a previous run's files (only those a run writes) once the new run is sure to start.

    Raises:
        RunError: the system refused to remove them (a read-only folder...).
    """
    try:
        for stale in (out / "results.jsonl", out / "summary.json"):
            stale.unlink(missing_ok=True)
        for folder in (out / "records", out / "logs"):
            if folder.is_dir():
                shutil.rmtree(folder)
    except OSError as exc:
        raise folder_error(out, exc, "clear the previous run in") from None
