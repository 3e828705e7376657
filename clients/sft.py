"""Exporting a run's passing trajectories as OpenAI-format chat JSONL (supervised fine-tuning data).

Each line is ``{"messages": [...], "tools": [...], "metadata": {...}}``: the conversation in the
chat-completions format (assistant ``tool_calls`` with JSON-string arguments, ``tool`` messages answering
them by id), the environment's tools as function schemas, and where the example comes from (environment,
task, seed, trial, agent, score, episode) so a dataset can be split, weighted or traced back. Every line is
strict JSON: arguments holding ``NaN`` or ``Infinity`` (which Python's ``json`` reads and writes, but no
other parser accepts) make a conversation malformed. ``dedupe`` keeps one example per distinct conversation
(an oracle's trials, or a deterministic policy's, repeat the same one). An LLM agent's record already holds its messages; for agents that
log none (oracle, replay) the conversation is synthesized from the record: the prompt as the user message,
then one assistant tool call and its tool result per recorded call.

Only well-formed conversations are exported — a passing score says the episode reached the goal, not that
its transcript is a good example. :func:`conversation_problems` skips (and the export counts, by reason)
a passing episode whose conversation has missing or repeated tool-call ids, a call without exactly one tool
message answering it, arguments that are not a JSON object, a tool the environment does not have, or calls
its record does not hold — an older agent's rejected input, e.g. the Anthropic agent's non-object input
recorded as ``"{}"``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clients.agents.base import openai_tool
from clients.errors import RunError
from clients.results import ResultLine, latest_by_key, read_results
from fixtures import outputs
from fixtures.errors import EnvironmentNotFound, RecordError
from servers.environment import Environment
from servers.mcp_server import mcp_tools
from servers.record import MessageEvent, Record, ToolCallEvent, read_record
from servers.registry import load_environment

__all__ = [
    "ExportStats",
    "record_messages",
    "export_sft",
    "tool_result_text",
    "conversation_problems",
    "example_metadata",
    "strict_json_loads",
    "SKIP_REASONS",
]

SKIP_REASONS: dict[str, str] = {
    "tool_call_ids": "missing or duplicate tool-call ids",
    "tool_messages": "a tool call without exactly one tool message, or a tool message answering no call",
    "arguments": "tool-call arguments that are not a strict JSON object (NaN and Infinity are not JSON)",
    "unknown_tool": "calls of tools the environment does not have",
    "unrecorded_calls": 'calls missing from the record (an older agent\'s rejected input, e.g. non-object input recorded as "{}")',
    "not_json": "values strict JSON cannot hold (NaN, Infinity) elsewhere in the conversation",
}
"""Why a passing episode is not exported: reason code → what was wrong."""


@dataclass(frozen=True)
class ExportStats:
    """What an export wrote, and what it skipped."""

    written: int
    considered: int
    """Graded episodes in the run."""
    out: Path
    passing: int = 0
    """Graded episodes scoring at least the bar (written + skipped)."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Passing episodes not exported, by reason (:data:`SKIP_REASONS`; an episode counts under each of its reasons)."""
    duplicates: int = 0
    """Well-formed passing episodes not written because an identical conversation was (``dedupe``)."""

    @property
    def skipped_episodes(self) -> int:
        """Passing episodes not exported because they are not well-formed conversations."""
        return self.passing - self.written - self.duplicates


def tool_result_text(event: ToolCallEvent) -> str:
    """The text a model was (or would have been) shown for a recorded call — the server's own encoding."""
    if event.error is not None:
        payload: Any = {"error": event.error.code, "message": event.error.message}
    else:
        payload = event.result
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _message(event: MessageEvent) -> dict[str, Any]:
    message: dict[str, Any] = {"role": event.role, "content": event.content}
    if event.tool_calls:
        message["tool_calls"] = event.tool_calls
    if event.tool_call_id is not None:
        message["tool_call_id"] = event.tool_call_id
    return message


def record_messages(record: Record, *, system: str | None = None) -> list[dict[str, Any]]:
    """The record's conversation as chat messages (synthesized from its tool calls when it logged none)."""
    logged = [e for e in record.events if isinstance(e, MessageEvent)]
    if any(e.role == "assistant" for e in logged):
        return [_message(e) for e in logged]
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": record.header.prompt or ""})
    for event in record.tool_calls:
        call_id = f"call_{event.seq}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call_id, "type": "function", "function": {"name": event.tool, "arguments": json.dumps(event.arguments, ensure_ascii=False)}}
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": tool_result_text(event)})
    return messages


def _calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for m in messages if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]


