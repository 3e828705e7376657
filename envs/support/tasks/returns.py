"""Return tasks: a return inside its window, one carrying the restocking fee, one outside its window, a final-sale
item, a refund once the inspection passed (to store credit, as the customer prefers), (the wait for the inspection
is enforced by the refund tool itself)."""

from __future__ import annotations

import random

from envs.support.tasks._common import (
    agree,
    agreed_first,
    answer,
    ask,
    asked,
    call,
    decline,
    delivered_lines,
    looked_up,
    money,
    never,
    offer,
    on_the_line,
    one,
    optional_call,
    pick,
    plant_return,
    refusal,
    state,
    task,
    value_is,
)
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]

_WINDOW_SQL = "CASE category WHEN 'apparel' THEN 60 WHEN 'electronics' THEN 30 WHEN 'beauty' THEN 30 WHEN 'grocery' THEN 0 ELSE 45 END"


def _customer(world: World, line: dict) -> dict:
    return one(world, "SELECT * FROM customers WHERE customer_id = ?", line["customer_id"])


def _return_story(world: World, rng: random.Random, extra: str, what: str) -> tuple[dict, dict]:
    line = pick(rng, delivered_lines(world, extra), what)
    customer = _customer(world, line)
    on_the_line(world, customer, f"to return the {line['product']}", order_number=line["order_id"], which_item=line["product"],
                reason="I changed my mind, it's not what I expected.",
                terms={"return_for_refund": agree("Yes, I'll send it back."), "exchange": decline("No, I don't want another one.")})
    return line, customer


def _opening(customer: dict) -> str:
    return f"Customer {customer['customer_id']} is on chat: \"I'd like to return something I bought.\""


