"""The server stays consistent under faults: a stream of hostile calls, with the record's disk filling up
half-way, and for every answered call the world, the in-memory record and the record file agree."""

from __future__ import annotations

import json
import random
from typing import Any

import anyio
import httpx

from servers.record import Record
from tests.faults.conftest import Disk
from tests.faults.processes import http_server, tool_call
from tests.faults.test_record_disk import replayed_hash, whole_lines

ACCOUNTS = ["acc-001", "acc-002", "acc-003", "acc-004", "acc-005", "acc-999"]


def hostile_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One call a careless or hostile agent might make: valid, refused, malformed or unstorable."""
    kind = rng.choice(["pay", "pay", "pay", "read", "surrogate", "huge_int", "extra", "wrong_type", "unknown", "too_big", "deep"])
    pay = {"from_account": rng.choice(ACCOUNTS), "to_account": rng.choice(ACCOUNTS), "amount": f"{rng.randint(1, 500)}.{rng.randint(0, 99):02d}"}
    if kind == "pay":
        return "transfer", pay
    if kind == "read":
        return "get_account", {"account_id": rng.choice(ACCOUNTS)}
    if kind == "surrogate":
        return "transfer", {**pay, "amount": "1\ud800.00"}
    if kind == "huge_int":
        return "get_account", {"account_id": 10**30}
    if kind == "extra":
        return "transfer", {**pay, "memo\udfff": "x"}
    if kind == "wrong_type":
        return "transfer", {**pay, "amount": [1, {"a": None}]}
    if kind == "unknown":
        return "wire_everything", pay
    if kind == "too_big":
        return "submit_answer", {"text": "x" * 70_000}
    nested: Any = "deep"
    for _ in range(200):
        nested = [nested]
    return "submit_answer", {"text": nested}


async def test_world_and_record_agree_for_every_answered_call(small_disk: Disk) -> None:
    rng = random.Random(22)
    records = small_disk.path / "records"
    async with http_server("--record-dir", str(records)) as server, httpx.AsyncClient(timeout=30) as http:
        with anyio.fail_after(90):
            episode = (await server.create(http)).json()["id"]
            answers: list[dict[str, Any]] = []
            for ident in range(1, 81):
                if ident == 41:
                    small_disk.fill()
                name, arguments = hostile_call(rng)
                response = await server.call(http, episode, tool_call(ident, name, arguments, modern=True))
                answer = response.json()
                assert answer.get("id") == ident, answer  # every request answered, as itself
                answers.append(answer)
            finished = (await http.post(f"{server.url}/control/episodes/{episode}/finish", json={}, headers=server.headers)).json()
        assert "Traceback" not in server.log(), server.log()
    record = Record.model_validate(finished["record"])
    called = [a for a in answers if "result" in a]  # answered as tool results: each is one recorded call
    refused = [a for a in answers if "error" in a]  # answered as JSON-RPC errors: the record could not hold them
    assert called and refused and all(a["error"]["code"] == -32006 for a in refused)
    assert len(record.tool_calls) == len(called)
    for answer, event in zip(called, record.tool_calls):
        assert answer["result"]["isError"] == (event.error is not None)
        if event.error is None and event.tool == "transfer":
            assert answer["result"]["structuredContent"]["id"] == event.result["id"]
    lines = whole_lines(records / f"{episode}.jsonl")
    in_file = [line for line in lines if line["type"] == "tool_call"]
    assert in_file == [json.loads(e.model_dump_json()) for e in record.tool_calls]
    assert record.closed is not None and replayed_hash(lines) == record.closed.end_hash
