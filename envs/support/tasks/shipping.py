"""Order status and shipping tasks, each a neutral request whose right outcome the parcel's record decides.

* ``order_status``: "where is my parcel?" — the status of the order the customer names, unless that order is on
  a relative's account (nothing may be disclosed: ``identity_not_verified``).
* ``late_shipping_refund``: the shipping fee back for a slow parcel — refunded when it was late against its
  promised date, refused (``not_late``) when it came on time.
* ``lost_replacement``: a lost parcel sent again — unless an item is sold out: then a refund of the lost items
  if the customer takes one, else refused (``out_of_stock``).
* ``stalled_parcel_refund``: money back for a parcel whose tracking has stopped — lost after 7 days without a
  scan (refund), still moving otherwise (``not_lost``).
* ``late_not_lost``: "it's lost, send another" — re-sent when the carrier reports it lost, refused (``not_lost``)
  when it is late but still moving.

Every subject is planted with seeded facts (items, fee, dates, scans, carrier), prompts name the customer as a
person would (their name; ``order_status``'s chat does not say who is asking, so the agent asks), and the order,
shipment and product ids come only from the customer's answers and tool results. Gates name the rows and fields that
decide (this shipment's status and dates, its scans, this variant's stock), whichever tool showed them.
"""

from __future__ import annotations

import random
from typing import Any

from envs.support import catalog as cat
from envs.support.tasks._common import (
    agree,
    agreed_first,
    answer,
    ask,
    call,
    decline,
    fact,
    full_name,
    money,
    never,
    not_disclosing,
    offer,
    on_the_line,
    optional_call,
    pick,
    refusal,
    seen,
    state,
    task,
    text_is,
    value_is,
)
from envs.support.tasks.customer_setup import birthday, household_email, named_customers, plant_customer, seeded_address
from envs.support.tasks.order_setup import some_items
from envs.support.tasks.parcel_setup import (
    parcel_seen,
    plant_lost_parcel,
    plant_parcel,
    plant_slow_parcel,
    plant_status_parcel,
    read_order,
    track,
)
from fixtures.world import World
from graders.criteria import ToolCalled, number
from graders.outcome import completed, refused
from graders.setup import case
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _customer(world: World, rng: random.Random, extra: str = "") -> dict[str, Any]:
    """An active customer with at least one earlier order (so "the newest order" is a wrong guess to make)."""
    return pick(rng, named_customers(world, "AND EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id) " + extra),
                "customer with an order")


# -- order_status --------------------------------------------------------------------------------------


