"""Dispatch: every call is validated, runs atomically, and is recorded — whatever goes wrong."""

from __future__ import annotations

from servers import Episode
from servers.dispatch import MAX_ARGUMENT_BYTES, call_tool
from servers.text import unescape, unescape_value

PAY = {"from_account": "acc-001", "to_account": "acc-002", "amount": "1.25"}


def balances(episode: Episode) -> dict[str, int]:
    return {r["id"]: r["balance_minor"] for r in episode.world.query("SELECT id, balance_minor FROM accounts")}


async def test_successful_write_is_recorded_with_its_changes(toy_episode: Episode) -> None:
    before = balances(toy_episode)
    event = await call_tool(toy_episode, "transfer", PAY)
    assert event.ok and event.seq == 1
    assert event.result["amount"] == "1.25" and event.result["currency"] == "USD"
    after = balances(toy_episode)
    assert after["acc-001"] == before["acc-001"] - 125
    assert after["acc-002"] == before["acc-002"] + 125
    assert [(c.table, c.op, c.key) for c in event.changes] == [
        ("accounts", "update", ["acc-002"]),
        ("accounts", "update", ["acc-001"]),
        ("transfers", "insert", ["tr-0001"]),
    ]
    assert toy_episode.record.tool_calls == [event]
    assert event.arguments == PAY


async def test_refused_action_leaves_the_world_unchanged(toy_episode: Episode) -> None:
    start = toy_episode.world.hash()
    # The toy transfer credits the payee before it checks funds: the refusal must undo that write.
    event = await call_tool(toy_episode, "transfer", {**PAY, "amount": "9999999.00"})
    assert event.error is not None
    assert (event.error.error_class, event.error.code) == ("refused", "insufficient_funds")
    assert "acc-001 holds" in event.error.message
    assert event.changes == []
    assert toy_episode.world.hash() == start
    assert toy_episode.world.diff() == []


async def test_validation_failure_is_invalid_arguments(toy_episode: Episode) -> None:
    start = toy_episode.world.hash()
    cases = [
        ({"from_account": "acc-001", "to_account": "acc-002"}, "amount: Field required"),
        ({**PAY, "amount": 12.5}, 'amount must be a decimal string such as "12.50"; got the number 12.5'),
        ({**PAY, "amount": "-5"}, "amount: String should match pattern"),
        ({**PAY, "amount": "1.234"}, "amount: String should match pattern"),
        ({**PAY, "from_account": "ACC-1"}, "from_account: String should match pattern"),
        ({**PAY, "memo": "hi"}, "memo: unknown argument"),
    ]
    for arguments, message in cases:
        event = await call_tool(toy_episode, "transfer", arguments)
        assert event.error is not None and event.error.error_class == "invalid_arguments", arguments
        assert event.error.code == "invalid_arguments"
        assert message in event.error.message, (arguments, event.error.message)
    assert toy_episode.world.hash() == start
    assert [e.arguments for e in toy_episode.record.tool_calls] == [a for a, _ in cases]  # recorded as sent


async def test_payload_too_large(toy_episode: Episode) -> None:
    event = await call_tool(toy_episode, "submit_answer", {"text": "x" * (MAX_ARGUMENT_BYTES + 1)})
    assert event.error is not None
    assert (event.error.error_class, event.error.code) == ("invalid_arguments", "payload_too_large")
    assert str(MAX_ARGUMENT_BYTES) in event.error.message
    assert toy_episode.world.query("SELECT count(*) AS n FROM answers") == [{"n": 0}]


async def test_unknown_tool_lists_the_real_ones(toy_episode: Episode) -> None:
    event = await call_tool(toy_episode, "drop_tables", {})
    assert event.error is not None
    assert (event.error.error_class, event.error.code) == ("unknown_tool", "unknown_tool")
    assert "no tool named 'drop_tables'" in event.error.message and "transfer" in event.error.message
    assert toy_episode.record.tool_calls[-1].tool == "drop_tables"


