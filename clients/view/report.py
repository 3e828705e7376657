"""Reports: a run, a comparison of two runs, or one record, each as one self-contained HTML document."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from clients.errors import RunError
from clients.view.data import RecordFile, load_run, read_record_file
from clients.view.page import pack_details, render_page
from clients.view.payload import RunPayload, compare_payload, record_payload, run_payload
from fixtures import outputs
from fixtures.errors import ToolgymError
from servers.environment import Environment

__all__ = ["Report", "run_report", "compare_report", "record_report", "offline_grade", "build_report", "is_record_file", "default_out"]

ReportKind = Literal["run", "compare", "record"]


@dataclass(frozen=True)
class Report:
    """A rendered report."""

    kind: ReportKind
    title: str
    html: str
    episodes: int
    """Episodes the report holds (both runs' for a comparison)."""
    warnings: tuple[str, ...] = ()
    """What a reader must know before trusting the figures (a comparison of runs that were not run alike)."""

    def write(self, out: Path) -> Path:
        """Write the page to ``out`` (folders created) and return the path."""
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(self.html, encoding="utf-8")
        outputs.register(out, "report")  # it holds records: hidden from sandboxed agents (fixtures/outputs.py)
        return out


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _page(kind: ReportKind, title: str, runs: list[RunPayload], compress: bool | None, **extra: Any) -> Report:
    data = {
        "kind": kind,
        "title": title,
        "generated": _now(),
        "runs": [{**payload.index, "details": pack_details(payload.details, compress=compress)} for payload in runs],
        **extra,
    }
    return Report(kind=kind, title=title, html=render_page(data, title=title), episodes=sum(len(p.details) for p in runs))


def run_report(path: Path, *, environment: Environment | None = None, compress: bool | None = None) -> Report:
    """The report of one run folder.

    Raises:
        RunError: not a run folder, or a corrupt results file.
    """
    run = load_run(path, environment=environment)
    agents = ", ".join(a.agent for a in run.summary.agents)
    return _page("run", f"toolgym · {run.env} · {agents} · {run.label}", [run_payload(run)], compress)


def compare_report(before: Path, after: Path, *, environment: Environment | None = None, compress: bool | None = None) -> Report:
    """The comparison of run ``before`` (A) with run ``after`` (B): per-task pass-rate deltas and side-by-sides.

    Raises:
        RunError: either path is not a run folder, or the runs are of different environments.
    """
    a = load_run(before, environment=environment)
    b = load_run(after, environment=environment)
    if a.env != b.env:
        raise RunError(f"cannot compare runs of different environments: {a.env} ({before}) and {b.env} ({after})")
    comparison, runs = compare_payload(a, b)
    title = f"toolgym · {a.env} · {a.label} → {b.label}"
    report = _page("compare", title, runs, compress, compare=comparison)
    return replace(report, warnings=tuple(comparison["warnings"]))


async def offline_grade(path: Path, record: RecordFile, *, grade: bool = True) -> tuple[dict[str, Any] | None, str | None]:
    """A record file's grade, computed offline with ``clients.regrade`` — or None and the reason there is none."""
    header = record.header or {}
    if not grade:
        return None, "not graded (--no-grade)"
    if not header.get("task"):
        return None, "free play: no task, so no rubric to grade it with"
    if record.problem:
        return None, f"not graded: {record.problem}"
    from clients.regrade import regrade

    try:
        return (await regrade([path]))[0].grade, None
    except ToolgymError as exc:
        return None, f"could not be graded offline: {exc}"


async def record_report(path: Path, *, grade: bool = True, compress: bool | None = None) -> Report:
    """The report of one record file, graded offline (``clients.regrade``) when it has a task and ``grade``.

    Raises:
        RunError: the file cannot be read at all.
    """
    if not path.is_file():
        raise RunError(f"no record file at {path}")
    record = read_record_file(path)
    if record.header is None:
        raise RunError(f"{path} is not a record: {record.problem}")
    found, note = await offline_grade(path, record, grade=grade)
    payload = record_payload(path, record, found, note)
    title = f"toolgym · {record.header.get('env', '-')} · {path.name}"
    return _page("record", title, [payload], compress)


def is_record_file(path: Path) -> bool:
    """Whether ``path`` is a record file (a JSONL whose first line is an ``episode`` header)."""
    if not path.is_file():
        return False
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            first = handle.readline()
        return json.loads(first).get("type") == "episode"
    except (OSError, ValueError, AttributeError):
        return False


async def build_report(paths: list[Path], *, environment: Environment | None = None, compress: bool | None = None, grade: bool = True) -> Report:
    """The report for what ``toolgym view`` was given: one run folder, one record file, or two run folders.

    Raises:
        RunError: a path is neither a run folder nor a record file, or more than two paths are given.
    """
    if len(paths) == 2:
        return compare_report(paths[0], paths[1], environment=environment, compress=compress)
    if len(paths) != 1:
        raise RunError(f"give one run folder, one record file, or two run folders to compare (got {len(paths)} paths)")
    (path,) = paths
    if path.is_dir():
        return run_report(path, environment=environment, compress=compress)
    if is_record_file(path):
        return await record_report(path, grade=grade, compress=compress)
    if path.name == "results.jsonl":
        return run_report(path.parent, environment=environment, compress=compress)
    raise RunError(f"{path} is neither a run folder nor a record file (a JSONL whose first line is an episode header)")


def default_out(paths: list[Path]) -> Path:
    """Where a report goes without ``--out``: ``report.html`` in the run folder, ``compare-A.html`` in run B's,
    or the record file's name with ``.html``."""
    if len(paths) == 2:
        return paths[1] / f"compare-{paths[0].resolve().name}.html"
    path = paths[0]
    if path.is_dir():
        return path / "report.html"
    if path.name == "results.jsonl":
        return path.parent / "report.html"
    return path.with_suffix(".html")
