"""Change-set match against the oracle (content matching, ignorable columns) and no-collateral-damage."""

from __future__ import annotations

from graders.criteria import ChangeSetMatch, NoCollateral, allow
from graders.tasks import ToolCall, call
from servers.episodes import Episode
from tests.graders.conftest import Evaluate, Run


def _oracle(episode: Episode) -> list[ToolCall]:
    assert episode.task is not None
    return episode.task.oracle


async def test_change_set_matches_the_oracle(run: Run, evaluate: Evaluate) -> None:
    done = await run("transfer_funds", 1, "oracle")
    result = await evaluate(done, ChangeSetMatch(ignore_columns={"transfers": ["id"]}))
    assert result.passed and result.score == 1.0
    assert result.evidence.startswith("all 3 expected changes made: update accounts[")
    assert "insert transfers[tr-e0002]" in result.evidence


async def test_generated_ids_do_not_matter_when_ignored(run: Run, evaluate: Evaluate) -> None:
    probe = await run("transfer_funds", 1)
    verify, wire = _oracle(probe)
    # two lookups first: the transfer becomes call #4, so its generated id is tr-e0004, not the oracle's tr-e0002
    looked = [call("get_account", account_id=wire.arguments["from_account"]), call("get_account", account_id=wire.arguments["to_account"])]
    done = await run("transfer_funds", 1, [*looked, verify, wire])
    assert done.world.query("SELECT id FROM transfers WHERE id LIKE 'tr-e%'") == [{"id": "tr-e0004"}]

    lenient = await evaluate(done, ChangeSetMatch(ignore_columns={"transfers": ["id"]}))
    assert lenient.passed, lenient.evidence

    strict = await evaluate(done, ChangeSetMatch())
    assert not strict.passed and strict.score == 0.5
    assert strict.evidence.startswith("2 of 3 expected changes made | missing (1): insert transfers[tr-e0002] {")
    assert "| unexpected (1): insert transfers[tr-e0004] {" in strict.evidence


async def test_wrong_amount_lists_missing_and_unexpected_rows(run: Run, evaluate: Evaluate) -> None:
    probe = await run("transfer_funds", 2)
    verify, wire = _oracle(probe)
    done = await run("transfer_funds", 2, [verify, call("transfer", **{**wire.arguments, "amount": "1.00"})])
    result = await evaluate(done, ChangeSetMatch(ignore_columns={"transfers": ["id"]}))
    assert not result.passed and result.score == 0.0
    assert result.evidence.startswith("0 of 3 expected changes made | missing (3): update accounts[")
    assert "unexpected (3):" in result.evidence and "amount_minor=100" in result.evidence


async def test_scope_and_ignorable_only_updates(run: Run, evaluate: Evaluate) -> None:
    probe = await run("transfer_funds", 3)
    verify, wire = _oracle(probe)
    # the right transfer with a different memo: only the transfers row differs, and only in an ignorable column
    done = await run("transfer_funds", 3, [verify, call("transfer", **{**wire.arguments, "memo": "other"})])
    assert not (await evaluate(done, ChangeSetMatch(ignore_columns={"transfers": ["id"]}))).passed
    assert (await evaluate(done, ChangeSetMatch(ignore_columns={"transfers": ["id", "memo"]}))).passed
    only_accounts = await evaluate(done, ChangeSetMatch(tables=["accounts"]))
    assert only_accounts.passed and only_accounts.evidence.startswith("all 2 expected changes made")
    assert (await evaluate(done, ChangeSetMatch(ignore_tables=["transfers"]))).passed
    assert only_accounts.name == "change set matches the oracle in accounts"


async def test_noop_against_an_empty_expectation(run: Run, evaluate: Evaluate) -> None:
    done = await run("balance_lookup", 0, "oracle")
    result = await evaluate(done, ChangeSetMatch())
    assert result.passed and result.evidence == "no change expected and none made"


async def test_no_collateral_passes_and_reports_each_bad_row(run: Run, evaluate: Evaluate) -> None:
    done = await run("transfer_funds", 4, "oracle")
    good = await evaluate(done, NoCollateral())
    assert good.passed and good.evidence == "all 3 changed rows are allowed"

    probe = await run("transfer_funds", 4)
    verify, wire = _oracle(probe)
    src = wire.arguments["from_account"]
    bad_run = await run(
        "transfer_funds",
        4,
        [verify, wire, call("freeze_account", account_id=src, reason="x"), call("freeze_account", account_id=1 if src != 1 else 3, reason="y")],
    )
    bad = await evaluate(bad_run, NoCollateral())
    assert not bad.passed and bad.score == 0.0
    assert bad.evidence.startswith("2 of 4 changed rows were not allowed: update accounts[")
    assert 'status: "active" → "frozen"' in bad.evidence
    assert bad.evidence.count("update accounts[") == 2

    extra = NoCollateral(also_allowed=[allow("accounts", ops=["update"], columns=["status", "balance_minor"])])
    assert (await evaluate(bad_run, extra)).passed


async def test_allowed_inserts_are_matched_by_content(run: Run, evaluate: Evaluate) -> None:
    probe = await run("transfer_funds", 5)
    verify, wire = _oracle(probe)
    dst = wire.arguments["to_account"]
    # money moved the other way: same tables, but the insert's from_account is not the allowed one
    reverse = call("transfer", from_account=dst, to_account=wire.arguments["from_account"], amount="1.00")
    done = await run("transfer_funds", 5, [verify, reverse])
    result = await evaluate(done, NoCollateral())
    assert not result.passed
    assert "insert transfers[tr-e0002] {amount_minor=100, created_at=" in result.evidence
    assert f"from_account={dst}" in result.evidence


async def test_nothing_changed(run: Run, evaluate: Evaluate) -> None:
    done = await run("freeze_compromised", 0)
    result = await evaluate(done, NoCollateral())
    assert result.passed and result.evidence == "no rows changed"
