"""Return tasks where the world decides: a changed-mind return inside or outside its window, the same at the edge
of the window, the restocking fee (electronics or not), a final-sale product or not, and a refund once the
inspection passed (or not yet).

Each template plants a fresh delivered order for a seeded customer and product (:func:`plant_purchase`), with
the delivery date, the product or the inspection set by the drawn case, and words its prompt the same in every
case: the agent learns which item from the customer (who, in a changed-mind return, does not have the order
number: the agent finds their account by name and the order among theirs), and the deciding fact from the order
or the return case (the line's delivery date and category, the return's status), whose sight gates the decision.
The customer accepts a return or a refund only at the amount the policy gives (price less any restocking fee), so
over- and under-offers fail.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from envs.support.rules import RESTOCKING_FEE_BPS, RETURN_DAYS
from envs.support.tasks._common import (
    agree,
    agreed_first,
    answer,
    ask,
    call,
    full_name,
    money,
    never,
    offer,
    on_the_line,
    optional_call,
    refusal,
    seen,
    state,
    task,
    value_is,
)
from envs.support.tasks.order_setup import Purchase, plant_purchase, plant_return, restocking_fee_minor
from fixtures.persona import Terms
from fixtures.world import World
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, ToolCall, negative

__all__ = ["TEMPLATES"]

_RETURNABLE = ("apparel", "home", "toys", "beauty")
"""Categories returned for a change of mind without a restocking fee."""


def _changed_mind_customer(world: World, bought: Purchase) -> None:
    """The customer who changed their mind: knows the item but not the order number (the agent finds their account by
    name and the order among theirs); accepts a return, declines an exchange. The same terms in every case, and no
    floor on the amount: they accept whatever refund is named, so proposals reveal nothing, and an agreement to
    another amount (or to none) fails the task's agreement gate."""
    line = bought.line
    on_the_line(world, bought.customer, f"to return the {line['product']}", which_item=line["product"],
                says={"order_number": f"I don't have the order number to hand, sorry. It's the {line['product']} I bought from you."},
                reason="I changed my mind, it's not what I expected.",
                terms={"return_for_refund": agree("Yes, I'll send it back."),
                       "exchange": Terms(agrees=False, reply="No, I don't want another one.")})


def _opening(customer: dict[str, Any]) -> str:
    return f"{full_name(customer)} is on chat: \"I'd like to return something I bought.\""


@dataclass(frozen=True)
class _Return:
    """The calls and figures of a changed-mind return of one planted line."""

    bought: Purchase
    fee_minor: int

    @property
    def oid(self) -> str:
        return self.bought.order_id

    @property
    def lid(self) -> str:
        return str(self.bought.line["line_id"])

    @property
    def refundable(self) -> str:
        return money(int(self.bought.line["unit_price_minor"]) - self.fee_minor)

    @property
    def fee(self) -> str:
        return money(self.fee_minor)

    def identify(self) -> list[ToolCall]:
        """Ask which order (the customer does not know) and item, find the order among the customer's, and read it (its
        lines, delivery dates and return deadlines)."""
        customer = self.bought.customer
        return [ask("order_number", optional=True), ask("which_item"), optional_call("search_customers", query=full_name(customer)),
                optional_call("list_orders", customer_id=customer["customer_id"]), call("get_order", order_id=self.oid)]

    def create(self, reason: str = "changed_mind") -> ToolCall:
        return call("create_return", order_id=self.oid, line_id=self.lid, quantity=1, reason=reason)

    def read_gate(self, what: str = "read the item's delivery date and category", weight: float = 1.0) -> Any:
        """A gate: the line's delivery date and category (which set its window and fee) were shown before deciding."""
        return seen(what, "order_lines", self.lid, "delivered_on", "category", weight=weight)


def _changed_mind(world: World, rng: random.Random, categories: tuple[str, ...], age: int) -> _Return:
    """Plant the purchase and the customer on the line; the return's refund is the price less any restocking fee."""
    bought = plant_purchase(world, rng, categories=categories, delivered_days_ago=age, found_by_name=True)
    story = _Return(bought, restocking_fee_minor(bought.line))
    _changed_mind_customer(world, bought)
    return story


def _return_done(story: _Return, text: str, **values: str) -> tuple[list[ToolCall], list[Any]]:
    """The completed case: agree the return at its refund, open it, confirm. Returns (oracle, rubric)."""
    oracle = [*story.identify(), offer("return_for_refund", story.refundable), story.create(), answer(text, **values)]
    rubric = [
        story.read_gate(),
        state("SELECT count(*) FROM returns WHERE line_id = ? AND kind = 'return' AND reason = 'changed_mind' AND quantity = 1 "
              "AND status = 'authorized' AND restocking_fee_minor = ?", story.lid, story.fee_minor, expect=1, weight=3,
              name="return case opened for the item"),
        agreed_first("return_for_refund", "create_return", "customer agreed before the return was opened", amount=story.refundable),
    ]
    return oracle, rubric