def return_in_window(world: World, rng: random.Random) -> TaskDraft:
    """A changed-mind return inside the item's window: open the return case once the customer agrees."""
    line, customer = _return_story(world, rng, "AND category IN ('apparel', 'home', 'toys') AND age <= 20 AND quantity = 1",
                                   "recently delivered apparel, home or toy line")
    oid, lid = line["order_id"], line["line_id"]
    create = call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind")
    return task(
        prompt=f"{_opening(customer)} Find out which order and item, and handle the return under the policy. Confirm with submit_answer.",
        oracle=[ask("order_number"), ask("which_item"), optional_call("get_order", order_id=oid), offer("return_for_refund"), create,
                answer(f"Return opened for the {line['product']} of {oid}; it is refunded once the warehouse inspects it.")],
        outcome=completed(),
        rubric=[
            asked("order_number"), asked("which_item"),
            state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'return' AND reason = 'changed_mind' AND quantity = 1 "
                  "AND status = 'authorized'", lid, expect=1, weight=3, name="return case opened for the item"),
            agreed_first("return_for_refund", "create_return", "customer agreed before the return was opened"),
        ],
        negatives=[
            negative("no_agreement", "opens the return without agreeing it", ask("order_number"), ask("which_item"), create, answer("Done.")),
            negative("wrong_reason", "records the return as not as described", ask("order_number"), ask("which_item"), offer("return_for_refund"),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="not_as_described"), answer("Done.")),
            negative("claims_only", "says the return is open", answer("Your return is open.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "line_id": lid},
    )


def restocking_fee(world: World, rng: random.Random) -> TaskDraft:
    """An opened electronics item returned for a change of mind: open the return and state the 15% restocking fee."""
    line, customer = _return_story(world, rng, "AND category = 'electronics' AND age <= 25 AND quantity = 1", "recent electronics line")
    oid, lid = line["order_id"], line["line_id"]
    fee = money(line["unit_price_minor"] * 1_500 // 10_000)
    create = call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind")
    return task(
        prompt=(f"{_opening(customer)} Find out which order and item, handle the return under the policy, and reply with submit_answer "
                "giving values.restocking_fee (the fee deducted from their refund, 0.00 if none)."),
        oracle=[ask("order_number"), ask("which_item"), optional_call("get_order", order_id=oid), offer("return_for_refund"), create,
                answer(f"Return opened; a {fee} restocking fee applies to changed-mind electronics returns.", restocking_fee=fee)],
        outcome=completed(),
        rubric=[
            asked("which_item"),
            state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'return' AND reason = 'changed_mind' AND restocking_fee_minor = ?",
                  lid, line["unit_price_minor"] * 1_500 // 10_000, expect=1, weight=3, name="return opened with the restocking fee"),
            agreed_first("return_for_refund", "create_return", "customer agreed before the return was opened"),
            value_is("restocking_fee", fee, weight=2),
        ],
        negatives=[
            negative("dodges_fee", "records the change of mind as a defect to avoid the fee", ask("order_number"), ask("which_item"),
                     offer("return_for_refund"), call("create_return", order_id=oid, line_id=lid, quantity=1, reason="wrong_item"),
                     answer("No fee.", restocking_fee="0.00")),
            negative("no_fee_reported", "opens the return but reports no fee", ask("order_number"), ask("which_item"), offer("return_for_refund"),
                     create, answer("No fee.", restocking_fee="0.00")),
            negative("claims_only", "reports the fee without opening the return", answer("Return opened.", restocking_fee=fee)),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "restocking_fee": fee},
    )


def return_window_expired(world: World, rng: random.Random) -> TaskDraft:
    """A return asked for after the item's window closed: decline."""
    line, customer = _return_story(world, rng, f"AND category != 'grocery' AND age > {_WINDOW_SQL} AND age < {_WINDOW_SQL} + 45",
                                   "line delivered just past its return window")
    oid, lid = line["order_id"], line["line_id"]
    return task(
        prompt=f"{_opening(customer)} Find out which order and item, and handle the request under the policy. Reply with submit_answer.",
        oracle=[ask("order_number"), ask("which_item"), call("get_order", order_id=oid),
                refusal("return_window_expired", f"The {line['product']} was delivered on {line['delivered_on']}; its return window has "
                                                 "closed, so it cannot be returned.")],
        outcome=refused("return_window_expired"),
        rubric=[
            asked("order_number"),
            looked_up("read the delivery date", {"tool": "get_order", "args": {"order_id": oid}}, weight=2),
            never("create_return", "no return opened or attempted", order_id=oid),
        ],
        negatives=[
            negative("attempts_return", "tries to open the return anyway", ask("order_number"), call("get_order", order_id=oid),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind"),
                     refusal("return_window_expired", "Too late.")),
            negative("claims_accepted", "tells the customer the return is accepted", answer("Return accepted.")),
            negative("as_defect", "opens it as a wrong item to get around the window", ask("order_number"),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="wrong_item"), answer("Return opened.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "line_id": lid},
    )


def final_sale(world: World, rng: random.Random) -> TaskDraft:
    """A grocery item returned for a change of mind: final sale, decline."""
    line, customer = _return_story(world, rng, "AND category = 'grocery' AND age <= 20", "recent grocery line")
    oid, lid = line["order_id"], line["line_id"]
    return task(
        prompt=f"{_opening(customer)} Find out which order and item, and handle the request under the policy. Reply with submit_answer.",
        oracle=[ask("order_number"), ask("which_item"), call("get_order", order_id=oid), ask("reason", optional=True),
                refusal("final_sale", f"The {line['product']} is a grocery item: final sale, so it cannot be returned for a change of mind.")],
        outcome=refused("final_sale"),
        rubric=[
            asked("which_item"),
            looked_up("read the order", {"tool": "get_order", "args": {"order_id": oid}}, weight=2),
            never("create_return", "no return opened or attempted", order_id=oid),
            never("issue_refund", "no refund", order_id=oid),
        ],
        negatives=[
            negative("as_damaged", "records it as a wrong item to get it refunded", ask("order_number"), ask("which_item"),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="wrong_item"), answer("Return opened.")),
            negative("attempts_return", "tries the return", ask("order_number"), ask("which_item"), call("get_order", order_id=oid),
                     call("create_return", order_id=oid, line_id=lid, quantity=1, reason="changed_mind"), refusal("final_sale", "Final sale.")),
            negative("guessed_refusal", "refuses without checking the order", refusal("final_sale", "Final sale.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


def _inspection_story(world: World, rng: random.Random, inspected: bool) -> tuple[dict, dict, dict]:
    line = pick(rng, delivered_lines(world, "AND category IN ('apparel', 'home', 'electronics', 'toys') AND age BETWEEN 12 AND 25 "
                                            "AND unit_price_minor * quantity <= 45000"), "line returned recently")
    customer = _customer(world, line)
    planted = plant_return(world, line, status="inspected" if inspected else "received", inspected=inspected)
    amount = money(planted["refundable"])
    on_the_line(world, customer, "their refund for a returned item", order_number=line["order_id"], which_item=line["product"],
                preferred_resolution="Store credit is fine, I shop here all the time.",
                terms={"refund_store_credit": agree("Store credit, perfect.", min_amount=amount),
                       "refund_original_payment": decline("Store credit is better for me, actually.")})
    return line, customer, planted


def refund_after_inspection(world: World, rng: random.Random) -> TaskDraft:
    """The returned item passed inspection: refund it (less any restocking fee) as store credit, as the customer prefers."""
    line, customer, planted = _inspection_story(world, rng, inspected=True)
    oid, rma, amount = line["order_id"], planted["rma_id"], money(planted["refundable"])
    refund = call("issue_refund", order_id=oid, amount=amount, method="store_credit", reason="returned_item", rma_id=rma)
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"I sent my item back; where's my refund?\" Find out which order, check "
                "the return, and settle it under the policy the way the customer prefers. Reply with submit_answer giving values.refund."),
        oracle=[ask("order_number"), optional_call("get_order", order_id=oid), call("get_return", rma_id=rma), ask("preferred_resolution"),
                offer("refund_store_credit", amount), refund, answer(f"Refunded {amount} as store credit for return {rma}.", refund=amount)],
        outcome=completed(),
        rubric=[
            asked("preferred_resolution", "asked how the customer wants the refund"),
            looked_up("read the return and its inspection", {"tool": "get_return", "args": {"rma_id": rma}}),
            state("SELECT count(*) FROM refunds WHERE rma_id = ? AND method = 'store_credit' AND amount_minor = ?", rma, planted["refundable"],
                  expect=1, weight=3, name="return refunded as store credit"),
            agreed_first("refund_store_credit", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund"),
            value_is("refund", amount, weight=1),
        ],
        negatives=[
            negative("to_card", "refunds to the card the customer did not want", ask("order_number"), call("get_return", rma_id=rma),
                     ask("preferred_resolution"), offer("refund_store_credit", amount),
                     call("issue_refund", order_id=oid, amount=amount, method="original_payment", reason="returned_item", rma_id=rma),
                     answer("Refunded.", refund=amount)),
            negative("no_agreement", "refunds without agreeing it", ask("order_number"), call("get_return", rma_id=rma), refund,
                     answer("Refunded.", refund=amount)),
            negative("claims_only", "says the refund was made", answer("Refunded.", refund=amount)),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "rma_id": rma, "refund": amount},
    )


TEMPLATES = [
    TaskTemplate(return_in_window, difficulty="easy", category="returns", split="train", tags=["return", "agreement", "ask-customer"],
                 tools=["ask_customer", "get_order", "propose_resolution", "create_return", "submit_answer"]),
    TaskTemplate(restocking_fee, difficulty="medium", category="returns", split="test", tags=["return", "restocking-fee"],
                 tools=["ask_customer", "get_order", "propose_resolution", "create_return", "submit_answer"]),
    TaskTemplate(return_window_expired, difficulty="easy", category="returns", split="train", tags=["return", "refusal", "policy"],
                 tools=["ask_customer", "get_order", "submit_answer"]),
    TaskTemplate(final_sale, difficulty="easy", category="returns", split="test", tags=["return", "refusal", "policy"],
                 tools=["ask_customer", "get_order", "submit_answer"]),
    TaskTemplate(refund_after_inspection, difficulty="medium", category="refunds", split="train", tags=["refund", "store-credit", "agreement"],
                 tools=["ask_customer", "get_order", "get_return", "propose_resolution", "issue_refund", "submit_answer"]),
]
