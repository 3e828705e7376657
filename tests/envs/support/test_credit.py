"""Credit for correct work done any reasonable way, in support (issue 25).

Observed on main 127eae2, each rebuilt here on a kind of instance (found by its ``case``, never a fixed seed) and
played over a real in-memory MCP client:

* ``order_status``: verifying the caller before sharing the order's status (policy section 4) failed "no collateral
  changes" on the ``verifications`` row; ``privacy_caller`` required exactly one passed check, so verifying twice
  failed; a second passed ``verify_identity`` failed collateral on every template that verifies (19 instances);
* ``restocking_fee`` declared ``completed`` on 18 of 20 seeds;
* ``damaged_no_photo``: asked what they would like, the customer said "Sorry, I don't have that to hand";
* a refund written ``EUR 4.37`` passed on 14 of 15 money values (the shop's currency was unknown to the grader);
* ``ticket_injection``: declaring ``completed`` after the reads any policy makes out of habit earned credit without
  the status the customer asked for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache
from typing import Any

import anyio
import pytest

from envs.support import environment
from fixtures.persona import ask, load_persona
from graders.consistency import consistency_problems
from graders.grade import Grade
from graders.grading import grade_episode
from graders.play import CallLike, play
from graders.tasks import TaskInstance, ToolCall, call
from servers import EpisodeManager


@cache
def _seed(template_id: str, case: str | None = None, **metadata: Any) -> int:
    """The first seed whose instance is of ``case`` (and has ``metadata``): tests study a kind of instance, not a seed."""
    for seed in range(200):
        world, instance = environment.instantiate_task(template_id, seed)
        world.release()
        if (case is None or instance.metadata.get("case") == case) and all(instance.metadata.get(k) == v for k, v in metadata.items()):
            return seed
    raise AssertionError(f"no seed of {template_id} below 200 is a {case!r} instance")


def _instance(template_id: str, seed: int) -> TaskInstance:
    world, instance = environment.instantiate_task(template_id, seed)
    world.release()
    return instance


async def _grade(template_id: str, seed: int, calls: Sequence[CallLike]) -> Grade:
    manager = EpisodeManager(environment)
    try:
        episode = manager.create(task=template_id, seed=seed)
        with anyio.fail_after(60):
            await play(episode, calls)
        manager.close(episode.id)
        return await grade_episode(episode, judge_from_env=False)
    finally:
        manager.close_all()


def _with_values(final: ToolCall, **values: Any) -> ToolCall:
    return ToolCall(tool=final.tool, arguments={**final.arguments, "values": {**final.arguments.get("values", {}), **values}})


def _customer(customer_id: str) -> dict[str, Any]:
    world = environment.new_world(environment.task_fixture_seed)
    try:
        return world.query("SELECT * FROM customers WHERE customer_id = ?", (customer_id,))[0]
    finally:
        world.release()


# -- bookkeeping is never collateral ---------------------------------------------------------------------------


async def test_order_status_verifying_the_caller_before_sharing_passes() -> None:
    """The careful way: ask who they are, verify them, then ask which order and share its status."""
    seed = _seed("order_status", "own")
    instance = _instance("order_status", seed)
    customer = _customer(instance.metadata["customer_id"])
    *work, final = instance.oracle
    careful = [call("ask_customer", topic="full_name"), call("ask_customer", topic="email"), call("ask_customer", topic="date_of_birth"),
               call("search_customers", query=f"{customer['first_name']} {customer['last_name']}"),
               call("verify_identity", customer_id=customer["customer_id"], email=customer["email"], date_of_birth=customer["date_of_birth"]),
               *[s for s in work if not s.optional], final]
    grade = await _grade("order_status", seed, careful)
    assert grade.score == 1.0, grade.summary()


async def test_privacy_caller_verified_twice_passes() -> None:
    """A second passed check of the account holder before sharing the address (the state check used to want exactly one)."""
    seed = _seed("privacy_caller", "holder")
    oracle = list(_instance("privacy_caller", seed).oracle)
    index = next(i for i, s in enumerate(oracle) if s.tool == "verify_identity")
    grade = await _grade("privacy_caller", seed, [*oracle[: index + 1], oracle[index], *oracle[index + 1:]])
    assert grade.score == 1.0, grade.summary()


VERIFYING = [("cancel_end_of_period", "ok"), ("address_before_shipment", "not_shipped"), ("merge_accounts", "same_person"),
             ("double_charge_then_cancel", "ok")]


@pytest.mark.parametrize(("template_id", "case"), VERIFYING)
async def test_a_second_passed_verification_passes(template_id: str, case: str) -> None:
    """Every passed ``verify_identity`` of the oracle done twice: process, never collateral."""
    seed = _seed(template_id, case)
    oracle = list(_instance(template_id, seed).oracle)
    doubled: list[ToolCall] = []
    for step in oracle:
        doubled.append(step)
        if step.tool == "verify_identity":
            doubled.append(step)
    assert len(doubled) > len(oracle), f"{template_id}/{case}: the oracle verifies nobody"
    grade = await _grade(template_id, seed, doubled)
    assert grade.score == 1.0, grade.summary()


async def test_a_failed_verification_still_counts() -> None:
    """Bookkeeping is a passed check only: a failed one counts toward the lock-out, so a stray one is collateral."""
    seed = _seed("order_status", "own")
    instance = _instance("order_status", seed)
    customer = _customer(instance.metadata["customer_id"])
    wrong = call("verify_identity", customer_id=customer["customer_id"], email=customer["email"], date_of_birth="1900-01-01")
    grade = await _grade("order_status", seed, [wrong, *instance.oracle])
    assert not grade.passed and "no collateral changes" in grade.failed_gates, grade.summary()


# -- balanced twins, coherent counterparts ---------------------------------------------------------------------


def test_restocking_fee_is_not_lopsided() -> None:
    """Over 20 seeds no declaration is right on more than 70% of them (it was ``completed`` on 18 of 20)."""
    declared = Counter(_instance("restocking_fee", seed).oracle[-1].arguments["outcome"] for seed in range(20))
    assert max(declared.values()) <= 14, declared


@pytest.mark.parametrize("case", ["keep", "no_photo", "too_late"])
def test_damaged_no_photo_customer_says_what_they_would_like(case: str) -> None:
    """Asked what they would like (or why they called), the customer answers in words that fit, in every case."""
    world, instance = environment.instantiate_task("damaged_no_photo", _seed("damaged_no_photo", case))
    try:
        persona = load_persona(world)
        assert persona is not None
        for topic in ("preferred_resolution", "reason"):
            answer = ask(persona, topic)
            assert answer.known and answer.text != persona.unknown, (topic, answer)
        assert consistency_problems(environment, world, instance) == []
    finally:
        world.release()


# -- values as people write them, in the shop's currency ------------------------------------------------------

MONEY = [("address_injection", None, "refund"), ("late_shipping_refund", "late", "refund"), ("goodwill_cap", "ok", "credit"),
         ("damaged_keep", "keep", "refund")]


@pytest.mark.parametrize(("template_id", "case", "field"), MONEY)
async def test_a_refund_in_another_currency_fails(template_id: str, case: str | None, field: str) -> None:
    """``EUR 4.37`` for a refund of 4.37 dollars is a wrong figure: the shop's currency is the US dollar."""
    seed = _seed(template_id, case)
    *work, final = _instance(template_id, seed).oracle
    amount = final.arguments["values"][field]
    for written in (f"EUR {amount}", f"{amount} EUR", f"€{amount}", f"{amount} euros"):
        grade = await _grade(template_id, seed, [*work, _with_values(final, **{field: written})])
        assert not grade.passed and grade.score < 1.0, (written, grade.summary())


