"""Tool dispatch: validate, execute atomically on the episode's world, record.

Every call is one event in the record, whatever happens. Every call runs inside a SAVEPOINT: if the
tool refuses (DomainError) or crashes, everything it wrote is rolled back before the error is returned,
so a refused action never leaves a partial write. A call's world change and its record line succeed or
fail together: the line is written before the savepoint is released, and a line the disk refuses rolls
the call back and raises ``RecordUnwritable`` (after which the episode takes no more calls). Read-only calls skip the change-log reads (they are the
hot path of most episodes); a read-only tool that writes anyway (a kit bug) has its writes rolled back and
is reported as an internal error. (``PRAGMA query_only`` would refuse the write up front, but toggling it
re-prepares every statement of the call.)
"""

from __future__ import annotations

import json
import logging
import re
import time
from decimal import Decimal
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from fixtures.errors import RecordUnwritable
from servers.episodes import Episode
from servers.read_cache import READS
from servers.record import CallError, ToolCallEvent
from servers.tools import DomainError, ToolContext

__all__ = ["call_tool", "MAX_ARGUMENT_BYTES", "format_validation_error"]

log = logging.getLogger("toolgym.dispatch")

MAX_ARGUMENT_BYTES = 64 * 1024
"""Arguments larger than this (as JSON) are refused before validation; no tool needs more."""
MAX_REMEMBERED_ARGUMENT_BYTES = 2048
"""Reads with larger arguments are not remembered (``servers/read_cache.py``): the cache's keys hold the arguments,
and an agent sending thousands of distinct long queries must not make the server hold them."""


def format_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """One readable line per problem: ``field: message`` (rejected values are not echoed back in full).

    With the arguments' ``model``, a JSON number sent for a decimal amount (a string whose pattern takes
    ``"125.00"``) says the format expected and the decimal string to send instead.
    """
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown argument"
        elif err["type"] == "string_type" and model is not None and _is_number(err.get("input")):
            hint = _number_for_string(where, err["input"], _property(model, err["loc"]))
            if hint is not None:
                parts.append(hint)
                continue
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_DECIMAL_SAMPLE = "125.00"


def _number_for_string(where: str, number: float, prop: dict[str, Any] | None) -> str | None:
    """The message for a JSON number sent for a decimal amount (money is a decimal string: decision 8), or None."""
    pattern = (prop or {}).get("pattern")
    if not (isinstance(pattern, str) and _matches(pattern, _DECIMAL_SAMPLE)):
        return None
    shown = repr(number) if isinstance(number, float) else str(number)
    return f'{where} must be a decimal string such as "{_as_decimal_text(number, pattern)}"; got the number {shown}'


