"""Hostile argument bytes and malformed JSON-RPC, against real server processes: every request is answered,
the record keeps what the agent sent (escaped losslessly) and stays readable, and ``finish`` never releases
what it could not grade and record."""

from __future__ import annotations

from pathlib import Path

import anyio
import httpx

from servers.record import Record, read_record
from tests.faults.processes import http_server, stdio_server, tool_call

SURROGATE_CALL = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"transfer","arguments":{"from_account":"acc-001\\ud800","to_account":"\\udfff","amount":"1.00"}}}'
WRONG_IDS = [{"a": 1}, 1.5, True, None, [1]]


async def test_stdio_answers_every_request_and_records_hostile_text(tmp_path: Path) -> None:
    record = tmp_path / "episode.jsonl"
    with anyio.fail_after(60):
        async with stdio_server("--record", str(record)) as server:
            surrogate = await server.request(SURROGATE_CALL % 1)
            assert surrogate["id"] == 1 and surrogate["result"]["isError"]
            assert "invalid_text" in surrogate["result"]["content"][0]["text"]
            # Bytes that are not UTF-8, inside a string: read as escaped surrogates, refused, recorded as sent.
            broken = await server.request(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_account","arguments":{"account_id":"acc-\xff\xfe"}}}')
            assert broken["id"] == 2 and "invalid_text" in broken["result"]["content"][0]["text"]
            unknown = await server.request(b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"drop\\ud800","arguments":{}}}')
            assert unknown["id"] == 3 and "unknown_tool" in unknown["result"]["content"][0]["text"]
            for ident in WRONG_IDS:  # the SDK took these for notifications: no answer, a client waiting forever
                reply = await server.request({"jsonrpc": "2.0", "id": ident, "method": "tools/list"})
                assert reply["id"] is None and reply["error"]["code"] == -32600, reply
            garbage = await server.request(b"{not json")
            assert garbage["error"]["code"] == -32700
            invalid = await server.request({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": 5})
            assert invalid["id"] == 9 and invalid["error"]["code"] == -32600
            fine = await server.request(tool_call(10, "list_accounts", {}))
            assert fine["id"] == 10 and not fine["result"]["isError"]
            assert await server.close() == 0
    from servers.text import unescape, unescape_value  # (imported late: the suite also runs against older code)

    saved = read_record(record, require_closed=True)  # readable, whole, footer included
    first, second, third = saved.tool_calls[:3]
    assert first.escaped and unescape_value(first.arguments) == {"from_account": "acc-001\ud800", "to_account": "\udfff", "amount": "1.00"}
    assert unescape_value(second.arguments) == {"account_id": "acc-\udcff\udcfe"}  # the original bytes, recoverable
    assert third.escaped and unescape(third.tool) == "drop\ud800"
    assert [c.tool for c in saved.tool_calls][3:] == ["list_accounts"]
    assert "Traceback" not in "\n".join(server.stderr)


async def test_http_hostile_text_keeps_record_and_finish_working(tmp_path: Path) -> None:
    records = tmp_path / "records"
    async with http_server("--record-dir", str(records)) as server, httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(60):
            created = (await server.create(http, "pay_back", 1)).json()
            ident = created["id"]
            body = tool_call(1, "transfer", {"from_account": "acc-001\ud800", "to_account": "\udfff", "amount": "1.00"}, modern=True)
            reply = (await server.call(http, ident, body)).json()
            assert reply["result"]["isError"] and "invalid_text" in reply["result"]["content"][0]["text"], reply

            # A request id of the wrong type is answered (the SDK answered 202 with no body: a hung client).
            for url in (f"{server.url}/episodes/{ident}/mcp", f"{server.url}/mcp"):
                for wrong in WRONG_IDS:
                    answer = await http.post(
                        url,
                        json={"jsonrpc": "2.0", "id": wrong, "method": "tools/list"},
                        headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
                    )
                    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32600, (url, wrong, answer.text)

            got = await http.get(f"{server.url}/control/episodes/{ident}/record", headers=server.headers)
            assert got.status_code == 200, got.text
            finished = await http.post(f"{server.url}/control/episodes/{ident}/finish", json={}, headers=server.headers)
            assert finished.status_code == 200, finished.text
            done = finished.json()
            assert done["released"] is True and done["grade"] is not None and "record_error" not in done
            from servers.text import unescape_value

            record = Record.model_validate(done["record"])
            assert record.tool_calls[0].escaped and unescape_value(record.tool_calls[0].arguments)["to_account"] == "\udfff"
        saved = read_record(records / f"{ident}.jsonl", require_closed=True)  # the call is in the file too
        assert [c.error.code for c in saved.tool_calls if c.error] == ["invalid_text"]
        assert "Traceback" not in server.log(), server.log()
