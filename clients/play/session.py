"""Session files: one episode played one command per process, so a program (or an AI player in a shell) can play.

Each ``toolgym play ENV --task T --seed N --session FILE 'TOOL {json}'`` starts the instance afresh, replays
the calls the file holds — worlds are deterministic, so each must give back exactly the recorded result, or
the invocation refuses with one line (the environment changed under the session) — then plays the new
command, prints its result and appends it. Nothing but calls that reached the world is appended: a line
that could not be played leaves the file as it was.

The file is JSONL (schema version 1)::

    {"type": "session", "schema_version": 1, "env": "finance", "task": "large_wire", "seed": 503,
     "start_hash": "..."}
    {"type": "call", "seq": 1, "tool": "search_customers", "arguments": {...}, "ok": true, "result": {...}}
    {"type": "call", "seq": 2, "tool": "send_wire", "arguments": {...}, "ok": false,
     "error": {"class": "refused", "code": "daily_limit_exceeded", "message": "..."}}
    {"type": "end", "reason": "submitted", "run": "runs/play-...", "record": "runs/play-.../records/...jsonl",
     "score": 1.0, "passed": true}

It holds what the player saw and did, never the grade's criteria: only the final score, once it has ended.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clients.errors import RunError
from clients.play.game import CallOutcome, Game
from servers.lines import append_synced

__all__ = ["SESSION_SCHEMA_VERSION", "SessionError", "Session", "read_session", "append_session", "replay"]

SESSION_SCHEMA_VERSION = 1


class SessionError(RunError):
    """A session file cannot be used as it is (malformed, of another instance, or no longer reproducible)."""


@dataclass
class Session:
    """What a session file holds."""

    path: Path
    header: dict[str, Any]
    calls: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None

    @property
    def task(self) -> str:
        return str(self.header["task"])

    @property
    def seed(self) -> int:
        return int(self.header["seed"])


def _canonical(value: Any) -> Any:
    """``value`` as JSON would give it back (tuples → lists, keys as strings): what a file can compare."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def read_session(path: Path) -> Session | None:
    """The session at ``path``, or None when the file does not exist or is empty.

    Raises:
        SessionError: unreadable, or a line is not what a session file holds (the error names the line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionError(f"cannot read session {path}: {getattr(exc, 'strerror', None) or exc}") from None
    session: Session | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"session {path} line {number}"
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SessionError(f"{where}: not JSON ({exc.msg}); the file was edited or cut short") from None
        kind = data.get("type") if isinstance(data, dict) else None
        if session is None:
            if kind != "session" or not isinstance(data.get("task"), str) or not isinstance(data.get("seed"), int):
                raise SessionError(f"{where}: a session file starts with its header (type 'session', env, task, seed)")
            if data.get("schema_version") != SESSION_SCHEMA_VERSION:
                raise SessionError(
                    f"{where}: schema_version {data.get('schema_version')!r}; this toolgym reads {SESSION_SCHEMA_VERSION}"
                )
            session = Session(path=path, header=data)
        elif session.end is not None:
            raise SessionError(f"{where}: a line after the session's end")
        elif kind == "call" and isinstance(data.get("tool"), str) and isinstance(data.get("arguments"), dict):
            session.calls.append(data)
        elif kind == "end":
            session.end = data
        else:
            raise SessionError(f"{where}: expected a call (type 'call', tool, arguments) or the end")
    return session


def append_session(path: Path, data: dict[str, Any]) -> None:
    """Append one line to the session file (created when missing), whole or not at all.

    Raises:
        SessionError: the system refused the write.
    """
    encoded = (json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        append_synced(path, encoded)
    except OSError as exc:
        raise SessionError(f"cannot write session {path}: {exc.strerror or exc}") from None


def header_for(game: Game) -> dict[str, Any]:
    """The first line of a new session of ``game``'s instance."""
    header = game.episode.record.header
    return {
        "type": "session",
        "schema_version": SESSION_SCHEMA_VERSION,
        "env": game.environment.name,
        "task": game.task,
        "seed": game.seed,
        "fixture_version": header.fixture_version,
        "start_hash": header.start_hash,
    }


def call_line(outcome: CallOutcome) -> dict[str, Any]:
    """A call's session line."""
    return {"type": "call", **_canonical(outcome.as_json())}


async def replay(game: Game, session: Session) -> CallOutcome | None:
    """Play the session's calls into ``game``, checking each gives back what was recorded.

    Returns the outcome of the call that ended the episode when one did (a final answer whose session never
    got its end line), else None.

    Raises:
        SessionError: the instance starts from another world, or a call answers differently than recorded.
    """
    path = session.path
    header = game.episode.record.header
    if session.header.get("env") != game.environment.name:
        raise SessionError(
            f"session {path} is of environment {session.header.get('env')!r}, not {game.environment.name!r}"
        )
    if session.header.get("start_hash") != header.start_hash:
        raise SessionError(
            f"session {path}: instance {game.task} seed {game.seed} now starts from another world than when the session "
            "began (the environment or its fixture changed); start a new session file"
        )
    for number, recorded in enumerate(session.calls, start=1):
        outcome = await game.call(recorded["tool"], recorded["arguments"])
        again = call_line(outcome)
        if again != {**recorded, "type": "call"}:
            raise SessionError(
                f"session {path}: call #{number} ({recorded['tool']}) answered differently on replay than when it was "
                "played (the environment changed, or the file was edited); start a new session file"
            )
        if outcome.ended:
            if number != len(session.calls):
                raise SessionError(f"session {path}: call #{number} ended the episode, yet calls follow it")
            return outcome
    return None


def unused_path(base: Path) -> Path:
    """``base``, or ``base-2``, ``base-3``... : the first that does not exist (two plays in one second)."""
    if not os.path.lexists(base):
        return base
    number = 2
    while os.path.lexists(f"{base}-{number}"):
        number += 1
    return Path(f"{base}-{number}")
