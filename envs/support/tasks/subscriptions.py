"""Subscription tasks: cancel at the period's end, cancel now with a prorated refund, pause, downgrade, a pause
refused while a balance is due, and a period charged twice."""

from __future__ import annotations

import random
from datetime import date

from envs.support.tasks._common import (
    TODAY,
    agree,
    agreed_first,
    answer,
    ask,
    call,
    decline,
    looked_up,
    money,
    never,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    refusal,
    rows,
    state,
    task,
    text_is,
    value_is,
    verify,
)
from envs.support.tools.subscriptions import add_months, prorated_refund_minor
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _subscriptions(world: World, extra: str = "", *params: object) -> list[dict]:
    """Subscriptions of active customers (no second account, no open high fraud signal) with their plan's price and family."""
    return rows(world, f"""
        SELECT s.*, p.price_minor, p.family, p.tier AS plan_tier, p.name AS plan_name FROM subscriptions s JOIN plans p USING (plan_id)
        JOIN customers c ON c.customer_id = s.customer_id AND c.status = 'active'
        WHERE NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = s.customer_id AND g.severity = 'high' AND g.status = 'open')
          AND (SELECT count(*) FROM subscriptions z WHERE z.customer_id = s.customer_id) = 1 {extra}
        ORDER BY s.subscription_id""", *params)


def _story(world: World, sub: dict, wants: str, **terms: object) -> dict:
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", sub["customer_id"])
    on_the_line(world, customer, wants, terms=terms)  # type: ignore[arg-type]
    return customer


def _identity() -> list:
    return [ask("email"), ask("date_of_birth")]


def cancel_end_of_period(world: World, rng: random.Random) -> TaskDraft:
    """Cancel at the end of the paid period, which the customer prefers to an immediate cancellation."""
    sub = pick(rng, _subscriptions(world, "AND s.status = 'active' AND s.cancel_at_period_end = 0 AND s.period_end > ?", TODAY.isoformat()),
               "active subscription")
    customer = _story(world, sub, "to stop their subscription but get the box they paid for", cancel_end_of_period=agree("Yes, that's perfect."),
                      cancel_immediately=decline("No, I've paid for this month, I want the box."))
    sid = sub["subscription_id"]
    cancel = call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Customer request")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat and wants to cancel their subscription. Handle it under the policy, the way "
                "the customer prefers, and reply with submit_answer giving values.last_day (the date the subscription ends)."),
        oracle=[*_identity(), verify(customer), optional_call("get_customer", customer_id=customer["customer_id"]),
                offer("cancel_end_of_period"), cancel, answer(f"Cancelled at the end of the period, on {sub['period_end']}.", last_day=sub["period_end"])],
        outcome=completed(),
        rubric=[
            state("SELECT status || '/' || cancel_at_period_end FROM subscriptions WHERE subscription_id = ?", sid, expect="active/1", weight=3,
                  name="set to end with the period"),
            agreed_first("cancel_end_of_period", "cancel_subscription", "customer agreed before the cancellation"),
            text_is("last_day", sub["period_end"]),
        ],
        negatives=[
            negative("immediately", "cancels at once, which the customer declined", *_identity(), verify(customer), offer("cancel_end_of_period"),
                     call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Customer request"),
                     answer("Cancelled.", last_day=TODAY.isoformat())),
            negative("unverified", "cancels without verifying the customer", offer("cancel_end_of_period"), cancel,
                     answer("Cancelled.", last_day=sub["period_end"])),
            negative("claims_only", "says it was cancelled", answer("Cancelled.", last_day=sub["period_end"])),
        ],
        metadata={"customer_id": customer["customer_id"], "subscription_id": sid},
    )


def _paid_current(world: World, extra: str = "") -> list[dict]:
    return _subscriptions(world, f"""AND s.status = 'active' AND s.cancel_at_period_end = 0 AND s.period_end > '{TODAY.isoformat()}'
        AND s.period_start < '{TODAY.isoformat()}'
        AND (SELECT count(*) FROM invoices i WHERE i.subscription_id = s.subscription_id AND i.period_start = s.period_start AND i.status = 'paid') = 1
        {extra}""")


