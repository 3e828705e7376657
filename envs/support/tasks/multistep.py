"""Multi-step cases (8-15 calls): a lost-parcel ticket worked end to end (the customer declines a replacement and
takes store credit, the ticket is answered and solved), and a double-charged subscriber who then cancels at once."""

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
    looked_up,
    money,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    plant_ticket,
    refundable_orders,
    rows,
    state,
    task,
    value_is,
    verify,
)
from envs.support.tools.subscriptions import prorated_refund_minor
from fixtures.world import World
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def lost_parcel_ticket(world: World, rng: random.Random) -> TaskDraft:
    """Work a lost-parcel ticket end to end: check, offer a replacement (declined), refund to store credit (accepted),
    answer and solve the ticket."""
    order = pick(rng, refundable_orders(world, "AND ship_status = 'lost' AND shipped_minor BETWEEN 1000 AND 50000"), "lost parcel")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", order["customer_id"])
    cid, oid, value = customer["customer_id"], order["order_id"], money(order["shipped_minor"])
    ticket = plant_ticket(world, cid, f"Order {oid} lost", f"Tracking for {oid} says the parcel is lost. What are you going to do?",
                          order_id=oid, tag="lost", priority="high", hours_ago=2)
    on_the_line(world, customer, "to be made whole for a lost parcel", order_number=oid, ticket_number=ticket,
                preferred_resolution="I'd take store credit, I'll reorder something else.",
                terms={"replacement": decline("No, I'll pick something else."), "refund_store_credit": agree("Store credit is great.", min_amount=value),
                       "refund_original_payment": decline("Store credit is easier for me.")})
    refund = call("issue_refund", order_id=oid, amount=value, method="store_credit", reason="lost_parcel")
    reply = call("reply_to_ticket", ticket_id=ticket, body=f"Sorry your parcel was lost: {value} is now in your store credit.", status="solved")
    return task(
        prompt=(f"Ticket {ticket}: customer {cid} reports a lost parcel and is now on chat. Work the case end to end under the policy, the way "
                "the customer prefers: resolve it, answer and solve the ticket, and reply with submit_answer giving values.refund."),
        oracle=[call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid), call("track_shipment", shipment_id=order["shipment_id"]),
                offer("replacement", optional=True), ask("preferred_resolution"), offer("refund_store_credit", value), refund, reply,
                optional_call("get_customer", customer_id=cid), answer(f"Refunded {value} as store credit; ticket solved.", refund=value)],
        outcome=completed(),
        rubric=[
            looked_up("read the ticket", {"tool": "get_ticket", "args": {"ticket_id": ticket}}),
            looked_up("read the order", {"tool": "get_order", "args": {"order_id": oid}}),
            looked_up("checked the tracking", {"tool": "track_shipment", "args": {"shipment_id": order["shipment_id"]}}),
            state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'lost_parcel' AND method = 'store_credit' AND amount_minor = ?",
                  oid, order["shipped_minor"], expect=1, weight=3, name="lost items refunded as store credit"),
            state("SELECT status FROM tickets WHERE ticket_id = ?", ticket, expect="solved", weight=2, name="ticket answered and solved"),
            agreed_first("refund_store_credit", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund"),
            value_is("refund", value, weight=1),
        ],
        negatives=[
            negative("replaces", "sends a replacement the customer declined", call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid),
                     call("track_shipment", shipment_id=order["shipment_id"]), call("send_replacement", order_id=oid, reason="Lost"), reply,
                     answer("Replaced.", refund="0.00")),
            negative("unsolved", "refunds but leaves the ticket unanswered", call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid),
                     call("track_shipment", shipment_id=order["shipment_id"]), ask("preferred_resolution"), offer("refund_store_credit", value),
                     refund, answer("Refunded.", refund=value)),
            negative("to_card", "refunds to the card instead", call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid),
                     call("track_shipment", shipment_id=order["shipment_id"]), ask("preferred_resolution"), offer("refund_store_credit", value),
                     call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="lost_parcel"), reply,
                     answer("Refunded.", refund=value)),
        ],
        metadata={"customer_id": cid, "order_id": oid, "ticket_id": ticket, "refund": value},
    )


