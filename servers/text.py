"""Agent text that no record could hold, escaped losslessly: lone surrogate code points.

JSON lets a string carry ``"\\ud800"``, a UTF-16 surrogate with no partner; Python decodes it to a ``str``
that no UTF-8 file, SQLite database or strict JSON parser accepts (pydantic refuses to serialise it). An
agent may send one in its arguments, a model in its messages, and an invalid byte read with
``surrogateescape`` becomes one too. Dropping or replacing such text (U+FFFD) would lose what the agent
really sent; keeping it raw poisons the record, which then cannot be written, read back or returned.

So every string kept in a record goes through :func:`escape`: each lone surrogate becomes the six
characters ``\\udXXX`` (lowercase hex), and so that a literal ``\\udXXX`` in the agent's text stays
distinguishable, each run of backslashes right before such a sequence is doubled. Text holding neither —
all but hostile input — is returned unchanged (the same object, no copy), so the common case costs one
scan. :func:`unescape` inverts it exactly: in ``\\``-runs before ``udXXX`` an odd count ends in an escaped
surrogate, an even count in literal text. Events record whether they were escaped
(``servers/record.py``), so readers that need the agent's exact text can undo it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["escape", "escape_value", "has_surrogates", "unescape", "unescape_value"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_TO_ESCAPE = re.compile(r"(\\*)(?:([\ud800-\udfff])|(u[dD][89a-fA-F][0-9a-fA-F]{2}))")
"""A backslash run, then a lone surrogate or the text of a surrogate escape (``udXXX``)."""
_TO_UNESCAPE = re.compile(r"(\\*)(u[dD][89a-fA-F][0-9a-fA-F]{2})")

_MAX_DEPTH = 64
"""Nesting walked by the value helpers; deeper values are returned as they are (JSON from the wire is bounded)."""


def _escape_match(match: re.Match[str]) -> str:
    run, surrogate, text = match.group(1), match.group(2), match.group(3)
    if surrogate is not None:
        return run * 2 + f"\\u{ord(surrogate):04x}"
    return run * 2 + text


def _unescape_match(match: re.Match[str]) -> str:
    run, text = match.group(1), match.group(2)
    if len(run) % 2:
        return "\\" * (len(run) // 2) + chr(int(text[1:], 16))
    return "\\" * (len(run) // 2) + text


def escape(text: str) -> str:
    """``text`` with lone surrogates written as ``\\udXXX`` (see the module docstring); unchanged when clean."""
    if text.isascii() and "\\" not in text:
        return text  # no surrogate, no backslash: nothing to escape (the common case, one C-level scan)
    return _TO_ESCAPE.sub(_escape_match, text)


def unescape(text: str) -> str:
    """The exact inverse of :func:`escape`."""
    if "\\" not in text:
        return text
    return _TO_UNESCAPE.sub(_unescape_match, text)


def has_surrogates(value: Any, depth: int = 0) -> bool:
    """Whether some string in ``value`` (a JSON-like value: dict keys included) holds a lone surrogate.

    A plain loop (no generators, no encoder): a tool call's arguments are checked on every call, in ~1 µs.
    """
    if isinstance(value, str):
        return not value.isascii() and _SURROGATE.search(value) is not None
    if depth >= _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        for key, item in value.items():
            if has_surrogates(key, depth + 1) or has_surrogates(item, depth + 1):
                return True
    elif isinstance(value, list | tuple):
        for item in value:
            if has_surrogates(item, depth + 1):
                return True
    return False


def escape_value(value: Any, depth: int = 0) -> Any:
    """``value`` with :func:`escape` applied to every string (dict keys included); other values as they are."""
    if isinstance(value, str):
        return escape(value)
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {escape_value(k, depth + 1): escape_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escape_value(v, depth + 1) for v in value]
    return value


def unescape_value(value: Any, depth: int = 0) -> Any:
    """The exact inverse of :func:`escape_value`."""
    if isinstance(value, str):
        return unescape(value)
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {unescape_value(k, depth + 1): unescape_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unescape_value(v, depth + 1) for v in value]
    return value