def _tool_messages_ok(messages: list[dict[str, Any]]) -> bool:
    """Every call answered by exactly one tool message before the conversation moves on; none answering nothing."""
    pending: list[Any] = []
    for message in messages:
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in pending:
                return False
            pending.remove(message.get("tool_call_id"))
            continue
        if pending:
            return False
        if message.get("role") == "assistant":
            pending = [c.get("id") if isinstance(c, dict) else None for c in message.get("tool_calls") or []]
    return not pending


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json_loads(text: Any) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (Python's reads them; JSON has none).

    Raises:
        ValueError: not strict JSON.
        TypeError: not a string.
    """
    return json.loads(text, parse_constant=_not_json)


def _object_arguments(call: Any) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    try:
        return isinstance(function, dict) and isinstance(strict_json_loads(function.get("arguments")), dict)
    except (TypeError, ValueError):
        return False


def conversation_problems(messages: list[dict[str, Any]], tool_names: set[str], record: Record | None = None) -> list[str]:
    """Why a conversation is not a well-formed training example (reason codes of :data:`SKIP_REASONS`); [] if it is.

    Args:
        record: the record the conversation was logged into; its calls must cover the conversation's.
    """
    calls = _calls(messages)
    problems: list[str] = []
    ids = [c.get("id") if isinstance(c, dict) else None for c in calls]
    if any(not isinstance(i, str) or not i for i in ids) or len(set(ids)) != len(ids):
        problems.append("tool_call_ids")
    if not _tool_messages_ok(messages):
        problems.append("tool_messages")
    if not all(_object_arguments(c) for c in calls):
        problems.append("arguments")
    names = [(c.get("function") or {}).get("name") if isinstance(c, dict) else None for c in calls]
    if any(name not in tool_names for name in names):
        problems.append("unknown_tool")
    if record is not None and len(calls) > len(record.tool_calls) + len(record.rejected_calls):
        problems.append("unrecorded_calls")
    return problems


def _passing_lines(run_dir: Path, min_score: float) -> tuple[int, list[ResultLine]]:
    """(graded episodes of the run, the result lines of those scoring at least ``min_score`` with a record)."""
    results = run_dir / "results.jsonl"
    if not results.exists():
        raise RunError(f"{run_dir} is not a run folder (no results.jsonl)")
    graded = [line for line in latest_by_key(read_results(results).lines).values() if line.status == "graded"]
    passing = [
        line
        for line in sorted(graded, key=lambda r: (r.agent, r.task, r.seed, r.trial))
        if line.record is not None and line.score is not None and line.score >= min_score
    ]
    return len(graded), passing


def example_metadata(line: ResultLine) -> dict[str, Any]:
    """Where an exported example comes from: environment, task, seed, trial, agent, score and episode."""
    return {
        "env": line.env,
        "task": line.task,
        "seed": line.seed,
        "trial": line.trial,
        "agent": line.agent,
        "score": line.score,
        "episode_id": line.episode_id,
    }


def _conversation_key(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str:
    """A digest of a conversation and its tools: equal for examples a trainer would see as the same."""
    canonical = json.dumps([messages, tools], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", errors="surrogatepass")).hexdigest()


def export_sft(
    run_dir: Path, out: Path, *, min_score: float = 1.0, environment: Environment | None = None, dedupe: bool = False
) -> ExportStats:
    """Write the run's episodes scoring at least ``min_score`` to ``out`` as chat JSONL, well-formed ones only.

    Args:
        environment: the run's environment (default: found by the records' ``env`` name).
        dedupe: write each distinct conversation (messages and tools) once, the first in (agent, task, seed,
            trial) order; the others are counted in ``ExportStats.duplicates``.

    Raises:
        RunError: not a run folder, a corrupt results file, a listed record that cannot be read, or an
            environment that is not installed (its tools are part of every example).
    """
    tools_by_env: dict[str, tuple[list[dict[str, Any]], str | None]] = {}
    considered, passing = _passing_lines(run_dir, min_score)
    lines: list[str] = []
    skipped: Counter[str] = Counter()
    seen: set[str] = set()
    duplicates = 0
    for result in passing:
        path = run_dir / str(result.record)
        try:
            record = read_record(path, require_closed=True)
        except RecordError as exc:
            raise RunError(f"cannot export: {exc}") from None
        env = record.header.env
        if env not in tools_by_env:
            if environment is not None and environment.name == env:
                found = environment
            else:
                try:
                    found = load_environment(env)
                except EnvironmentNotFound as exc:
                    raise RunError(f"cannot export {path}: {exc}") from None
            tools_by_env[env] = ([openai_tool(t) for t in mcp_tools(found)], found.instructions or None)
        tools, system = tools_by_env[env]
        messages = record_messages(record, system=system)
        logged = any(isinstance(e, MessageEvent) and e.role == "assistant" for e in record.events)
        problems = conversation_problems(messages, {t["function"]["name"] for t in tools}, record if logged else None)
        if problems:
            skipped.update(problems)
            continue
        try:
            text = json.dumps({"messages": messages, "tools": tools, "metadata": example_metadata(result)}, ensure_ascii=False, allow_nan=False)
        except ValueError:
            skipped.update(["not_json"])
            continue
        if dedupe:
            key = _conversation_key(messages, tools)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
        lines.append(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(out)
    outputs.register(out, "export")  # hidden from sandboxed agents wherever it was written (fixtures/outputs.py)
    return ExportStats(
        written=len(lines), considered=considered, out=out, passing=len(passing), skipped=dict(skipped), duplicates=duplicates
    )
