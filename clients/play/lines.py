"""What a player types, parsed: ``TOOL {json}``, ``tools``, ``help TOOL``, ``policy``, ``prompt``, ``quit``.

A line is checked completely before anything reaches the world: a tool the environment does not have, JSON
that does not parse, arguments that are not an object or do not fit the tool's input schema (the schema the
agent reads, validated with ``jsonschema``) are a :class:`PlayInputError` of one line, and the episode goes
on as if nothing was typed. Arguments that fit the schema go to the server, which may still refuse them
(a domain rule, a check the schema cannot express): that is a call, recorded like any agent's.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from mcp_types import Tool

from clients.errors import RunError

__all__ = ["Command", "PlayInputError", "parse_line", "check_arguments", "COMMANDS", "incomplete_json"]

COMMANDS: dict[str, str] = {
    "prompt": "show the task again",
    "policy": "show the policy resource",
    "tools": "list the tools, one line each",
    "help": "help TOOL: a tool's description and arguments (help alone: these commands)",
    "calls": "the calls made so far, one line each",
    "quit": "end the episode without an answer (it is graded as it stands)",
}
"""Words that are not tools; a tool of the same name is still reachable as ``call NAME {json}``."""


class PlayInputError(RunError):
    """A line the player typed that cannot be played: one line saying why; nothing happened."""


@dataclass(frozen=True)
class Command:
    """One parsed line: a command word (``tools``, ``help``...) or a tool call (``kind == "call"``)."""

    kind: str
    """``call``, or one of :data:`COMMANDS`, or ``empty`` (a blank line or a ``#`` comment)."""
    tool: str = ""
    """The tool of a call, or the topic of ``help``."""
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    """The line as typed (for history and error messages)."""


def incomplete_json(rest: str) -> bool:
    """Whether ``rest`` is the start of a JSON object that more lines could complete (a paste over lines)."""
    if not rest.lstrip().startswith("{"):
        return False
    try:
        json.loads(rest)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(rest.rstrip())
    return False


def parse_line(text: str, tools: dict[str, Tool]) -> Command:
    """Parse one line (possibly several, for a pasted JSON object) against the episode's tools.

    Raises:
        PlayInputError: an unknown tool or command, JSON that is not an object, arguments the schema refuses.
    """
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return Command(kind="empty", text=text)
    word, rest = _split(stripped)
    if word == "exit":
        word = "quit"
    if word in COMMANDS:
        if word == "help":
            topic = rest.split()[0] if rest else ""
            if topic and topic not in tools and topic not in COMMANDS:
                raise PlayInputError(f"no tool named {_short(topic)!r}{_suggest(topic, tools)}; `tools` lists them")
            return Command(kind="help", tool=topic, text=text)
        if rest:
            raise PlayInputError(f"`{word}` takes no arguments")
        return Command(kind=word, text=text)
    if word == "call":
        word, rest = _split(rest)
    if word not in tools:
        raise PlayInputError(
            f"no tool or command {_short(word)!r}{_suggest(word, tools)}; `tools` lists the tools, `help` the commands"
        )
    arguments = _arguments(word, rest)
    check_arguments(tools[word], arguments)
    return Command(kind="call", tool=word, arguments=arguments, text=text)


def _split(text: str) -> tuple[str, str]:
    """The first word of ``text`` and the rest, split at any whitespace (a pasted object may start on a new line)."""
    parts = text.split(maxsplit=1)
    return (parts[0], parts[1].strip()) if len(parts) == 2 else (parts[0] if parts else "", "")


def _short(word: str) -> str:
    """A word as an error quotes it: whole when short, else its start (a pasted blob is not echoed back)."""
    return word if len(word) <= 60 else word[:40] + f"…({len(word)} characters)"


def _suggest(word: str, tools: dict[str, Tool]) -> str:
    close = difflib.get_close_matches(word, [*tools, *COMMANDS], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _arguments(tool: str, rest: str) -> dict[str, Any]:
    if not rest:
        return {}
    try:
        value = json.loads(rest)
    except json.JSONDecodeError as exc:
        raise PlayInputError(
            f'{tool}: the arguments are not valid JSON ({exc.msg} at column {exc.colno}); write {tool} {{"name": "value"}}'
        ) from None
    except RecursionError:
        raise PlayInputError(f"{tool}: the arguments nest too deeply") from None
    if not isinstance(value, dict):
        raise PlayInputError(
            f'{tool}: the arguments must be a JSON object like {{"name": "value"}}, not {type(value).__name__}'
        )
    return value


_validators: dict[str, Draft202012Validator] = {}


def check_arguments(tool: Tool, arguments: dict[str, Any]) -> None:
    """Check ``arguments`` against ``tool``'s input schema (what an agent reads), before the world sees them.

    Raises:
        PlayInputError: the most relevant problem, in one line (``help TOOL`` shows the arguments).
    """
    schema = tool.input_schema or {"type": "object"}
    key = json.dumps(schema, sort_keys=True)
    validator = _validators.get(key)
    if validator is None:
        validator = _validators[key] = Draft202012Validator(schema)
    error = best_match(validator.iter_errors(arguments))
    if error is None:
        return
    where = ".".join(str(p) for p in error.absolute_path)
    message = error.message
    shown = repr(error.instance)
    if len(shown) > 60 and shown in message:  # a long value is named by its start, so what is wrong stays in view
        message = message.replace(shown, f"{shown[:40]}…({len(shown)} characters)")
    message = message if len(message) <= 300 else message[:297] + "..."
    raise PlayInputError(
        f"{tool.name}: {where + ': ' if where else ''}{message} (`help {tool.name}` shows its arguments)"
    )
