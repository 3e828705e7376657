"""Declared outcomes: what a task expects its final answer to declare, and the exact check of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from envs.finance import environment as finance
from envs.finance.rules import OUTCOMES, REASON_CODES
from graders.criteria.outcome import DeclaredOutcome
from graders.outcome import ExpectedOutcome, completed, escalated, refused
from tests.graders.finance_runs import FinanceRun, answer_with, finance_runner, graded, instance, result, work_and_answer
from tests.graders.toy import environment as toy


@pytest.fixture
def run() -> Iterator[FinanceRun]:
    with finance_runner() as go:
        yield go


def test_a_refusal_needs_its_codes_and_completion_takes_none() -> None:
    with pytest.raises(ValidationError, match="outcome 'refused' needs the reason code"):
        refused()
    with pytest.raises(ValidationError, match="outcome 'escalated' needs the reason code"):
        ExpectedOutcome(outcome="escalated")
    with pytest.raises(ValidationError, match="a completed outcome takes no reason code"):
        ExpectedOutcome(outcome="completed", reason_codes=["same_approver"])
    with pytest.raises(ValidationError):
        ExpectedOutcome(outcome="")
    assert completed() == ExpectedOutcome(outcome="completed") and completed().describe() == "completed"
    assert refused("same_approver", "approval_limit_exceeded").describe() == "refused (same_approver | approval_limit_exceeded)"
    assert escalated("escalation_required").reason_codes == ["escalation_required"]


def test_outcomes_and_reason_codes_are_read_from_the_answer_tool_schema() -> None:
    assert finance.outcomes == OUTCOMES == ("completed", "refused", "escalated")
    assert finance.reason_codes == REASON_CODES and "same_approver" in finance.reason_codes
    schema = finance.tool_specs["submit_answer"].input_schema
    assert tuple(schema["properties"]["outcome"]["enum"]) == finance.outcomes
    assert toy.outcomes == () and toy.reason_codes == ()
    assert toy.answer_choices("amount") == ()


def test_an_expected_outcome_is_linted_against_the_answer_tool() -> None:
    assert refused("same_approver").lint(finance) == []
    assert completed().lint(finance) == []
    assert ExpectedOutcome(outcome="postponed", reason_codes=["same_approver"]).lint(finance) == [
        "outcome 'postponed' is not one of the answer tool's outcomes (completed, refused, escalated)"
    ]
    assert refused("same_approver", "too_busy", "no_mood").lint(finance) == [
        "reason code(s) too_busy, no_mood are not among the answer tool's reason codes"
    ]
    assert completed().lint(toy) == ["the task declares an outcome, but the answer tool of 'grader-toy' has no 'outcome' choices"]
    assert DeclaredOutcome(outcome="completed").lint(finance) == []
    assert DeclaredOutcome(outcome="refused", reason_codes=["x"]).lint(toy) == [
        "the answer tool 'submit_answer' has no 'outcome' argument to declare an outcome with",
        "the answer tool 'submit_answer' has no 'reason_code' argument",
    ]


async def test_declared_outcome_is_checked_exactly(run: FinanceRun) -> None:
    """four_eyes must be refused under same_approver: no answer, completion, another code all fail."""
    task = instance("four_eyes")
    assert task.outcome == refused("same_approver")
    work, final = work_and_answer(task)

    silent = result(await graded(await run("four_eyes", work)), "declared outcome")
    assert not silent.passed and silent.gate
    assert silent.evidence == "no successful call of submit_answer: nothing was declared"

    claim = answer_with(final, outcome="completed", reason_code=None)
    lie = result(await graded(await run("four_eyes", [*work, claim])), "declared outcome")
    assert not lie.passed
    assert lie.evidence.endswith("declared outcome \"completed\", the task's outcome is 'refused'")

    other_code = answer_with(final, reason_code="approval_limit_exceeded")
    wrong_code = result(await graded(await run("four_eyes", [*work, other_code])), "declared outcome")
    assert not wrong_code.passed
    assert wrong_code.evidence.endswith("reason code \"approval_limit_exceeded\" does not justify it (expected 'same_approver')")

    grade = await graded(await run("four_eyes", task.oracle))
    right = result(grade, "declared outcome")
    assert right.passed and right.evidence.endswith("declared 'refused' with reason 'same_approver'")
    assert grade.passed and grade.score == 1.0


async def test_the_last_successful_answer_is_the_one_that_counts(run: FinanceRun) -> None:
    task = instance("four_eyes")
    work, final = work_and_answer(task)
    claim = answer_with(final, outcome="completed", reason_code=None)
    invalid = answer_with(final, outcome="postponed")  # refused by the schema: a failed call declares nothing

    corrected = await run("four_eyes", [*work, claim, final])
    assert result(await graded(corrected), "declared outcome").passed
    after_failure = await run("four_eyes", [*work, final, invalid])
    assert after_failure.record.tool_calls[-1].error is not None
    assert result(await graded(after_failure), "declared outcome").evidence.startswith("#2 submit_answer(")
    assert result(await graded(after_failure), "declared outcome").passed
    recanted = result(await graded(await run("four_eyes", [*work, final, claim])), "declared outcome")
    assert not recanted.passed and recanted.evidence.startswith("#3 submit_answer(")


async def test_completion_without_codes_is_accepted_with_or_without_one(run: FinanceRun) -> None:
    """A completed task lists no codes, so the declared outcome checks the outcome only."""
    task = instance("available_balance")
    assert task.outcome == completed()
    work, final = work_and_answer(task)
    episode = await run("available_balance", [*work, answer_with(final, reason_code="not_found")])
    checked = result(await graded(episode), "declared outcome")
    assert checked.passed and checked.evidence.endswith("declared 'completed'")
