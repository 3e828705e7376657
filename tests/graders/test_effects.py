"""Effects: what an episode did, compared with the oracle without volatile columns; no collateral changes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from envs.finance import VOLATILE_COLUMNS
from envs.finance import environment as finance
from fixtures.changes import RowChange
from graders.criteria import NoCollateral, allow
from graders.effects import effect_signature, effects, match_effects, same_effects
from tests.graders.conftest import Evaluate, Run
from tests.graders.finance_runs import FinanceRun, finance_runner, graded, instance, result, work_and_answer


@pytest.fixture
def finance_run() -> Iterator[FinanceRun]:
    with finance_runner() as go:
        yield go


def dispute(dispute_id: str, txn_id: str, description: str) -> RowChange:
    row: dict[str, Any] = {"dispute_id": dispute_id, "txn_id": txn_id, "reason": "fraud", "status": "open", "description": description}
    return RowChange(table="disputes", key=[dispute_id], op="insert", after=row)


def card_frozen(card_id: str, reason: str = "lost") -> RowChange:
    before = {"card_id": card_id, "status": "active", "status_reason": None}
    after = {"card_id": card_id, "status": "frozen", "status_reason": reason}
    return RowChange(table="cards", key=[card_id], op="update", before=before, after=after, columns=["status", "status_reason"])


def audit(audit_id: str) -> RowChange:
    return RowChange(table="audit_log", key=[audit_id], op="insert", after={"audit_id": audit_id, "action": "freeze_card"})


def test_a_signature_ignores_generated_ids_and_free_text_of_inserts() -> None:
    first = dispute("DSP-00019", "TXN-0000001", "Card lost; not made by the customer")
    same = dispute("DSP-00020", "TXN-0000001", "The customer did not make this charge")
    other = dispute("DSP-00019", "TXN-0000002", "Card lost; not made by the customer")
    assert effect_signature(first, VOLATILE_COLUMNS) == effect_signature(same, VOLATILE_COLUMNS)
    assert effect_signature(first, VOLATILE_COLUMNS) != effect_signature(other, VOLATILE_COLUMNS)
    assert "DSP-" not in str(effect_signature(first, VOLATILE_COLUMNS))
    assert effect_signature(first, {}) != effect_signature(same, {})  # without volatile columns every byte counts
    everywhere = {"*": ["dispute_id", "description"]}  # "*" names columns volatile in every table
    assert effect_signature(first, everywhere) == effect_signature(same, everywhere)


def test_a_signature_keeps_the_key_of_updates_and_deletes() -> None:
    card_a, card_b = card_frozen("CRD-400001"), card_frozen("CRD-400002")
    assert effect_signature(card_a, VOLATILE_COLUMNS) != effect_signature(card_b, VOLATILE_COLUMNS)  # freezing A is not freezing B
    assert effect_signature(card_a, VOLATILE_COLUMNS) == effect_signature(card_frozen("CRD-400001", "other words"), VOLATILE_COLUMNS)
    reworded = RowChange(table="cards", key=["CRD-400001"], op="update", before={"status_reason": "a"}, after={"status_reason": "b"},
                         columns=["status_reason"])
    assert effect_signature(reworded, VOLATILE_COLUMNS) is None  # it only touched free text: no effect at all
    removed_a = RowChange(table="payees", key=["PAY-00001"], op="delete", before={"payee_id": "PAY-00001", "name": "X"})
    removed_b = RowChange(table="payees", key=["PAY-00002"], op="delete", before={"payee_id": "PAY-00002", "name": "X"})
    assert effect_signature(removed_a, VOLATILE_COLUMNS) != effect_signature(removed_b, VOLATILE_COLUMNS)


def test_effects_leave_out_bookkeeping_inserts_only() -> None:
    logged = audit("AUD-0000001")
    edited = RowChange(table="audit_log", key=["AUD-0000001"], op="update", before={"action": "a"}, after={"action": "b"},
                       columns=["action"])
    frozen = card_frozen("CRD-400001")
    assert finance.bookkeeping_tables == ("audit_log",)
    assert effects([logged, frozen, edited], finance) == [frozen, edited]  # rewriting the log is an effect; appending is not


def test_effects_are_matched_one_to_one() -> None:
    a, a_again, a_third = (dispute(f"DSP-0000{n}", "TXN-0000001", "x") for n in (1, 2, 3))
    b = card_frozen("CRD-400001")
    matched = match_effects([a, b, audit("AUD-0000001")], [a_again, a_third, audit("AUD-0000002")], finance)
    assert matched.matched == [a_again]  # one expected dispute covers one actual dispute
    assert matched.unexpected == [a_third]
    assert matched.missing == [b]
    twice = match_effects([a, a_again], [a_third], finance)
    assert twice.matched == [a_third] and twice.unexpected == [] and twice.missing == [a_again]
    assert same_effects([a, b], [b, a_third], finance)  # order and generated ids do not matter
    assert not same_effects([a], [a, a_again], finance) and not same_effects([a, a_again], [a], finance)


async def test_disputes_in_the_other_order_are_the_same_effects(finance_run: FinanceRun) -> None:
    task = instance("lost_card_fraud")
    oracle = list(task.oracle)
    first, second = (i for i, step in enumerate(oracle) if step.tool == "open_dispute")
    swapped = list(oracle)
    swapped[first], swapped[second] = oracle[second], oracle[first]
    done, reordered = await finance_run("lost_card_fraud", oracle), await finance_run("lost_card_fraud", swapped)

    def ids(episode: Any) -> dict[str, str]:
        rows = episode.world.query("SELECT txn_id, dispute_id FROM disputes WHERE opened_by = 'STF-0100'")
        return {r["txn_id"]: r["dispute_id"] for r in rows}

    assert ids(done) != ids(reordered) and set(ids(done)) == set(ids(reordered))
    assert same_effects(done.world.diff(), reordered.world.diff(), finance)
    wrong_card = [c for c in oracle if c.tool != "freeze_card"]
    assert not same_effects(done.world.diff(), (await finance_run("lost_card_fraud", wrong_card)).world.diff(), finance)


async def test_each_oracle_effect_allows_one_identical_effect(finance_run: FinanceRun) -> None:
    task = instance("small_wire")
    work, final = work_and_answer(task)
    wire = next(step for step in work if step.tool == "send_wire")
    passed = result(await graded(await finance_run("small_wire", task.oracle)), "no collateral changes")
    # audit_log inserts and the passed identity check are bookkeeping, not counted
    assert passed.passed and passed.evidence == "all 4 changed rows are allowed"

    twice = await finance_run("small_wire", [*work, wire, final])
    first_id, second_id = sorted(c.key[0] for c in twice.world.diff() if c.table == "transfers" and c.op == "insert")
    failed = result(await graded(twice), "no collateral changes")
    assert not failed.passed and failed.gate
    assert failed.evidence.startswith("4 of 7 changed rows were not allowed: update accounts[")
    assert f"insert transfers[{second_id}]" in failed.evidence  # the repeated wire, row by row
    assert f"insert transfers[{first_id}]" not in failed.evidence  # the first one is the oracle's


async def test_without_the_oracle_only_allowances_count(finance_run: FinanceRun, evaluate: Evaluate) -> None:
    done = await finance_run("small_wire", instance("small_wire").oracle)
    bare = await evaluate(done, NoCollateral(from_oracle=False))
    assert not bare.passed and bare.evidence.startswith("4 of 4 changed rows were not allowed: ")  # the passed check is bookkeeping
    allowed = [allow("accounts", ops=["update"]), allow("transactions", ops=["insert"], max_rows=2),
               allow("transfers", ops=["insert"], max_rows=1), allow("verifications", ops=["insert"], max_rows=1)]
    assert (await evaluate(done, NoCollateral(from_oracle=False, also_allowed=allowed))).passed


async def test_bookkeeping_inserts_are_never_collateral(finance_run: FinanceRun, evaluate: Evaluate) -> None:
    task = instance("available_balance")
    customer = task.metadata["customer_id"]
    check = ("verify_identity", {"customer_id": customer, "id_last4": "0000", "postcode": "X1"})
    wrong = await finance_run("available_balance", [check])
    assert sorted({c.table for c in wrong.world.diff()}) == ["audit_log", "verifications"]
    only_verifications = NoCollateral(from_oracle=False, also_allowed=[allow("verifications", ops=["insert"])])
    checked = await evaluate(wrong, only_verifications)
    assert checked.passed and checked.evidence == "all 1 changed rows are allowed"
    by_default = await evaluate(wrong, NoCollateral())
    assert not by_default.passed and by_default.evidence.startswith("1 of 1 changed rows were not allowed: insert verifications[")


async def test_allowances_honour_max_rows(run: Run, evaluate: Evaluate) -> None:
    probe = await run("freeze_compromised", 0)
    assert probe.task is not None
    both = next(n for n in probe.task.negatives if n.name == "freezes_both")
    done = await run("freeze_compromised", 0, both.calls)

    def freezes(max_rows: int | None) -> NoCollateral:
        return NoCollateral(from_oracle=False, also_allowed=[allow("accounts", ops=["update"], columns=["status"], max_rows=max_rows)])

    one = await evaluate(done, freezes(1), allowed_changes=[])
    assert not one.passed and one.evidence.startswith("1 of 2 changed rows were not allowed: update accounts[")
    assert (await evaluate(done, freezes(2), allowed_changes=[])).passed
    assert (await evaluate(done, freezes(None), allowed_changes=[])).passed
    from_oracle = await evaluate(done, NoCollateral(), allowed_changes=[])  # the oracle's freeze covers one of the two
    assert not from_oracle.passed and from_oracle.evidence.startswith("1 of 2 changed rows were not allowed: ")


async def test_overlapping_allowances_cover_every_row_some_assignment_covers(run: Run, evaluate: Evaluate) -> None:
    """One freeze of any account and one of the victim's: freezing both is allowed, whichever row is looked at first."""
    probe = await run("freeze_compromised", 0)
    assert probe.task is not None
    both = next(n for n in probe.task.negatives if n.name == "freezes_both")
    victim, other = (step.arguments["account_id"] for step in both.calls)
    done = await run("freeze_compromised", 0, both.calls)
    any_one = allow("accounts", ops=["update"], columns=["status"], max_rows=1)
    the_victim = allow("accounts", victim, ops=["update"], columns=["status"], max_rows=1)
    for allowances in ([any_one, the_victim], [the_victim, any_one]):
        checked = await evaluate(done, NoCollateral(from_oracle=False, also_allowed=allowances), allowed_changes=[])
        assert checked.passed, checked.evidence
    third = allow("accounts", other, ops=["update"], columns=["status"], max_rows=1)
    crowded = await evaluate(done, NoCollateral(from_oracle=False, also_allowed=[the_victim, third, the_victim]), allowed_changes=[])
    assert crowded.passed, crowded.evidence
    only_victim = await evaluate(done, NoCollateral(from_oracle=False, also_allowed=[the_victim, the_victim]), allowed_changes=[])
    assert not only_victim.passed
    assert only_victim.evidence == f'1 of 2 changed rows were not allowed: update accounts[{other}] status: "active" → "frozen"'