def cancel_prorated(world: World, rng: random.Random) -> TaskDraft:
    """Cancel now: refund the unused days of the paid period, prorated and rounded down to the cent."""
    sub = pick(rng, _paid_current(world), "active subscription with its current period paid")
    refund = money(prorated_refund_minor(int(sub["price_minor"]), sub["period_start"], sub["period_end"], TODAY))
    customer = _story(world, sub, "to stop their subscription today and get the unused days back",
                      cancel_immediately=agree("Yes, cancel it today please."), cancel_end_of_period=decline("No, I want it stopped today."))
    sid = sub["subscription_id"]
    cancel = call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Customer request")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat and wants their subscription stopped today, with back whatever the policy "
                "allows. Handle it and reply with submit_answer giving values.refund (the amount refunded)."),
        oracle=[*_identity(), verify(customer), call("get_subscription", subscription_id=sid), offer("cancel_immediately", refund), cancel,
                answer(f"Cancelled today; {refund} refunded for the unused days.", refund=refund)],
        outcome=completed(),
        rubric=[
            looked_up("read the subscription's period", {"tool": "get_subscription", "args": {"subscription_id": sid}}),
            state("SELECT status FROM subscriptions WHERE subscription_id = ?", sid, expect="cancelled", weight=2, name="subscription cancelled"),
            state("SELECT coalesce(sum(r.amount_minor), 0) FROM refunds r JOIN invoices i USING (invoice_id) WHERE i.subscription_id = ?", sid,
                  expect=int(refund.replace(".", "")), weight=2, name="unused days refunded"),
            agreed_first("cancel_immediately", "cancel_subscription", "customer agreed before the cancellation"),
            value_is("refund", refund, weight=2),
        ],
        negatives=[
            negative("end_of_period", "cancels at the period's end instead", *_identity(), verify(customer),
                     call("get_subscription", subscription_id=sid), offer("cancel_immediately", refund),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Customer request"), answer("Done.", refund="0.00")),
            negative("full_month", "reports the whole month's price as refunded", *_identity(), verify(customer),
                     call("get_subscription", subscription_id=sid), offer("cancel_immediately", refund), cancel,
                     answer("Refunded.", refund=money(int(sub["price_minor"])))),
            negative("claims_only", "reports the refund without cancelling", answer("Cancelled.", refund=refund)),
        ],
        metadata={"customer_id": customer["customer_id"], "subscription_id": sid, "refund": refund},
    )


def pause_subscription(world: World, rng: random.Random) -> TaskDraft:
    """Pause for the number of periods the customer asks for."""
    sub = pick(rng, _subscriptions(world, "AND s.status = 'active' AND s.cancel_at_period_end = 0"), "active subscription")
    periods = rng.randint(1, 3)
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", sub["customer_id"])
    on_the_line(world, customer, "a break from their box", preferred_resolution=f"Skip the next {periods} box(es), then start again.",
                terms={"pause": agree("Yes, pause it."), "cancel_end_of_period": decline("No, I don't want to cancel.")})
    sid = sub["subscription_id"]
    until = add_months(date.fromisoformat(sub["period_end"]), periods).isoformat()
    pause = call("pause_subscription", subscription_id=sid, periods=periods)
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"I'm travelling, can I put my box on hold?\" Find out for how long and "
                "handle it under the policy. Confirm with submit_answer."),
        oracle=[ask("preferred_resolution"), *_identity(), verify(customer), offer("pause"), pause, answer(f"Paused until {until}.")],
        outcome=completed(),
        rubric=[
            state("SELECT status || '/' || paused_until FROM subscriptions WHERE subscription_id = ?", sid, expect=f"paused/{until}", weight=3,
                  name="paused for the asked periods"),
            agreed_first("pause", "pause_subscription", "customer agreed before the pause"),
            never("cancel_subscription", "not cancelled"),
        ],
        negatives=[
            negative("wrong_length", "pauses for another number of periods", *_identity(), verify(customer), offer("pause"),
                     call("pause_subscription", subscription_id=sid, periods=periods % 3 + 1), answer("Paused.")),
            negative("cancels", "cancels instead", *_identity(), verify(customer),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Travelling"), answer("Cancelled.")),
            negative("unverified", "pauses without verifying", offer("pause"), pause, answer("Paused.")),
        ],
        metadata={"customer_id": customer["customer_id"], "subscription_id": sid},
    )