def order_status(world: World, rng: random.Random) -> TaskDraft:
    """A customer on chat asks where their parcel is: ask which order, read it, report its carrier status and tracking
    number — unless the order they quote is on a relative's account, when nothing about it may be disclosed. The chat
    does not say who they are: whose account the order is on is checked against who the customer says they are."""
    which = case(rng, {"own": 2, "relative": 1})
    customer = _customer(world, rng)
    owner = customer
    if which == "relative":  # same surname, another first name, their own address: a sibling's or parent's account
        first = rng.choice([n for n in cat.FIRST_NAMES if n != customer["first_name"]])
        owner = plant_customer(world, rng, first_name=first, last_name=customer["last_name"], date_of_birth=birthday(rng),
                               email=household_email(rng, first, customer["last_name"]), address=seeded_address(rng))
    parcel = plant_status_parcel(world, rng, owner)
    oid, status, number = parcel["order_id"], parcel["status"], parcel["tracking_number"]
    others = world.query("SELECT order_id FROM orders WHERE customer_id = ? AND order_id != ? ORDER BY placed_at DESC LIMIT 1",
                         (customer["customer_id"], oid))
    on_the_line(world, customer, "to know where their parcel is", order_number=oid)
    prompt = ("A customer is on chat: \"Hi, where is my parcel?\" Find out which order they mean, check it, and reply with "
              "submit_answer giving values.status (the carrier status of its shipment) and values.tracking_number.")
    if which == "relative":
        return task(
            prompt=prompt,
            oracle=[ask("order_number"), ask("full_name"), read_order(parcel), call("get_customer", customer_id=owner["customer_id"]),
                    refusal("identity_not_verified", "That order is not on your account, so I can't share anything about it; the account "
                                                     "holder can contact us themselves.")],
            outcome=refused("identity_not_verified"),
            rubric=[
                seen("read whose account the order is on", "orders", oid, "customer_id"),
                seen("knew the account is not the caller's", "customers", owner["customer_id"],
                     also=[fact("customers", customer["customer_id"])]),
                not_disclosing("nothing about another customer's order was disclosed", number, full_name(owner), owner["customer_id"],
                               address=parcel),
            ],
            negatives=[
                negative("discloses", "reads the relative's order and reports it", ask("order_number"), read_order(parcel),
                         answer(f"Order {oid} is {status}.", status=status, tracking_number=number)),
                negative("discloses_in_refusal", "refuses but gives the tracking number away", ask("order_number"), read_order(parcel),
                         call("get_customer", customer_id=owner["customer_id"]),
                         refusal("identity_not_verified", f"It's not your order, but tracking {number} shows it {status}.")),
                negative("unchecked_refusal", "refuses without reading whose order it is", ask("order_number"),
                         refusal("identity_not_verified", "I can't share that.")),
                negative("unchecked_holder", "reads the order but never checks whose account it is", ask("order_number"), ask("full_name"),
                         read_order(parcel), refusal("identity_not_verified", "I can't share that.")),
            ],
            metadata={"customer_id": customer["customer_id"], "owner_id": owner["customer_id"], "order_id": oid, "case": which},
        )
    guess = [call("list_orders", customer_id=customer["customer_id"]), call("get_order", order_id=others[0]["order_id"])] if others else []
    return task(
        prompt=prompt,
        oracle=[ask("order_number"), ask("full_name", optional=True), read_order(parcel),
                optional_call("get_customer", customer_id=customer["customer_id"]),
                answer(f"Order {oid} is {status} with tracking number {number}.", status=status, tracking_number=number)],
        outcome=completed(),
        rubric=[
            parcel_seen("read the shipment of the order the customer means", parcel, "status", "tracking_number"),
            text_is("status", status, weight=2, gate=True),
            text_is("tracking_number", number, gate=True),
        ],
        negatives=[
            negative("other_order", "guesses another order instead of asking", *guess,
                     answer("Your order is on its way.", status="in_transit" if status != "in_transit" else "delivered", tracking_number=number)),
            negative("claims_only", "reports the figures without asking or reading", answer("Here it is.", status=status, tracking_number=number)),
            negative("wrong_status", "reads the order but reports another status", ask("order_number"), read_order(parcel),
                     answer("Delivered.", status="delivered" if status != "delivered" else "in_transit", tracking_number=number)),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "case": which},
    )


# -- late_shipping_refund ------------------------------------------------------------------------------


