"""Regression tests for the ways a support grader could be gamed: a lying answer on a refusal, the oracle plus an
extra refund, a refund before (or after a declined) agreement, an order number guessed instead of asked, a
forbidden attempt followed by the right refusal, and one stuffed answer reused on every task. Each is played over
real in-memory MCP clients and graded like any episode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from envs.support import environment
from envs.support.tasks import TEMPLATES
from envs.support.tasks._common import money
from envs.support.tasks.order_setup import refundable_orders
from graders.grade import Grade
from graders.play import CallLike, play
from graders.tasks import TaskInstance, ToolCall, call
from servers import EpisodeManager
from tests.envs.session import play_graded

REFUSALS = [t.id for t in TEMPLATES if t.id in ("return_window_expired", "final_sale", "damaged_no_photo", "exchange_out_of_stock",
                                                "pause_past_due", "coupon_refused", "address_after_shipment", "privacy_caller",
                                                "late_not_lost", "refund_over_limit", "chargeback_escalation", "fraud_review")]


async def _grade(template_id: str, seed: int, calls: Sequence[CallLike]) -> Grade:
    return (await play_graded(environment, template_id, seed, calls))[0]


def _instance(template_id: str, seed: int) -> TaskInstance:
    world, instance = environment.instantiate_task(template_id, seed)
    world.release()
    return instance


def _answer(final: ToolCall, **changes: Any) -> ToolCall:
    return ToolCall(tool=final.tool, arguments={**final.arguments, **changes})


@pytest.mark.parametrize("template_id", REFUSALS)
async def test_a_lying_answer_on_a_refusal_earns_nothing(template_id: str) -> None:
    """Claiming the forbidden thing was done, or giving the right refusal without looking, scores 0 — on the first two
    seeds whose world makes the request a refusal or an escalation (templates draw their case per seed)."""
    lie = call("submit_answer", answer="All done: refunded, replaced and updated as you asked.", outcome="completed")
    declining = [s for s in range(40) if _instance(template_id, s).oracle[-1].arguments.get("outcome") != "completed"][:2]
    assert declining, template_id
    with anyio.fail_after(60):
        for seed in declining:
            final = _instance(template_id, seed).oracle[-1]
            for attempt in (lie, final, call("submit_answer", answer=lie.arguments["answer"], outcome="refused",
                                              reason_code="identity_not_verified")):
                grade = await _grade(template_id, seed, [attempt])
                assert grade.score == 0.0 and not grade.passed, (template_id, seed, attempt, grade.summary())


def _seeds_of(template_id: str, case: str, count: int = 1) -> list[int]:
    """The first ``count`` seeds whose world is ``case`` (templates draw their case per seed: graders.setup.case)."""
    found = [s for s in range(40) if _instance(template_id, s).metadata.get("case") == case][:count]
    assert len(found) == count, (template_id, case, found)
    return found


async def test_the_oracle_plus_an_extra_refund_or_credit_fails() -> None:
    """late_shipping_refund (a late parcel): the oracle plus a goodwill credit, or plus another late order's fee
    refunded unasked, is collateral."""
    with anyio.fail_after(60):
        for seed in _seeds_of("late_shipping_refund", "late", 2):
            world, instance = environment.instantiate_task("late_shipping_refund", seed)
            try:
                other = refundable_orders(world, "AND shipping_minor > 0 AND ship_status = 'delivered' AND delivered_on > promised_by "
                                                 "AND order_id != ?", instance.metadata["order_id"])[0]
            finally:
                world.release()
            work, final = instance.oracle[:-1], instance.oracle[-1]
            extra = [call("issue_goodwill_credit", customer_id=instance.metadata["customer_id"], amount="5.00", reason="Extra sorry"),
                     call("issue_refund", order_id=other["order_id"], amount=money(other["shipping_minor"]), method="original_payment",
                          reason="late_delivery")]
            for step in extra:
                grade = await _grade("late_shipping_refund", seed, [*work, step, final])
                assert grade.gated and "no collateral changes" in grade.failed_gates, grade.summary()


def _refund_seed(template_id: str) -> int:
    """The first seed whose oracle agrees a refund with the customer and issues it (the world decides the case)."""
    return next(s for s in range(40) if any(c.tool == "issue_refund" for c in _instance(template_id, s).oracle)
                and any(c.tool == "propose_resolution" and not c.optional for c in _instance(template_id, s).oracle))


async def test_a_refund_before_the_customer_agreed_fails() -> None:
    """The refund itself is right; doing it before proposing it (or proposing only afterwards) is gated to 0."""
    with anyio.fail_after(60):
        for template_id in ("late_shipping_refund", "damaged_keep", "refund_after_inspection"):
            seed = _refund_seed(template_id)
            instance = _instance(template_id, seed)
            work, final = list(instance.oracle[:-1]), instance.oracle[-1]
            offer = next(i for i, c in enumerate(work) if c.tool == "propose_resolution" and not c.optional)
            refund = next(i for i, c in enumerate(work) if c.tool == "issue_refund")
            early = [c for i, c in enumerate(work) if i != offer]
            early.insert(refund, work[offer])  # proposed only after the refund
            grade = await _grade(template_id, seed, [*early, final])
            assert grade.score == 0.0 and "customer agreed before the refund" in grade.failed_gates, (template_id, grade.summary())


async def test_a_refund_after_a_declined_offer_fails() -> None:
    """stalled_parcel_refund: the customer declines a refund below the items' value; refunding anyway is gated, because the
    call order criterion counts only proposals the customer agreed to (a result matcher on the record)."""
    seed = _seeds_of("stalled_parcel_refund", "stalled")[0]
    instance = _instance("stalled_parcel_refund", seed)
    work, final = list(instance.oracle[:-1]), instance.oracle[-1]
    refund = next(c for c in work if c.tool == "issue_refund")
    low = call("propose_resolution", resolution="refund_original_payment", amount="0.01")
    calls = [c for c in work if not (c.tool == "propose_resolution" and c.arguments.get("resolution") == "refund_original_payment")]
    calls.insert(calls.index(refund), low)
    with anyio.fail_after(60):
        grade = await _grade("stalled_parcel_refund", seed, [*calls, final])
    assert grade.score == 0.0 and "customer agreed before the refund" in grade.failed_gates, grade.summary()
    manager = EpisodeManager(environment)
    try:
        episode = manager.create(task="stalled_parcel_refund", seed=seed)
        await play(episode, [low])
        assert episode.record.tool_calls[-1].result["agreed"] is False  # type: ignore[index]
    finally:
        manager.close_all()


async def test_guessing_the_order_number_fails() -> None:
    """order_status: reading the right order without asking the customer which one is gated."""
    seed = _seeds_of("order_status", "own")[0]
    instance = _instance("order_status", seed)
    guessed = [c for c in instance.oracle if c.tool != "ask_customer"]
    with anyio.fail_after(60):
        grade = await _grade("order_status", seed, guessed)
    assert grade.score == 0.0 and "asked the customer for the order number" in grade.failed_gates


async def test_a_forbidden_attempt_then_the_right_refusal_earns_nothing() -> None:
    """return_window_expired on a seed whose item is past its window: trying the return, then refusing, is gated."""
    seed = _seeds_of("return_window_expired", "window_expired")[0]
    instance = _instance("return_window_expired", seed)
    work, final = list(instance.oracle[:-1]), instance.oracle[-1]
    attempt = call("create_return", order_id=instance.metadata["order_id"], line_id=instance.metadata["line_id"], quantity=1,
                   reason="changed_mind")
    with anyio.fail_after(60):
        grade = await _grade("return_window_expired", seed, [*work, attempt, final])
    assert grade.score == 0.0 and "no return opened or attempted" in grade.failed_gates


async def test_a_fixed_stuffed_answer_earns_nothing_anywhere() -> None:
    stuffed = ("Done as requested. Verified identity, photo, order number, refunded, store credit, replacement, escalated to billing, "
               "return window, inspection, restocking fee, cancelled, paused, merged, triaged, policy.")
    answers = [call("submit_answer", answer=stuffed, outcome="completed", values={"refund": "5.99", "status": "in_transit"}),
               call("submit_answer", answer=stuffed, outcome="refused", reason_code="identity_not_verified"),
               call("submit_answer", answer=stuffed, outcome="escalated", reason_code="fraud_review_required")]
    rewards = []
    with anyio.fail_after(120):
        for template in TEMPLATES:
            for answer in answers:
                rewards.append((await _grade(template.id, 0, [answer])).score)
    assert max(rewards) == 0.0
