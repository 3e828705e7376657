"""Lossless escaping of text no record can hold (servers/text.py), and records that use it (servers/record.py)."""

from __future__ import annotations

import json
import random

from servers.record import CallError, MessageEvent, RejectedCallEvent, ToolCallEvent
from servers.text import escape, escape_value, has_surrogates, unescape, unescape_value


def test_clean_text_is_untouched() -> None:
    for text in ("", "plain", "naïve café", "C:\\path\\to", "\\u0041 stays", "fudd8ff"):
        assert escape(text) == text and unescape(text) == text


def test_escaping_is_lossless_and_leaves_no_surrogate() -> None:
    rng = random.Random(22)
    alphabet = ["a", "\\", "u", "d", "8", "D", "f", "\ud800", "\udfff", "\udc80", "é", "\\ud800", "\\\\udfff"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        escaped = escape(text)
        assert not has_surrogates(escaped)
        escaped.encode("utf-8")  # storable
        assert unescape(escaped) == text, (text, escaped)


def test_values_are_walked_keys_included() -> None:
    value = {"a\ud800": ["x\udfff", {"n": 1, "t": "\\ud800"}], "b": None}
    escaped = escape_value(value)
    assert not has_surrogates(escaped) and json.dumps(escaped, ensure_ascii=False).encode("utf-8")
    assert unescape_value(escaped) == value


def test_events_escape_the_agents_text_and_stay_readable() -> None:
    call = ToolCallEvent(
        seq=1, tool="pay\ud800", arguments={"memo": "hi\udfff"}, started_ms=0, duration_ms=0,
        error=CallError(error_class="invalid_arguments", code="invalid_text", message="memo\ud800: bad"),
    )
    assert call.escaped and call.tool == "pay\\ud800" and call.arguments == {"memo": "hi\\udfff"}
    again = ToolCallEvent.model_validate_json(call.model_dump_json())
    assert again == call and unescape_value(again.arguments) == {"memo": "hi\udfff"}
    clean = ToolCallEvent(seq=2, tool="pay", arguments={"memo": "\\ud800 typed by hand"}, started_ms=0, duration_ms=0)
    assert not clean.escaped and "escaped" not in clean.model_dump_json()  # clean events are stored verbatim
    message = MessageEvent(role="assistant", content="ok\ud83d", tool_calls=[{"id": "c\udc00"}])
    assert message.escaped and unescape(message.content) == "ok\ud83d"
    rejected = RejectedCallEvent(
        call_id="c1", tool="t", raw_arguments='{"a": "\ud800"}', raw_size=12,
        error=CallError(error_class="invalid_arguments", code="not_json", message="bad"),
    )
    assert rejected.escaped and rejected.model_dump_json()
