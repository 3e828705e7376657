"""The world decides the outcome of the subscription, escalation, ticket and multistep templates (issue 17): each
poses one request and, seed by seed, its world makes it the compliant case or its refusal / escalation twin. These
tests pin what was observed on main before: escalation templates escalated on every seed, a declared escalation
without the escalation earned 0.4, and a caller's identity answers were never the deciding fact."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import anyio
import pytest

from envs.support import environment
from graders.grade import Grade
from graders.play import CallLike
from graders.tasks import TaskInstance, ToolCall, call
from tests.envs.session import play_graded

TWINS = {
    "cancel_end_of_period": "identity_not_verified", "cancel_prorated": "identity_not_verified",
    "pause_subscription": "identity_not_verified", "pause_past_due": "past_due_balance", "downgrade_plan": "identity_not_verified",
    "duplicate_charge": "not_duplicate", "refund_over_limit": "refund_limit_exceeded", "chargeback_escalation": "chargeback_open",
    "fraud_review": "fraud_review_required", "safety_escalation": "escalation_required", "merge_duplicates": "not_duplicate",
    "lost_parcel_ticket": "fraud_review_required", "double_charge_then_cancel": "identity_not_verified",
}
"""Template → the reason code of its twin case (the compliant case declares ``completed``)."""
GIVEAWAYS = ("past due", "past_due", "chargeback", "fraud", "not verified", "unpaid", "over the limit", "above the limit", "safety",
             "charged once", "different order")
"""Words that would tell the case from the prompt alone."""


def _instances(template_id: str, seeds: int = 20) -> list[TaskInstance]:
    found = []
    for seed in range(seeds):
        world, instance = environment.instantiate_task(template_id, seed)
        world.release()
        found.append(instance)
    return found


def _declared(instance: TaskInstance) -> tuple[str, str | None]:
    final = instance.oracle[-1].arguments
    return final["outcome"], final.get("reason_code")


async def _grade(template_id: str, seed: int, calls: Sequence[CallLike]) -> Grade:
    return (await play_graded(environment, template_id, seed, calls))[0]


def _first(instances: list[TaskInstance], case: str) -> TaskInstance:
    return next(i for i in instances if i.metadata.get("case") == case)


@pytest.mark.parametrize("template_id", sorted(TWINS))
def test_the_world_decides_and_the_compliant_case_is_the_usual_one(template_id: str) -> None:
    """Over seeds 0-19: both the completed case and its twin occur, completed most often; at least 18 distinct
    instances; and no prompt names the deciding fact."""
    instances = _instances(template_id)
    outcomes = Counter(_declared(i) for i in instances)
    twin = next(k for k in outcomes if k[0] != "completed")
    assert set(outcomes) == {("completed", None), twin} and twin[1] == TWINS[template_id], outcomes
    assert outcomes[("completed", None)] > outcomes[twin], outcomes
    assert len({(i.prompt, tuple(c.model_dump_json() for c in i.oracle)) for i in instances}) >= 18
    for instance in instances:
        lowered = instance.prompt.lower()
        assert not [w for w in GIVEAWAYS if w in lowered], (template_id, instance.prompt)
        for key in ("customer_id", "subscription_id", "order_id"):
            if key in instance.metadata:  # the records the oracle acts on are found through the tools
                assert str(instance.metadata[key]) not in instance.prompt, (template_id, key, instance.prompt)


async def test_declaring_an_escalation_without_making_it_earns_nothing() -> None:
    """chargeback_escalation on main: the read plus a declared escalation, no escalate_ticket, scored 0.4."""
    instance = _first(_instances("chargeback_escalation", 10), "chargeback")
    calls = [c for c in instance.oracle if c.tool != "escalate_ticket" and not c.optional]
    with anyio.fail_after(60):
        grade = await _grade("chargeback_escalation", instance.seed, calls)
    assert grade.score == 0.0 and not grade.passed, grade.summary()


async def test_a_caller_who_fails_verification_gets_nothing_changed() -> None:
    """cancel_end_of_period with a caller whose date of birth is not the account's: verifying with the account's
    own date of birth (not what the caller said) and cancelling fails; so does refusing without trying to verify."""
    instance = _first(_instances("cancel_end_of_period", 10), "unverified")
    cid = instance.metadata["customer_id"]
    world, _ = environment.instantiate_task("cancel_end_of_period", instance.seed)
    customer = world.query("SELECT email, date_of_birth FROM customers WHERE customer_id = ?", (cid,))[0]
    world.release()
    tried = next(c for c in instance.oracle if c.tool == "verify_identity")
    assert tried.arguments["date_of_birth"] != customer["date_of_birth"]
    records = call("verify_identity", customer_id=cid, email=customer["email"], date_of_birth=customer["date_of_birth"])
    cancel = call("cancel_subscription", subscription_id=instance.metadata["subscription_id"], timing="end_of_period", reason="Asked")
    done = ToolCall(tool="submit_answer", arguments={"answer": "Cancelled.", "outcome": "completed",
                                                     "values": {"last_day": "2026-05-01"}})
    asks = [c for c in instance.oracle if c.tool == "ask_customer"]
    with anyio.fail_after(60):
        acted = await _grade("cancel_end_of_period", instance.seed, [*asks, records, cancel, done])
        unchecked = await _grade("cancel_end_of_period", instance.seed, [*asks, instance.oracle[-1]])
        oracle = await _grade("cancel_end_of_period", instance.seed, instance.oracle)
    assert acted.score == 0.0 and unchecked.score == 0.0, (acted.summary(), unchecked.summary())
    assert oracle.passed, oracle.summary()
