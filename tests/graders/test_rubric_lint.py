"""Rubric lints: rubrics that can be gamed by design are reported, each with what to fix."""

from __future__ import annotations

import random

from envs.finance import environment as finance
from envs.finance.tasks._common import value_is
from envs.finance.tasks.lookups import available_balance
from fixtures.world import World
from graders.criteria import AnswerCheck, ToolCalled, ToolNotCalled, number
from graders.rubric_lint import rubric_problems, secret_values
from graders.tasks import TaskDraft, TaskInstance, TaskTemplate
from servers.environment import Environment
from tests.graders.toy import environment as toy
from tests.graders.toy.tasks import balance_lookup, transfer_funds


async def problems_of(environment: Environment, template_id: str) -> tuple[TaskInstance, list[str]]:
    """The instance of (template, seed 0) and its lint problems."""
    world, task = environment.instantiate_task(template_id, 0)
    world.release()
    return task, await rubric_problems(environment, task)


async def problems(environment: Environment, template_id: str) -> list[str]:
    return (await problems_of(environment, template_id))[1]


def no_outcome(world: World, rng: random.Random) -> TaskDraft:
    """available_balance without its declared outcome."""
    return available_balance(world, rng).model_copy(update={"outcome": None})


def answer_first(world: World, rng: random.Random) -> TaskDraft:
    """available_balance whose oracle answers before looking."""
    draft = available_balance(world, rng)
    return draft.model_copy(update={"oracle": [draft.oracle[-1], *draft.oracle[:-1]]})


def pays_for_the_claim(world: World, rng: random.Random) -> TaskDraft:
    """available_balance whose rubric only checks the reported figure."""
    draft = available_balance(world, rng)
    return draft.model_copy(update={"rubric": [value_is("available", draft.metadata["available"])]})


def names_the_figure(world: World, rng: random.Random) -> TaskDraft:
    """available_balance whose check names the figure the agent must find."""
    draft = available_balance(world, rng)
    figure = draft.metadata["available"]
    return draft.model_copy(update={"rubric": [value_is("available", figure, name=f"answer available = {figure}"), *draft.rubric[1:]]})


FINANCE = finance.with_templates(
    [TaskTemplate(available_balance), TaskTemplate(no_outcome), TaskTemplate(answer_first), TaskTemplate(pays_for_the_claim),
     TaskTemplate(names_the_figure)]
)


def only_forbids(world: World, rng: random.Random) -> TaskDraft:
    """The toy balance look-up whose rubric only forbids a transfer."""
    return balance_lookup(world, rng).model_copy(update={"rubric": [ToolNotCalled(tool="transfer")]})


def names_the_amount(world: World, rng: random.Random) -> TaskDraft:
    """The toy transfer whose check names the amount — which the prompt states anyway."""
    draft = transfer_funds(world, rng)
    amount = draft.oracle[-1].arguments["amount"]
    moved = ToolCalled(name=f"moved {amount}", tool="transfer", args={"amount": amount})
    return draft.model_copy(update={"rubric": [*draft.rubric, moved]})


TOY = toy.with_templates([TaskTemplate(balance_lookup), TaskTemplate(only_forbids), TaskTemplate(names_the_amount)])


async def test_sound_rubrics_have_no_problem() -> None:
    assert await problems(FINANCE, "available_balance") == []
    assert await problems(TOY, "balance_lookup") == []


async def test_a_task_must_declare_the_outcome_its_answer_gives() -> None:
    assert await problems(FINANCE, "no_outcome") == [
        "the answer tool declares outcomes (completed, refused, escalated) but the task declares none: "
        "set outcome=completed() / refused(code) / ... on the draft"
    ]
    assert await problems(TOY, "balance_lookup") == []  # the toy's answer tool declares no outcome: nothing to declare


async def test_the_oracle_must_end_with_its_answer() -> None:
    assert await problems(FINANCE, "answer_first") == [
        "the oracle must end with its final answer (submit_answer), which declares the outcome"
    ]


async def test_credit_needs_work() -> None:
    found = await problems(FINANCE, "pays_for_the_claim")
    assert found == [
        "only criteria that read the answer earn credit ('answer gives available', 'declared outcome'): add one that checks the work "
        "in the world or the record (an end-state check, or the look-up that justifies the answer), or the rubric pays for a claim"
    ]
    assert (await problems(TOY, "only_forbids"))[0].startswith(
        "no criterion earns credit: the untouched world satisfies every one, so the rubric cannot tell work from inaction"
    )


async def test_names_hold_no_figure_the_agent_must_find() -> None:
    task, found = await problems_of(FINANCE, "names_the_figure")
    figure = task.metadata["available"]
    assert figure not in task.prompt
    assert found == [f"criterion name 'answer available = {figure}' contains the expected value '{figure}': "
                     "name what is checked, keep the value in evidence"]
    task, found = await problems_of(TOY, "names_the_amount")
    assert found == [] and task.oracle[-1].arguments["amount"] in task.prompt  # stated by the prompt: no secret


def test_secret_values_are_the_literals_a_criterion_expects() -> None:
    assert secret_values(AnswerCheck(field="values.total", expect=number("208.49"))) == ["208.49"]
    assert secret_values(ToolCalled(tool="send_wire", args={"amount": "1100.00", "payee_id": "PAY-00363"})) == ["1100.00", "PAY-00363"]
    assert secret_values(ToolNotCalled(tool="send_wire")) == []
