"""Grading never breaks on what an agent sent, and a grader that does break is the kit's error, named."""

from __future__ import annotations

import pytest

from envs.finance import environment as finance
from fixtures.errors import GradingError
from graders.criteria import AnswerCheck
from graders.criteria.matchers import Number
from graders.grading import grade_episode
from graders.tasks import ToolCall
from servers.episodes import EpisodeManager
from tests.graders.finance_runs import answer_with, finance_runner, graded, instance, work_and_answer


def _asks_for_figures(template_id: str) -> list[str]:
    task = instance(template_id)
    return [c.field.split(".", 1)[1] for c in task.rubric
            if isinstance(c, AnswerCheck) and isinstance(c.expect, Number) and c.field.startswith("values.")]


async def test_a_huge_exponent_fails_the_figure_on_every_template_that_asks_for_one() -> None:
    """"1e999999999" parsed as a finite Decimal and ``abs(got - expected)`` raised Overflow: 168/168 probes (issue 17)."""
    asking = {t: fields for t in sorted(finance.task_templates()) if (fields := _asks_for_figures(t))}
    assert len(asking) >= 10
    with finance_runner() as run:
        for template_id, fields in asking.items():
            work, final = work_and_answer(instance(template_id))
            hostile = answer_with(final, values={**final.arguments["values"], **dict.fromkeys(fields, "1e999999999")})
            grade = await graded(await run(template_id, [*work, hostile]))
            failed = {r.name: r.evidence for r in grade.failures}
            assert not grade.passed, template_id
            assert any('got "1e999999999" (not a plain decimal figure)' in e for e in failed.values()), (template_id, failed)


@pytest.mark.parametrize("value", ["NaN", "-Infinity", "0x1F", "１２３.００", "12.00 JPY", "6,2481.02", "sNaN"])
async def test_hostile_figures_are_graded_as_wrong_never_raised(value: str) -> None:
    with finance_runner() as run:
        work, final = work_and_answer(instance("available_balance"))
        grade = await graded(await run("available_balance", [*work, answer_with(final, values={"available": value})]))
    assert not grade.passed and grade.complete
    grade.to_json().encode("utf-8")


async def test_a_grader_that_raises_is_a_grading_error_naming_its_criterion() -> None:
    """Whatever a criterion raises, grading answers a GradingError the runner files as ``grading`` (never ``kit``)."""
    from tests.graders.fragile import environment as fragile

    manager = EpisodeManager(fragile)
    try:
        episode = manager.create(task="fragile_lookup", seed=0)
        assert episode.task is not None
        get, _ = episode.task.oracle
        from graders.play import play

        await play(episode, [get, ToolCall(tool="submit_answer", arguments={"answer": "x", "amount": "1e999999999"})])
        manager.close(episode.id)
        with pytest.raises(GradingError, match="custom check 'tests.graders.fragile:careless_amount' crashed: Overflow"):
            await grade_episode(episode, judge_from_env=False)
    finally:
        manager.close_all()
