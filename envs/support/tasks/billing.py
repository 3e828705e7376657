"""Billing tasks: a coupon that did not apply (refunded as a price adjustment), a coupon that was never valid for
the order (declined with the rule it breaks), goodwill credit up to the tier's cap."""

from __future__ import annotations

import random
from datetime import timedelta

from envs.support.rules import GOODWILL_CAPS_MINOR
from envs.support.tasks._common import (
    TODAY,
    agree,
    agreed_first,
    answer,
    ask,
    call,
    looked_up,
    money,
    never,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    plain_customers,
    refusal,
    rows,
    state,
    task,
    value_is,
)
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]

_RECENT = (TODAY - timedelta(days=29)).isoformat()


def _orders(world: World, extra: str) -> list[dict]:
    """Recent orders without a coupon, refund or chargeback, of active customers without an open high fraud signal."""
    return rows(world, f"""
        SELECT o.*, (SELECT count(*) FROM order_lines l JOIN variants v USING (variant_id) JOIN products p USING (product_id)
                     WHERE l.order_id = o.order_id AND p.category = 'electronics') AS electronics
        FROM orders o JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
        WHERE o.status != 'cancelled' AND o.coupon_code IS NULL AND o.replacement_for IS NULL AND o.placed_at >= '{_RECENT}'
          AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.order_id = o.order_id)
          AND NOT EXISTS (SELECT 1 FROM payments y WHERE y.order_id = o.order_id AND y.status = 'chargeback')
          AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = o.customer_id AND g.severity = 'high' AND g.status = 'open')
          {extra} ORDER BY o.order_id""")


def coupon_adjustment(world: World, rng: random.Random) -> TaskDraft:
    """The customer forgot their spring coupon: refund the discount as a price adjustment."""
    order = pick(rng, _orders(world, "AND o.subtotal_minor >= 5000 AND o.placed_at >= '2026-03-01'"), "recent order of 50.00 or more")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", order["customer_id"])
    oid, discount = order["order_id"], money(order["subtotal_minor"] * 1_500 // 10_000)
    on_the_line(world, customer, "the spring discount they forgot to use", order_number=oid, coupon_code="SPRING15",
                terms={"price_adjustment": agree("Great, thank you!"), "goodwill_credit": agree("OK, if that's all you can do.")})
    apply = call("apply_coupon", order_id=oid, code="SPRING15")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"I forgot to enter my coupon code on a recent order. Can I still get the "
                "discount?\" Find out which order and code, and handle it under the policy. Reply with submit_answer giving "
                "values.adjustment (the amount refunded)."),
        oracle=[ask("order_number"), ask("coupon_code"), optional_call("get_coupon", code="SPRING15"), offer("price_adjustment", discount), apply,
                answer(f"Applied SPRING15 to {oid}: {discount} refunded.", adjustment=discount)],
        outcome=completed(),
        rubric=[
            state("SELECT coupon_code || '/' || discount_minor FROM orders WHERE order_id = ?", oid,
                  expect=f"SPRING15/{order['subtotal_minor'] * 1_500 // 10_000}", weight=2, name="coupon applied to the order"),
            state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'price_adjustment' AND amount_minor = ?", oid,
                  order["subtotal_minor"] * 1_500 // 10_000, expect=1, weight=2, name="discount refunded"),
            agreed_first("price_adjustment", "apply_coupon", "customer agreed before the adjustment"),
            value_is("adjustment", discount, weight=1),
        ],
        negatives=[
            negative("goodwill_instead", "gives goodwill credit instead of the discount", ask("order_number"), offer("goodwill_credit", "10.00"),
                     call("issue_goodwill_credit", customer_id=customer["customer_id"], amount="10.00", reason="Forgot coupon"),
                     answer("Credited.", adjustment="10.00")),
            negative("no_agreement", "applies it without agreeing it", ask("order_number"), ask("coupon_code"), apply,
                     answer("Applied.", adjustment=discount)),
            negative("claims_only", "reports the adjustment without making it", answer("Applied.", adjustment=discount)),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "adjustment": discount},
    )


