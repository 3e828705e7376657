"""The data a report page renders from: one JSON document per report, built from loaded runs and records.

Each run becomes an *index* (what the run page needs: figures, task metadata and one small row per
episode) and a list of *details* (per episode: the record's header and events and the grade), kept apart
so :mod:`clients.view.page` can pack the details for on-demand rendering. Values from records stay as
they are — escaping is the page's job, and the page only ever inserts them as text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clients.results import ResultLine
from clients.view.data import LoadedRun, RecordFile, TaskMeta, bookkeeping_tables, model_of
from clients.view.stats import category_stats, comparison_warnings, stats_json, task_deltas

__all__ = ["RunPayload", "run_payload", "compare_payload", "record_payload"]

_SHORT = 300
"""Characters of an error message kept in an episode's index row (the detail keeps all of it)."""


@dataclass
class RunPayload:
    """One run as the page sees it: the index (rendered at once) and the per-episode details (on demand)."""

    index: dict[str, Any]
    details: list[dict[str, Any]]


def _failed(grade: dict[str, Any] | None) -> list[str]:
    criteria = (grade or {}).get("criteria") or []
    return [str(c.get("name")) for c in criteria if isinstance(c, dict) and c.get("graded", True) and not c.get("passed")]


def _short(text: str | None) -> str | None:
    return text if text is None or len(text) <= _SHORT else text[:_SHORT] + "…"


def _row(line: ResultLine, record: RecordFile) -> dict[str, Any]:
    grade = line.grade or {}
    return {
        "id": line.episode_id,
        "name": record.path.stem if record.path is not None else line.episode_id,
        "agent": line.agent,
        "task": line.task,
        "seed": line.seed,
        "trial": line.trial,
        "status": line.status,
        "score": line.score,
        "passed": line.passed,
        "failed": _failed(grade),
        "gates": list(grade.get("failed_gates") or []),
        "calls": line.tool_calls,
        "errs": line.tool_errors,
        # every token the episode cost: its earlier attempts' too, which errored and were run again
        "tokens": line.tokens.total + line.failed_attempt_tokens.total,
        "rerun_tokens": line.failed_attempt_tokens.total,
        "ms": line.wall_ms,
        "turns": line.turns,
        "stop": line.stop_reason,
        "ecls": line.error_class,
        "err": _short(line.error),
        "attempts": line.attempts,
        "codes": sorted(record.error_classes()),
    }


def _detail(record: RecordFile, grade: dict[str, Any] | None, line: dict[str, Any] | None) -> dict[str, Any]:
    return {"header": record.header, "events": record.events, "problem": record.problem, "grade": grade, "line": line}


def _meta(tasks: dict[str, TaskMeta], names: set[str]) -> dict[str, dict[str, Any]]:
    found = {}
    for name in sorted(names):
        meta = tasks.get(name, TaskMeta())
        found[name] = {"category": meta.category, "split": meta.split, "difficulty": meta.difficulty, "tags": list(meta.tags), "description": meta.description}
    return found


