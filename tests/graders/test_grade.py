"""Grades: gates zero the score, weighted means, incomplete grades never pass, JSON round-trip."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from graders.criteria import CallBudget, CriterionResult, NoCollateral, ToolCalled, ToolNotCalled
from graders.grade import Grade, combine
from graders.grading import grade_episode
from graders.play import play
from graders.tasks import call
from servers.environment import Environment
from servers.episodes import EpisodeManager
from servers.tools import ToolContext, tool
from tests.graders.conftest import Run, grade_with


async def test_a_failed_gate_zeroes_the_score(run: Run) -> None:
    done = await run("freeze_compromised", 0, [call("get_account", account_id=1)])
    passing = [ToolCalled(tool="get_account", weight=3), NoCollateral()]
    grade = await grade_with(done, [*passing, ToolCalled(tool="freeze_account", name="froze", gate=True, weight=0)])
    assert grade.gated and grade.failed_gates == ["froze"]
    assert grade.score == 0.0 and not grade.passed
    assert grade.summary().startswith("freeze_compromised#0: FAIL score=0.000 (gate failed: froze) — froze: 0 matching call(s)")
    ungated = await grade_with(done, [*passing, ToolCalled(tool="freeze_account", name="froze", weight=0)])
    assert not ungated.gated and ungated.score == 1.0 and ungated.passed  # weight 0 and no gate: informative only


async def test_score_is_the_weighted_mean_and_threshold_decides(run: Run) -> None:
    done = await run("freeze_compromised", 0, [call("get_account", account_id=1)])
    rubric = [ToolCalled(tool="get_account", weight=3), ToolCalled(tool="freeze_account", weight=1)]
    grade = await grade_with(done, rubric)
    assert grade.score == 0.75 and not grade.passed and grade.threshold == 1.0
    lenient = await grade_with(done, rubric, threshold=0.75)
    assert lenient.passed and lenient.score == 0.75 and [r.passed for r in lenient.criteria[:2]] == [True, False]
    # every rubric also gets the standard criteria (graders/standard.py); here they pass and, satisfied by the
    # untouched world, earn no credit
    assert [(r.name, r.credited) for r in lenient.criteria[2:]] == [("claims consistent with the world", False),
                                                                  ("no collateral changes", False)]
    assert [f.name for f in lenient.failures] == ["calls freeze_account()"]


async def test_pure_gate_rubric_scores_one_when_all_gates_pass(run: Run) -> None:
    done = await run("freeze_compromised", 0, "oracle")
    grade = await grade_with(done, [ToolNotCalled(tool="transfer", gate=True, weight=0)])
    assert grade.score == 1.0 and grade.passed


def test_combine_rules_for_ungraded_criteria() -> None:
    graded = CriterionResult(name="a", kind="state", weight=1, gate=False, passed=True, score=1.0, evidence="ok")
    ungraded = CriterionResult(name="j", kind="judge", weight=1, gate=True, graded=False, passed=False, score=0.0, evidence="not graded")
    grade = combine([graded, ungraded], env="e", template_id="t", seed=0, threshold=1.0)
    assert grade.score == 1.0 and not grade.gated  # an ungraded gate is not a failed gate...
    assert not grade.complete and not grade.passed and grade.ungraded == ["j"]  # ...but the grade cannot pass
    assert grade.graded_pass
    nothing = combine([ungraded], env="e", template_id="t", seed=0, threshold=1.0)
    assert nothing.score == 0.0 and not nothing.passed


async def test_grade_json_round_trip_is_byte_identical(run: Run) -> None:
    done = await run("transfer_funds", 2, "oracle")
    grade = await grade_episode(done)
    text = grade.to_json()
    again = Grade.from_json(text)
    assert again == grade and again.to_json() == text
    assert grade.episode_id == done.id and grade.end_hash == done.record.closed.end_hash  # type: ignore[union-attr]
    assert (await grade_episode(done)).to_json() == text  # grading twice gives the same bytes


class Boom(Exception):
    """A tool bug."""


@tool()
async def explode(ctx: ToolContext, times: Annotated[int, Field(ge=1)] = 1) -> str:
    """A tool with a bug (kit tests only)."""
    raise Boom("kaput")


async def test_kit_errors_are_counted_apart_and_never_spend_the_agents_budget(toy: Environment) -> None:
    buggy = Environment(
        name=toy.name,
        description=toy.description,
        fixture=toy.fixture,
        tools=[*toy.tools, explode],
        tasks_module=toy.tasks_module,
    )
    manager = EpisodeManager(buggy)
    try:
        episode = manager.create(task="freeze_compromised", seed=0)
        await play(episode, [call("explode"), call("get_account", account_id=0)])
        manager.close(episode.id)
        grade = await grade_with(episode, [CallBudget(max_errors=1)])
    finally:
        manager.close_all()
    assert grade.internal_errors == 1 and grade.agent_errors == 1 and grade.tool_calls == 2
    assert grade.passed and grade.criteria[0].evidence == "2 calls, 1 agent errors (≤ 1 errors)"
