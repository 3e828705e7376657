"""Escalations, each next to its compliant twin: a lost parcel refunded by the agent, or escalated to billing when
its value is above the agent's limit; a late parcel's shipping fee refunded, or escalated to billing when the
order's payment is in chargeback; goodwill credit given, or escalated to the fraud team under an open
high-severity fraud signal; a product question answered, or a safety report escalated to product safety.

Every template poses one request worded the same in every case and draws the case first
(``graders.setup.case``); the setup plants the subject with seeded values and makes the deciding fact hold. The
prompt names the ticket (a number a person quotes); the order, the customer and their records are one hop
further, read through the tools. An escalation's rubric checks the escalation row in the end world (team and
reason) and gates on the read of the deciding record and on the action the agent must not take itself.
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.support.rules import GOODWILL_CAPS_MINOR
from envs.support.tasks._common import (
    NOW,
    agree,
    agreed_first,
    answer,
    call,
    escalation,
    money,
    never,
    offer,
    on_the_line,
    optional_call,
    pick,
    rows,
    seen,
    state,
    task,
)
from envs.support.tasks.customer_setup import UNIQUE_NAME, plain_customers, plant_fraud_signal, plant_ticket
from envs.support.tasks.order_setup import basket, variants
from envs.support.tasks.parcel_setup import plant_parcel
from fixtures.world import World
from graders.outcome import completed, escalated
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _escalated(ticket_id: str, team: str, code: str) -> object:
    """The escalation row in the end world: this ticket, to ``team``, for ``code`` (declaring it is not enough)."""
    return state("SELECT count(*) FROM escalations WHERE ticket_id = ? AND team_id = ? AND reason_code = ?", ticket_id, team, code,
                 expect=1, weight=3, name="escalated to the team that decides")


def refund_over_limit(world: World, rng: random.Random) -> TaskDraft:
    """A lost parcel the customer wants refunded in full: refund it (agreed with the customer) when it is worth up to
    the agent's 500.00 limit, escalate to billing when it is worth more. The order's value decides."""
    which = case(rng, {"within": 6, "over": 4})
    customer = pick(rng, plain_customers(world), "customer")
    low, high = (15_000, 50_000) if which == "within" else (50_000, 95_000)
    items = basket(rng, variants(world, "AND v.stock > 0"), low, high)
    planted = plant_parcel(world, rng, customer, items, fate="lost", shipped_days_ago=rng.randint(8, 16), last_scan_days_ago=rng.randint(1, 5))
    oid, total = planted["order_id"], money(planted["subtotal"])
    ticket = plant_ticket(world, customer["customer_id"], f"Order {oid} never arrived", f"My order {oid} never arrived and tracking "
                          "says lost. I want my money back.", order_id=oid, tag="lost", priority="high")
    on_the_line(world, customer, "a full refund of a lost parcel", order_number=oid, ticket_number=ticket,
                terms={"refund_original_payment": agree("Yes, all of it.", min_amount=total), "escalate": agree("OK, as long as it's sorted.")})
    prompt = (f"Ticket {ticket}: the customer says their parcel was lost and wants a full refund; they are also on chat. Check the "
              "order and handle it under the policy. Reply with submit_answer.")
    look = [optional_call("get_ticket", ticket_id=ticket)]
    track = optional_call("track_shipment", shipment_id=planted["shipment_id"])
    refund = call("issue_refund", order_id=oid, amount=total, method="original_payment", reason="lost_parcel")
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="refund_limit_exceeded",
                    note=f"Lost parcel, items worth {total}: above the agent refund limit")
    metadata = {"customer_id": customer["customer_id"], "order_id": oid, "ticket_id": ticket, "case": which}
    if which == "within":
        return task(
            prompt=prompt,
            oracle=[*look, optional_call("get_order", order_id=oid), track, offer("refund_original_payment", total), refund,
                    answer(f"Refunded {total} to your card for the lost parcel.")],
            outcome=completed(),
            rubric=[
                state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'lost_parcel' AND method = 'original_payment' "
                      "AND amount_minor = ?", oid, planted["subtotal"], expect=1, weight=3, name="lost items refunded in full"),
                agreed_first("refund_original_payment", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund",
                             amount=total),
                never("send_replacement", "no replacement besides the refund"),
            ],
            negatives=[
                negative("escalates_anyway", "escalates a refund within the agent's limit", call("get_order", order_id=oid), escalate,
                         escalation("refund_limit_exceeded", "Escalated.")),
                negative("partial", "refunds less than the lost items' value", call("get_order", order_id=oid),
                         offer("refund_original_payment", total),
                         call("issue_refund", order_id=oid, amount=money(planted["subtotal"] // 2), method="original_payment",
                              reason="lost_parcel"), answer("Refunded.")),
                negative("no_agreement", "refunds without agreeing it with the customer", call("get_order", order_id=oid), refund,
                         answer("Refunded.")),
                negative("claims_only", "says it was refunded", answer(f"Refunded {total}.")),
            ],
            metadata={**metadata, "refund": total},
        )
    return task(
        prompt=prompt,
        oracle=[*look, call("get_order", order_id=oid), track, offer("escalate", optional=True), escalate,
                escalation("refund_limit_exceeded", f"The lost items are worth {total}, above the 500.00 an agent may refund; billing will refund it.")],
        outcome=escalated("refund_limit_exceeded"),
        rubric=[
            seen("read the order's value", "orders", oid, "total"),
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
            negative("claims_only", "says it was escalated", escalation("refund_limit_exceeded", "Escalated.")),
        ],
        metadata=metadata,
    )


_SHIPPING_FEES = [599, 799, 999, 1299, 1499]
"""Standard and express shipping fees a small order may have paid."""


def _late_small_order(world: World, rng: random.Random, customer: dict) -> dict:
    """A small order (under 50.00, so it paid shipping: a seeded standard or express fee) still in transit past its
    promised date (late, not lost: scanned in the last two days), paid by card. Returns :func:`plant_parcel`'s figures."""
    items = basket(rng, variants(world, "AND v.price_minor < 2500 AND v.stock > 0"), 0, 4_999)
    return plant_parcel(world, rng, customer, items, fate="in_transit", shipped_days_ago=rng.randint(7, 12), transit_days=rng.randint(3, 5),
                        last_scan_days_ago=rng.randint(1, 2), shipping_minor=rng.choice(_SHIPPING_FEES))