def _matches(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return False


def _as_decimal_text(number: float, pattern: str) -> str:
    """``number`` written as the decimal string the pattern takes (two decimals when it takes them), else the sample."""
    try:
        exact = Decimal(str(number))
        text = f"{exact:.2f}"
    except (ArithmeticError, ValueError):
        return _DECIMAL_SAMPLE
    # never suggest a rounded figure: the agent must decide what it meant
    return text if Decimal(text) == exact and _matches(pattern, text) else _DECIMAL_SAMPLE


def _property(model: type[BaseModel], loc: tuple[int | str, ...]) -> dict[str, Any] | None:
    """The JSON schema of the argument at ``loc`` (``$ref`` followed; the non-null branch of an ``anyOf``)."""
    schema = _json_schema(model)
    prop: Any = schema
    for key in loc:
        prop = _effective(schema, prop)
        if prop is None:
            return None
        if isinstance(key, str) and key in prop.get("properties", {}):
            prop = prop["properties"][key]
        elif isinstance(key, int) and isinstance(prop.get("items"), dict):
            prop = prop["items"]
        elif isinstance(prop.get("additionalProperties"), dict):
            prop = prop["additionalProperties"]
        elif isinstance(prop.get("patternProperties"), dict) and prop["patternProperties"]:
            prop = next(iter(prop["patternProperties"].values()))
        else:
            return None
    return _effective(schema, prop)


def _effective(root: dict[str, Any], prop: Any) -> dict[str, Any] | None:
    if not isinstance(prop, dict):
        return None
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        prop = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
    for option in prop.get("anyOf", ()):
        if isinstance(option, dict) and option.get("type") != "null":
            return _effective(root, option)
    return prop


@lru_cache(maxsize=256)
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


_INT_LIMIT = 2**63 - 1


def _out_of_range(values: Any, depth: int = 0) -> bool:
    """Whether some integer among validated arguments (nested in lists, dicts, models) exceeds 64 bits."""
    for value in values:
        if isinstance(value, int) and not isinstance(value, bool):
            if not -_INT_LIMIT - 1 <= value <= _INT_LIMIT:
                return True
        elif depth < 32 and isinstance(value, list | tuple | set | frozenset):
            if _out_of_range(value, depth + 1):
                return True
        elif depth < 32 and isinstance(value, dict):
            if _out_of_range(value.values(), depth + 1):
                return True
        elif depth < 32 and isinstance(value, BaseModel):
            if _out_of_range(value.__dict__.values(), depth + 1):
                return True
    return False


async def call_tool(episode: Episode, name: str, arguments: dict[str, Any] | None) -> ToolCallEvent:
    """Run one tool call of ``episode`` and return its recorded event (already appended to the record).

    Calls of one episode run one at a time (its lock), so the record's order is the world's order.

    Raises:
        RecordUnwritable: the record file refused the call's line (the call was undone), or an earlier one.
    """
    async with episode.lock:
        episode.ensure_recordable()  # a record that stopped at a line takes no more calls
        try:
            return await _call_tool(episode, name, arguments)
        except RecordUnwritable as exc:
            raise RecordUnwritable(
                f"the call was undone, its record line could not be written ({exc}); episode {episode.id!r} takes no "
                "more calls: free space, then start a new episode"
            ) from None


async def _call_tool(episode: Episode, name: str, arguments: dict[str, Any] | None) -> ToolCallEvent:
    started = time.perf_counter()
    started_ms = episode.elapsed_ms()
    episode.last_used = time.monotonic()
    seq = episode.seq + 1
    raw_args: dict[str, Any] = dict(arguments or {})
    spec = episode.environment.tool_specs.get(name)

    def finish(result: Any = None, error: CallError | None = None, changes: list[Any] | None = None) -> ToolCallEvent:
        event = ToolCallEvent(
            seq=seq,
            tool=name,
            arguments=raw_args,
            result=result,
            error=error,
            started_ms=round(started_ms, 3),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            changes=changes or [],
        )
        episode.append(event)
        return event

    if spec is None:
        known = ", ".join(sorted(episode.environment.tool_specs))
        return finish(error=CallError(error_class="unknown_tool", code="unknown_tool", message=f"no tool named {name!r}; tools: {known}"))
    try:
        size = len(json.dumps(raw_args, ensure_ascii=False, default=str).encode("utf-8"))
    except UnicodeEncodeError:
        # A lone surrogate ("\ud800", valid in a JSON string, not in Unicode) cannot be stored or sent back:
        # the call is refused, and recorded as sent, escaped losslessly (the event does it: servers/text.py).
        message = "arguments hold text that is not valid Unicode (a lone surrogate code point)"
        return finish(error=CallError(error_class="invalid_arguments", code="invalid_text", message=message))
    except (TypeError, ValueError, RecursionError):
        size = MAX_ARGUMENT_BYTES + 1
    if size > MAX_ARGUMENT_BYTES:
        return finish(
            error=CallError(
                error_class="invalid_arguments",
                code="payload_too_large",
                message=f"arguments are {size} bytes; the limit is {MAX_ARGUMENT_BYTES}",
            )
        )
    try:
        validated = spec.arguments.model_validate(raw_args)
    except ValidationError as exc:
        return finish(error=CallError(error_class="invalid_arguments", code="invalid_arguments", message=format_validation_error(exc, spec.arguments)))

    world = episode.world
    ctx = ToolContext(world=world, episode_id=episode.id, call_seq=seq)
    kwargs = {field: getattr(validated, field) for field in spec.parameter_names}
    if _out_of_range(kwargs.values()):
        # "9" * 200 validates as an int; no world can store it (SQLite integers are 64-bit): the agent's error
        message = "an integer argument is out of range (SQLite stores at most 64-bit integers)"
        return finish(error=CallError(error_class="invalid_arguments", code="invalid_arguments", message=message))
    conn = world.conn
    # A read of a world whose content was read the same way before answers as it did (servers/read_cache.py)
    pure = spec.mark.is_pure()
    remembered = (READS.key(episode.environment, world, name, raw_args)
                  if pure and not spec.mark.mutates and size <= MAX_REMEMBERED_ARGUMENT_BYTES else None)
    if remembered is not None:
        answer = READS.get(remembered)
        if answer is not None:
            return finish(result=answer[0], error=answer[1])
    # Every call runs in a savepoint: whatever a refused or crashed call wrote is rolled back, and so is
    # anything a read-only tool wrote (a kit bug, reported as internal) — the world is exactly as before.
    mark = world.change_mark() if spec.mark.mutates else None
    before = conn.total_changes
    conn.execute("SAVEPOINT tg_call")
    error: CallError | None = None
    try:
        value = await spec.fn(ctx, **kwargs)
        result = spec.dump_result(value)
    except DomainError as exc:
        error = CallError(error_class="refused", code=exc.code, message=exc.message)
    except Exception as exc:  # a kit bug: recorded as internal, never blamed on the agent
        log.exception("tool %s crashed", name)
        error = CallError(error_class="internal", code="internal_error", message=f"{type(exc).__name__}: {exc}")
    if error is None and mark is None and conn.total_changes != before:
        log.error("read-only tool %s wrote to the world; rolled back", name)
        message = f"read-only tool {name!r} wrote to the world (rolled back; nothing was kept)"
        error = CallError(error_class="internal", code="internal_error", message=message)
    if ctx.personal or not pure:
        episode.impure_call(seq)  # a later episode never continues past it (servers/setups.py)
    if remembered is not None and not ctx.personal and (error is None or error.error_class == "refused"):
        READS.put(remembered, (None if error is not None else result, error))
    if error is not None:
        conn.execute("ROLLBACK TO tg_call")
        conn.execute("RELEASE tg_call")
        return finish(error=error)
    # The record line is written before the savepoint is released: a call whose line the disk refuses is
    # rolled back and raises RecordUnwritable, so the world never holds a change its record lacks (and the
    # client, told the call failed, is right).
    try:
        event = finish(result=result, changes=world.changes_since(mark) if mark is not None else [])
    except BaseException:
        conn.execute("ROLLBACK TO tg_call")
        conn.execute("RELEASE tg_call")
        raise
    conn.execute("RELEASE tg_call")
    if mark is not None:
        world.assume_committed(mark, event.changes)  # read inside the savepoint, committed now: not read again
    return event
