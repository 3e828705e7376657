"""The record: everything an episode did, as events, in memory and optionally as JSONL on disk.

A record file is one JSON object per line: an ``episode`` header, then ``tool_call`` (and, from runners,
``message`` and ``rejected_call``) events, then a ``closed`` footer. ``schema_version`` in the header lets
readers refuse files they do not understand. The rows each call changed travel with the call, so a saved record is enough to
rebuild the episode's end state offline and re-grade it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator
from pydantic_core import PydanticSerializationError

from fixtures.changes import LoggedChange
from fixtures.errors import RecordError, RecordUnwritable
from servers.lines import LineFile
from servers.text import escape_value, has_surrogates

__all__ = [
    "RECORD_SCHEMA_VERSION",
    "ErrorClass",
    "CallError",
    "ToolCallEvent",
    "MessageEvent",
    "RejectedCallEvent",
    "EpisodeHeader",
    "ClosedEvent",
    "Record",
    "RecordWriter",
    "read_record",
]

log = logging.getLogger("toolgym.record")

RECORD_SCHEMA_VERSION = 1

ErrorClass = Literal["invalid_arguments", "refused", "unknown_tool", "internal"]
"""invalid_arguments / refused / unknown_tool are the agent's errors; internal is the kit's (never scored)."""


def _escape_agent_text(data: Any, agent_fields: tuple[str, ...]) -> Any:
    """An event's constructor input with every string escaped when an agent-given field holds a lone surrogate.

    Why here: any stored agent text — arguments, a tool name, a model's message — must be writable, readable
    and returnable, whoever builds the event. Only the agent-given fields are scanned (cheap: they are small);
    when one needs it, the whole event is escaped, so a reader undoes it with one call.
    """
    if not isinstance(data, dict) or data.get("escaped"):
        return data
    for name in agent_fields:
        value = data.get(name)
        if value is not None and has_surrogates(_plain(value)):
            break
    else:
        return data
    escaped = escape_value({name: _plain(value) for name, value in data.items()})
    escaped["escaped"] = True
    return escaped


def _plain(value: Any) -> Any:
    """A field value as JSON-like data (models, and lists of models such as ``changes``, dumped)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [item.model_dump(mode="json") if isinstance(item, BaseModel) else item for item in value]
    return value


class CallError(BaseModel):
    """Why a tool call did not succeed."""

    model_config = ConfigDict(frozen=True)

    error_class: ErrorClass
    code: str
    """Stable code: the DomainError code, ``invalid_arguments``, ``unknown_tool`` or ``internal_error``."""
    message: str


class ToolCallEvent(BaseModel):
    """One tool call as it reached the world."""

    model_config = ConfigDict(frozen=True)

    type: Literal["tool_call"] = "tool_call"
    seq: int
    """1-based position among this episode's tool calls."""
    tool: str
    arguments: dict[str, Any]
    """The arguments exactly as the client sent them (before validation)."""
    result: Any = None
    """Structured result of a successful call."""
    error: CallError | None = None
    started_ms: float
    """Milliseconds since the episode was created (machine time, for latency analysis only)."""
    duration_ms: float
    changes: list[LoggedChange] = Field(default_factory=list)
    """Every row write the call made, in order, with before/after values."""
    escaped: bool = Field(default=False, exclude_if=lambda escaped: not escaped)
    """The agent sent text no file can hold (a lone surrogate), so every string of this event is escaped
    losslessly (``servers/text.py``: ``\\udXXX``); ``servers.text.unescape_value`` gives the exact text back."""

    @model_validator(mode="before")
    @classmethod
    def _keep_text_storable(cls, data: Any) -> Any:
        return _escape_agent_text(data, ("tool", "arguments", "error"))

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.error is None