def run_payload(run: LoadedRun) -> RunPayload:
    """The index and details of a loaded run."""
    agents = []
    for agent in run.summary.agents:
        lines = [line for line in run.lines if line.agent == agent.agent]
        by_task: dict[str, list[ResultLine]] = {}
        for line in lines:
            by_task.setdefault(line.task, []).append(line)
        tool_errors: Counter[str] = Counter()
        for line, record in zip(run.lines, run.records, strict=True):
            if line.agent == agent.agent:
                tool_errors.update(record.error_classes())
        agents.append(
            {
                "agent": agent.agent,
                "model": model_of(agent.agent),
                "overall": stats_json(agent.overall, lines),
                "tasks": [stats_json(stats, by_task.get(stats.name, [])) for stats in agent.tasks],
                "categories": category_stats(run.env, agent, lines, run.tasks, run.summary.k),
                "failed_criteria": [item.model_dump(mode="json") for item in agent.failed_criteria],
                "error_classes": agent.error_classes,
                "stop_reasons": dict(sorted(agent.stop_reasons.items(), key=lambda item: (-item[1], item[0]))),
                "tool_errors": dict(tool_errors.most_common()),
            }
        )
    versions = sorted({str(r.header.get("fixture_version")) for r in run.records if r.header and r.header.get("fixture_version")})
    index = {
        "label": run.label,
        "path": str(run.path),
        "env": run.env,
        "date": run.date,
        "k": run.summary.k,
        "fixture_versions": versions,
        "agents": agents,
        "tasks": _meta(run.tasks, {line.task for line in run.lines}),
        "episodes": [_row(line, record) for line, record in zip(run.lines, run.records, strict=True)],
        "problems": sum(1 for r in run.records if r.problem and r.path is not None),
        "bookkeeping": list(run.bookkeeping),
    }
    details = [
        _detail(
            record,
            line.grade,
            {"status": line.status, "error_class": line.error_class, "error": line.error, "stop_reason": line.stop_reason, "attempts": line.attempts},
        )
        for line, record in zip(run.lines, run.records, strict=True)
    ]
    return RunPayload(index=index, details=details)


def compare_payload(a: LoadedRun, b: LoadedRun) -> tuple[dict[str, Any], list[RunPayload]]:
    """The comparison of run ``a`` (before) with run ``b`` (after), and both runs' payloads.

    Episodes pair up by (task, seed, trial); a run holding several agents pairs its first agent's episodes.
    """
    overall, tasks = task_deltas(a.lines, b.lines)
    positions: list[dict[tuple[str, int, int], int]] = []
    for run in (a, b):
        found: dict[tuple[str, int, int], int] = {}
        for number, line in enumerate(run.lines):
            found.setdefault((line.task, line.seed, line.trial), number)
        positions.append(found)
    pairs = [
        {"task": task, "seed": seed, "trial": trial, "a": positions[0].get((task, seed, trial)), "b": positions[1].get((task, seed, trial))}
        for task, seed, trial in sorted(set(positions[0]) | set(positions[1]))
    ]
    comparison = {"overall": overall, "tasks": tasks, "pairs": pairs, "warnings": comparison_warnings(a.lines, b.lines)}
    return comparison, [run_payload(a), run_payload(b)]


def record_payload(path: Path, record: RecordFile, grade: dict[str, Any] | None, grade_note: str | None) -> RunPayload:
    """A single record (e.g. from ``serve --record``) as a run of one episode, graded when ``grade`` is given."""
    header = record.header or {}
    task = str(header.get("task") or "free play")
    passed = grade.get("passed") if grade else None
    row = {
        "id": header.get("episode_id") or path.stem,
        "name": path.stem,
        "agent": "-",
        "task": task,
        "seed": header.get("seed", 0),
        "trial": 0,
        "status": "graded" if grade else "recorded",
        "score": grade.get("score") if grade else None,
        "passed": passed,
        "failed": _failed(grade),
        "gates": list((grade or {}).get("failed_gates") or []),
        "calls": sum(1 for e in record.events if e.get("type") == "tool_call"),
        "errs": sum(1 for e in record.events if e.get("type") == "tool_call" and e.get("error")),
        "tokens": 0,
        "ms": 0.0,
        "turns": 0,
        "stop": None,
        "ecls": None,
        "err": None,
        "attempts": 1,
        "codes": sorted(record.error_classes()),
    }
    index = {
        "label": path.name,
        "path": str(path),
        "env": header.get("env", "-"),
        "date": "-",
        "k": 1,
        "fixture_versions": [str(header["fixture_version"])] if header.get("fixture_version") else [],
        "agents": [],
        "tasks": {task: {"category": "-", "split": "-", "difficulty": "-", "tags": [], "description": ""}},
        "episodes": [row],
        "problems": 1 if record.problem else 0,
        "grade_note": grade_note,
        "bookkeeping": list(bookkeeping_tables(str(header.get("env") or "") or None)),
    }
    return RunPayload(index=index, details=[_detail(record, grade, None)])