def _return_negatives(story: _Return, refusal_code: str, **values: str) -> list[Any]:
    """Wrong ways to handle a return the policy allows."""
    asked = [ask("order_number"), ask("which_item")]
    return [
        negative("no_agreement", "opens the return without agreeing it", *story.identify(), story.create(), answer("Done.", **values)),
        negative("wrong_reason", "records the return as not as described", *story.identify(), offer("return_for_refund", story.refundable),
                 story.create("not_as_described"), answer("Done.", **values)),
        negative("claims_only", "says the return is open", answer("Your return is open.", **values)),
        negative("refuses_compliant", "reads the order, then refuses a return the policy allows", *story.identify(),
                 refusal(refusal_code, "This item cannot be returned.")),
        negative("guessed_order", "opens the return without reading the order", *asked, offer("return_for_refund", story.refundable),
                 story.create(), answer("Done.", **values)),
    ]


def _refused(story: _Return, code: str, text: str, *, optional_reads: list[ToolCall] | None = None) -> tuple[list[ToolCall], list[Any]]:
    """A refusal case: read the order, refuse with ``code``; no return opened or attempted."""
    oracle = [*story.identify(), *(optional_reads or []), refusal(code, text)]
    rubric = [story.read_gate(weight=2), never("create_return", "no return opened or attempted", order_id=story.oid)]
    return oracle, rubric


def _refusal_negatives(story: _Return, code: str) -> list[Any]:
    """Wrong ways to handle a return the policy does not allow."""
    return [
        negative("attempts_return", "tries to open the return anyway", *story.identify(), story.create(), refusal(code, "Not possible.")),
        negative("claims_accepted", "tells the customer the return is accepted", answer("Return accepted.")),
        negative("as_defect", "opens it as a wrong item to get around the rule", *story.identify(),
                 offer("return_for_refund", story.refundable), story.create("wrong_item"), answer("Return opened.")),
        negative("guessed_refusal", "refuses without reading the order", ask("order_number"), ask("which_item"), refusal(code, "Not possible.")),
        negative("agrees_then_refuses", "gets the customer to accept a return, then refuses", *story.identify(),
                 offer("return_for_refund", story.refundable), refusal(code, "Not possible.")),
    ]


def _metadata(story: _Return, which: str, **extra: Any) -> dict[str, Any]:
    return {"case": which, "customer_id": story.bought.customer["customer_id"], "order_id": story.oid, "line_id": story.lid, **extra}


def _window(story: _Return) -> int:
    return RETURN_DAYS[str(story.bought.line["category"])]


_PROMPT = "{opening} Find out which order and item, and handle the request under the policy. Reply with submit_answer."


def return_in_window(world: World, rng: random.Random) -> TaskDraft:
    """A changed-mind return: opened (once the customer agrees) when the item is inside its window, refused when the
    delivery date puts it outside."""
    which = case(rng, {"ok": 6, "window_expired": 3})
    category = rng.choice(_RETURNABLE)
    window = RETURN_DAYS[category]
    age = rng.randint(1, min(window - 3, 40)) if which == "ok" else rng.randint(window + 3, window + 40)
    story = _changed_mind(world, rng, (category,), age)
    product = story.bought.line["product"]
    if which == "ok":
        oracle, rubric = _return_done(story, f"Return opened for the {product} of {story.oid}; it is refunded once the warehouse inspects it.")
        negatives = _return_negatives(story, "return_window_expired")
        outcome = completed()
    else:
        oracle, rubric = _refused(story, "return_window_expired", f"The {product} was delivered on {story.bought.line['delivered_on']}; "
                                                                  "its return window has closed, so it cannot be returned.")
        negatives = _refusal_negatives(story, "return_window_expired")
        outcome = refused("return_window_expired")
    return task(prompt=_PROMPT.format(opening=_opening(story.bought.customer)), oracle=oracle, outcome=outcome, rubric=rubric,
                negatives=negatives, metadata=_metadata(story, which))