def chargeback_escalation(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks for a late parcel's shipping fee back: refund it (agreed with the customer) when the order is
    paid normally, escalate to billing when its payment is in chargeback (billing handles those alone). The
    order's payment decides."""
    which = case(rng, {"captured": 6, "chargeback": 4})
    customer = pick(rng, plain_customers(world), "customer")
    planted = _late_small_order(world, rng, customer)
    oid, fee = planted["order_id"], money(planted["shipping"])
    payment = rows(world, "SELECT payment_id FROM payments WHERE order_id = ?", oid)[0]["payment_id"]
    if which == "chargeback":
        world.execute("UPDATE payments SET status = 'chargeback' WHERE payment_id = ?", (payment,))
    ticket = plant_ticket(world, customer["customer_id"], f"Refund for {oid}", f"Order {oid} was promised by {planted['promised_by']} and "
                          "still hasn't arrived. Please refund what I paid for shipping.", order_id=oid, tag="refund_status")
    on_the_line(world, customer, "the shipping fee of a late parcel back", order_number=oid, ticket_number=ticket,
                terms={"shipping_refund": agree("Yes, please.", min_amount=fee)})
    prompt = (f"Ticket {ticket}: the customer asks for a refund on an order; they are also on chat. Check it and handle it under the "
              "policy. Reply with submit_answer.")
    refund = call("issue_refund", order_id=oid, amount=fee, method="original_payment", reason="late_delivery")
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="chargeback_open",
                    note="Payment is in chargeback with the card issuer")
    metadata = {"customer_id": customer["customer_id"], "order_id": oid, "ticket_id": ticket, "case": which}
    if which == "captured":
        return task(
            prompt=prompt,
            oracle=[optional_call("get_ticket", ticket_id=ticket), optional_call("get_order", order_id=oid),
                    optional_call("track_shipment", shipment_id=planted["shipment_id"]), offer("shipping_refund", fee), refund,
                    answer(f"Refunded the {fee} shipping fee of your late parcel.")],
            outcome=completed(),
            rubric=[
                state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'late_delivery' AND amount_minor = ?", oid,
                      planted["shipping"], expect=1, weight=3, name="shipping fee refunded"),
                agreed_first("shipping_refund", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund",
                             amount=fee),
            ],
            negatives=[
                negative("escalates_anyway", "escalates an order whose payment is not disputed", call("get_order", order_id=oid), escalate,
                         escalation("chargeback_open", "Escalated.")),
                negative("whole_order", "refunds the whole order instead of the shipping", call("get_order", order_id=oid),
                         offer("shipping_refund", fee),
                         call("issue_refund", order_id=oid, amount=money(planted["total"]), method="original_payment", reason="late_delivery"),
                         answer("Refunded.")),
                negative("no_agreement", "refunds without agreeing it with the customer", call("get_order", order_id=oid), refund,
                         answer("Refunded.")),
                negative("claims_only", "says it was refunded", answer("Refunded.")),
            ],
            metadata={**metadata, "refund": fee},
        )
    return task(
        prompt=prompt,
        oracle=[optional_call("get_ticket", ticket_id=ticket), call("get_order", order_id=oid), escalate,
                escalation("chargeback_open", "The order's payment is disputed with your bank (chargeback); billing will handle the refund.")],
        outcome=escalated("chargeback_open"),
        rubric=[
            seen("read the order's payment status", "payments", payment, "status"),
            _escalated(ticket, "billing", "chargeback_open"),
            never("issue_refund", "no refund attempted on a chargeback", order_id=oid),
        ],
        negatives=[
            negative("refund_attempt", "tries to refund first", call("get_order", order_id=oid),
                     call("issue_refund", order_id=oid, amount=fee, method="original_payment", reason="late_delivery"), escalate,
                     escalation("chargeback_open", "Escalated.")),
            negative("fraud_team", "sends it to the fraud team", call("get_order", order_id=oid),
                     call("escalate_ticket", ticket_id=ticket, team_id="fraud", reason_code="chargeback_open",
                          note="Payment is in chargeback with the card issuer"),
                     escalation("chargeback_open", "Escalated.")),
            negative("claims_only", "says it was escalated", escalation("chargeback_open", "Escalated.")),
        ],
        metadata=metadata,
    )