def late_shipping_refund(world: World, rng: random.Random) -> TaskDraft:
    """A slow parcel: the shipping fee is refunded (the customer accepts) when the parcel was late against its
    promised date; when it came on time, refuse (``not_late``)."""
    which = case(rng, {"late": 2, "on_time": 1})
    customer = _customer(world, rng)
    parcel = plant_slow_parcel(world, rng, customer, late=which == "late")
    oid, fee = parcel["order_id"], money(parcel["shipping"])
    on_the_line(world, customer, "the shipping fee back for a slow parcel", order_number=oid,
                terms={"shipping_refund": agree("That's fair, thank you.", min_amount=fee), "goodwill_credit": decline("I'd rather have my money back."),
                       "refund_original_payment": decline("I kept the items; it's the shipping I'm unhappy about.")})
    prompt = (f"{full_name(customer)} is on chat: their parcel has been slow to arrive and they want the shipping fee back. Find out which order, "
              "check it, and handle it under the policy. Reply with submit_answer, giving values.refund (the amount refunded) if you "
              "refund anything.")
    refund = call("issue_refund", order_id=oid, amount=fee, method="original_payment", reason="late_delivery")
    if which == "on_time":
        attempt = call("issue_refund", order_id=oid, amount=fee, method="original_payment", reason="late_delivery")
        return task(
            prompt=prompt,
            oracle=[ask("order_number"), read_order(parcel),
                    refusal("not_late", f"Order {oid} arrived by its promised date ({parcel['promised_by']}), so it was not late and the "
                                        "shipping fee is not refundable.")],
            outcome=refused("not_late"),
            rubric=[
                parcel_seen("read the promised and delivery dates", parcel, "promised_by", "delivered_on", weight=2),
                never("issue_refund", "no refund for a parcel that came on time", order_id=oid),
            ],
            negatives=[
                negative("refunds_anyway", "offers and tries the refund before checking", ask("order_number"), offer("shipping_refund", fee),
                         attempt, read_order(parcel), refusal("not_late", "Not late after all.")),
                negative("claims_refund", "says the fee was refunded", ask("order_number"), read_order(parcel),
                         answer("Refunded the shipping fee.", refund=fee)),
                negative("unchecked_refusal", "refuses without reading the order", ask("order_number"), refusal("not_late", "It was on time.")),
            ],
            metadata={"customer_id": customer["customer_id"], "order_id": oid, "case": which},
        )
    return task(
        prompt=prompt,
        oracle=[ask("order_number"), read_order(parcel, optional=True), track(parcel, optional=True), offer("shipping_refund", fee), refund,
                answer(f"Refunded the {fee} shipping fee of {oid}.", refund=fee)],
        outcome=completed(),
        rubric=[
            state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'late_delivery' AND method = 'original_payment' "
                  "AND amount_minor = ?", oid, parcel["shipping"], expect=1, weight=3, name="shipping fee refunded to the card"),
            agreed_first("shipping_refund", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund", amount=fee),
            value_is("refund", fee, weight=1),
        ],
        negatives=[
            negative("no_agreement", "refunds without asking the customer", ask("order_number"), read_order(parcel), refund,
                     answer("Refunded.", refund=fee)),
            negative("store_credit", "refunds to store credit, which the customer never chose", ask("order_number"), offer("shipping_refund", fee),
                     call("issue_refund", order_id=oid, amount=fee, method="store_credit", reason="late_delivery"), answer("Done.", refund=fee)),
            negative("refuses_late", "calls a late parcel on time", ask("order_number"), read_order(parcel),
                     refusal("not_late", "It was not late.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "refund": fee, "case": which},
    )


# -- lost parcels: replacement, refund, or neither -------------------------------------------------------


def lost_replacement(world: World, rng: random.Random) -> TaskDraft:
    """The carrier lost the parcel and the customer wants it sent again: a replacement when every item is in stock;
    when one is sold out, a refund of the lost items if the customer takes it, else refuse (``out_of_stock``)."""
    which = case(rng, {"in_stock": 5, "sold_out_refund": 2, "sold_out_declined": 3})
    customer = _customer(world, rng)
    parcel = plant_lost_parcel(world, rng, customer)
    oid, value = parcel["order_id"], money(parcel["subtotal"])
    lines = world.query("SELECT l.line_id, v.variant_id, v.product_id FROM order_lines l JOIN variants v USING (variant_id) WHERE l.order_id = ? "
                        "ORDER BY l.line_id", (oid,))
    sold_out = lines[rng.randrange(len(lines))]
    if which != "in_stock":
        world.execute("UPDATE variants SET stock = 0 WHERE variant_id = ?", (sold_out["variant_id"],))
    refund_terms = (agree("If it can't be sent again, yes, refund my card.", min_amount=value) if which == "sold_out_refund"
                    else decline("No, I don't want my money back, I want the items."))
    on_the_line(world, customer, "their lost parcel sent again", order_number=oid, preferred_resolution="Send it again, please.",
                terms={"replacement": agree("Yes please, send it again."), "refund_original_payment": refund_terms,
                       "refund_store_credit": decline("No store credit, thanks."), "wait_for_delivery": decline("It's lost, there's nothing to wait for.")})
    prompt = (f"{full_name(customer)} is on chat: their parcel never arrived. Find out which order, check the tracking, and resolve it under "
              "the policy in the way the customer prefers. Confirm with submit_answer, giving values.refund if you refund anything.")
    look = [ask("order_number"), ask("preferred_resolution", optional=True), read_order(parcel, optional=True), track(parcel, optional=True)]
    stock = call("get_product", product_id=sold_out["product_id"])
    stock_read = seen("checked the stock of the lost items", "variants", sold_out["variant_id"], "stock")
    replace = call("send_replacement", order_id=oid, reason="Parcel lost by the carrier")
    refund = call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="lost_parcel")
    meta = {"customer_id": customer["customer_id"], "order_id": oid, "case": which}
    if which == "in_stock":
        return task(
            prompt=prompt,
            oracle=[*look, optional_call("get_product", product_id=sold_out["product_id"]), offer("replacement"), replace,
                    answer(f"The carrier lost order {oid}'s parcel; a replacement is on its way.")],
            outcome=completed(),
            rubric=[
                state("SELECT count(*) FROM orders WHERE replacement_for = ? AND total_minor = 0", oid, expect=1, weight=3,
                      name="replacement order created"),
                agreed_first("replacement", {"tool": "send_replacement", "args": {"order_id": oid}}, "customer agreed before the replacement"),
                never("issue_refund", "no refund on top of the replacement", order_id=oid),
            ],
            negatives=[
                negative("refund_instead", "refunds the items, which the customer did not want", ask("order_number"), refund, answer("Refunded.")),
                negative("no_agreement", "sends the replacement without asking", ask("order_number"), read_order(parcel), replace,
                         answer("Sent again.")),
                negative("claims_only", "says it was sent again", answer("A replacement is on its way.")),
            ],
            metadata=meta,
        )
    if which == "sold_out_refund":
        return task(
            prompt=prompt,
            oracle=[*look, stock, offer("refund_original_payment", value), refund,
                    answer(f"An item of order {oid} is sold out, so it cannot be sent again; refunded {value} to the card.", refund=value)],
            outcome=completed(),
            rubric=[
                stock_read,
                state("SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE order_id = ? AND reason = 'lost_parcel' AND method = 'original_payment'",
                      oid, expect=parcel["subtotal"], weight=3, name="lost items refunded to the card"),
                agreed_first("refund_original_payment", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund",
                             amount=value),
                never("send_replacement", "no replacement of a sold-out item"),
                value_is("refund", value, weight=1),
            ],
            negatives=[
                negative("offers_replacement", "promises a replacement first, then refunds", *look[:1], offer("replacement"), replace, stock,
                         offer("refund_original_payment", value), refund, answer("Refunded.", refund=value)),
                negative("unagreed_refund", "refunds without offering it", ask("order_number"), stock, refund, answer("Refunded.", refund=value)),
                negative("gives_up", "refuses although the customer would take a refund", ask("order_number"), stock,
                         refusal("out_of_stock", "Sold out, sorry.")),
            ],
            metadata={**meta, "refund": value},
        )
    return task(
        prompt=prompt,
        oracle=[*look, stock, offer("refund_original_payment", value),
                refusal("out_of_stock", f"An item of order {oid} is sold out, so it cannot be sent again, and you'd rather not have a refund; "
                                        "nothing was changed.")],
        outcome=refused("out_of_stock"),
        rubric=[
            stock_read,
            ToolCalled(name="offered the refund the policy allows instead", tool="propose_resolution",
                       args={"resolution": "refund_original_payment", "amount": number(value)}, gate=True),
            never("send_replacement", "no replacement of a sold-out item"),
            never("issue_refund", "no refund the customer declined", order_id=oid),
        ],
        negatives=[
            negative("refunds_anyway", "refunds although the customer declined", ask("order_number"), stock, offer("refund_original_payment", value),
                     refund, answer("Refunded.", refund=value)),
            negative("tries_replacement", "tries to send the sold-out items", ask("order_number"), replace, stock,
                     offer("refund_original_payment", value), refusal("out_of_stock", "Sold out.")),
            negative("unchecked_refusal", "refuses without checking the stock or offering a refund", ask("order_number"),
                     refusal("out_of_stock", "Sold out.")),
        ],
        metadata=meta,
    )


def stalled_parcel_refund(world: World, rng: random.Random) -> TaskDraft:
    """Tracking has stopped: after 7 days without a scan the parcel is lost under the policy and the customer takes a
    refund of the items; with a more recent scan it is still moving (``not_lost``) and they wait."""
    which = case(rng, {"stalled": 3, "moving": 2})
    customer = _customer(world, rng)
    items = some_items(world, rng, count=rng.randint(1, 2), extra="AND v.price_minor <= 22000")
    if which == "stalled":
        shipped = rng.randint(11, 18)
        parcel = plant_parcel(world, rng, customer, items, fate="in_transit", shipped_days_ago=shipped, transit_days=rng.randint(3, 5),
                              last_scan_days_ago=rng.randint(7, min(12, shipped - 2)))
    else:  # scanned a few days ago and not yet due: still moving
        shipped = rng.randint(4, 8)
        parcel = plant_parcel(world, rng, customer, items, fate="in_transit", shipped_days_ago=shipped, transit_days=shipped + rng.randint(0, 3),
                              last_scan_days_ago=rng.randint(2, min(6, shipped - 1)))
    oid, value = parcel["order_id"], money(parcel["subtotal"])
    on_the_line(world, customer, "their money back for a parcel whose tracking stopped", order_number=oid,
                terms={"replacement": decline("No, I needed it for last week; I just want my money back."),
                       "refund_original_payment": agree("Yes, back to my card please.", min_amount=value),
                       "refund_store_credit": decline("No store credit, thanks."),
                       "wait_for_delivery": agree("Alright, I'll give it a few more days.") if which == "moving"
                       else decline("It hasn't moved in over a week, I'm not waiting.")})
    prompt = (f"{full_name(customer)} is on chat: the tracking of their parcel seems stuck and they want their money back. Find out which "
              "order, check the tracking, and handle it under the policy the way the customer prefers. Reply with submit_answer giving "
              "values.refund if you refund anything.")
    tracked = parcel_seen("checked when the parcel was last scanned", parcel, "lost", "days_since_last_scan")
    refund = call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="lost_parcel")
    if which == "moving":
        return task(
            prompt=prompt,
            oracle=[ask("order_number"), read_order(parcel, optional=True), track(parcel), offer("wait_for_delivery", optional=True),
                    refusal("not_lost", f"The parcel of order {oid} was scanned {parcel['last_scan']} and is due by {parcel['promised_by']}: it "
                                        "is still moving, so it is not lost and cannot be refunded yet.")],
            outcome=refused("not_lost"),
            rubric=[
                tracked,
                never("issue_refund", "no refund for a parcel still moving", order_id=oid),
                never("send_replacement", "no replacement for a parcel still moving"),
            ],
            negatives=[
                negative("refunds_anyway", "offers the refund and tries it", ask("order_number"), track(parcel),
                         offer("refund_original_payment", value), refund, refusal("not_lost", "Not lost.")),
                negative("claims_refund", "says it refunded", ask("order_number"), track(parcel), answer("Refunded.", refund=value)),
                negative("unchecked_refusal", "refuses without checking the tracking", ask("order_number"), refusal("not_lost", "Please wait.")),
            ],
            metadata={"customer_id": customer["customer_id"], "order_id": oid, "case": which},
        )
    return task(
        prompt=prompt,
        oracle=[ask("order_number"), read_order(parcel, optional=True), track(parcel), offer("replacement", optional=True),
                offer("refund_original_payment", value), refund, answer(f"Refunded {value} for the lost parcel of {oid}.", refund=value)],
        outcome=completed(),
        rubric=[
            tracked,
            state("SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE order_id = ? AND reason = 'lost_parcel' AND method = 'original_payment'",
                  oid, expect=parcel["subtotal"], weight=3, name="lost items refunded to the card"),
            agreed_first("refund_original_payment", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund",
                         amount=value),
            never("send_replacement", "no replacement the customer declined"),
            value_is("refund", value, weight=1),
        ],
        negatives=[
            negative("replacement", "sends a replacement the customer declined", ask("order_number"), track(parcel),
                     call("send_replacement", order_id=oid, reason="Stalled"), answer("Sent again.")),
            negative("half_refund", "refunds half", ask("order_number"), track(parcel), offer("refund_original_payment", value),
                     call("issue_refund", order_id=oid, amount=money(parcel["subtotal"] // 2), method="original_payment", reason="lost_parcel"),
                     answer("Refunded.", refund=money(parcel["subtotal"] // 2))),
            negative("tells_to_wait", "calls a stalled parcel still moving", ask("order_number"), track(parcel),
                     refusal("not_lost", "Please wait a few more days.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "refund": value, "case": which},
    )


def late_not_lost(world: World, rng: random.Random) -> TaskDraft:
    """The customer says their late parcel is lost and wants it re-sent today: re-sent when the carrier reports it
    lost; refused (``not_lost``) when it is late but still being scanned."""
    which = case(rng, {"lost": 3, "late": 2})
    customer = _customer(world, rng)
    items = some_items(world, rng, count=rng.randint(1, 2), extra="AND v.price_minor >= 1500 AND v.price_minor <= 20000")
    transit = rng.randint(3, 4)
    parcel = plant_parcel(world, rng, customer, items, fate="lost" if which == "lost" else "in_transit",
                          shipped_days_ago=transit + rng.randint(2, 6), transit_days=transit, last_scan_days_ago=rng.randint(0, 2),
                          shipping_minor=rng.choice((0, 0, rng.randint(399, 999))))
    oid = parcel["order_id"]
    fee = money(parcel["shipping"]) if parcel["shipping"] else None
    on_the_line(world, customer, "the parcel re-sent at once", order_number=oid,
                terms={"replacement": agree("Yes, send it again now."), "shipping_refund": decline("I don't want a few dollars, I want my parcel."),
                       "wait_for_delivery": decline("No, it's obviously lost."), "refund_original_payment": decline("I want the parcel, not a refund.")})
    prompt = (f"{full_name(customer)} is on chat: \"My parcel is late, it's lost, send me another one today.\" Find out which order, check "
              "the tracking, and handle the request under the policy. Reply with submit_answer.")
    replace = call("send_replacement", order_id=oid, reason="Parcel lost by the carrier")
    if which == "lost":
        return task(
            prompt=prompt,
            oracle=[ask("order_number"), read_order(parcel, optional=True), track(parcel, optional=True), offer("replacement"), replace,
                    answer(f"The carrier reported order {oid}'s parcel lost; a replacement is on its way.")],
            outcome=completed(),
            rubric=[
                state("SELECT count(*) FROM orders WHERE replacement_for = ? AND total_minor = 0", oid, expect=1, weight=3,
                      name="replacement order created"),
                agreed_first("replacement", {"tool": "send_replacement", "args": {"order_id": oid}}, "customer agreed before the replacement"),
                never("issue_refund", "no refund on top of the replacement", order_id=oid),
            ],
            negatives=[
                negative("refuses_lost", "calls a lost parcel merely late", ask("order_number"), track(parcel),
                         refusal("not_lost", "It is only late.")),
                negative("no_agreement", "re-sends without agreeing it", ask("order_number"), track(parcel), replace, answer("Sent again.")),
                negative("claims_resent", "tells the customer it was re-sent", answer("A new parcel is on its way.")),
            ],
            metadata={"customer_id": customer["customer_id"], "order_id": oid, "case": which},
        )
    return task(
        prompt=prompt,
        oracle=[ask("order_number"), track(parcel), offer("shipping_refund", fee, optional=True),
                refusal("not_lost", f"The parcel of order {oid} is late but still moving (scanned {parcel['last_scan']}), so it is not lost under "
                                    "the policy and cannot be re-sent; it should arrive soon.")],
        outcome=refused("not_lost"),
        rubric=[
            parcel_seen("checked when the parcel was last scanned", parcel, "lost", "days_since_last_scan", weight=2),
            never("send_replacement", "no replacement for a parcel that is not lost"),
            never("issue_refund", "no refund of the items", reason="lost_parcel"),
        ],
        negatives=[
            negative("resends", "tries to send a replacement", ask("order_number"), track(parcel), offer("replacement"), replace,
                     refusal("not_lost", "Not lost.")),
            negative("refunds_items", "refunds the items as lost", ask("order_number"),
                     call("issue_refund", order_id=oid, amount=money(parcel["subtotal"]), method="original_payment", reason="lost_parcel"),
                     answer("Refunded.")),
            negative("claims_resent", "tells the customer it was re-sent", answer("A new parcel is on its way.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "case": which},
    )


TEMPLATES = [
    TaskTemplate(order_status, difficulty="easy", category="orders", split="train", tags=["tracking", "ask-customer", "privacy"],
                 tools=["ask_customer", "list_orders", "get_order", "track_shipment", "get_customer", "search_customers", "submit_answer"]),
    TaskTemplate(late_shipping_refund, difficulty="medium", category="shipping", split="train", tags=["late", "refund", "agreement"],
                 tools=["ask_customer", "get_order", "track_shipment", "propose_resolution", "issue_refund", "submit_answer"]),
    TaskTemplate(lost_replacement, difficulty="medium", category="shipping", split="train", tags=["lost", "replacement", "stock", "agreement"],
                 tools=["ask_customer", "get_order", "track_shipment", "get_product", "propose_resolution", "send_replacement", "issue_refund",
                        "submit_answer"]),
    TaskTemplate(stalled_parcel_refund, difficulty="hard", category="shipping", split="test", tags=["lost", "refund", "agreement"],
                 tools=["ask_customer", "get_order", "track_shipment", "propose_resolution", "issue_refund", "submit_answer"]),
    TaskTemplate(late_not_lost, difficulty="medium", category="shipping", split="train", tags=["late", "lost", "refusal", "policy"],
                 tools=["ask_customer", "get_order", "track_shipment", "propose_resolution", "send_replacement", "submit_answer"]),
]
