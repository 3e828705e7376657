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
import time
from typing import Any

from pydantic import BaseModel, ValidationError

from fixtures.errors import RecordUnwritable
from servers.episodes import Episode
from servers.record import CallError, ToolCallEvent
from servers.tools import DomainError, ToolContext

__all__ = ["call_tool", "MAX_ARGUMENT_BYTES", "format_validation_error"]

log = logging.getLogger("toolgym.dispatch")

MAX_ARGUMENT_BYTES = 64 * 1024
"""Arguments larger than this (as JSON) are refused before validation; no tool needs more."""


def format_validation_error(exc: ValidationError) -> str:
    """One readable line per problem: ``field: message`` (rejected values are not echoed back in full)."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown argument"
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


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
        return finish(error=CallError(error_class="invalid_arguments", code="invalid_arguments", message=format_validation_error(exc)))

    world = episode.world
    ctx = ToolContext(world=world, episode_id=episode.id, call_seq=seq)
    kwargs = {field: getattr(validated, field) for field in spec.parameter_names}
    if _out_of_range(kwargs.values()):
        # "9" * 200 validates as an int; no world can store it (SQLite integers are 64-bit): the agent's error
        message = "an integer argument is out of range (SQLite stores at most 64-bit integers)"
        return finish(error=CallError(error_class="invalid_arguments", code="invalid_arguments", message=message))
    conn = world.conn
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
    return event