def double_charge_then_cancel(world: World, rng: random.Random) -> TaskDraft:
    """A subscriber charged twice this period: refund the duplicate, then cancel at once with the prorated refund."""
    sub = pick(rng, rows(world, f"""
        SELECT s.*, p.price_minor FROM subscriptions s JOIN plans p USING (plan_id) JOIN customers c ON c.customer_id = s.customer_id
        WHERE s.status = 'active' AND c.status = 'active' AND s.period_start < '{TODAY.isoformat()}' AND s.period_end > '{TODAY.isoformat()}'
          AND (SELECT count(*) FROM invoices i WHERE i.subscription_id = s.subscription_id AND i.period_start = s.period_start
               AND i.status = 'paid') = 2
          AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = s.customer_id AND g.severity = 'high' AND g.status = 'open')
        ORDER BY s.subscription_id"""), "subscription charged twice this period")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", sub["customer_id"])
    sid, price = sub["subscription_id"], int(sub["price_minor"])
    second = rows(world, "SELECT invoice_id FROM invoices WHERE subscription_id = ? AND period_start = ? AND status = 'paid' ORDER BY invoice_id",
                  sid, sub["period_start"])[1]["invoice_id"]
    prorated = prorated_refund_minor(price, sub["period_start"], sub["period_end"], TODAY)
    total = money(price + prorated)
    on_the_line(world, customer, "the double charge back and the box stopped",
                terms={"refund_original_payment": agree("Yes, refund the extra charge."), "cancel_immediately": agree("Yes, stop it today."),
                       "cancel_end_of_period": decline("No, today please.")})
    refund = call("refund_invoice", invoice_id=second, reason="Period charged twice")
    cancel = call("cancel_subscription", subscription_id=sid, timing="immediately", reason="Customer request after a double charge")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"You charged me twice for my box this month, and I want to cancel today.\" "
                "Handle both under the policy and reply with submit_answer giving values.total_refunded (everything refunded today)."),
        oracle=[ask("email"), ask("date_of_birth"), verify(customer), optional_call("get_customer", customer_id=customer["customer_id"]),
                call("get_subscription", subscription_id=sid), offer("refund_original_payment", money(price)), refund,
                offer("cancel_immediately", money(prorated)), cancel,
                answer(f"Refunded the duplicate {money(price)} and {money(prorated)} for the unused days: {total}.", total_refunded=total)],
        outcome=completed(),
        rubric=[
            looked_up("read the invoices", {"tool": "get_subscription", "args": {"subscription_id": sid}}),
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
            negative("cancel_only", "cancels but leaves the double charge", ask("email"), ask("date_of_birth"), verify(customer),
                     call("get_subscription", subscription_id=sid), offer("cancel_immediately", money(prorated)), cancel,
                     answer("Cancelled.", total_refunded=money(prorated))),
            negative("end_of_period", "refunds the duplicate but cancels at the period's end", ask("email"), ask("date_of_birth"),
                     verify(customer), call("get_subscription", subscription_id=sid), offer("refund_original_payment", money(price)), refund,
                     offer("cancel_immediately", money(prorated)),
                     call("cancel_subscription", subscription_id=sid, timing="end_of_period", reason="Customer request"),
                     answer("Done.", total_refunded=money(price))),
            negative("claims_only", "reports the refunds without making them", answer("Done.", total_refunded=total)),
        ],
        metadata={"customer_id": customer["customer_id"], "subscription_id": sid, "total_refunded": total},
    )


TEMPLATES = [
    TaskTemplate(lost_parcel_ticket, difficulty="hard", category="multistep", split="train", tags=["lost", "refund", "tickets", "multistep"],
                 tools=["get_ticket", "get_order", "track_shipment", "ask_customer", "propose_resolution", "issue_refund", "reply_to_ticket",
                        "get_customer", "submit_answer"]),
    TaskTemplate(double_charge_then_cancel, difficulty="hard", category="multistep", split="test",
                 tags=["duplicate-charge", "cancel", "proration", "multistep"],
                 tools=["ask_customer", "verify_identity", "get_customer", "get_subscription", "propose_resolution", "refund_invoice",
                        "cancel_subscription", "submit_answer"]),
]
