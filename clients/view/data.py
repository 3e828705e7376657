"""Reading what a report shows: a run folder (results, records, summary) or one record file, as plain data.

Records are read leniently — a viewer must show a broken episode, not refuse it — as raw JSON lines: the
header, the events in order, and a ``problem`` string when the file is missing, truncated or malformed.
Results are read strictly (``clients.results.read_results``): they are the run's source of truth. Task
metadata (category, split, tags, difficulty) comes from the environment when it can be loaded by name.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clients.errors import RunError
from clients.results import ResultLine, latest_by_key, read_results
from clients.summary import Summary, summarize
from fixtures.errors import EnvironmentNotFound
from servers.environment import Environment

__all__ = [
    "RecordFile",
    "TaskMeta",
    "LoadedRun",
    "read_record_file",
    "load_run",
    "task_metadata",
    "bookkeeping_tables",
    "error_label",
    "model_of",
]

log = logging.getLogger("toolgym.view")


@dataclass
class RecordFile:
    """One record file as read for display: raw header and events, and what was wrong with it, if anything."""

    path: Path | None
    header: dict[str, Any] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None
    """Why the record is incomplete (missing file, bad line, no ``closed`` line), for the reader."""

    @property
    def closed(self) -> dict[str, Any] | None:
        """The ``closed`` footer, when there is one."""
        return next((e for e in reversed(self.events) if e.get("type") == "closed"), None)

    def error_classes(self) -> Counter[str]:
        """Failed tool calls by ``error_class: code`` — or the class alone when the code repeats it
        (``invalid_arguments``, not ``invalid_arguments: invalid_arguments``) — calls the agent rejected
        before the world saw them included."""
        found: Counter[str] = Counter()
        for event in self.events:
            error = event.get("error") if event.get("type") in ("tool_call", "rejected_call") else None
            if isinstance(error, dict):
                found[error_label(error)] += 1
        return found


def error_label(error: dict[str, Any]) -> str:
    """``refused: not_found`` for a failed call's error; the class alone when its code says the same."""
    error_class, code = str(error.get("error_class", "?")), str(error.get("code", "?"))
    return error_class if code == error_class else f"{error_class}: {code}"


@dataclass(frozen=True)
class TaskMeta:
    """What the environment says about a task template."""

    category: str = "-"
    split: str = "-"
    difficulty: str = "-"
    tags: tuple[str, ...] = ()
    description: str = ""


@dataclass
class LoadedRun:
    """A run folder, read: its latest result lines, their records, the summary and task metadata."""

    path: Path
    env: str
    lines: list[ResultLine]
    """The latest line of every episode key, sorted by (agent, task, seed, trial)."""
    records: list[RecordFile]
    """One per line, in the same order (an empty ``RecordFile`` with a problem when it is missing)."""
    summary: Summary
    tasks: dict[str, TaskMeta]
    date: str
    """When the results file was last written (UTC, ISO 8601)."""
    bookkeeping: tuple[str, ...] = ()
    """The environment's bookkeeping tables (an audit log): their inserts are folded on episode pages."""

    @property
    def label(self) -> str:
        """A short name for the run: its folder name."""
        return self.path.resolve().name or str(self.path)


def _constant(name: str) -> str:
    """JSON's non-standard NaN / Infinity read as strings, so the page's JSON stays standard."""
    return name


def read_record_file(path: Path) -> RecordFile:
    """Read a record file leniently (never raises for a bad or missing file: see ``problem``)."""
    found = RecordFile(path=path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        found.problem = f"cannot read record {path.name}: {exc.strerror or exc}"
        return found
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw, parse_constant=_constant)
        except json.JSONDecodeError:
            found.problem = f"line {number} of {path.name} is not JSON (truncated file?); the lines after it are not shown"
            break
        if not isinstance(item, dict):
            found.problem = f"line {number} of {path.name} is not a JSON object"
            break
        if found.header is None and item.get("type") == "episode":
            found.header = item
        else:
            found.events.append(item)
    if found.header is None and found.problem is None:
        found.problem = f"{path.name} has no episode header line"
    elif found.problem is None and found.closed is None:
        found.problem = f"{path.name} has no 'closed' line: the episode was not closed"
    return found


