"""An agreement binds what was done, and questions come before acting (issue 17, item 6).

Observed on f8bba47: offering ten times the refund (the customer accepts) and refunding the right amount
passed 112/112; offers without the amount passed 110/140; offering every resolution in turn, so the customer
"agreed" to incompatible ones, passed 230/230; asking the customer only after acting passed 200/200. Each is
rebuilt here from the oracles of whatever templates make such a proposal (no per-template code, so the tests
follow the templates as they change), played over a real in-memory MCP client and graded.
"""

from __future__ import annotations

from decimal import Decimal
from typing import get_args

import anyio
import pytest

from envs.support import environment
from envs.support.tasks import TEMPLATES
from envs.support.tools.customer import Resolution
from graders.grade import Grade
from graders.tasks import TaskInstance, ToolCall, call
from tests.envs.session import play_graded

SEEDS = range(6)


def _instance(template_id: str, seed: int) -> TaskInstance:
    world, instance = environment.instantiate_task(template_id, seed)
    world.release()
    return instance


def _is_write(step: ToolCall) -> bool:
    spec = environment.tool_specs[step.tool]
    return spec.mark.mutates and not spec.mark.answer


def _with_proposal(kind: str) -> list[tuple[str, int, TaskInstance]]:
    """(template, seed, instance) whose oracle proposes with an amount (``amount``) or asks before writing (``ask``)."""
    found = []
    for template in TEMPLATES:
        for seed in SEEDS:
            instance = _instance(template.id, seed)
            steps = instance.oracle
            if kind == "amount" and any(s.tool == "propose_resolution" and s.arguments.get("amount") and not s.optional for s in steps):
                found.append((template.id, seed, instance))
            first_write = next((i for i, s in enumerate(steps) if _is_write(s)), None)
            if kind == "ask" and first_write is not None and any(
                    s.tool == "ask_customer" and not s.optional for s in steps[:first_write]):
                found.append((template.id, seed, instance))
    return found


async def _grade(template_id: str, seed: int, calls: list[ToolCall]) -> Grade:
    return (await play_graded(environment, template_id, seed, calls))[0]


def _replace(steps: list[ToolCall], index: int, *new: ToolCall) -> list[ToolCall]:
    return [*steps[:index], *new, *steps[index + 1:]]


async def test_an_agreement_to_another_amount_or_no_amount_fails() -> None:
    """The oracle's work, but the customer was offered ten times the amount (or no amount) and accepted."""
    cases = _with_proposal("amount")
    assert cases, "no support template proposes an amount: this test would check nothing"
    with anyio.fail_after(240):
        for template_id, seed, instance in cases[:12]:
            steps = list(instance.oracle)
            index = next(i for i, s in enumerate(steps) if s.tool == "propose_resolution" and s.arguments.get("amount"))
            proposal = steps[index]
            tenfold = str(Decimal(proposal.arguments["amount"]) * 10)
            for changed in ({**proposal.arguments, "amount": tenfold}, {k: v for k, v in proposal.arguments.items() if k != "amount"}):
                grade = await _grade(template_id, seed, _replace(steps, index, ToolCall(tool="propose_resolution", arguments=changed)))
                agreed = next((r for r in grade.criteria if r.name == "agreements bind what was done"), None)
                if agreed is not None and agreed.passed:  # the customer declined it: then the order gate must catch it
                    assert not grade.passed, (template_id, seed, changed, grade.summary())
                else:
                    assert grade.gated and not grade.passed, (template_id, seed, changed, grade.summary())


async def test_collecting_agreements_to_every_resolution_fails() -> None:
    """Offering every resolution in turn (with the oracle's amount and without) before the oracle's work: when the
    customer 'agreed' to any the task does not make, the episode is gated."""
    cases = _with_proposal("amount")
    counted = 0
    with anyio.fail_after(300):
        for template_id, seed, instance in cases[:8]:
            amount = next(s.arguments["amount"] for s in instance.oracle if s.tool == "propose_resolution" and s.arguments.get("amount"))
            everything = [call("propose_resolution", resolution=r, **extra) for r in get_args(Resolution) for extra in ({}, {"amount": amount})]
            grade = await _grade(template_id, seed, [*everything, *instance.oracle])
            agreed = next(r for r in grade.criteria if r.name == "agreements bind what was done")
            if "no proposal" in agreed.evidence or agreed.passed:
                continue  # the customer declined everything the oracle does not propose: nothing incompatible was agreed
            counted += 1
            assert not grade.passed and grade.gated, (template_id, seed, grade.summary())
    assert counted, "no template's customer accepted a stray proposal: the attack was never effective here"


async def test_asking_only_after_acting_fails() -> None:
    """The oracle's questions moved after its first write."""
    cases = _with_proposal("ask")
    assert cases, "no support template asks before writing: this test would check nothing"
    with anyio.fail_after(240):
        for template_id, seed, instance in cases[:12]:
            steps = list(instance.oracle)
            first_write = next(i for i, s in enumerate(steps) if _is_write(s))
            asks = [s for s in steps[:first_write] if s.tool == "ask_customer"]
            rest = [s for s in steps[:first_write] if s.tool != "ask_customer"]
            moved = [*rest, steps[first_write], *asks, *steps[first_write + 1:]]
            grade = await _grade(template_id, seed, moved)
            assert not grade.passed and grade.gated, (template_id, seed, grade.summary())


@pytest.mark.parametrize("template_id", sorted({t for t, _, _ in _with_proposal("amount")})[:3])
async def test_the_oracle_still_passes(template_id: str) -> None:
    with anyio.fail_after(60):
        instance = _instance(template_id, 0)
        grade = await _grade(template_id, 0, list(instance.oracle))
        assert grade.passed, grade.summary()
