"""One episode in the terminal with rich: its prompt, timeline (messages, calls, changed rows) and grade.

Record values are untrusted, so they are only ever printed as :class:`rich.text.Text` (never parsed as rich
markup: a memo saying ``[red]`` stays ``[red]``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from clients.errors import RunError
from clients.results import ResultLine, latest_by_key, read_results
from clients.view.data import RecordFile, error_label, read_record_file

__all__ = ["ShownEpisode", "find_episode", "render_episode", "episode_table", "grade_table"]

_RESULT_LINES = 8
"""Lines of a tool result shown without ``--full``."""


@dataclass
class ShownEpisode:
    """What ``toolgym show`` prints: a record, and the result line of its run when there is one."""

    record: RecordFile
    line: ResultLine | None = None
    grade: dict[str, Any] | None = None
    grade_note: str | None = None


def run_lines(run_dir: Path) -> list[ResultLine]:
    """A run folder's latest result lines, in run order.

    Raises:
        RunError: no results file, or a corrupt one.
    """
    results = run_dir / "results.jsonl"
    if not results.is_file():
        raise RunError(f"{run_dir} is not a run folder: it has no results.jsonl")
    return sorted(latest_by_key(read_results(results).lines).values(), key=lambda r: (r.agent, r.task, r.seed, r.trial))


def find_episode(run_dir: Path, episode: str) -> ShownEpisode:
    """The episode of a run folder named by its id, its record's name, or a part of either found once.

    Raises:
        RunError: no episode matches, or the part matches several (they are named).
    """
    lines = run_lines(run_dir)

    def names(line: ResultLine) -> tuple[str, str]:
        return line.episode_id, Path(line.record).stem if line.record else line.episode_id

    exact = [line for line in lines if episode in names(line)]
    found = exact or [line for line in lines if any(episode in name for name in names(line))]
    if not found:
        raise RunError(f"no episode {episode!r} in {run_dir}; run `toolgym show {run_dir}` to list them")
    if len(found) > 1:
        listed = ", ".join(line.episode_id for line in found[:6]) + (" ..." if len(found) > 6 else "")
        raise RunError(f"{episode!r} matches {len(found)} episodes of {run_dir} ({listed}); give more of the id")
    line = found[0]
    record = read_record_file(run_dir / line.record) if line.record else RecordFile(path=None, problem="no record was kept")
    return ShownEpisode(record=record, line=line, grade=line.grade)


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _clip(text: str, full: bool, indent: str = "    ") -> Text:
    lines = text.splitlines() or [""]
    keep = lines if full or len(lines) <= _RESULT_LINES else lines[:_RESULT_LINES]
    shown = Text(lines[0] + "".join(f"\n{indent}{line}" for line in keep[1:]))
    if len(keep) < len(lines):
        shown.append(f"\n{indent}… {len(lines) - len(keep)} more lines (--full shows them)", style="dim")
    return shown


def _change(change: dict[str, Any]) -> Text:
    op = str(change.get("op", "?"))
    key = ", ".join(str(k) for k in change.get("key") or [])
    style = {"insert": "green", "delete": "red", "update": "yellow"}.get(op, "")
    text = Text("    ")
    text.append(f"{op} ", style=style)
    text.append(f"{change.get('table', '?')} {key}")
    before, after = change.get("before") or {}, change.get("after") or {}
    if op == "update":
        for column in after:
            if before.get(column) != after.get(column):
                text.append(f"\n      {column}: ", style="dim")
                text.append(json.dumps(before.get(column), ensure_ascii=False, default=str), style="red")
                text.append(" → ")
                text.append(json.dumps(after.get(column), ensure_ascii=False, default=str), style="green")
    else:
        values = after if op == "insert" else before
        shown = ", ".join(f"{c}={json.dumps(v, ensure_ascii=False, default=str)}" for c, v in values.items())
        text.append(f"\n      {shown}", style="dim")
    return text


def _call(event: dict[str, Any], full: bool) -> RenderableType:
    error = event.get("error") if isinstance(event.get("error"), dict) else None
    head = Text(f"#{event.get('seq')} ", style="dim")
    head.append(str(event.get("tool")), style="bold")
    head.append("  ")
    head.append(error_label(error) if error else "ok", style="red" if error else "green")
    changes = event.get("changes") or []
    head.append(f"  {float(event.get('duration_ms') or 0):.2f} ms", style="dim")
    if changes:
        head.append(f"  {len(changes)} row{'s' if len(changes) != 1 else ''} changed", style="yellow")
    parts: list[RenderableType] = [head, Text("  args: ", style="dim") + Text(json.dumps(event.get("arguments"), ensure_ascii=False, default=str))]
    if error:
        parts.append(Text("  error: ", style="dim") + Text(str(error.get("message", "")), style="red"))
    else:
        parts.append(Text("  result: ", style="dim") + _clip(_json(event.get("result")), full))
    parts.extend(_change(c) for c in changes)
    return Group(*parts)


def _message(event: dict[str, Any], full: bool) -> RenderableType:
    role = str(event.get("role", "?"))
    content = event.get("content")
    if isinstance(content, list):
        content = "\n".join(str(p.get("text")) if isinstance(p, dict) and "text" in p else _json(p) for p in content)
    head = Text(f"[{role}] ", style="magenta" if role == "assistant" else "cyan" if role == "user" else "dim")
    body = _clip("" if content is None else _json(content), full or role in ("assistant", "user"))
    parts: list[RenderableType] = [head + body]
    for call in event.get("tool_calls") or []:
        function = call.get("function", {}) if isinstance(call, dict) else {}
        parts.append(Text(f"  → {function.get('name', '?')} {function.get('arguments', '')}", style="dim"))
    return Group(*parts)


def grade_table(grade: dict[str, Any]) -> Table:
    """A grade as a table: verdict and score in the title, then every criterion (failing gates first) with its
    weight, whether it gates, whether it is credited, and its evidence."""

    def rank(c: dict[str, Any]) -> int:
        if c.get("graded") is False:
            return 2
        return (0 if c.get("gate") else 1) if not c.get("passed") else (3 if c.get("gate") else 4)

    verdict = "PASS" if grade.get("passed") else "FAIL"
    title = Text(f"grade: {verdict} score {float(grade.get('score') or 0):.3f}", style="green" if grade.get("passed") else "red")
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
    for column in ("", "criterion", "weight", "gate", "credited", "evidence"):
        table.add_column(column, overflow="fold", justify="right" if column == "weight" else "left")
    for c in sorted((c for c in grade.get("criteria") or [] if isinstance(c, dict)), key=rank):
        state = "ungraded" if c.get("graded") is False else "pass" if c.get("passed") else "FAIL"
        table.add_row(
            Text(state, style="green" if state == "pass" else "red"),
            Text(str(c.get("name"))),
            f"{float(c.get('weight') or 0):.1f}",
            "gate" if c.get("gate") else "",
            "yes" if c.get("credited", True) else "no",
            Text(str(c.get("evidence", ""))),
        )
    return table


def render_episode(console: Console, shown: ShownEpisode, *, full: bool = False) -> None:
    """Print one episode: header, prompt, timeline, grade (failing gates first) and world hashes."""
    record, line = shown.record, shown.line
    header = record.header or {}
    grade = shown.grade
    facts = Text()
    facts.append(f"{header.get('task') or 'free play'} · seed {header.get('seed', '?')}", style="bold")
    if line is not None:
        facts.append(f" · trial {line.trial} · {line.agent} · {line.status}")
    if grade:
        facts.append(f" · {'PASS' if grade.get('passed') else 'FAIL'} {float(grade.get('score') or 0):.3f}", style="green" if grade.get("passed") else "red")
    facts.append(f"\nepisode {header.get('episode_id', '?')} · {header.get('env', '?')} fixture {header.get('fixture_version', '?')}", style="dim")
    if line is not None and line.status == "errored":
        facts.append(f"\ninfrastructure error ({line.error_class}): {line.error}", style="red")
    if record.problem:
        facts.append(f"\nrecord: {record.problem}", style="yellow")
    console.print(Panel(facts, box=box.ROUNDED, expand=False))
    console.print(Text("prompt", style="bold"))
    console.print(Text(str(header.get("prompt") or "(no prompt: free play)")))
    console.print()
    console.print(Text("timeline", style="bold"))
    for event in record.events:
        if event.get("type") == "tool_call":
            console.print(_call(event, full))
        elif event.get("type") == "message":
            console.print(_message(event, full))
        elif event.get("type") == "rejected_call":
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            line = Text("✕ ", style="red") + Text(str(event.get("tool") or "(no tool name)"), style="bold")
            line.append(f"  rejected by the agent ({error_label(error)}), never reached the world", style="red")
            console.print(Group(line, Text("  sent: ", style="dim") + _clip(str(event.get("raw_arguments", "")), full)))
    if not any(e.get("type") in ("tool_call", "message", "rejected_call") for e in record.events):
        console.print(Text("  (no tool call, no message)", style="dim"))
    console.print()
    if grade:
        console.print(grade_table(grade))
    else:
        console.print(Text(f"grade: {shown.grade_note or 'none'}", style="dim"))
    closed = record.closed or {}
    hashes = Text(f"start {header.get('start_hash', '-')}\nend   {closed.get('end_hash', '- (not closed)')}", style="dim")
    console.print(hashes)


def episode_table(lines: list[ResultLine]) -> Table:
    """The episodes of a run, one row each, for choosing one with ``--episode``."""
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
    for column in ("episode", "task", "seed", "trial", "result", "failed criteria · error"):
        table.add_column(column, overflow="fold")
    for line in lines:
        result = Text("errored", style="yellow") if line.status == "errored" else Text("pass", style="green") if line.passed else Text("FAIL", style="red")
        failed = [str(c.get("name")) for c in (line.grade or {}).get("criteria") or [] if isinstance(c, dict) and not c.get("passed")]
        table.add_row(Text(line.episode_id), Text(line.task), str(line.seed), str(line.trial), result, Text(line.error or ", ".join(failed)))
    return table