def task_metadata(env: str | Environment | None) -> dict[str, TaskMeta]:
    """Category, split, difficulty and tags of each task template of ``env`` (empty when it cannot be loaded)."""
    if env is None:
        return {}
    if isinstance(env, str):
        from servers.registry import load_environment

        try:
            env = load_environment(env)
        except EnvironmentNotFound:
            log.info("environment %r is not installed: tasks shown without category, split or tags", env)
            return {}
    return {
        template_id: TaskMeta(
            category=template.category,
            split=template.split,
            difficulty=template.difficulty,
            tags=tuple(template.tags),
            description=template.description,
        )
        for template_id, template in env.task_templates().items()
    }


def bookkeeping_tables(env: str | Environment | None) -> tuple[str, ...]:
    """The tables whose inserts are bookkeeping rather than effects (``Environment.bookkeeping_tables``);
    empty when the environment cannot be loaded."""
    if env is None:
        return ()
    if isinstance(env, str):
        from servers.registry import load_environment

        try:
            env = load_environment(env)
        except EnvironmentNotFound:
            return ()
    return tuple(env.bookkeeping_tables)


def model_of(agent: str) -> str:
    """The model part of an agent spec (``openai:gpt-4.1`` → ``gpt-4.1``); ``-`` for agents without one."""
    kind, _, argument = agent.partition(":")
    return argument if kind in ("openai", "anthropic") and argument else "-"


def _fresh_summary(path: Path, results: Path, env: str, lines: list[ResultLine], k: int) -> Summary:
    """The run's own ``summary.json`` when it is at least as new as its results; else computed again."""
    saved = path / "summary.json"
    try:
        if saved.stat().st_mtime >= results.stat().st_mtime:
            summary = Summary.model_validate_json(saved.read_bytes())
            if summary.env == env and summary.k == k:
                return summary
    except (OSError, ValueError):
        pass
    return summarize(env, lines, k=k)


def _record_of(run_dir: Path, line: ResultLine) -> RecordFile:
    """The record a result line names — only inside the run folder, whatever the line says."""
    if not line.record:
        return RecordFile(path=None, problem="no record was kept")
    path = run_dir / line.record
    if not path.resolve().is_relative_to(run_dir.resolve()):
        return RecordFile(path=None, problem=f"the results name a record outside the run folder ({line.record}); not read")
    return read_record_file(path)


def load_run(path: Path, *, environment: Environment | None = None) -> LoadedRun:
    """Read a run folder (``results.jsonl``, ``records/``, ``summary.json``).

    Args:
        path: the run folder.
        environment: where task metadata comes from (default: the environment named by the results).

    Raises:
        RunError: no results file, a corrupt one, or results of several environments.
    """
    results = path / "results.jsonl"
    if not results.is_file():
        raise RunError(f"{path} is not a run folder: it has no results.jsonl (give a run folder or a record file)")
    read = read_results(results)
    lines = sorted(latest_by_key(read.lines).values(), key=lambda r: (r.agent, r.task, r.seed, r.trial))
    if not lines:
        raise RunError(f"{results} holds no episodes yet")
    envs = sorted({line.env for line in lines})
    if len(envs) > 1:
        raise RunError(f"{results} mixes environments {', '.join(envs)}; a report shows one")
    env = envs[0]
    per_problem = Counter((line.agent, line.task, line.seed) for line in lines)
    k = max(per_problem.values())
    records = [_record_of(path, line) for line in lines]
    date = datetime.fromtimestamp(results.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return LoadedRun(
        path=path,
        env=env,
        lines=lines,
        records=records,
        summary=_fresh_summary(path, results, env, lines, k),
        tasks=task_metadata(environment or env),
        date=date,
        bookkeeping=bookkeeping_tables(environment or env),
    )