class MessageEvent(BaseModel):
    """A message of the agent's conversation (added by runners that own the agent)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["message"] = "message"
    role: str
    content: Any = None
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    usage: dict[str, int] | None = None
    escaped: bool = Field(default=False, exclude_if=lambda escaped: not escaped)
    """The agent sent text no file can hold (a lone surrogate), so every string of this event is escaped
    losslessly (``servers/text.py``: ``\\udXXX``); ``servers.text.unescape_value`` gives the exact text back."""

    @model_validator(mode="before")
    @classmethod
    def _keep_text_storable(cls, data: Any) -> Any:
        return _escape_agent_text(data, ("content", "tool_calls", "tool_call_id"))


class RejectedCallEvent(BaseModel):
    """A tool call a model issued that its agent answered itself: it never reached the episode.

    Added by runners that own the agent (never by a server): arguments that are not JSON, not a JSON object
    or too large, a call without a tool name, a call past the episode's tool-call limit. The world never saw
    it, so graders do not read it (grades stay the same in process and over HTTP); metrics count it as a
    failed call.
    """

    model_config = ConfigDict(frozen=True)

    type: Literal["rejected_call"] = "rejected_call"
    call_id: str
    """The call's id in the conversation (the tool message answering it has this ``tool_call_id``)."""
    tool: str
    """The tool name as the model sent it (empty when it sent none)."""
    raw_arguments: str
    """The arguments as the model sent them (JSON text), cut to a few kilobytes."""
    raw_size: int
    """Length of the arguments the model sent, in characters (more than ``raw_arguments`` holds when cut)."""
    error: CallError
    """What the agent answered: ``invalid_arguments`` / ``unknown_tool`` / ``refused``, with a code."""
    escaped: bool = Field(default=False, exclude_if=lambda escaped: not escaped)
    """The agent sent text no file can hold (a lone surrogate), so every string of this event is escaped
    losslessly (``servers/text.py``: ``\\udXXX``); ``servers.text.unescape_value`` gives the exact text back."""

    @model_validator(mode="before")
    @classmethod
    def _keep_text_storable(cls, data: Any) -> Any:
        return _escape_agent_text(data, ("call_id", "tool", "raw_arguments", "error"))


class EpisodeHeader(BaseModel):
    """What the episode was: first line of a record file."""

    model_config = ConfigDict(frozen=True)

    type: Literal["episode"] = "episode"
    schema_version: int = RECORD_SCHEMA_VERSION
    episode_id: str
    env: str
    fixture_version: str
    task: str | None
    seed: int
    fixture_seed: int
    start_hash: str
    """Canonical hash of the world when the agent got it (after task setup)."""
    prompt: str | None = None
    clock: str
    """The world's frozen "now" (ISO 8601)."""


class ClosedEvent(BaseModel):
    """Last line of a complete record."""

    model_config = ConfigDict(frozen=True)

    type: Literal["closed"] = "closed"
    end_hash: str
    tool_calls: int
    reason: str = "closed"


Event = Annotated[ToolCallEvent | MessageEvent | RejectedCallEvent | ClosedEvent, Field(discriminator="type")]
_event_adapter: TypeAdapter[Any] = TypeAdapter(Event)


class Record(BaseModel):
    """An episode's header and events (the in-memory form of a record file)."""

    header: EpisodeHeader
    events: list[ToolCallEvent | MessageEvent | RejectedCallEvent | ClosedEvent] = Field(default_factory=list)

    @property
    def tool_calls(self) -> list[ToolCallEvent]:
        """The tool-call events in order (calls that reached the world)."""
        return [e for e in self.events if isinstance(e, ToolCallEvent)]

    @property
    def rejected_calls(self) -> list[RejectedCallEvent]:
        """Calls the model issued that its agent rejected before they reached the world."""
        return [e for e in self.events if isinstance(e, RejectedCallEvent)]

    @property
    def closed(self) -> ClosedEvent | None:
        """The footer, when the episode was closed."""
        return next((e for e in reversed(self.events) if isinstance(e, ClosedEvent)), None)

    def to_jsonl(self) -> str:
        """The record as JSONL text."""
        lines = [self.header.model_dump_json()] + [e.model_dump_json() for e in self.events]
        return "\n".join(lines) + "\n"