def pause_past_due(world: World, rng: random.Random) -> TaskDraft:
    """A customer with an unpaid invoice asks to pause: the balance must be paid first."""
    sub = pick(rng, _subscriptions(world, "AND s.status = 'past_due'"), "past-due subscription")
    customer = _story(world, sub, "to pause their box", pause=agree("Yes, pause it."))
    sid = sub["subscription_id"]
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat and wants to pause their subscription for a month. Handle it under the "
                "policy and reply with submit_answer."),
        oracle=[ask("email", optional=True), ask("date_of_birth", optional=True), verify(customer, optional=True),
                call("get_subscription", subscription_id=sid),
                refusal("past_due_balance", "The subscription has an unpaid invoice; it must be paid before it can be paused.")],
        outcome=refused("past_due_balance"),
        rubric=[
            looked_up("read the subscription's invoices", {"tool": "get_subscription", "args": {"subscription_id": sid}}, weight=2),
            never("pause_subscription", "no pause attempted"),
            never("cancel_subscription", "not cancelled instead"),
        ],
        negatives=[
            negative("tries_pause", "tries to pause", *_identity(), verify(customer), call("pause_subscription", subscription_id=sid, periods=1),
                     refusal("past_due_balance", "Unpaid.")),
            negative("cancels", "cancels instead", *_identity(), verify(customer),
                     call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Unpaid"), refusal("past_due_balance", "Unpaid.")),
            negative("claims_paused", "says it was paused", answer("Paused.")),
        ],
        metadata={"customer_id": customer["customer_id"], "subscription_id": sid},
    )


def downgrade_plan(world: World, rng: random.Random) -> TaskDraft:
    """Move to the cheapest plan of the same box family from the next period."""
    sub = pick(rng, _subscriptions(world, "AND s.status = 'active' AND s.next_plan_id IS NULL AND p.tier != 'basic'"),
               "active subscription above basic")
    basic = one(world, "SELECT * FROM plans WHERE family = ? AND tier = 'basic'", sub["family"])
    other = one(world, "SELECT * FROM plans WHERE family != ? AND tier = 'basic' ORDER BY plan_id LIMIT 1", sub["family"])
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", sub["customer_id"])
    on_the_line(world, customer, "a cheaper box", preferred_resolution="The cheapest version of my box, please.",
                terms={"downgrade": agree("Yes, downgrade me."), "cancel_end_of_period": decline("No, I want to keep it.")})
    sid = sub["subscription_id"]
    change = call("change_plan", subscription_id=sid, plan_id=basic["plan_id"])
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"My box is too expensive.\" Find out what they want and handle it under "
                "the policy. Confirm with submit_answer."),
        oracle=[ask("preferred_resolution"), *_identity(), verify(customer), optional_call("get_subscription", subscription_id=sid),
                call("list_plans"), offer("downgrade"), change, answer(f"From the next period you are on {basic['name']}.")],
        outcome=completed(),
        rubric=[
            looked_up("read the plans", {"tool": "list_plans"}),
            state("SELECT plan_id || '/' || coalesce(next_plan_id, '-') FROM subscriptions WHERE subscription_id = ?", sid,
                  expect=f"{sub['plan_id']}/{basic['plan_id']}", weight=3, name="basic plan from the next period"),
            agreed_first("downgrade", "change_plan", "customer agreed before the plan change"),
        ],
        negatives=[
            negative("other_family", "moves them to the cheapest plan of another box", *_identity(), verify(customer), call("list_plans"),
                     offer("downgrade"), call("change_plan", subscription_id=sid, plan_id=other["plan_id"]), answer("Done.")),
            negative("cancels", "cancels instead", *_identity(), verify(customer),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Too expensive"), answer("Cancelled.")),
            negative("no_agreement", "changes the plan without agreeing it", *_identity(), verify(customer), call("list_plans"), change,
                     answer("Done.")),
        ],
        metadata={"customer_id": customer["customer_id"], "subscription_id": sid, "plan_id": basic["plan_id"]},
    )