def coupon_refused(world: World, rng: random.Random) -> TaskDraft:
    """A coupon the customer wants applied was never valid for the order: decline with the rule it breaks."""
    variants = [
        ("coupon_expired", "GIFT25", _orders(world, ""), "it expired at the end of December"),
        ("coupon_min_not_met", "SPRING15", _orders(world, "AND o.subtotal_minor < 5000 AND o.placed_at >= '2026-03-01'"),
         "the order is below its 50.00 minimum"),
        ("coupon_not_applicable", "TECH10", _orders(world, "AND o.subtotal_minor >= 15000 AND o.placed_at >= '2026-03-20' "
                                                          "AND o.placed_at < '2026-04-21'"),
         "it applies only to electronics, and the order has none"),
    ]
    variants = [(name, code, [o for o in found if name != "coupon_not_applicable" or o["electronics"] == 0], why)
                for name, code, found, why in variants]
    variants = [v for v in variants if v[2]]
    code_name, code, candidates, why = pick(rng, [{"v": v} for v in variants], "coupon story")["v"]
    order = pick(rng, candidates, f"order for {code}")
    customer = one(world, "SELECT * FROM customers WHERE customer_id = ?", order["customer_id"])
    oid = order["order_id"]
    on_the_line(world, customer, f"the {code} discount on their order", order_number=oid, coupon_code=code,
                terms={"price_adjustment": agree("Yes please.")})
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"My coupon didn't work on my order, can you apply it now?\" Find out which "
                "order and code, and handle it under the policy. Reply with submit_answer."),
        oracle=[ask("order_number"), ask("coupon_code"), call("get_order", order_id=oid), call("get_coupon", code=code),
                refusal(code_name, f"{code} cannot be applied to {oid}: {why}.")],
        outcome=refused(code_name),
        rubric=[
            looked_up("read the order", {"tool": "get_order", "args": {"order_id": oid}}),
            looked_up("read the coupon's terms", {"tool": "get_coupon", "args": {"code": code}}, weight=2),
            never("issue_goodwill_credit", "no credit instead"),
        ],
        negatives=[
            negative("claims_applied", "tells the customer it was applied", answer("Applied.")),
            negative("guessed_refusal", "refuses without reading the order and the coupon", refusal(code_name, "Not valid.")),
            negative("wrong_rule", "reads everything but gives another rule", ask("order_number"), ask("coupon_code"),
                     call("get_order", order_id=oid), call("get_coupon", code=code),
                     refusal("adjustment_window_expired" if code_name != "adjustment_window_expired" else "coupon_expired", "Too late.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "code": code},
    )


def goodwill_cap(world: World, rng: random.Random) -> TaskDraft:
    """Offer the largest goodwill credit the customer's tier allows."""
    since = (TODAY - timedelta(days=35)).isoformat()
    customer = pick(rng, plain_customers(world, f"AND NOT EXISTS (SELECT 1 FROM credit_ledger e WHERE e.customer_id = c.customer_id "
                                                f"AND e.kind = 'goodwill' AND e.created_at >= '{since}')"), "customer without recent goodwill")
    cid, cap = customer["customer_id"], money(GOODWILL_CAPS_MINOR[customer["tier"]])
    on_the_line(world, customer, "something for the trouble", terms={"goodwill_credit": agree("That's kind, thank you.")})
    credit = call("issue_goodwill_credit", customer_id=cid, amount=cap, reason="Poor delivery experience")
    return task(
        prompt=(f"Customer {cid} is on chat, upset about a string of delivery problems. Your lead asks you to offer them the largest "
                "goodwill credit the policy allows for them. Do it if they accept, and reply with submit_answer giving values.credit."),
        oracle=[call("get_customer", customer_id=cid), offer("goodwill_credit", cap), credit, answer(f"Credited {cap} goodwill.", credit=cap)],
        outcome=completed(),
        rubric=[
            looked_up("read the customer's tier", {"tool": "get_customer", "args": {"customer_id": cid}}),
            state("SELECT count(*) FROM credit_ledger WHERE customer_id = ? AND kind = 'goodwill' AND amount_minor = ? AND created_by = 'STF-0100'",
                  cid, GOODWILL_CAPS_MINOR[customer["tier"]], expect=1, weight=3, name="goodwill credit at the tier's cap"),
            agreed_first("goodwill_credit", "issue_goodwill_credit", "customer accepted before the credit"),
            value_is("credit", cap, weight=1),
        ],
        negatives=[
            negative("below_cap", "credits less than the cap", call("get_customer", customer_id=cid), offer("goodwill_credit", "5.00"),
                     call("issue_goodwill_credit", customer_id=cid, amount="5.00", reason="Sorry"), answer("Credited.", credit="5.00")),
            negative("no_agreement", "credits without offering", call("get_customer", customer_id=cid), credit, answer("Credited.", credit=cap)),
            negative("claims_only", "says it was credited", answer("Credited.", credit=cap)),
        ],
        metadata={"customer_id": cid, "credit": cap},
    )


TEMPLATES = [
    TaskTemplate(coupon_adjustment, difficulty="medium", category="coupons", split="train", tags=["coupon", "price-adjustment", "agreement"],
                 tools=["ask_customer", "get_coupon", "propose_resolution", "apply_coupon", "submit_answer"]),
    TaskTemplate(coupon_refused, difficulty="medium", category="coupons", split="test", tags=["coupon", "refusal", "policy"],
                 tools=["ask_customer", "get_order", "get_coupon", "submit_answer"]),
    TaskTemplate(goodwill_cap, difficulty="easy", category="goodwill", split="train", tags=["goodwill", "tier", "agreement"],
                 tools=["get_customer", "propose_resolution", "issue_goodwill_credit", "submit_answer"]),
]