class RecordWriter:
    """Appends a record's lines to a file as they happen, each line whole or not at all.

    Each line goes out in one unbuffered write (``servers/lines.py``), so a crash loses nothing written and a
    full disk never leaves a torn line. The first write the system refuses makes the writer *failed*: it
    raises :class:`RecordUnwritable`, and so does every later write — an episode whose record stopped at a
    line must not go on as if it were recorded. ``close`` fsyncs (the footer is the line that matters).
    """

    def __init__(self, path: Path, *, sync: bool = True) -> None:
        """Open (truncate) ``path``, creating its folder; ``sync``: fsync it when closed (the footer).

        Raises:
            RecordUnwritable: the file cannot be created (a read-only folder, a directory in the way...).
        """
        self.path = path
        self.sync = sync
        self.failure: str | None = None
        """Why the record file stopped being written (None while it is whole)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file: LineFile | None = LineFile(path, truncate=True)
        except OSError as exc:
            raise RecordUnwritable(f"cannot write the record to {path}: {exc.strerror or exc}; choose a writable path") from None

    def write(self, item: BaseModel) -> None:
        """Append one header or event line (after :meth:`close`, nothing is written).

        Raises:
            RecordUnwritable: the line could not be written (now or at an earlier write); the file ends
                with the last whole line.
        """
        if self.failure is not None:
            raise RecordUnwritable(self.failure)
        if self._file is None:
            return
        try:
            self._file.append(_line(item))
        except OSError as exc:
            self.failure = f"cannot write the record to {self.path}: {exc.strerror or exc}"
            raise RecordUnwritable(self.failure) from None

    def close(self) -> None:
        """Close the file after an fsync; idempotent. A failed fsync is logged (the lines are written)."""
        file, self._file = self._file, None
        if file is None:
            return
        try:
            file.close(sync=self.sync and self.failure is None)
        except OSError as exc:
            self.failure = self.failure or f"cannot store the record {self.path}: {exc.strerror or exc}"
            log.warning("%s", self.failure)

    def discard(self) -> None:
        """Close and delete the file (a record that never got its header)."""
        self.close()
        try:
            self.path.unlink()
        except OSError:
            pass


_STORED_DEPTH = 48
"""Nesting a record line keeps (below ``servers.text``'s walk, far below pydantic's serialiser limit)."""


def _storable(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data whatever it holds: what JSON cannot say becomes a short text saying what it was.

    The last resort of :func:`_line`, so it never raises: deeper nesting, bytes, non-finite numbers, integers
    too long to print and foreign objects are replaced; strings are kept (escaped by the caller).
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value if value.bit_length() < 4000 else f"<an integer of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None  # as pydantic writes them
    if depth >= _STORED_DEPTH:
        return f"<nested deeper than {_STORED_DEPTH} levels: not stored>"
    if isinstance(value, BaseModel):
        return {name: _storable(getattr(value, name, None), depth + 1) for name in type(value).model_fields}
    if isinstance(value, dict):
        return {k if isinstance(k, str) else str(_storable(k, depth + 1)): _storable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_storable(v, depth + 1) for v in value]
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "surrogateescape")  # lossless; escaped like any surrogate
    return f"<{type(value).__name__}>"


def _line(item: BaseModel) -> bytes:
    """One JSONL line of a header or event; never raises for what the line holds.

    Events escape the agent's text themselves; should some value still be unwritable (a lone surrogate a tool
    echoed, nesting past the serialiser's depth, a value JSON has no form for), the line is written from
    :func:`_storable`, escaped, rather than lost (a record that cannot be written would cost the episode).
    """
    try:
        return (item.model_dump_json() + "\n").encode("utf-8")
    except (PydanticSerializationError, ValueError, UnicodeError, RecursionError):
        log.error("record line of %s held a value no file can hold as it was; stored escaped", type(item).__name__)
        data = escape_value(_storable(item))
        if "escaped" in type(item).model_fields:
            data["escaped"] = True
        return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def read_record(path: Path | str, *, expect_env: str | None = None, require_closed: bool = False) -> Record:
    """Read a JSONL record file back.

    Raises:
        RecordError: the file is missing, empty, not JSONL, from a newer schema, from another environment
            (when ``expect_env`` is given), or truncated (no ``closed`` line when ``require_closed``).
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RecordError(f"cannot read record {path}: {exc.strerror or exc}") from exc
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise RecordError(f"record {path} is empty")
    try:
        header = EpisodeHeader.model_validate_json(lines[0])
    except ValidationError as exc:
        raise RecordError(f"record {path}: line 1 is not an episode header: {exc.errors()[0]['msg']}") from exc
    if header.schema_version > RECORD_SCHEMA_VERSION:
        raise RecordError(
            f"record {path} has schema_version {header.schema_version}; this toolgym reads up to {RECORD_SCHEMA_VERSION}"
        )
    if expect_env is not None and header.env != expect_env:
        raise RecordError(f"record {path} is from environment {header.env!r}, not {expect_env!r}")
    events = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            events.append(_event_adapter.validate_json(line))
        except (ValidationError, json.JSONDecodeError) as exc:
            raise RecordError(f"record {path}: line {number} is not a valid event (truncated file?)") from exc
    record = Record(header=header, events=events)
    if require_closed and record.closed is None:
        raise RecordError(f"record {path} has no 'closed' line: the episode was not closed (truncated file?)")
    return record
