"""Multi-step cases (8-15 calls when the case is worked through), each next to the twin the world may make of it: a
lost-parcel ticket worked end to end (the customer declines a replacement and takes store credit, the ticket is
answered and solved) — or escalated to the fraud team when the account has an open high-severity fraud signal;
a double-charged subscriber who then cancels at once — or a caller who cannot be verified, for whom nothing
changes."""

from __future__ import annotations

import random

from envs.support.tasks._common import (
    TODAY,
    agree,
    agreed_first,
    answer,
    ask,
    call,
    decline,
    escalation,
    full_name,
    money,
    never,
    offer,
    on_the_line,
    optional_call,
    pick,
    refusal,
    seen,
    state,
    task,
    value_is,
)
from envs.support.tasks.customer_setup import plain_customers, plant_fraud_signal, plant_ticket
from envs.support.tasks.order_setup import basket, variants
from envs.support.tasks.parcel_setup import plant_parcel
from envs.support.tasks.subscription_setup import charge_twice, identify, identity_refused, plant_caller, subscriber
from envs.support.tools.subscriptions import prorated_refund_minor
from fixtures.world import World
from graders.outcome import completed, escalated
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def lost_parcel_ticket(world: World, rng: random.Random) -> TaskDraft:
    """Work a lost-parcel ticket end to end: check, offer a replacement (declined), refund to store credit (accepted),
    answer and solve the ticket — unless the account has an open high-severity fraud signal: then no refund or
    replacement, the ticket goes to the fraud team. The account decides."""
    which = case(rng, {"clear": 6, "flagged": 4})
    customer = pick(rng, plain_customers(world), "customer")
    items = basket(rng, variants(world, "AND v.stock > 0"), 1_000, 45_000)
    order = plant_parcel(world, rng, customer, items, fate="lost", shipped_days_ago=rng.randint(8, 18), last_scan_days_ago=rng.randint(1, 6))
    cid, oid, value = customer["customer_id"], order["order_id"], money(order["subtotal"])
    signal = plant_fraud_signal(world, rng, cid) if which == "flagged" else None
    ticket = plant_ticket(world, cid, f"Order {oid} lost", f"Tracking for {oid} says the parcel is lost. What are you going to do?",
                          order_id=oid, tag="lost", priority="high", hours_ago=rng.uniform(1, 3))
    on_the_line(world, customer, "to be made whole for a lost parcel", order_number=oid, ticket_number=ticket,
                preferred_resolution="I'd take store credit, I'll reorder something else.",
                terms={"replacement": decline("No, I'll pick something else."), "refund_store_credit": agree("Store credit is great.", min_amount=value),
                       "refund_original_payment": decline("Store credit is easier for me.")})
    prompt = (f"Ticket {ticket}: the customer reports a lost parcel and is now on chat. Work the case end to end under the policy and the "
              "way the customer prefers: when you can resolve it, resolve it, answer and solve the ticket. Reply with submit_answer, giving "
              "values.refund if you refund anything.")
    read_ticket, read_order = call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid)
    track = call("track_shipment", shipment_id=order["shipment_id"])
    refund = call("issue_refund", order_id=oid, amount=value, method="store_credit", reason="lost_parcel")
    reply = call("reply_to_ticket", ticket_id=ticket, body=f"Sorry your parcel was lost: {value} is now in your store credit.", status="solved")
    metadata = {"customer_id": cid, "order_id": oid, "ticket_id": ticket, "case": which}
    if which == "flagged":
        escalate = call("escalate_ticket", ticket_id=ticket, team_id="fraud", reason_code="fraud_review_required",
                        note="Open high-severity fraud signal on the account; lost parcel claim")
        return task(
            prompt=prompt,
            oracle=[optional_call("get_ticket", ticket_id=ticket), optional_call("get_order", order_id=oid), optional_call("track_shipment", shipment_id=order["shipment_id"]),
                    call("get_customer", customer_id=cid), escalate,
                    escalation("fraud_review_required", "Your account is under review, so our fraud team will handle this claim.")],
            outcome=escalated("fraud_review_required"),
            rubric=[
                seen("read the account's fraud signal", "fraud_signals", signal, "severity", "status"),
                state("SELECT count(*) FROM escalations WHERE ticket_id = ? AND team_id = 'fraud' AND reason_code = 'fraud_review_required'",
                      ticket, expect=1, weight=3, name="escalated to the team that decides"),
                never("issue_refund", "no refund attempted", order_id=oid),
                never("send_replacement", "no replacement attempted", order_id=oid),
            ],
            negatives=[
                negative("refunds_anyway", "refunds a customer under fraud review", read_ticket, read_order, track, ask("preferred_resolution"),
                         offer("refund_store_credit", value), refund, reply, answer("Refunded.", refund=value)),
                negative("replaces", "sends a replacement instead of escalating", read_ticket, read_order,
                         call("send_replacement", order_id=oid, reason="Lost"), answer("Replaced.")),
                negative("billing", "escalates to billing", read_ticket, call("get_customer", customer_id=cid),
                         call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="fraud_review_required", note="Fraud signal"),
                         escalation("fraud_review_required", "Escalated.")),
                negative("claims_only", "says it was escalated", escalation("fraud_review_required", "Escalated.")),
            ],
            metadata=metadata,
        )
    return task(
        prompt=prompt,
        oracle=[read_ticket, optional_call("get_order", order_id=oid), optional_call("track_shipment", shipment_id=order["shipment_id"]),
                offer("replacement", optional=True), ask("preferred_resolution"),
                offer("refund_store_credit", value), refund, reply, optional_call("get_customer", customer_id=cid),
                answer(f"Refunded {value} as store credit; ticket solved.", refund=value)],
        outcome=completed(),
        rubric=[
            seen("read the ticket", "tickets", ticket, "order_id"),
            seen("checked the parcel is lost", "shipments", order["shipment_id"], "status"),
            state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'lost_parcel' AND method = 'store_credit' AND amount_minor = ?",
                  oid, order["subtotal"], expect=1, weight=3, name="lost items refunded as store credit"),
            state("SELECT status FROM tickets WHERE ticket_id = ?", ticket, expect="solved", weight=2, name="ticket answered and solved"),
            agreed_first("refund_store_credit", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund"),
            value_is("refund", value, weight=1),
        ],
        negatives=[
            negative("replaces", "sends a replacement the customer declined", read_ticket, read_order, track,
                     call("send_replacement", order_id=oid, reason="Lost"), reply, answer("Replaced.", refund="0.00")),
            negative("unsolved", "refunds but leaves the ticket unanswered", read_ticket, read_order, track, ask("preferred_resolution"),
                     offer("refund_store_credit", value), refund, answer("Refunded.", refund=value)),
            negative("to_card", "refunds to the card instead", read_ticket, read_order, track, ask("preferred_resolution"),
                     offer("refund_store_credit", value),
                     call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="lost_parcel"), reply,
                     answer("Refunded.", refund=value)),
            negative("escalates_anyway", "escalates to the fraud team an account with no open high-severity signal", read_ticket,
                     call("get_customer", customer_id=cid),
                     call("escalate_ticket", ticket_id=ticket, team_id="fraud", reason_code="fraud_review_required", note="Check"),
                     escalation("fraud_review_required", "Escalated.")),
        ],
        metadata={**metadata, "refund": value},
    )