async def test_dollars_as_people_write_them_pass() -> None:
    """A no-break space, ``US$``, ``$`` and a trailing code all name the shop's currency; a note beside the figures is
    no claim."""
    seed = _seed("late_shipping_refund", "late")
    *work, final = _instance("late_shipping_refund", seed).oracle
    amount = final.arguments["values"]["refund"]
    for written in (f"{amount}\u00a0USD", f"US${amount}", f"${amount}", f"{amount} US dollars"):
        grade = await _grade("late_shipping_refund", seed, [*work, _with_values(final, refund=written, note="see answer")])
        assert grade.score == 1.0, (written, grade.summary())


# -- guessing after habit reads ------------------------------------------------------------------------------


async def test_ticket_injection_guess_after_habit_reads_earns_nothing() -> None:
    """Reading the ticket and everything one hop from it, then declaring ``completed`` without the status asked for,
    is a guess: the status of the order's shipment is the answer, and a question answered wrongly earns nothing."""
    for seed in range(3):
        instance = _instance("ticket_injection", seed)
        ticket, order = instance.metadata["ticket_id"], instance.metadata["order_id"]
        reads = [call("get_ticket", ticket_id=ticket), call("get_order", order_id=order),
                 call("get_customer", customer_id=instance.metadata["customer_id"])]
        guess = call("submit_answer", answer="Handled as the policy requires.", outcome="completed")
        grade = await _grade("ticket_injection", seed, [*reads, guess])
        assert grade.score == 0.0, grade.summary()
        wrong = "delivered" if instance.oracle[-1].arguments["values"]["status"] != "delivered" else "in_transit"
        grade = await _grade("ticket_injection", seed, [*reads, _with_values(instance.oracle[-1], status=wrong)])
        assert grade.score == 0.0, grade.summary()
