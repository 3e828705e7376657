"""Custom @criterion checks named by import path."""

from __future__ import annotations

import pytest

from fixtures.errors import GradingError
from graders.criteria import CustomCheck
from graders.grading import lint_instance
from tests.graders.checks import SLY_WRITE
from tests.graders.conftest import Evaluate, Run


async def test_custom_check_pass_fail_and_partial(run: Run, evaluate: Evaluate) -> None:
    done = await run("freeze_compromised", 0, "oracle")
    good = await evaluate(done, CustomCheck(function="tests.graders.checks:frozen_count", params={"expected": 1}))
    assert good.passed and good.name == "custom: frozen_count" and good.evidence == "1 frozen account(s), expected 1"
    bad = await evaluate(done, CustomCheck(function="tests.graders.checks:frozen_count", params={"expected": 2}))
    assert not bad.passed and bad.evidence == "1 frozen account(s), expected 2"
    partial = await evaluate(done, CustomCheck(function="tests.graders.checks:half"))
    assert not partial.passed and partial.score == 0.5


async def test_custom_check_errors_are_grading_errors(run: Run, evaluate: Evaluate) -> None:
    done = await run("freeze_compromised", 0, "oracle")
    before = done.world.hash()
    with pytest.raises(GradingError, match=r"custom check 'tests.graders.checks:vandal' crashed: DatabaseError: not authorized \(criteria only read the end world; refused: DELETE accounts\)"):
        await evaluate(done, CustomCheck(function="tests.graders.checks:vandal"))
    assert done.world.hash() == before
    with pytest.raises(GradingError, match=r"must return \(passed_or_score, evidence\), got 'yes'"):
        await evaluate(done, CustomCheck(function="tests.graders.checks:malformed"))
    with pytest.raises(GradingError, match="is not marked with @criterion"):
        await evaluate(done, CustomCheck(function="tests.graders.checks:unmarked"))
    with pytest.raises(ValueError, match="function must be 'module:function'"):
        CustomCheck(function="tests.graders.checks.frozen_count")


async def test_a_check_writing_through_a_statement_prepared_before_grading_is_caught_and_undone(run: Run, evaluate: Evaluate) -> None:
    """SQLite does not consult the authorizer for a statement found in its cache: the world's change count catches it."""
    done = await run("freeze_compromised", 0, "oracle")
    done.world.execute(SLY_WRITE, (-1,))  # prepared and cached while writes are allowed; changes nothing
    before = done.world.full_hash()
    with pytest.raises(GradingError, match="a criterion wrote to the end world: .*its logged changes were undone"):
        await evaluate(done, CustomCheck(function="tests.graders.checks:sly", params={"account": 1}))
    assert done.world.full_hash() == before == done.world.hash()


async def test_lint_reports_unimportable_checks(run: Run) -> None:
    done = await run("freeze_compromised", 0)
    assert done.task is not None
    broken = done.task.model_copy(update={"rubric": [CustomCheck(function="tests.graders.nowhere:check")]})
    problems = lint_instance(done.environment, broken)
    assert len(problems) == 1 and problems[0].startswith("criterion 'custom: check': custom check 'tests.graders.nowhere:check' cannot be imported")