def duplicate_charge(world: World, rng: random.Random) -> TaskDraft:
    """A billing period invoiced and paid twice: refund the later invoice in full."""
    sub = pick(rng, _subscriptions(world, """AND EXISTS (SELECT 1 FROM invoices a JOIN invoices b ON b.subscription_id = a.subscription_id
        AND b.period_start = a.period_start AND b.invoice_id > a.invoice_id AND a.status = 'paid' AND b.status = 'paid'
        WHERE a.subscription_id = s.subscription_id AND NOT EXISTS (SELECT 1 FROM refunds r WHERE r.invoice_id = b.invoice_id))"""),
               "subscription charged twice for a period")
    first, second = rows(world, """SELECT a.invoice_id AS first, b.invoice_id AS second FROM invoices a JOIN invoices b
        ON b.subscription_id = a.subscription_id AND b.period_start = a.period_start AND b.invoice_id > a.invoice_id
        WHERE a.subscription_id = ? AND a.status = 'paid' AND b.status = 'paid' ORDER BY a.invoice_id""", sub["subscription_id"])[0].values()
    amount = money(int(sub["price_minor"]))
    customer = _story(world, sub, "their money back for a double charge", refund_original_payment=agree("Yes, back to my card."))
    sid = sub["subscription_id"]
    refund = call("refund_invoice", invoice_id=second, reason="Period charged twice")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"I was charged twice for my box.\" Check their subscription and resolve "
                "it under the policy. Reply with submit_answer giving values.refund."),
        oracle=[optional_call("get_customer", customer_id=customer["customer_id"]), call("get_subscription", subscription_id=sid),
                offer("refund_original_payment", amount), refund, answer(f"Refunded the duplicate invoice {second}: {amount}.", refund=amount)],
        outcome=completed(),
        rubric=[
            looked_up("read the invoices", {"tool": "get_subscription", "args": {"subscription_id": sid}}),
            state("SELECT count(*) FROM refunds WHERE invoice_id = ? AND amount_minor = ?", second, int(sub["price_minor"]), expect=1, weight=3,
                  name="later invoice refunded in full"),
            state("SELECT count(*) FROM refunds WHERE invoice_id = ?", first, expect=0, gate=True, name="first invoice kept"),
            agreed_first("refund_original_payment", "refund_invoice", "customer agreed before the refund"),
            value_is("refund", amount, weight=1),
        ],
        negatives=[
            negative("first_invoice", "refunds the first invoice of the pair", call("get_subscription", subscription_id=sid),
                     offer("refund_original_payment", amount), call("refund_invoice", invoice_id=first, reason="Duplicate"),
                     answer("Refunded.", refund=amount)),
            negative("no_agreement", "refunds without agreeing it", call("get_subscription", subscription_id=sid), refund,
                     answer("Refunded.", refund=amount)),
            negative("claims_only", "says it was refunded", answer("Refunded.", refund=amount)),
        ],
        metadata={"customer_id": customer["customer_id"], "invoice_id": second, "refund": amount},
    )


TEMPLATES = [
    TaskTemplate(cancel_end_of_period, difficulty="easy", category="subscriptions", split="train", tags=["cancel", "identity", "agreement"],
                 tools=["ask_customer", "verify_identity", "get_customer", "propose_resolution", "cancel_subscription", "submit_answer"]),
    TaskTemplate(cancel_prorated, difficulty="hard", category="subscriptions", split="train", tags=["cancel", "proration", "refund"],
                 tools=["ask_customer", "verify_identity", "get_subscription", "propose_resolution", "cancel_subscription", "submit_answer"]),
    TaskTemplate(pause_subscription, difficulty="easy", category="subscriptions", split="test", tags=["pause", "identity"],
                 tools=["ask_customer", "verify_identity", "propose_resolution", "pause_subscription", "submit_answer"]),
    TaskTemplate(pause_past_due, difficulty="medium", category="refusals", split="train", tags=["pause", "refusal", "policy"],
                 tools=["ask_customer", "verify_identity", "get_subscription", "submit_answer"]),
    TaskTemplate(downgrade_plan, difficulty="medium", category="subscriptions", split="train", tags=["downgrade", "identity", "agreement"],
                 tools=["ask_customer", "verify_identity", "get_subscription", "list_plans", "propose_resolution", "change_plan", "submit_answer"]),
    TaskTemplate(duplicate_charge, difficulty="medium", category="billing", split="test", tags=["duplicate-charge", "refund", "agreement"],
                 tools=["get_customer", "get_subscription", "propose_resolution", "refund_invoice", "submit_answer"]),
]
