"""A model's tool calls: parsed, given unique ids, run or rejected, recorded faithfully, sent back acceptably.

A model's output can be malformed: arguments that are not strict JSON (NaN, Infinity) or not an object, text
that is not Unicode (a lone surrogate escape such as ``"\\ud800"``), nesting no tool takes, a call without a
tool name. Such a call never reaches the episode; the agent answers it itself with an error result (so the
model can correct itself) and records it as a ``rejected_call`` event, so metrics count it. Three forms of
each call are kept apart:

- the *record* form (:meth:`PendingCall.recorded`): exactly what the model sent (name, raw arguments text),
  with the conversation's unique id;
- the *wire* form sent back to the provider: the same call in a shape every provider accepts (arguments
  always a JSON object — malformed ones wrapped under ``"_invalid_arguments"`` — and a tool name matching
  the providers' function-name pattern, e.g. ``functions.verify_identity`` sent back as
  ``functions_verify_identity``);
- the *call* itself: parsed arguments for the episode, or why they cannot be used.

Ids repeated or missing are made unique too, but they are not held against the model: call ids come from
the provider's serving stack, not from what the model wrote.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import anyio

from clients.agents.base import AgentSession, ToolResult, error_text
from servers.dispatch import MAX_ARGUMENT_BYTES
from servers.record import CallError
from servers.text import has_surrogates

__all__ = [
    "PendingCall",
    "CallIds",
    "pending_call",
    "parse_arguments",
    "run_tool_calls",
    "invalid_arguments_text",
    "INVALID_ARGUMENTS_KEY",
    "UNNAMED_TOOL",
    "wire_tool_name",
    "MAX_ARGUMENT_DEPTH",
]

INVALID_ARGUMENTS_KEY = "_invalid_arguments"
"""Key under which malformed arguments go back to the provider (so the conversation stays valid)."""

UNNAMED_TOOL = "_unnamed"
"""The tool name a call without one carries when sent back to the provider."""

_NO_VALUE = object()

_WIRE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""What OpenAI (``^[a-zA-Z0-9_-]+$``, 64 characters) and Anthropic accept as a function name sent back."""


def wire_tool_name(name: str) -> str:
    """``name`` as a provider accepts it in the history: other characters become ``_``, cut to 64."""
    if _WIRE_NAME.fullmatch(name):
        return name
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or UNNAMED_TOOL


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (strict JSON has no NaN or Infinity)")


MAX_ARGUMENT_DEPTH = 32
"""Nesting of arguments past which they are refused: no tool takes it, and deeper values are where encoders,
records and providers break (pydantic's serialiser stops near 256 levels, Python's json near 1000)."""


def _not_data(value: Any, depth: int = 0) -> str | None:
    """What makes parsed arguments unusable although they parsed: text that is not Unicode, non-finite numbers,
    nesting deeper than :data:`MAX_ARGUMENT_DEPTH`."""
    if depth > MAX_ARGUMENT_DEPTH:
        return f"they nest deeper than {MAX_ARGUMENT_DEPTH} levels, which no tool takes"
    if isinstance(value, str):
        return "they hold a lone surrogate escape (such as \\ud800), which is not Unicode text" if has_surrogates(value) else None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"they hold {value!r}, which strict JSON has no way to write"
    if isinstance(value, dict):
        items: list[Any] = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return None
    return next((p for p in (_not_data(item, depth + 1) for item in items) if p is not None), None)


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
        text = json.dumps(raw, ensure_ascii=False)
        problem = _not_data(raw)
        return (text, raw, None) if problem is None else (text, None, f"arguments cannot be used: {problem}; send valid JSON text")
    if parsed or not isinstance(raw, str):
        return json.dumps(raw, ensure_ascii=False), None, f"arguments must be a JSON object, not {_json_type(raw)}"
    try:
        # Python's json takes NaN and Infinity; no provider, tool or SFT trainer does
        parsed = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError:
        return raw, None, f"arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels, which no tool takes; send a flat JSON object"
    except ValueError as exc:
        return raw, None, f"arguments are not valid JSON ({exc}); send a JSON object"
    if not isinstance(parsed, dict):
        return raw, None, f"arguments must be a JSON object, not {_json_type(parsed)}"
    problem = _not_data(parsed)
    if problem is not None:
        return raw, None, f"arguments cannot be used: {problem}; send valid JSON text"
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
        # a parsed value goes back as it came, unless it holds what no JSON body can carry (then as its text)
        clean = self.value is not _NO_VALUE and _not_data(self.value) is None
        return {INVALID_ARGUMENTS_KEY: self.value if clean else self.raw}

    def wire_arguments(self) -> str:
        """The arguments as a JSON-object string (the model's own text when it was one)."""
        return self.raw if self.arguments is not None else json.dumps(self.wire_input(), ensure_ascii=False)

    @property
    def wire_name(self) -> str:
        """The tool name sent back to the provider: the model's own when a provider accepts it."""
        return wire_tool_name(self.name) if self.name else UNNAMED_TOOL


class CallIds:
    """Gives each tool call of a conversation a unique id (models repeat or omit them); notes what it fixed."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.used: set[str] = set()

    def take(self, raw: Any, session: AgentSession, index: int) -> str:
        """The id of call ``index`` of the current turn: the model's own when it is new, else a fresh one.

        A fix here is no fault of the model's (ids are the serving stack's): it is noted in ``session.id_fixes``.
        """
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
            session.id_fixes.append(f"tool call without an id (now {candidate!r})")
        elif candidate != wanted:
            session.id_fixes.append(f"duplicate tool-call id {wanted!r} (now {candidate!r})")
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
    elif has_surrogates(tool):
        value, problem = None, "the tool name holds a lone surrogate escape, which is not Unicode text; name one of the tools"
    if problem is not None:
        session.model_faults.append(f"call {unique!r} ({tool or 'no name'}): {problem}")
    elif wire_tool_name(tool) != tool:
        session.model_faults.append(f"call {unique!r}: tool name {tool!r} is not a function name (sent back as {wire_tool_name(tool)!r})")
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