_COMPENSATION = [
    "My last two orders were late. I expect some store credit for the trouble.",
    "Two of my orders arrived days after the promised date. Some store credit would be fair.",
    "Both of my recent deliveries were late and I waited at home for nothing. Can I get a credit?",
]


def fraud_review(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks for goodwill credit after late orders: give the tier's cap (agreed with the customer), or
    escalate to the fraud team when the account has an open high-severity fraud signal. The account decides; a
    low-severity or cleared signal does not block the credit."""
    which = case(rng, {"clear": 6, "flagged": 4})
    since = (NOW - timedelta(days=30)).isoformat()
    customer = pick(rng, plain_customers(world, "AND NOT EXISTS (SELECT 1 FROM credit_ledger e WHERE e.customer_id = c.customer_id "
                                                f"AND e.kind = 'goodwill' AND e.created_at >= '{since}')"), "customer without recent goodwill")
    cid, cap_minor = customer["customer_id"], GOODWILL_CAPS_MINOR[customer["tier"]]
    cap = money(cap_minor)
    signal = None
    if which == "flagged":
        signal = plant_fraud_signal(world, rng, cid)
    elif rng.random() < 0.5:  # a signal that does not block: the agent must read its severity and status
        plant_fraud_signal(world, rng, cid, **rng.choice([{"severity": "low", "status": "open"}, {"severity": "high", "status": "cleared"}]))
    ticket = plant_ticket(world, cid, "Compensation please", rng.choice(_COMPENSATION), tag="feedback")
    on_the_line(world, customer, "goodwill credit", ticket_number=ticket, terms={"goodwill_credit": agree("Yes, I'll take it.", min_amount=cap)})
    prompt = (f"Ticket {ticket}: the customer asks for goodwill credit after late orders; they are also on chat. Check the account and "
              "handle it under the policy. Reply with submit_answer.")
    credit = call("issue_goodwill_credit", customer_id=cid, amount=cap, reason="Late orders")
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="fraud", reason_code="fraud_review_required",
                    note="Open high-severity fraud signal on the account")
    metadata = {"customer_id": cid, "ticket_id": ticket, "case": which}
    if which == "clear":
        return task(
            prompt=prompt,
            oracle=[optional_call("get_ticket", ticket_id=ticket), optional_call("get_customer", customer_id=cid),
                    offer("goodwill_credit", cap), credit, answer(f"Added {cap} of store credit for the late orders.")],
            outcome=completed(),
            rubric=[
                state("SELECT count(*) FROM credit_ledger WHERE customer_id = ? AND kind = 'goodwill' AND amount_minor = ? AND created_at >= ?",
                      cid, cap_minor, NOW.isoformat(), expect=1, weight=3, name="goodwill credit at the tier's cap"),
                agreed_first("goodwill_credit", "issue_goodwill_credit", "customer agreed before the credit", amount=cap),
            ],
            negatives=[
                negative("escalates_anyway", "escalates an account with no open high-severity signal", call("get_customer", customer_id=cid),
                         escalate, escalation("fraud_review_required", "Escalated.")),
                negative("over_cap", "offers and gives more than the tier's cap", call("get_customer", customer_id=cid),
                         offer("goodwill_credit", money(cap_minor + 500)),
                         call("issue_goodwill_credit", customer_id=cid, amount=money(cap_minor + 500), reason="Late orders"), answer("Done.")),
                negative("no_agreement", "credits without agreeing it with the customer", call("get_customer", customer_id=cid), credit,
                         answer("Done.")),
                negative("claims_only", "says the credit was given", answer(f"Added {cap}.")),
            ],
            metadata={**metadata, "credit": cap},
        )
    return task(
        prompt=prompt,
        oracle=[optional_call("get_ticket", ticket_id=ticket), call("get_customer", customer_id=cid), escalate,
                escalation("fraud_review_required", "The account is under review; the trust and safety team will get back to you.")],
        outcome=escalated("fraud_review_required"),
        rubric=[
            seen("read the account's fraud signal", "fraud_signals", signal, "severity", "status"),
            _escalated(ticket, "fraud", "fraud_review_required"),
            never("issue_goodwill_credit", "no credit attempted"),
        ],
        negatives=[
            negative("credit_attempt", "tries the credit", call("get_customer", customer_id=cid),
                     call("issue_goodwill_credit", customer_id=cid, amount=cap, reason="Late orders"), escalate,
                     escalation("fraud_review_required", "Escalated.")),
            negative("billing", "escalates to billing", call("get_customer", customer_id=cid),
                     call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="fraud_review_required",
                          note="Open high-severity fraud signal on the account"),
                     escalation("fraud_review_required", "Escalated.")),
            negative("claims_only", "says it was escalated", escalation("fraud_review_required", "Escalated.")),
        ],
        metadata=metadata,
    )


_PRODUCT_REPORTS: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {
    # product → ((subject, a safety report: injury, burn or hazard), (subject, a question a reply answers))
    "PRD-0001": (("Earbud burned my ear", "One earbud got so hot while charging that it burned my ear."),
                 ("Pairing question", "How do I pair the earbuds with a second phone?")),
    "PRD-0003": (("Power bank smoking", "The power bank swelled up and started smoking on my desk. It nearly caught fire."),
                 ("Charging time", "How long does the power bank take to charge fully?")),
    "PRD-0004": (("Speaker sparked", "The speaker sparked when I plugged it in and the plug is scorched."),
                 ("Two phones?", "Can the speaker play music from two phones at once?")),
    "PRD-0006": (("Watch burned my wrist", "The watch overheated and left a burn mark on my wrist."),
                 ("Watch face", "How do I change the watch face?")),
    "PRD-0008": (("Vacuum battery smoking", "The vacuum's battery started smoking while docked and the dock melted."),
                 ("Emptying the bin", "How often should I empty the vacuum's bin?")),
    "PRD-0015": (("Skillet handle broke", "The skillet's handle snapped off while it was hot and I burned my arm."),
                 ("Seasoning", "How should I season the skillet before first use?")),
    "PRD-0020": (("Kettle burned me", "The Electric Kettle overheated and the handle burned my hand. This is dangerous!"),
                 ("Descaling", "How do I descale the kettle?")),
    "PRD-0029": (("Battery leaked", "A battery in the robot kit leaked and burned my son's fingers."),
                 ("Which batteries?", "Which batteries does the robot kit take?")),
}


def safety_escalation(world: World, rng: random.Random) -> TaskDraft:
    """A new ticket about a product the customer received: a question is answered and the ticket solved; a safety
    report (injury, burn, hazard) is escalated to product safety and may not be solved first. The ticket's text
    decides."""
    which = case(rng, {"question": 6, "safety": 4})
    products = sorted(_PRODUCT_REPORTS)
    marks = ", ".join("?" for _ in products)
    # the customer is named, not the ticket: the ticket's text decides, so it must be found and read through the tools
    line = pick(rng, rows(world, f"""
        SELECT l.line_id, l.order_id, v.product_id, p.name AS product, o.customer_id, c.first_name || ' ' || c.last_name AS customer
        FROM order_lines l JOIN orders o USING (order_id) JOIN variants v USING (variant_id) JOIN products p USING (product_id)
        JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
        WHERE v.product_id IN ({marks}) AND o.status = 'delivered' {UNIQUE_NAME}
          AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.customer_id = c.customer_id AND t.status IN ('new', 'open', 'pending'))
        ORDER BY l.line_id""", *products), "delivered product of a customer with no open ticket")
    report, question = _PRODUCT_REPORTS[line["product_id"]]
    subject, body = report if which == "safety" else question
    ticket = plant_ticket(world, line["customer_id"], subject, body, order_id=line["order_id"],
                          tag="safety" if which == "safety" else "product_question", hours_ago=rng.uniform(0.1, 0.9))
    message = rows(world, "SELECT message_id FROM ticket_messages WHERE ticket_id = ?", ticket)[0]["message_id"]
    # the customer's words decide (a question, or an injury, burn or hazard): the message itself, not its subject line
    read_words = seen("read what the customer wrote", "ticket_messages", message, "body")
    prompt = (f"{line['customer']} has just written in about the {line['product']} they received. Find their new ticket, read it and "
              "handle it under the policy: answer and solve what you can answer yourself, and hand anything the policy escalates to "
              "the team that takes it (without replying: they will). Reply with submit_answer.")
    find = [optional_call("search_customers", query=line["customer"]),
            optional_call("list_tickets", customer_id=line["customer_id"], status="new")]
    read = call("get_ticket", ticket_id=ticket)
    reply = call("reply_to_ticket", ticket_id=ticket, body="Thanks for asking! Here is how: see the product guide in our help centre.",
                 status="solved")
    escalate = call("escalate_ticket", ticket_id=ticket, team_id="product_safety", reason_code="escalation_required",
                    note="Safety report: the customer was hurt or the product is a hazard")
    metadata = {"customer_id": line["customer_id"], "ticket_id": ticket, "case": which}
    if which == "question":
        return task(
            prompt=prompt,
            oracle=[*find, read, reply, answer("Answered the customer's question and solved the ticket.")],
            outcome=completed(),
            rubric=[
                read_words,
                state("SELECT status || '/' || (SELECT count(*) FROM ticket_messages m WHERE m.ticket_id = t.ticket_id AND m.kind = 'agent') "
                      "FROM tickets t WHERE ticket_id = ?", ticket, expect="solved/1", weight=3, name="question answered and ticket solved"),
                never("escalate_ticket", "not escalated"),
            ],
            negatives=[
                negative("escalates_question", "escalates a plain question to product safety", read, escalate,
                         escalation("escalation_required", "Escalated.")),
                negative("left_pending", "replies but leaves the ticket pending", read,
                         call("reply_to_ticket", ticket_id=ticket, body="Here is how.", status="pending"), answer("Answered.")),
                negative("claims_only", "says it was answered", answer("Answered.")),
            ],
            metadata=metadata,
        )
    return task(
        prompt=prompt,
        oracle=[*find, read, escalate, escalation("escalation_required", "A safety report: escalated to product safety.")],
        outcome=escalated("escalation_required"),
        rubric=[
            read_words,
            _escalated(ticket, "product_safety", "escalation_required"),
            never("issue_goodwill_credit", "no credit in place of the escalation"),
        ],
        negatives=[
            negative("solves", "replies and solves it without escalating", read,
                     call("reply_to_ticket", ticket_id=ticket, body="Sorry about that, please stop using it.", status="solved"),
                     answer("Solved.")),
            negative("billing", "escalates to billing", read,
                     call("escalate_ticket", ticket_id=ticket, team_id="billing", reason_code="escalation_required",
                          note="Customer hurt by a product"),
                     escalation("escalation_required", "Escalated.")),
            negative("credit", "offers credit and escalates", read,
                     call("issue_goodwill_credit", customer_id=line["customer_id"], amount="10.00", reason="Hurt"), escalate,
                     escalation("escalation_required", "Escalated.")),
        ],
        metadata=metadata,
    )


TEMPLATES = [
    TaskTemplate(refund_over_limit, difficulty="hard", category="escalations", split="train", tags=["escalation", "refund-limit", "lost"],
                 tools=["get_ticket", "get_order", "track_shipment", "propose_resolution", "issue_refund", "escalate_ticket", "submit_answer"]),
    TaskTemplate(chargeback_escalation, difficulty="medium", category="escalations", split="test", tags=["escalation", "chargeback"],
                 tools=["get_ticket", "get_order", "track_shipment", "propose_resolution", "issue_refund", "escalate_ticket", "submit_answer"]),
    TaskTemplate(fraud_review, difficulty="medium", category="escalations", split="train", tags=["escalation", "fraud"],
                 tools=["get_ticket", "get_customer", "propose_resolution", "issue_goodwill_credit", "escalate_ticket", "submit_answer"]),
    TaskTemplate(safety_escalation, difficulty="easy", category="escalations", split="train", tags=["escalation", "safety", "tickets"],
                 tools=["search_customers", "list_tickets", "get_ticket", "reply_to_ticket", "escalate_ticket", "submit_answer"]),
]
