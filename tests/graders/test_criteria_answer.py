"""Answer checks on the answer tool's arguments."""

from __future__ import annotations

from graders.criteria import AnswerCheck, facts, number, text
from graders.tasks import call
from tests.graders.conftest import Evaluate, Run


async def test_answer_number_passes_and_fails_with_evidence(run: Run, evaluate: Evaluate) -> None:
    done = await run("balance_lookup", 0, "oracle")
    expected = done.task.oracle[-1].arguments["amount"]  # type: ignore[union-attr]
    good = await evaluate(done, AnswerCheck(field="amount", expect=number(expected)))
    assert good.passed and good.evidence.endswith(f"→ ok: amount {expected} = {expected}")
    assert good.evidence.startswith("#3 submit_answer(")

    wrong = await run("balance_lookup", 0, [call("submit_answer", answer="about 12", amount="12.00")])
    bad = await evaluate(wrong, AnswerCheck(field="amount", expect=number(expected)))
    assert not bad.passed
    assert bad.evidence.endswith(f'amount = "12.00": expected {expected}, got 12.00 (off by {abs(float(expected) - 12):.2f})')


async def test_the_last_answer_counts_unless_any_is_asked(run: Run, evaluate: Evaluate) -> None:
    done = await run("balance_lookup", 0, [call("submit_answer", answer="Acme Corp"), call("submit_answer", answer="Beta LLC")])
    check = AnswerCheck(field="answer", expect=text("acme   CORP"))
    assert not (await evaluate(done, check)).passed
    lenient = await evaluate(done, check.model_copy(update={"use": "any"}))
    assert lenient.passed and lenient.evidence.startswith("#1 submit_answer(")


async def test_no_answer_and_failed_answers(run: Run, evaluate: Evaluate) -> None:
    silent = await run("balance_lookup", 0)
    check = AnswerCheck(field="answer", expect=facts(all_of=["x"]))
    result = await evaluate(silent, check)
    assert not result.passed and result.evidence == "no successful call of submit_answer: the agent gave no answer"
    failed = await run("balance_lookup", 0, [call("submit_answer", answer="")])
    result = await evaluate(failed, check)
    assert result.evidence == "no successful call of submit_answer: the agent gave no answer (1 failed attempt(s))"


async def test_facts_in_free_text(run: Run, evaluate: Evaluate) -> None:
    done = await run("explain_duplicate", 0, "oracle")
    good = await evaluate(done, AnswerCheck(field="answer", expect=facts(all_of=["TR-D001", "tr-d002"], any_of=["duplicate", "twice"])))
    assert good.passed and good.evidence.endswith("answer mentions 'TR-D001', 'tr-d002', 'duplicate'")
    bad = await evaluate(done, AnswerCheck(field="answer", expect=facts(all_of=["tr-d003"])))
    assert not bad.passed and "missing 'tr-d003' in" in bad.evidence


async def test_an_enumerated_value_ignores_letter_case_and_spaces_an_identifier_does_not(run: Run, evaluate: Evaluate) -> None:
    """``PENDING_APPROVAL`` is the status ``pending_approval``; ``tck-01028`` is not the ticket ``TCK-01028`` (issue 17)."""
    for given, status_ok in [("pending_approval", True), ("PENDING_APPROVAL", True), (" Pending_Approval\n", True),
                             ("pending approval", False), ("pending_approval or rejected", False), ("PENDİNG_APPROVAL", False)]:
        done = await run("balance_lookup", 0, [call("submit_answer", answer=given)])
        status = await evaluate(done, AnswerCheck(field="answer", expect="pending_approval"))
        assert status.passed is status_ok, (given, status.evidence)
    for given, id_ok in [("TCK-01028", True), (" TCK-01028 ", True), ("tck-01028", False), ("TCK-1028", False)]:
        done = await run("balance_lookup", 0, [call("submit_answer", answer=given)])
        ticket = await evaluate(done, AnswerCheck(field="answer", expect="TCK-01028"))
        assert ticket.passed is id_ok, (given, ticket.evidence)
    done = await run("balance_lookup", 0, [call("submit_answer", answer="ACME CORP")])
    assert not (await evaluate(done, AnswerCheck(field="answer", expect="Acme Corp"))).passed  # a name is no enumeration


async def test_a_figure_in_another_currency_than_the_one_asked_fails(run: Run, evaluate: Evaluate) -> None:
    """The oracle answers "Your savings balance is X USD": USD is asked, so "X JPY" is not the balance (issue 17)."""
    done = await run("balance_lookup", 0, "oracle")
    balance = done.task.oracle[-1].arguments["amount"]  # type: ignore[union-attr]
    whole, cents = balance.split(".")
    grouped = f"{int(whole):,}.{cents}"
    check = AnswerCheck(field="amount", expect=number(balance))
    for given, ok in [(balance, True), (f"{balance} USD", True), (f"${grouped}", True), (f"USD {grouped}", True),
                      (f"{balance} JPY", False), (f"€{balance}", False), (f"{whole[:1]},{whole[1:]}.{cents}", len(whole) == 4),
                      ("1e999999999", False), ("NaN", False)]:
        answered = await run("balance_lookup", 0, [*done.task.oracle[:-1], call("submit_answer", answer="x", amount=given)])  # type: ignore[union-attr]
        result = await evaluate(answered, check)
        assert result.passed is ok, (given, result.evidence)
    wrong = await run("balance_lookup", 0, [call("submit_answer", answer="x", amount=f"{balance} JPY")])
    evidence = (await evaluate(wrong, check)).evidence
    assert evidence.endswith("(it is in JPY, the task asks for USD)"), evidence
