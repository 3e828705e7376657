"""Escalations that must happen: a refund above the agent's limit, an order in chargeback, a customer under fraud
review, and a safety report. Each rubric gates on the escalation (to the right team, with the policy's reason)
and on the action the agent must not take itself."""

from __future__ import annotations

import random

from envs.support.tasks._common import (
    agree,
    answer,
    call,
    escalation,
    looked_up,
    money,
    never,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    plain_customers,
    plant_order,
    plant_ticket,
    rows,
    state,
    task,
    variants,
)
from fixtures.world import World
from graders.outcome import escalated
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _escalated(ticket_id: str, team: str, code: str) -> object:
    return state("SELECT count(*) FROM escalations WHERE ticket_id = ? AND team_id = ? AND reason_code = ?", ticket_id, team, code,
                 expect=1, weight=3, name=f"escalated to {team}")


def refund_over_limit(world: World, rng: random.Random) -> TaskDraft:
    """A lost parcel worth more than the agent's 500.00 refund limit: escalate to billing instead of refunding."""
    customer = pick(rng, plain_customers(world), "customer")
    pricey = variants(world, "AND v.price_minor >= 17000")
    items = [(v, 1) for v in rng.sample(pricey, 3)]
    while sum(v["price_minor"] for v, _ in items) <= 50_000:
        items.append((pick(rng, pricey, "expensive variant"), 1))
    planted = plant_order(world, customer, items, placed_days_ago=rng.randint(12, 20), fate="lost")
    oid, total = planted["order_id"], money(planted["subtotal"])
    ticket = plant_ticket(world, customer["customer_id"], f"Order {oid} never arrived", f"My order {oid} never arrived and tracking "
                          "says lost. I want my money back.", order_id=oid, tag="lost", priority="high")
    on_the_line(world, customer, "a full refund of a lost parcel", order_number=oid, ticket_number=ticket,
                terms={"refund_original_payment": agree("Yes, all of it.", min_amount=total), "escalate": agree("OK, as long as it's sorted.")})
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="refund_limit_exceeded",
                    note=f"Lost parcel, items worth {total}: above the agent refund limit")
    return task(
        prompt=(f"Ticket {ticket}: customer {customer['customer_id']} says their parcel was lost and wants a full refund; they are also on "
                "chat. Check the order and handle it under the policy. Reply with submit_answer."),
        oracle=[optional_call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid),
                optional_call("track_shipment", shipment_id=planted["shipment_id"]), offer("escalate", optional=True), escalate,
                escalation("refund_limit_exceeded", f"The lost items are worth {total}, above the 500.00 an agent may refund; billing will refund it.")],
        outcome=escalated("refund_limit_exceeded"),
        rubric=[
            looked_up("read the order's value", {"tool": "get_order", "args": {"order_id": oid}}),
            _escalated(ticket, "billing", "refund_limit_exceeded"),
            never("issue_refund", "no refund by the agent", order_id=oid),
            never("send_replacement", "no replacement in place of the escalation"),
        ],
        negatives=[
            negative("refunds_limit", "refunds 500.00 itself and escalates the rest", call("get_order", order_id=oid),
                     call("issue_refund", order_id=oid, amount="500.00", method="original_payment", reason="lost_parcel"), escalate,
                     escalation("refund_limit_exceeded", "Partly refunded.")),
            negative("wrong_team", "escalates to logistics", call("get_order", order_id=oid),
                     call("escalate_ticket", ticket_id=ticket, team_id="logistics", reason_code="refund_limit_exceeded", note="Lost"),
                     escalation("refund_limit_exceeded", "Escalated.")),
            negative("replaces", "sends a replacement instead of escalating", call("get_order", order_id=oid),
                     call("send_replacement", order_id=oid, reason="Lost"), answer("Replaced.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "ticket_id": ticket},
    )


def chargeback_escalation(world: World, rng: random.Random) -> TaskDraft:
    """A refund asked on an order whose payment is in chargeback: billing handles it."""
    order = pick(rng, rows(world, """
        SELECT o.* FROM orders o JOIN payments p ON p.order_id = o.order_id AND p.status = 'chargeback'
        JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
        WHERE NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = o.customer_id AND g.severity = 'high' AND g.status = 'open')
        ORDER BY o.order_id"""), "order in chargeback")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", order["customer_id"])
    oid = order["order_id"]
    ticket = plant_ticket(world, customer["customer_id"], f"Refund for {oid}", f"Please refund order {oid}, I'm not happy with it.",
                          order_id=oid, tag="refund_status")
    on_the_line(world, customer, "a refund", order_number=oid, ticket_number=ticket, terms={"refund_original_payment": agree("Yes.")})
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="chargeback_open",
                    note="Payment is in chargeback with the card issuer")
    return task(
        prompt=(f"Ticket {ticket}: customer {customer['customer_id']} asks for a refund of an order. Check it and handle it under the policy. "
                "Reply with submit_answer."),
        oracle=[optional_call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid), escalate,
                escalation("chargeback_open", "The order's payment is disputed with your bank (chargeback); billing will handle the refund.")],
        outcome=escalated("chargeback_open"),
        rubric=[
            looked_up("read the order's payment", {"tool": "get_order", "args": {"order_id": oid}}),
            _escalated(ticket, "billing", "chargeback_open"),
            never("issue_refund", "no refund attempted on a chargeback", order_id=oid),
        ],
        negatives=[
            negative("refund_attempt", "tries to refund first", call("get_order", order_id=oid),
                     call("issue_refund", order_id=oid, amount="1.00", method="original_payment", reason="late_delivery"), escalate,
                     escalation("chargeback_open", "Escalated.")),
            negative("fraud_team", "sends it to the fraud team", call("get_order", order_id=oid),
                     call("escalate_ticket", ticket_id=ticket, team_id="fraud", reason_code="chargeback_open",
                          note="Payment is in chargeback with the card issuer"),
                     escalation("chargeback_open", "Escalated.")),
            negative("claims_only", "says it was escalated", escalation("chargeback_open", "Escalated.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "ticket_id": ticket},
    )


def fraud_review(world: World, rng: random.Random) -> TaskDraft:
    """A customer with an open high-severity fraud signal asks for goodwill credit: escalate to the fraud team."""
    customer = pick(rng, rows(world, """
        SELECT c.* FROM customers c JOIN fraud_signals g ON g.customer_id = c.customer_id AND g.severity = 'high' AND g.status = 'open'
        WHERE c.status = 'active' ORDER BY c.customer_id"""), "customer under fraud review")
    cid = customer["customer_id"]
    ticket = plant_ticket(world, cid, "Compensation please", "My last two orders were late. I expect some store credit for the trouble.",
                          tag="feedback")
    on_the_line(world, customer, "goodwill credit", terms={"goodwill_credit": agree("Yes, I'll take it.")})
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="fraud", reason_code="fraud_review_required",
                    note="Open high-severity fraud signal on the account")
    return task(
        prompt=(f"Ticket {ticket}: customer {cid} asks for goodwill credit after two late orders. Check the account and handle it under "
                "the policy. Reply with submit_answer."),
        oracle=[optional_call("get_ticket", ticket_id=ticket), call("get_customer", customer_id=cid), escalate,
                escalation("fraud_review_required", "The account is under review; the trust and safety team will get back to you.")],
        outcome=escalated("fraud_review_required"),
        rubric=[
            looked_up("read the account's fraud signals", {"tool": "get_customer", "args": {"customer_id": cid}}),
            _escalated(ticket, "fraud", "fraud_review_required"),
            never("issue_goodwill_credit", "no credit attempted"),
        ],
        negatives=[
            negative("credit_attempt", "tries the credit", call("get_customer", customer_id=cid),
                     call("issue_goodwill_credit", customer_id=cid, amount="10.00", reason="Late orders"), escalate,
                     escalation("fraud_review_required", "Escalated.")),
            negative("billing", "escalates to billing", call("get_customer", customer_id=cid),
                     call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="fraud_review_required",
                          note="Open high-severity fraud signal on the account"),
                     escalation("fraud_review_required", "Escalated.")),
            negative("claims_only", "says it was escalated", escalation("fraud_review_required", "Escalated.")),
        ],
        metadata={"customer_id": cid, "ticket_id": ticket},
    )


def safety_escalation(world: World, rng: random.Random) -> TaskDraft:
    """A customer burned by a kettle: escalate to product safety (and it may not be solved before)."""
    line = pick(rng, rows(world, """
        SELECT l.*, o.customer_id FROM order_lines l JOIN orders o USING (order_id) JOIN variants v USING (variant_id)
        JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
        WHERE v.product_id = 'PRD-0020' AND o.status = 'delivered' ORDER BY l.line_id"""), "delivered kettle")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", line["customer_id"])
    ticket = plant_ticket(world, customer["customer_id"], "Kettle burned me", "The Electric Kettle overheated and the handle burned my hand. "
                          "This is dangerous!", order_id=line["order_id"], tag="safety")
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="product_safety", reason_code="escalation_required",
                    note="Customer burned by an overheating kettle")
    return task(
        prompt=f"Ticket {ticket} just came in. Read it and handle it under the policy. Reply with submit_answer.",
        oracle=[call("get_ticket", ticket_id=ticket), escalate,
                escalation("escalation_required", "A safety report: escalated to product safety.")],
        outcome=escalated("escalation_required"),
        rubric=[
            looked_up("read the ticket", {"tool": "get_ticket", "args": {"ticket_id": ticket}}),
            _escalated(ticket, "product_safety", "escalation_required"),
            never("issue_goodwill_credit", "no credit in place of the escalation"),
        ],
        negatives=[
            negative("solves", "replies and solves it without escalating", call("get_ticket", ticket_id=ticket),
                     call("reply_to_ticket", ticket_id=ticket, body="Sorry about that, please stop using it.", status="solved"),
                     answer("Solved.")),
            negative("billing", "escalates to billing", call("get_ticket", ticket_id=ticket),
                     call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="escalation_required",
                          note="Customer burned by an overheating kettle"),
                     escalation("escalation_required", "Escalated.")),
            negative("credit", "offers credit and escalates", call("get_ticket", ticket_id=ticket),
                     call("issue_goodwill_credit", customer_id=customer["customer_id"], amount="10.00", reason="Burn"), escalate,
                     escalation("escalation_required", "Escalated.")),
        ],
        metadata={"customer_id": customer["customer_id"], "ticket_id": ticket},
    )


TEMPLATES = [
    TaskTemplate(refund_over_limit, difficulty="hard", category="escalations", split="train", tags=["escalation", "refund-limit", "lost"],
                 tools=["get_ticket", "get_order", "track_shipment", "propose_resolution", "escalate_ticket", "submit_answer"]),
    TaskTemplate(chargeback_escalation, difficulty="medium", category="escalations", split="test", tags=["escalation", "chargeback"],
                 tools=["get_ticket", "get_order", "escalate_ticket", "submit_answer"]),
    TaskTemplate(fraud_review, difficulty="medium", category="escalations", split="train", tags=["escalation", "fraud"],
                 tools=["get_ticket", "get_customer", "escalate_ticket", "submit_answer"]),
    TaskTemplate(safety_escalation, difficulty="easy", category="escalations", split="train", tags=["escalation", "safety", "tickets"],
                 tools=["get_ticket", "escalate_ticket", "submit_answer"]),
]
