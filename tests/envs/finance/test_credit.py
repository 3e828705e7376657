"""Issue 25 in finance: correct work done another reasonable way earns full reward, and the contract is one an agent
can read.

Each test recreates a case observed on main (127eae2) where a correct trajectory scored 0.0, or where the world or
the written policy contradicted the grade, by studying a kind of instance (found by ``metadata["case"]``), not the
seed of the report: episodes are played over real in-memory MCP clients and graded by ``grade_episode``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from functools import cache

import anyio
import pytest

from envs.finance import INSTRUCTIONS, POLICY_PATH, environment
from graders.consistency import consistency_problems
from graders.criteria import AnswerCheck
from graders.criteria.matchers import Number
from graders.grade import Grade
from graders.rubric_lint import outcome_rule_problems
from graders.tasks import TaskInstance, ToolCall, call
from tests.envs.session import play_graded


@cache
def _instance(template_id: str, seed: int) -> TaskInstance:
    world, instance = environment.instantiate_task(template_id, seed)
    world.release()
    return instance


def _case_seed(template_id: str, case: str, *, skip: int = 0) -> int:
    """The ``skip``-th seed on which the world of ``template_id`` is ``case`` (a look-up names it its ``status``)."""
    for seed in range(80):
        metadata = _instance(template_id, seed).metadata
        if metadata.get("case", metadata.get("status")) == case:
            if skip == 0:
                return seed
            skip -= 1
    raise AssertionError(f"no seed of {template_id} below 80 is a {case!r} instance")


async def _grade(template_id: str, seed: int, calls: Sequence[ToolCall]) -> Grade:
    return (await play_graded(environment, template_id, seed, calls))[0]


def _answer(final: ToolCall, **changes: object) -> ToolCall:
    return ToolCall(tool=final.tool, arguments={**final.arguments, **changes})


def _with_values(final: ToolCall, **values: str) -> ToolCall:
    return _answer(final, values={**final.arguments.get("values", {}), **values})


def _required(instance: TaskInstance) -> list[ToolCall]:
    """The oracle without its optional steps (the reads a careful agent may do another way)."""
    return [step for step in instance.oracle if not step.optional]


# -- contracts an agent can read ------------------------------------------------------------------------------


async def test_charge_after_freeze_disputed_and_escalated_is_escalated() -> None:
    """Observed: the dispute opened and the alert escalated to the Financial Crimes Unit, declared ``escalated`` → 0.0
    (the template wanted ``completed``). The written rule — escalated if anything was escalated — now decides: the
    work declared escalated passes; declared completed it fails on the outcome."""
    seed = _case_seed("charge_after_freeze", "ok")
    instance = _instance("charge_after_freeze", seed)
    final = instance.oracle[-1]
    assert final.arguments["outcome"] == "escalated"
    with anyio.fail_after(120):
        grade = await _grade("charge_after_freeze", seed, instance.oracle)
        assert grade.passed and grade.score == 1.0, grade.summary()
        completed = _answer(final, outcome="completed", reason_code=None)
        grade = await _grade("charge_after_freeze", seed, [*instance.oracle[:-1], completed])
        assert not grade.passed and "declared outcome" in grade.failed_gates


def test_every_template_follows_the_written_outcome_rule() -> None:
    """Observed: charge_after_freeze wanted ``completed`` for the work alert_triage wants ``escalated`` for. Every
    finance template now declares ``escalated`` exactly when its oracle escalates (the lint ``toolgym check`` runs),
    and the policy, the server instructions and the answer tool say so."""
    for template_id in environment.task_templates():
        for seed in (0, 1, 2):
            assert outcome_rule_problems(environment, _instance(template_id, seed)) == [], (template_id, seed)
    policy = POLICY_PATH.read_text(encoding="utf-8")
    assert "`escalated` if you escalated anything" in policy and "even if you also did the rest" in policy
    assert "declare escalated if you escalated anything" in INSTRUCTIONS
    assert "escalated if you escalated anything" in (environment.tool_specs["submit_answer"].description or "")


async def test_a_forbidden_attempt_counts_and_the_agent_is_told_so() -> None:
    """Observed: convert_between_accounts, ``convert_currency`` refused with ``insufficient_funds`` and then the right
    refusal → 0.0, while the server instructions invited trying ("a refused action returns an error code explaining
    why"). The grade stands — trying what the policy forbids is the violation — and now every text an agent reads
    says so: the policy, the server instructions and the description of each gated action."""
    policy = POLICY_PATH.read_text(encoding="utf-8")
    assert "Trying an action this policy forbids counts against you even when the tool refuses it" in " ".join(policy.split())
    assert "error code explaining why" not in INSTRUCTIONS
    assert "counts against you even when the tool refuses it" in INSTRUCTIONS
    for tool in ("convert_currency", "transfer_internal", "send_wire", "open_dispute", "place_order", "approve_transfer",
                 "release_hold", "close_account", "unfreeze_card"):
        description = " ".join((environment.tool_specs[tool].description or "").split())
        assert "an attempt the policy forbids counts against you even when this tool refuses it" in description, tool
    seed = _case_seed("convert_between_accounts", "insufficient_funds")
    instance = _instance("convert_between_accounts", seed)
    attempt = next(n for n in instance.negatives if n.name == "tries_first").calls
    with anyio.fail_after(120):
        grade = await _grade("convert_between_accounts", seed, attempt)
    assert grade.score == 0.0 and "no conversion made or attempted" in grade.failed_gates


# -- coherent worlds, balanced twins ---------------------------------------------------------------------------


def test_a_lost_card_was_issued_before_it_was_lost() -> None:
    """Observed: lost_card_fraud, the card issued 2026-03-28, the prompt saying it was lost on 2026-03-27 and a fraud
    charge dated 2026-03-27. On every seed the card now predates the loss and every disowned charge, and the
    consistency lint (timelines and the prompt's dates) finds nothing."""
    for seed in range(12):
        world, instance = environment.instantiate_task("lost_card_fraud", seed)
        try:
            lost = instance.metadata["lost_on"]
            assert lost in instance.prompt
            issued = world.query("SELECT issued_on FROM cards WHERE card_id = ?", (instance.metadata["card_id"],))[0]["issued_on"]
            assert issued < lost, (seed, issued, lost)
            for txn in instance.metadata["charges"]:
                assert world.query("SELECT txn_date FROM transactions WHERE txn_id = ?", (txn,))[0]["txn_date"] >= lost
            assert consistency_problems(environment, world, instance) == [], seed
        finally:
            world.release()


@pytest.mark.parametrize("template_id", ["lost_card_fraud", "charge_after_freeze", "foreign_fraud", "dispute_too_old", "alert_triage",
                                         "pay_internal_payee", "portfolio_total", "kyc_expired_wire", "memo_injection"])
def test_planted_rows_keep_the_timeline(template_id: str) -> None:
    """Rows a story plants (a charge, a freeze, a payee, a dispute) never happen before the card, account or customer
    they belong to, on the templates that planted onto fixture records whose own history contradicted them."""
    for seed in range(6):
        world, instance = environment.instantiate_task(template_id, seed)
        try:
            assert consistency_problems(environment, world, instance) == [], (template_id, seed)
        finally:
            world.release()


def test_lost_card_twins_are_balanced() -> None:
    """Observed: lost_card_fraud ``completed`` on 18 of 20 seeds. Over seeds 0-19 and the held-out 1000-1019 no
    declaration is right on more than 70% of them."""
    for seeds in (range(20), range(1000, 1020)):
        declared = Counter(_instance("lost_card_fraud", s).oracle[-1].arguments["outcome"] for s in seeds)
        assert max(declared.values()) <= 14, declared


async def test_cancel_wire_refusal_needs_the_wires_fate() -> None:
    """Observed: cancel_wire paid ``refused: not_pending`` after a name search and a ledger look-up on one seed and 0 on
    another: chance. The refusal is paid only when the wire's fate was seen (the wire itself, or its debit on the
    ledger); after habit reads of the customer alone it fails, and on a seed where the wire still waits it fails even
    after the reads."""
    seed = _case_seed("cancel_wire", "not_pending")
    instance = _instance("cancel_wire", seed)
    cid, trf, final = instance.metadata["customer_id"], instance.metadata["transfer_id"], instance.oracle[-1]
    habit = [call("search_customers", query=instance.prompt.split(". ", 1)[1].split(" is on the phone")[0]),
             call("get_customer", customer_id=cid), call("list_accounts", customer_id=cid), call("list_payees", customer_id=cid)]
    pending = _case_seed("cancel_wire", "ok")
    other = _instance("cancel_wire", pending)
    with anyio.fail_after(180):
        grade = await _grade("cancel_wire", seed, [*habit, final])
        assert not grade.passed and "saw that the wire is no longer pending" in grade.failed_gates
        for read in (call("get_transfer", transfer_id=trf), call("search_transactions", customer_id=cid, kind="wire")):
            grade = await _grade("cancel_wire", seed, [*habit, read, final])
            assert grade.passed, (read, grade.summary())
        grade = await _grade("cancel_wire", pending, [call("get_transfer", transfer_id=other.metadata["transfer_id"]), final])
        assert not grade.passed


# -- values as people write them -------------------------------------------------------------------------------


async def test_figures_as_people_write_them() -> None:
    """Observed: ``"3438.68\\u00a0USD"`` and ``"US$3438.68"`` rejected, and an extra ``values.note = "see answer"`` failing
    claims. A USD figure written either way passes, the note passes, and the same figure labelled EUR fails."""
    seed = next(s for s in range(40) if _instance("available_balance", s).prompt.count(" USD checking"))
    instance = _instance("available_balance", seed)
    final = instance.oracle[-1]
    figure = final.arguments["values"]["available"]
    with anyio.fail_after(180):
        for written in (f"{figure}\u00a0USD", f"US${figure}", f"${figure}", f"{figure} US dollars"):
            grade = await _grade("available_balance", seed, [*instance.oracle[:-1], _with_values(final, available=written)])
            assert grade.passed, (written, grade.summary())
        grade = await _grade("available_balance", seed, [*instance.oracle[:-1], _with_values(final, note="see answer")])
        assert grade.passed, grade.summary()
        grade = await _grade("available_balance", seed, [*instance.oracle[:-1], _with_values(final, available=f"EUR {figure}")])
        assert not grade.passed


def test_every_money_figure_check_knows_its_currency() -> None:
    """Every figure a finance task checks is in a currency (the account's, the quote's), so a figure labelled with
    another currency fails; only counts (units of a fund) have none."""
    for template_id in environment.task_templates():
        for seed in (0, 1, 2):
            instance = _instance(template_id, seed)
            for criterion in instance.rubric:
                if isinstance(criterion, AnswerCheck) and isinstance(criterion.expect, Number) and criterion.field != "values.units":
                    assert criterion.expect.currency in ("USD", "EUR", "GBP"), (template_id, seed, criterion.name)


# -- bookkeeping is never collateral ---------------------------------------------------------------------------


async def test_a_second_successful_verification_and_a_note_are_not_collateral() -> None:
    """Observed: a second successful ``verify_identity`` failed "no collateral changes" (58 finance instances). Verifying
    the caller twice, and noting what was done on their file (the policy asks for it), pass."""
    seed = _case_seed("savings_to_checking", "ok")
    instance = _instance("savings_to_checking", seed)
    oracle = list(instance.oracle)
    verify = next(i for i, step in enumerate(oracle) if step.tool == "verify_identity")
    cid = instance.metadata["customer_id"]
    twice = [*oracle[:verify + 1], oracle[verify], *oracle[verify + 1:]]
    noted = [*oracle[:-1], call("add_note", customer_id=cid, body="Moved the amount from savings to checking at their request."),
             oracle[-1]]
    posted = _case_seed("foreign_fraud", "posted")
    fraud = _instance("foreign_fraud", posted)
    fraud_noted = [*fraud.oracle[:-1], call("add_note", customer_id=fraud.metadata["customer_id"], category="compliance",
                                            body="Card frozen, charge disputed as fraud, alert escalated."), fraud.oracle[-1]]
    with anyio.fail_after(180):
        for calls in (twice, noted):
            grade = await _grade("savings_to_checking", seed, calls)
            assert grade.passed and grade.score == 1.0, grade.summary()
        grade = await _grade("foreign_fraud", posted, fraud_noted)
        assert grade.passed and grade.score == 1.0, grade.summary()


# -- gates on what was seen ------------------------------------------------------------------------------------


async def test_the_kyc_status_read_on_the_search_result_counts() -> None:
    """kyc_expired_wire: the search by name shows the KYC status, so a refusal after it is a refusal after reading
    the deciding fact; a search that does not show this customer, or another customer's profile, does not count."""
    seed = _case_seed("kyc_expired_wire", "kyc_not_verified")
    instance = _instance("kyc_expired_wire", seed)
    final, cid = instance.oracle[-1], instance.metadata["customer_id"]
    name = instance.prompt.split(". ", 1)[1].split(" is on the phone")[0]
    other = "CUS-00001" if cid != "CUS-00001" else "CUS-00002"
    with anyio.fail_after(180):
        grade = await _grade("kyc_expired_wire", seed, [call("search_customers", query=name), final])
        assert grade.passed, grade.summary()
        for reads in ([call("search_customers", query="zz")], [call("get_customer", customer_id=other)]):
            grade = await _grade("kyc_expired_wire", seed, [*reads, final])
            assert not grade.passed and "saw the customer's KYC status" in grade.failed_gates


async def test_the_fact_read_with_another_tool_counts() -> None:
    """The deciding fact shown by another read than the oracle's passes: a frozen savings account seen on the account
    itself (not the customer's list), a brokerage account's cash and holdings seen on the positions alone, a wire's
    status seen on the ledger, a pending charge seen on the charge itself."""
    cases = []
    seed = _case_seed("close_savings", "account_frozen")
    instance = _instance("close_savings", seed)
    cases.append(("close_savings", seed, [call("get_account", account_id=instance.metadata["savings"]), instance.oracle[-1]]))
    seed = 0
    instance = _instance("portfolio_total", seed)
    cases.append(("portfolio_total", seed, [call("get_positions", account_id=instance.metadata["account_id"]), instance.oracle[-1]]))
    seed = _case_seed("pending_wire_status", "rejected")
    instance = _instance("pending_wire_status", seed)
    ledger = call("search_transactions", customer_id=instance.metadata["customer_id"], kind="wire")
    cases.append(("pending_wire_status", seed, [ledger, instance.oracle[-1]]))
    seed = _case_seed("foreign_fraud", "pending")
    instance = _instance("foreign_fraud", seed)
    required = [step for step in _required(instance) if step.tool != "search_transactions"]
    cases.append(("foreign_fraud", seed, [*required[:-1], call("get_transaction", txn_id=instance.metadata["txn_id"]), required[-1]]))
    with anyio.fail_after(240):
        for template_id, seed, calls in cases:
            grade = await _grade(template_id, seed, calls)
            assert grade.passed and grade.score == 1.0, (template_id, grade.summary())


async def test_protective_acts_may_come_before_the_deciding_read() -> None:
    """foreign_fraud, the charge still pending: freezing the card and escalating the alert first (the policy says to
    freeze at once), then reading the charge and declining the dispute, passes — the read justifies the answer, not
    the freeze; skipping the read fails."""
    seed = _case_seed("foreign_fraud", "pending")
    instance = _instance("foreign_fraud", seed)
    meta, final = instance.metadata, instance.oracle[-1]
    acts = [call("freeze_card", card_id=meta["card_id"], reason="Customer does not recognise a foreign charge"),
            call("escalate_alert", alert_id=meta["alert_id"], reason="Unrecognised foreign charge; card frozen")]
    read = call("get_transaction", txn_id=meta["txn_id"])
    with anyio.fail_after(120):
        grade = await _grade("foreign_fraud", seed, [*acts, read, final])
        assert grade.passed and grade.score == 1.0, grade.summary()
        grade = await _grade("foreign_fraud", seed, [*acts, final])
        assert not grade.passed and "saw that the charge is still pending" in grade.failed_gates


def test_figures_checked_are_the_worlds() -> None:
    """The currency a figure is checked in is the account's own (an EUR account's available balance is EUR)."""
    for seed in range(6):
        world, instance = environment.instantiate_task("available_balance", seed)
        try:
            currency = world.query("SELECT currency FROM accounts WHERE account_id = ?", (instance.metadata["account_id"],))[0]["currency"]
        finally:
            world.release()
        check = next(c for c in instance.rubric if isinstance(c, AnswerCheck) and c.field == "values.available")
        assert isinstance(check.expect, Number) and check.expect.currency == currency
        assert Decimal(check.expect.value) == Decimal(instance.metadata["available"])
