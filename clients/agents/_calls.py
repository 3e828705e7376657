"""A model's tool calls: parsed, given unique ids, run or rejected, recorded faithfully, sent back acceptably.

A model's output can be malformed: arguments that are not JSON or not an object, a call without a tool
name, ids repeated or missing. Such a call never reaches the episode; the agent answers it itself with an
error result (so the model can correct itself) and records it as a ``rejected_call`` event, so metrics
count it. Three forms of each call are kept apart:

- the *record* form (:meth:`PendingCall.recorded`): exactly what the model sent (name, raw arguments text),
  with the conversation's unique id;
- the *wire* form sent back to the provider: the same call in a shape every provider accepts (arguments
  always a JSON object — malformed ones wrapped under ``"_invalid_arguments"`` — and a tool name);
- the *call* itself: parsed arguments for the episode, or why they cannot be used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import anyio

from clients.agents.base import AgentSession, ToolResult, error_text
from servers.dispatch import MAX_ARGUMENT_BYTES
from servers.record import CallError

__all__ = [
    "PendingCall",
    "CallIds",
    "pending_call",
    "parse_arguments",
    "run_tool_calls",
    "invalid_arguments_text",
    "INVALID_ARGUMENTS_KEY",
    "UNNAMED_TOOL",
]

INVALID_ARGUMENTS_KEY = "_invalid_arguments"
"""Key under which malformed arguments go back to the provider (so the conversation stays valid)."""

UNNAMED_TOOL = "_unnamed"
"""The tool name a call without one carries when sent back to the provider."""

_NO_VALUE = object()


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def invalid_arguments_text(problem: str) -> str:
    """The tool result a model gets for arguments that never reached the tool (same shape as server errors)."""
    return error_text("invalid_arguments", problem)


def parse_arguments(raw: Any, *, parsed: bool = False) -> tuple[str, dict[str, Any] | None, str | None]:
    """(arguments as JSON text, the object they hold or None, what is wrong with them) of raw model arguments.

    ``raw`` is JSON text (OpenAI), or with ``parsed`` a value already parsed (Anthropic's ``input``); an
    object where text was expected is taken as is (lenient servers). No arguments at all count as ``{}``.
    """
    if raw is None or (isinstance(raw, str) and not raw.strip() and not parsed):
        return "{}", {}, None
    if isinstance(raw, dict):
        return json.dumps(raw, ensure_ascii=False), raw, None
    if parsed or not isinstance(raw, str):
        return json.dumps(raw, ensure_ascii=False), None, f"arguments must be a JSON object, not {_json_type(raw)}"
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        return raw, None, f"arguments are not valid JSON ({exc}); send a JSON object"
    if not isinstance(parsed, dict):
        return raw, None, f"arguments must be a JSON object, not {_json_type(parsed)}"
    return raw, parsed, None


@dataclass(frozen=True)
class PendingCall:
    """A tool call a model asked for: parsed arguments, or why they cannot be used."""

    id: str
    """Unique within the conversation (see :class:`CallIds`)."""
    name: str
    """As the model sent it; empty when it sent none."""
    arguments: dict[str, Any] | None
    problem: str | None = None
    raw: str = "{}"
    """The arguments as the model sent them, as JSON text."""
    value: Any = _NO_VALUE
    """The arguments as the provider gave them, when already parsed (Anthropic's ``input``)."""

    def recorded(self) -> dict[str, Any]:
        """The call for the record, in the OpenAI chat format: what the model sent, id made unique."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.raw}}

    def wire_input(self) -> dict[str, Any]:
        """The arguments as an object any provider accepts (malformed ones wrapped, not dropped)."""
        if self.arguments is not None:
            return self.arguments
        return {INVALID_ARGUMENTS_KEY: self.raw if self.value is _NO_VALUE else self.value}

    def wire_arguments(self) -> str:
        """The arguments as a JSON-object string (the model's own text when it was one)."""
        return self.raw if self.arguments is not None else json.dumps(self.wire_input(), ensure_ascii=False)

    @property
    def wire_name(self) -> str:
        """The tool name sent back to the provider."""
        return self.name or UNNAMED_TOOL


class CallIds:
    """Gives each tool call of a conversation a unique id (models repeat or omit them); notes what it fixed."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.used: set[str] = set()

    def take(self, raw: Any, session: AgentSession, index: int) -> str:
        """The id of call ``index`` of the current turn: the model's own when it is new, else a fresh one."""
        wanted = raw if isinstance(raw, str) and raw else None
        if wanted is None:
            candidate = f"{self.prefix}_{session.turns}_{index}"
        elif wanted in self.used:
            candidate = f"{wanted}_{session.turns}_{index}"
        else:
            candidate = wanted
        while candidate in self.used:
            candidate += "_"
        if wanted is None:
            session.model_faults.append(f"tool call without an id (now {candidate!r})")
        elif candidate != wanted:
            session.model_faults.append(f"duplicate tool-call id {wanted!r} (now {candidate!r})")
        self.used.add(candidate)
        return candidate


def pending_call(session: AgentSession, ids: CallIds, index: int, call_id: Any, name: Any, arguments: Any, *, parsed: bool = False) -> PendingCall:
    """One call of the model's current turn, with a unique id, its arguments parsed, its faults noted.

    Args:
        arguments: as the provider gave them: JSON text, or (``parsed=True``) a value already parsed.
    """
    unique = ids.take(call_id, session, index)
    tool = name if isinstance(name, str) else ""
    raw, value, problem = parse_arguments(arguments, parsed=parsed)
    if not tool:
        value, problem = None, "tool call without a function name; name one of the tools"
    if problem is not None:
        session.model_faults.append(f"call {unique!r} ({tool or 'no name'}): {problem}")
    return PendingCall(id=unique, name=tool, arguments=value, problem=problem, raw=raw, value=arguments if parsed else _NO_VALUE)


def _refusal(call: PendingCall, left: int, session: AgentSession) -> CallError | None:
    if call.arguments is None:
        return CallError(error_class="invalid_arguments", code="invalid_arguments", message=call.problem or "no arguments")
    size = len(call.raw.encode("utf-8", "surrogatepass"))
    if size > MAX_ARGUMENT_BYTES:
        return CallError(
            error_class="invalid_arguments", code="payload_too_large", message=f"arguments are {size} bytes; the limit is {MAX_ARGUMENT_BYTES}"
        )
    if left <= 0:
        message = f"the episode allows {session.limits.max_tool_calls} tool calls; this one was not run"
        return CallError(error_class="refused", code="tool_call_limit", message=message)
    return None


async def run_tool_calls(session: AgentSession, calls: list[PendingCall]) -> list[ToolResult]:
    """Run a model's tool calls concurrently; results come back in the calls' order.

    Calls that cannot run (malformed, too large, past the tool-call limit) are answered by the agent and
    recorded as rejected first — before any call is in flight, so the record keeps a stable order — and
    the rest reach the episode concurrently.
    """
    results: list[ToolResult | None] = [None] * len(calls)
    runnable: list[int] = []
    left = session.tool_calls_left
    for index, call in enumerate(calls):
        refusal = _refusal(call, left - len(runnable), session)
        if refusal is None:
            runnable.append(index)
        else:
            results[index] = session.reject_call(call.id, call.name, call.raw, refusal)

    async def one(index: int) -> None:
        call = calls[index]
        assert call.arguments is not None
        results[index] = await session.call_tool(call.name, call.arguments)

    if len(runnable) == 1:
        await one(runnable[0])
    elif runnable:
        async with anyio.create_task_group() as group:
            for index in runnable:
                group.start_soon(one, index)
    return [r for r in results if r is not None]