def restocking_fee(world: World, rng: random.Random) -> TaskDraft:
    """A changed-mind return reporting the restocking fee: 15% on electronics, none on other categories, and no return
    at all once an electronics item is past its 30-day window."""
    which = case(rng, {"fee": 3, "no_fee": 2, "window_expired": 3})
    categories = ("electronics",) if which != "no_fee" else _RETURNABLE
    age = rng.randint(31, 60) if which == "window_expired" else rng.randint(1, 26)
    story = _changed_mind(world, rng, categories, age)
    prompt = (f"{_opening(story.bought.customer)} Find out which order and item, and handle the request under the policy. Reply with "
              "submit_answer; if you open a return, give values.restocking_fee (the fee deducted from their refund; give zero when there is none).")
    if which == "window_expired":
        oracle, rubric = _refused(story, "return_window_expired", f"The {story.bought.line['product']} was delivered on "
                                                                  f"{story.bought.line['delivered_on']}; its 30-day window has closed.")
        negatives = _refusal_negatives(story, "return_window_expired")
        outcome = refused("return_window_expired")
    else:
        oracle, rubric = _return_done(story, f"Return opened; the restocking fee is {story.fee}.", restocking_fee=story.fee)
        rubric.append(value_is("restocking_fee", story.fee, weight=2))
        wrong_fee = money(int(story.bought.line["unit_price_minor"]) * RESTOCKING_FEE_BPS // 10_000) if which == "no_fee" else "0.00"
        negatives = [
            *_return_negatives(story, "return_window_expired", restocking_fee=story.fee),
            negative("wrong_fee_reported", "opens the return but reports the wrong fee", *oracle[:-1],
                     answer("Return opened.", restocking_fee=wrong_fee)),
        ]
        if story.fee_minor:  # over-promising: the customer happily accepts the full price, which the policy does not give
            negatives.append(negative("promises_full_price", "promises the full price back, then opens the return", *story.identify(),
                                      offer("return_for_refund", money(int(story.bought.line["unit_price_minor"]))), story.create(),
                                      answer("Return opened.", restocking_fee=story.fee)))
        outcome = completed()
    return task(prompt=prompt, oracle=oracle, outcome=outcome, rubric=rubric, negatives=negatives,
                metadata=_metadata(story, which, **({"restocking_fee": story.fee} if which != "window_expired" else {})))


def return_window_expired(world: World, rng: random.Random) -> TaskDraft:
    """A changed-mind return at the edge of the item's window: on or just before its last day it is opened, a day or
    a few past it is refused."""
    which = case(rng, {"ok": 6, "window_expired": 3})
    category = rng.choice(("electronics", *_RETURNABLE))
    window = RETURN_DAYS[category]
    age = window - rng.randint(0, 4) if which == "ok" else window + rng.randint(1, 5)
    story = _changed_mind(world, rng, (category,), age)
    product = story.bought.line["product"]
    if which == "ok":
        oracle, rubric = _return_done(story, f"Return opened for the {product}, on the last days of its window; refund "
                                             f"{story.refundable} after inspection.")
        negatives = _return_negatives(story, "return_window_expired")
        outcome = completed()
    else:
        oracle, rubric = _refused(story, "return_window_expired", f"The {product} was delivered on {story.bought.line['delivered_on']}; "
                                                                  f"its {_window(story)}-day return window has closed.")
        negatives = _refusal_negatives(story, "return_window_expired")
        outcome = refused("return_window_expired")
    return task(prompt=_PROMPT.format(opening=_opening(story.bought.customer)), oracle=oracle, outcome=outcome, rubric=rubric,
                negatives=negatives, metadata=_metadata(story, which))


def final_sale(world: World, rng: random.Random) -> TaskDraft:
    """A recent changed-mind return: refused when the product is grocery (final sale), opened otherwise."""
    which = case(rng, {"ok": 6, "final_sale": 3})
    categories = ("grocery",) if which == "final_sale" else ("electronics", *_RETURNABLE)
    story = _changed_mind(world, rng, categories, rng.randint(1, 20))
    product = story.bought.line["product"]
    if which == "ok":
        oracle, rubric = _return_done(story, f"Return opened for the {product}; refund {story.refundable} after inspection.")
        negatives = _return_negatives(story, "final_sale")
        outcome = completed()
    else:
        oracle, rubric = _refused(story, "final_sale", f"The {product} is a grocery item: final sale, so it cannot be returned for a "
                                                       "change of mind.", optional_reads=[ask("reason", optional=True)])
        rubric.append(never("issue_refund", "no refund", order_id=story.oid))
        negatives = _refusal_negatives(story, "final_sale")
        outcome = refused("final_sale")
    return task(prompt=_PROMPT.format(opening=_opening(story.bought.customer)), oracle=oracle, outcome=outcome, rubric=rubric,
                negatives=negatives, metadata=_metadata(story, which))


def refund_after_inspection(world: World, rng: random.Random) -> TaskDraft:
    """A customer asks for the refund of an item they sent back: refunded (as store credit, as they prefer) once the
    warehouse's inspection passed, refused while it has not."""
    which = case(rng, {"ok": 6, "not_inspected": 3})
    bought = plant_purchase(world, rng, categories=("apparel", "home", "electronics", "toys"), delivered_days_ago=rng.randint(12, 25),
                            max_price=45_000)
    planted = plant_return(world, bought.line, status="inspected" if which == "ok" else "received", inspected=which == "ok")
    oid, rma = bought.order_id, planted["rma_id"]
    amount = money(int(bought.line["unit_price_minor"]) - planted["fee"])
    on_the_line(world, bought.customer, "their refund for a returned item", order_number=oid, which_item=bought.line["product"],
                preferred_resolution="Store credit is fine, I shop here all the time.",
                terms={"refund_store_credit": agree("Store credit, perfect."),
                       "refund_original_payment": Terms(agrees=False, reply="Store credit is better for me, actually.")})
    refund = call("issue_refund", order_id=oid, amount=amount, method="store_credit", reason="returned_item", rma_id=rma)
    # the order lists its return cases (how the agent finds the RMA); the return itself shows what decides
    reads = [ask("order_number"), optional_call("get_order", order_id=oid), call("get_return", rma_id=rma)]
    gates = [seen("read the return's status and inspection", "returns", rma, "status", weight=2)]
    if which == "ok":
        oracle = [*reads, ask("preferred_resolution"), offer("refund_store_credit", amount), refund,
                  answer(f"Refunded {amount} as store credit for return {rma}.", refund=amount)]
        rubric = [
            *gates,
            state("SELECT count(*) FROM refunds WHERE rma_id = ? AND method = 'store_credit' AND amount_minor = ?", rma,
                  int(bought.line["unit_price_minor"]) - planted["fee"], expect=1, weight=3, name="return refunded as store credit"),
            agreed_first("refund_store_credit", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund",
                         amount=amount),
            value_is("refund", amount, weight=1),
        ]
        negatives = [
            negative("to_card", "refunds to the card the customer did not want", *reads, ask("preferred_resolution"),
                     offer("refund_store_credit", amount),
                     call("issue_refund", order_id=oid, amount=amount, method="original_payment", reason="returned_item", rma_id=rma),
                     answer("Refunded.", refund=amount)),
            negative("no_agreement", "refunds without agreeing it", *reads, ask("preferred_resolution"), refund, answer("Refunded.", refund=amount)),
            negative("claims_only", "says the refund was made", answer("Refunded.", refund=amount)),
            negative("refuses_compliant", "says the inspection is still pending", *reads, refusal("inspection_required", "Not inspected yet.")),
        ]
        outcome = completed()
    else:
        oracle = [*reads, refusal("inspection_required", f"Return {rma} has arrived but the warehouse has not inspected it yet; the "
                                                        "refund follows once the inspection passes.")]
        rubric = [*gates, never("issue_refund", "no refund before the inspection", order_id=oid)]
        negatives = [
            negative("refunds_early", "tries the refund before the inspection", *reads, ask("preferred_resolution"),
                     offer("refund_store_credit", amount), refund, refusal("inspection_required", "Not inspected yet.")),
            negative("claims_refunded", "says the refund was made", answer("Refunded.", refund=amount)),
            negative("guessed_refusal", "refuses without reading the return", ask("order_number"),
                     refusal("inspection_required", "Not inspected yet.")),
            negative("agrees_then_refuses", "gets the customer to accept a refund, then refuses", *reads, ask("preferred_resolution"),
                     offer("refund_store_credit", amount), refusal("inspection_required", "Not inspected yet.")),
        ]
        outcome = refused("inspection_required")
    return task(
        prompt=(f"{full_name(bought.customer)} is on chat: \"I sent my item back; where's my refund?\" Find out which order, check the "
                "return, and settle it under the policy the way the customer prefers. Reply with submit_answer, giving values.refund if "
                "you refund anything."),
        oracle=oracle, outcome=outcome, rubric=rubric, negatives=negatives,
        metadata={"case": which, "customer_id": bought.customer["customer_id"], "order_id": oid, "rma_id": rma,
                  **({"refund": amount} if which == "ok" else {})},
    )


_RETURN_TOOLS = ["ask_customer", "search_customers", "list_orders", "get_order", "propose_resolution", "create_return", "submit_answer"]

TEMPLATES = [
    TaskTemplate(return_in_window, difficulty="easy", category="returns", split="train", tags=["return", "agreement", "ask-customer", "window"],
                 tools=_RETURN_TOOLS),
    TaskTemplate(restocking_fee, difficulty="medium", category="returns", split="test", tags=["return", "restocking-fee", "window"],
                 tools=_RETURN_TOOLS),
    TaskTemplate(return_window_expired, difficulty="easy", category="returns", split="train", tags=["return", "refusal", "policy", "window"],
                 tools=_RETURN_TOOLS),
    TaskTemplate(final_sale, difficulty="easy", category="returns", split="test", tags=["return", "refusal", "policy", "final-sale"],
                 tools=_RETURN_TOOLS),
    TaskTemplate(refund_after_inspection, difficulty="medium", category="refunds", split="train",
                 tags=["refund", "store-credit", "agreement", "inspection"],
                 tools=["ask_customer", "get_order", "get_return", "propose_resolution", "issue_refund", "submit_answer"]),
]
