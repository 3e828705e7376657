"""Requests the SDK would leave unanswered are told apart (servers/jsonrpc.py) and stdio lines are parsed
so that every one is answered (servers/stdio_streams.py); the processes themselves: tests/faults."""

from __future__ import annotations

from mcp.shared.message import SessionMessage

from servers.jsonrpc import INVALID_REQUEST, PARSE_ERROR, request_id_problem
from servers.stdio_streams import parse_line


def test_request_ids_of_the_wrong_type() -> None:
    for ident in (None, 1.5, True, {"a": 1}, [1]):
        assert request_id_problem({"jsonrpc": "2.0", "id": ident, "method": "tools/list"}) is not None
    for fine in ({"jsonrpc": "2.0", "id": 1, "method": "m"}, {"jsonrpc": "2.0", "id": "x", "method": "m"},
                 {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 1.5, "result": {}}, [1]):
        assert request_id_problem(fine) is None


def test_stdio_lines_are_messages_or_answers() -> None:
    assert isinstance(parse_line(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":"\\ud800"}}}'), SessionMessage)
    assert isinstance(parse_line(b'{"jsonrpc":"2.0","id":1,"method":"t","params":{"a":"\xff"}}'), SessionMessage)  # surrogateescape
    assert parse_line(b"   \n") is None
    assert parse_line(b'{"jsonrpc":"2.0","method":5}') is None  # a broken notification: nothing to answer
    assert parse_line(b"{oops")["error"]["code"] == PARSE_ERROR  # type: ignore[index]
    wrong = parse_line(b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}')
    assert wrong == {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": request_id_problem({"id": {"a": 1}, "method": "x"})}}
    invalid = parse_line(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}')
    assert invalid["id"] == 7 and invalid["error"]["code"] == INVALID_REQUEST  # type: ignore[index]
    assert parse_line(b"[1, 2]")["error"]["code"] == INVALID_REQUEST  # type: ignore[index]
