"""Order status and shipping tasks: where is my parcel, late parcels (the shipping fee back),
lost and stalled parcels (a replacement or a refund, as the customer chooses), and a late parcel that is not lost."""

from __future__ import annotations

import random
from datetime import timedelta

from envs.support.tasks._common import (
    TODAY,
    agree,
    agreed_first,
    answer,
    ask,
    asked,
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
    plain_customers,
    plant_order,
    refundable_orders,
    refusal,
    state,
    task,
    text_is,
    value_is,
    variants,
)
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]

_RECENT_SCAN = (TODAY - timedelta(days=4)).isoformat()
_STALLED_SCAN = (TODAY - timedelta(days=7)).isoformat()


def _customer(world: World, customer_id: str) -> dict:
    return one(world, "SELECT * FROM customers WHERE customer_id = ?", customer_id)


def order_status(world: World, rng: random.Random) -> TaskDraft:
    """The customer asks where their parcel is: ask which order, read it, report the carrier status and tracking number."""
    order = pick(rng, refundable_orders(world, "AND ship_status IN ('in_transit', 'out_for_delivery') AND last_scan >= ? "
                                               "AND orders_of_customer >= 2", _RECENT_SCAN), "order in transit")
    customer = _customer(world, order["customer_id"])
    oid, status, number = order["order_id"], order["ship_status"], one(world, "SELECT tracking_number FROM shipments WHERE shipment_id = ?",
                                                                        order["shipment_id"])["tracking_number"]
    newest = one(world, "SELECT order_id FROM orders WHERE customer_id = ? AND order_id != ? ORDER BY placed_at DESC LIMIT 1",
                 customer["customer_id"], oid)["order_id"]
    on_the_line(world, customer, "to know where their parcel is", order_number=oid)
    return task(
        prompt=(f"{customer['first_name']} {customer['last_name']} (customer {customer['customer_id']}) is on chat: \"Hi, where is my "
                "parcel?\" Find out which order they mean, check it, and reply with submit_answer giving values.status (the carrier "
                "status of its shipment) and values.tracking_number."),
        oracle=[ask("order_number"), call("get_order", order_id=oid),
                answer(f"Order {oid} is {status} with tracking number {number}.", status=status, tracking_number=number)],
        outcome=completed(),
        rubric=[
            asked("order_number"),
            looked_up("read the order the customer means", {"tool": "get_order", "args": {"order_id": oid}},
                      {"tool": "track_shipment", "args": {"shipment_id": order["shipment_id"]}}),
            text_is("status", status, weight=2),
            text_is("tracking_number", number),
        ],
        negatives=[
            negative("newest_order", "guesses the newest order instead of asking", call("list_orders", customer_id=customer["customer_id"]),
                     call("get_order", order_id=newest), answer("Your latest order is on its way.", status="delivered", tracking_number=number)),
            negative("claims_only", "reports the figures without asking or reading", answer("In transit.", status=status, tracking_number=number)),
            negative("wrong_status", "reads the order but reports it delivered", ask("order_number"), call("get_order", order_id=oid),
                     answer("Delivered.", status="delivered", tracking_number=number)),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


def late_shipping_refund(world: World, rng: random.Random) -> TaskDraft:
    """A late parcel: refund the shipping fee, which the customer accepts."""
    order = pick(rng, refundable_orders(world, "AND shipping_minor > 0 AND ((ship_status IN ('in_transit', 'out_for_delivery') AND "
                                               "promised_by < ? AND last_scan >= ?) OR (ship_status = 'delivered' AND delivered_on > promised_by))",
                                        TODAY.isoformat(), _RECENT_SCAN), "late order with a shipping fee")
    customer = _customer(world, order["customer_id"])
    oid, fee = order["order_id"], money(order["shipping_minor"])
    on_the_line(world, customer, "compensation for a late parcel", order_number=oid,
                terms={"shipping_refund": agree("That's fair, thank you."), "goodwill_credit": decline("I'd rather have my money back.")})
    refund = call("issue_refund", order_id=oid, amount=fee, method="original_payment", reason="late_delivery")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat, unhappy that their parcel came (or is coming) later than promised. Find "
                "out which order, check whether it is late, and make it right under the policy. Reply with submit_answer giving "
                "values.refund (the amount refunded)."),
        oracle=[ask("order_number"), optional_call("get_order", order_id=oid), optional_call("track_shipment", shipment_id=order["shipment_id"]),
                offer("shipping_refund", fee), refund, answer(f"Refunded the {fee} shipping fee of {oid}.", refund=fee)],
        outcome=completed(),
        rubric=[
            asked("order_number"),
            state("SELECT count(*) FROM refunds WHERE order_id = ? AND reason = 'late_delivery' AND method = 'original_payment' "
                  "AND amount_minor = ?", oid, order["shipping_minor"], expect=1, weight=3, name="shipping fee refunded to the card"),
            agreed_first("shipping_refund", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund"),
            value_is("refund", fee, weight=1),
        ],
        negatives=[
            negative("no_agreement", "refunds without asking the customer", ask("order_number"), call("get_order", order_id=oid), refund,
                     answer("Refunded.", refund=fee)),
            negative("store_credit", "refunds to store credit, which the customer never chose", ask("order_number"), offer("shipping_refund", fee),
                     call("issue_refund", order_id=oid, amount=fee, method="store_credit", reason="late_delivery"), answer("Done.", refund=fee)),
            negative("as_lost", "treats the late parcel as lost and refunds the items", ask("order_number"),
                     offer("refund_original_payment", money(order["shipped_minor"])),
                     call("issue_refund", order_id=oid, amount=money(order["shipped_minor"]), method="original_payment", reason="lost_parcel"),
                     answer("Refunded.", refund=money(order["shipped_minor"]))),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "refund": fee},
    )


def _lost_in_stock(world: World, extra: str) -> list[dict]:
    return refundable_orders(world, f"""AND shipped_minor BETWEEN 1000 AND 50000 AND NOT EXISTS (
        SELECT 1 FROM shipment_items i JOIN order_lines l USING (line_id) JOIN variants v USING (variant_id)
        WHERE i.shipment_id = q.shipment_id AND v.stock < i.quantity) {extra}""")


def lost_replacement(world: World, rng: random.Random) -> TaskDraft:
    """The carrier lost the parcel: the customer wants it sent again."""
    order = pick(rng, _lost_in_stock(world, "AND ship_status = 'lost'"), "lost parcel with items in stock")
    customer = _customer(world, order["customer_id"])
    oid = order["order_id"]
    on_the_line(world, customer, "their lost parcel sent again", order_number=oid,
                terms={"replacement": agree("Yes please, send it again."), "refund_original_payment": decline("I still want the items.")})
    replace = call("send_replacement", order_id=oid, reason="Parcel lost by the carrier")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: their parcel never arrived. Find out which order, check the tracking and "
                "resolve it under the policy in the way the customer prefers. Confirm with submit_answer."),
        oracle=[ask("order_number"), optional_call("get_order", order_id=oid), optional_call("track_shipment", shipment_id=order["shipment_id"]),
                offer("replacement"), replace, answer(f"The carrier lost order {oid}'s parcel; a replacement is on its way.")],
        outcome=completed(),
        rubric=[
            asked("order_number"),
            state("SELECT count(*) FROM orders WHERE replacement_for = ? AND total_minor = 0", oid, expect=1, weight=3,
                  name="replacement order created"),
            agreed_first("replacement", {"tool": "send_replacement", "args": {"order_id": oid}}, "customer agreed before the replacement"),
            never("issue_refund", "no refund on top of the replacement", order_id=oid),
        ],
        negatives=[
            negative("refund_instead", "refunds the items, which the customer did not want", ask("order_number"),
                     call("issue_refund", order_id=oid, amount=money(order["shipped_minor"]), method="original_payment", reason="lost_parcel"),
                     answer("Refunded.")),
            negative("no_agreement", "sends the replacement without asking", ask("order_number"), call("get_order", order_id=oid), replace,
                     answer("Sent again.")),
            negative("claims_only", "says it was sent again", answer("A replacement is on its way.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


def stalled_parcel_refund(world: World, rng: random.Random) -> TaskDraft:
    """Tracking has not moved for over a week (lost under the policy): the customer declines a replacement and
    takes a refund of the items to their card."""
    order = pick(rng, _lost_in_stock(world, f"AND ship_status = 'in_transit' AND last_scan <= '{_STALLED_SCAN}'"),
                 "stalled parcel")
    customer = _customer(world, order["customer_id"])
    oid, value = order["order_id"], money(order["shipped_minor"])
    on_the_line(world, customer, "their money back for a parcel that never came", order_number=oid,
                terms={"replacement": decline("No, I needed it for last week; I just want my money back."),
                       "refund_original_payment": agree("Yes, back to my card please.", min_amount=value),
                       "refund_store_credit": decline("No store credit, thanks.")})
    refund = call("issue_refund", order_id=oid, amount=value, method="original_payment", reason="lost_parcel")
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: tracking for their parcel has not moved for days. Find out which order, "
                "check the tracking, and resolve it under the policy the way the customer prefers. Reply with submit_answer giving "
                "values.refund if you refund anything."),
        oracle=[ask("order_number"), optional_call("get_order", order_id=oid), call("track_shipment", shipment_id=order["shipment_id"]),
                offer("replacement", optional=True), offer("refund_original_payment", value), refund,
                answer(f"Refunded {value} for the lost parcel of {oid}.", refund=value)],
        outcome=completed(),
        rubric=[
            asked("order_number"),
            looked_up("checked the tracking", {"tool": "track_shipment", "args": {"shipment_id": order["shipment_id"]}}),
            state("SELECT coalesce(sum(amount_minor), 0) FROM refunds WHERE order_id = ? AND reason = 'lost_parcel' AND method = 'original_payment'",
                  oid, expect=order["shipped_minor"], weight=3, name="lost items refunded to the card"),
            agreed_first("refund_original_payment", {"tool": "issue_refund", "args": {"order_id": oid}}, "customer agreed before the refund"),
            never("send_replacement", "no replacement the customer declined"),
            value_is("refund", value, weight=1),
        ],
        negatives=[
            negative("replacement", "sends a replacement the customer declined", ask("order_number"),
                     call("track_shipment", shipment_id=order["shipment_id"]), call("send_replacement", order_id=oid, reason="Stalled"),
                     answer("Sent again.")),
            negative("half_refund", "refunds half", ask("order_number"), call("track_shipment", shipment_id=order["shipment_id"]),
                     offer("refund_original_payment", value),
                     call("issue_refund", order_id=oid, amount=money(order["shipped_minor"] // 2), method="original_payment", reason="lost_parcel"),
                     answer("Refunded.", refund=money(order["shipped_minor"] // 2))),
            negative("tells_to_wait", "tells the customer to keep waiting", ask("order_number"),
                     call("track_shipment", shipment_id=order["shipment_id"]), answer("Please wait a few more days.", refund="0.00")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid, "refund": value},
    )


def late_not_lost(world: World, rng: random.Random) -> TaskDraft:
    """A parcel is a few days late but still moving; the customer insists it is lost and wants it re-sent: decline."""
    customer = pick(rng, plain_customers(world, "AND c.tier != 'platinum'"), "customer")
    items = [(pick(rng, variants(world, "AND v.stock > 5 AND v.price_minor >= 2000"), "variant in stock"), 1)]
    planted = plant_order(world, customer, items, placed_days_ago=rng.randint(7, 9), fate="in_transit_late")
    oid = planted["order_id"]
    on_the_line(world, customer, "the parcel re-sent at once", order_number=oid,
                terms={"replacement": agree("Yes, send it again now."), "shipping_refund": decline("I don't want a few dollars, I want my parcel."),
                       "wait_for_delivery": decline("No, it's obviously lost.")})
    return task(
        prompt=(f"Customer {customer['customer_id']} is on chat: \"My parcel is late, it's lost, send me another one today.\" Find out "
                "which order, check the tracking, and handle the request under the policy. Reply with submit_answer."),
        oracle=[ask("order_number"), optional_call("get_order", order_id=oid), call("track_shipment", shipment_id=planted["shipment_id"]),
                offer("shipping_refund", money(planted["shipping"]) if planted["shipping"] else None, optional=True),
                refusal("not_lost", "The parcel is late but still moving (scanned yesterday), so it is not lost under the policy and "
                                    "cannot be re-sent; it should arrive soon.")],
        outcome=refused("not_lost"),
        rubric=[
            asked("order_number"),
            looked_up("checked the tracking", {"tool": "track_shipment", "args": {"shipment_id": planted["shipment_id"]}}, weight=2),
            never("send_replacement", "no replacement for a parcel that is not lost"),
            never("issue_refund", "no refund of the items", reason="lost_parcel"),
        ],
        negatives=[
            negative("resends", "tries to send a replacement", ask("order_number"), call("track_shipment", shipment_id=planted["shipment_id"]),
                     call("send_replacement", order_id=oid, reason="Customer says lost"), refusal("not_lost", "Not lost.")),
            negative("refunds_items", "refunds the items as lost", ask("order_number"),
                     call("issue_refund", order_id=oid, amount=money(planted["subtotal"]), method="original_payment", reason="lost_parcel"),
                     answer("Refunded.")),
            negative("claims_resent", "tells the customer it was re-sent", answer("A new parcel is on its way.")),
        ],
        metadata={"customer_id": customer["customer_id"], "order_id": oid},
    )


TEMPLATES = [
    TaskTemplate(order_status, difficulty="easy", category="orders", split="train", tags=["tracking", "ask-customer"],
                 tools=["ask_customer", "get_order", "track_shipment", "submit_answer"]),
    TaskTemplate(late_shipping_refund, difficulty="medium", category="shipping", split="train", tags=["late", "refund", "agreement"],
                 tools=["ask_customer", "get_order", "track_shipment", "propose_resolution", "issue_refund", "submit_answer"]),
    TaskTemplate(lost_replacement, difficulty="medium", category="shipping", split="train", tags=["lost", "replacement", "agreement"],
                 tools=["ask_customer", "get_order", "track_shipment", "propose_resolution", "send_replacement", "submit_answer"]),
    TaskTemplate(stalled_parcel_refund, difficulty="hard", category="shipping", split="test", tags=["lost", "refund", "agreement"],
                 tools=["ask_customer", "get_order", "track_shipment", "propose_resolution", "issue_refund", "submit_answer"]),
    TaskTemplate(late_not_lost, difficulty="medium", category="shipping", split="train", tags=["late", "refusal", "policy"],
                 tools=["ask_customer", "get_order", "track_shipment", "propose_resolution", "submit_answer"]),
]