async def test_crash_is_internal_never_the_agents_fault(faulty_episode: Episode) -> None:
    event = await call_tool(faulty_episode, "explode", {})
    assert event.error is not None
    assert (event.error.error_class, event.error.code) == ("internal", "internal_error")
    assert "RuntimeError: boom" in event.error.message


async def test_crash_after_a_write_rolls_the_write_back(faulty_episode: Episode) -> None:
    start = faulty_episode.world.hash()
    event = await call_tool(faulty_episode, "write_then_crash", {})
    assert event.error is not None and event.error.error_class == "internal"
    assert faulty_episode.world.hash() == start
    assert event.changes == []


async def test_read_only_tool_that_writes_is_internal(faulty_episode: Episode) -> None:
    before = faulty_episode.world.full_hash()
    event = await call_tool(faulty_episode, "sneaky_write", {})
    assert faulty_episode.world.full_hash() == before  # SQLite refused the write: nothing to roll back
    assert event.error is not None
    assert (event.error.error_class, event.error.code) == ("internal", "internal_error")
    assert "read-only tool 'sneaky_write' wrote to the world" in event.error.message


async def test_sequence_numbers_count_every_call(toy_episode: Episode) -> None:
    await call_tool(toy_episode, "list_accounts", {})
    await call_tool(toy_episode, "nope", {})
    await call_tool(toy_episode, "get_account", {"account_id": 7})
    event = await call_tool(toy_episode, "get_account", {"account_id": "acc-003"})
    assert [e.seq for e in toy_episode.record.tool_calls] == [1, 2, 3, 4]
    assert event.result["id"] == "acc-003"
    assert all(e.duration_ms >= 0 and e.started_ms >= 0 for e in toy_episode.record.tool_calls)


async def test_domain_error_from_a_read_tool(toy_episode: Episode) -> None:
    event = await call_tool(toy_episode, "get_account", {"account_id": "acc-999"})
    assert event.error is not None
    assert (event.error.error_class, event.error.code) == ("refused", "account_not_found")


async def test_a_lone_surrogate_is_refused_and_the_record_still_serialises(toy_episode: Episode) -> None:
    """"\\ud800" is valid in a JSON string, not in Unicode: storing or recording it used to raise (issue 17)."""
    start = toy_episode.world.hash()
    event = await call_tool(toy_episode, "submit_answer", {"text": "12\ud800.00", "x\udfff": ["\ud83d"]})
    assert event.error is not None and (event.error.error_class, event.error.code) == ("invalid_arguments", "invalid_text")
    # recorded as sent, escaped losslessly (issue 22: servers/text.py)
    assert event.escaped and event.arguments == {"text": "12\\ud800.00", "x\\udfff": ["\\ud83d"]}
    assert unescape_value(event.arguments) == {"text": "12\ud800.00", "x\udfff": ["\ud83d"]}
    unknown = await call_tool(toy_episode, "drop\ud800", {})
    assert unknown.error is not None and unknown.tool == "drop\\ud800" and unescape(unknown.tool) == "drop\ud800"
    assert toy_episode.world.hash() == start
    toy_episode.record.to_jsonl().encode("utf-8")  # raised UnicodeEncodeError before


async def test_an_integer_no_world_can_store_is_the_agents_error() -> None:
    """``"9" * 200`` validates as an int argument; SQLite refused it inside the tool, an internal error (issue 17)."""
    from servers.episodes import EpisodeManager
    from tests.graders.toy import environment

    manager = EpisodeManager(environment)
    try:
        episode = manager.create(task="balance_lookup", seed=0)
        for value in ("9" * 200, 2**63, 10**400):
            event = await call_tool(episode, "get_account", {"account_id": value})
            assert event.error is not None and event.error.error_class == "invalid_arguments", event.error
            assert "out of range" in event.error.message
        largest = await call_tool(episode, "get_account", {"account_id": 2**63 - 1})
        assert largest.error is not None and largest.error.error_class == "refused"  # in range: simply no such account
    finally:
        manager.close_all()