def double_charge_then_cancel(world: World, rng: random.Random) -> TaskDraft:
    """A subscriber charged twice this period: refund the duplicate, then cancel at once with the prorated refund — or,
    when the caller cannot be verified (a date of birth that is not the account's), change nothing."""
    which = case(rng, {"ok": 7, "unverified": 4})
    customer, sub = subscriber(world, rng)
    pair = charge_twice(world, rng, sub, sub["period_start"])
    sid, price, second = sub["subscription_id"], int(sub["price_minor"]), pair["second"]
    prorated = prorated_refund_minor(price, sub["period_start"], sub["period_end"], TODAY)
    total = money(price + prorated)
    dob = plant_caller(world, rng, customer, "the double charge back and the box stopped", verifiable=which == "ok",
                       terms={"refund_original_payment": agree("Yes, refund the extra charge."), "cancel_immediately": agree("Yes, stop it today."),
                              "cancel_end_of_period": decline("No, today please.")})
    prompt = (f"{full_name(customer)} is on chat: \"You charged me twice for my box this month, and I want to cancel today.\" Handle both "
              "under the policy and reply with submit_answer giving values.total_refunded (everything refunded today).")
    refund = call("refund_invoice", invoice_id=second, reason="Period charged twice")
    cancel = call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Customer request after a double charge")
    metadata = {"customer_id": customer["customer_id"], "subscription_id": sid}
    if which == "unverified":
        return identity_refused(customer, dob, prompt, forbidden={"refund_invoice": "no invoice refunded", "cancel_subscription": "nothing cancelled"},
                                attempt=[offer("refund_original_payment", money(price)), refund, offer("cancel_immediately", money(prorated)),
                                         cancel], metadata=metadata)
    return task(
        prompt=prompt,
        oracle=[*identify(customer), optional_call("get_customer", customer_id=customer["customer_id"]),
                call("get_subscription", subscription_id=sid), offer("refund_original_payment", money(price)), refund,
                offer("cancel_immediately", money(prorated)), cancel,
                answer(f"Refunded the duplicate {money(price)} and {money(prorated)} for the unused days: {total}.", total_refunded=total)],
        outcome=completed(),
        rubric=[
            seen("read the invoices", "invoices", [pair["first"], second], "period_start", "amount"),
            state("SELECT count(*) FROM refunds WHERE invoice_id = ? AND amount_minor = ?", second, price, expect=1, weight=2,
                  name="duplicate invoice refunded"),
            state("SELECT status FROM subscriptions WHERE subscription_id = ?", sid, expect="cancelled", weight=2, name="subscription cancelled"),
            state("SELECT coalesce(sum(r.amount_minor), 0) FROM refunds r JOIN invoices i USING (invoice_id) WHERE i.subscription_id = ?", sid,
                  expect=price + prorated, weight=2, name="refunds add up"),
            agreed_first("refund_original_payment", "refund_invoice", "customer agreed before the duplicate refund"),
            agreed_first("cancel_immediately", "cancel_subscription", "customer agreed before the cancellation"),
            value_is("total_refunded", total, weight=2),
        ],
        negatives=[
            negative("cancel_only", "cancels but leaves the double charge", *identify(customer),
                     call("get_subscription", subscription_id=sid), offer("cancel_immediately", money(prorated)), cancel,
                     answer("Cancelled.", total_refunded=money(prorated))),
            negative("end_of_period", "refunds the duplicate but cancels at the period's end", *identify(customer),
                     call("get_subscription", subscription_id=sid), offer("refund_original_payment", money(price)), refund,
                     offer("cancel_immediately", money(prorated)),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Customer request"),
                     answer("Done.", total_refunded=money(price))),
            negative("refuses_verified", "refuses a customer who passed the identity check", *identify(customer),
                     call("get_subscription", subscription_id=sid), refusal("identity_not_verified", "Could not verify you.")),
            negative("claims_only", "reports the refunds without making them", answer("Done.", total_refunded=total)),
        ],
        metadata={**metadata, "total_refunded": total, "case": "ok"},
    )


TEMPLATES = [
    TaskTemplate(lost_parcel_ticket, difficulty="hard", category="multistep", split="train", tags=["lost", "refund", "tickets", "multistep"],
                 tools=["get_ticket", "get_order", "track_shipment", "ask_customer", "propose_resolution", "issue_refund", "reply_to_ticket",
                        "get_customer", "escalate_ticket", "submit_answer"]),
    TaskTemplate(double_charge_then_cancel, difficulty="hard", category="multistep", split="test",
                 tags=["duplicate-charge", "cancel", "proration", "multistep"],
                 tools=["ask_customer", "search_customers", "verify_identity", "get_customer", "get_subscription", "propose_resolution",
                        "refund_invoice", "cancel_subscription", "submit_answer"]),
]
