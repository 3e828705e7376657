"""End-state assertions over the end world."""

from __future__ import annotations

import pytest

from fixtures.errors import GradingError
from graders.criteria import StateCheck, absent, number_range, state
from tests.graders.conftest import Evaluate, Run


async def test_state_check_passes_and_fails_with_the_value_as_evidence(run: Run, evaluate: Evaluate) -> None:
    done = await run("freeze_compromised", 2, "oracle")
    check = done.task.rubric[0]  # type: ignore[union-attr]
    assert isinstance(check, StateCheck)
    good = await evaluate(done, check)
    assert good.passed and good.score == 1.0
    assert good.evidence == f'SELECT status FROM accounts WHERE id = ? with [{check.params[0]}] → "frozen": = "frozen"'  # type: ignore[index]

    nothing = await run("freeze_compromised", 2)
    bad = await evaluate(nothing, check)
    assert not bad.passed and bad.score == 0.0
    assert bad.evidence.endswith('→ "active": expected "frozen", got "active"')


async def test_missing_row_all_rows_and_too_many_rows(run: Run, evaluate: Evaluate) -> None:
    done = await run("freeze_compromised", 0, "oracle")
    no_row = await evaluate(done, state("SELECT status FROM accounts WHERE id = ?", 99999, expect=absent()))
    assert no_row.passed and no_row.evidence.endswith("→ no row: absent")
    wanted_row = await evaluate(done, state("SELECT status FROM accounts WHERE id = ?", 99999, expect="frozen"))
    assert not wanted_row.passed and "→ no row: expected \"frozen\", got <missing>" in wanted_row.evidence
    frozen = await evaluate(done, StateCheck(sql="SELECT id FROM accounts WHERE status = 'frozen'", expect=[[done.task.oracle[0].arguments["account_id"]]], rows="all"))  # type: ignore[union-attr]
    assert frozen.passed
    many = await evaluate(done, state("SELECT id FROM accounts", expect=1))
    assert not many.passed and many.evidence.endswith("returned more than one row; expected one")
    total = await evaluate(done, state("SELECT sum(balance_minor) FROM accounts", expect=number_range(min="1")))
    assert total.passed


async def test_a_broken_query_is_a_grading_error_naming_the_criterion(run: Run, evaluate: Evaluate) -> None:
    done = await run("freeze_compromised", 0, "oracle")
    with pytest.raises(GradingError, match=r"criterion 'typo': the query failed on the end world: no such column: stauts"):
        await evaluate(done, state("SELECT stauts FROM accounts WHERE id = 1", expect=1, name="typo"))


async def test_a_query_that_tries_to_write_fails_and_changes_nothing(run: Run, evaluate: Evaluate) -> None:
    done = await run("freeze_compromised", 0, "oracle")
    before = done.world.hash()
    sneaky = StateCheck(sql="WITH x AS (SELECT 1) DELETE FROM accounts", expect=0, name="sneaky")
    with pytest.raises(GradingError, match=r"criterion 'sneaky': the query failed on the end world: not authorized \(criteria only read the end world; refused: DELETE accounts\)"):
        await evaluate(done, sneaky)
    assert done.world.hash() == before
    done.world.execute("UPDATE accounts SET status = status WHERE id = 1")  # the world is writable again afterwards


def test_state_checks_must_be_queries() -> None:
    with pytest.raises(ValueError, match="a state check must be a single SELECT"):
        StateCheck(sql="UPDATE accounts SET status = 'x'", expect=1)
