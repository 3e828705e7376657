"""The retailer's trade in the support fixture: orders and payments, shipping with carrier tracking (on time,
late, lost, stalled, partial), returns with inspections, refunds, store credit and gift cards, and the
subscription boxes with their monthly invoices (including periods charged twice).

Only ``builder.rng`` is used for randomness and only the catalog's fixed clock for time.
"""

from __future__ import annotations

from datetime import date, timedelta

from envs.support import catalog as cat
from envs.support.catalog import HISTORY_DAYS, RETURN_DAYS, TODAY
from envs.support.generator import Builder, Row, stamp

__all__ = ["orders", "subscriptions", "add_months"]

_LOCATIONS = ["Reno, NV", "Memphis, TN", "Louisville, KY", "Columbus, OH", "Indianapolis, IN", "Ontario, CA", "Allentown, PA"]


def _coupon_discount(builder: Builder, code: str, lines: list[Row], subtotal: int, day: date) -> int:
    promo = next(p for p in builder.rows["promotions"] if p["promo_id"] == next(
        c["promo_id"] for c in builder.rows["coupons"] if c["code"] == code))
    if not promo["starts_on"] <= day.isoformat() <= promo["ends_on"] or subtotal < promo["min_subtotal_minor"]:
        return 0
    eligible = sum(line["unit_price_minor"] * line["quantity"] for line in lines
                   if promo["category"] is None or line["_variant"]["_category"] == promo["category"])
    if eligible == 0:
        return 0
    if promo["kind"] == "percent":
        return eligible * promo["value"] // 10_000
    return min(promo["value"], eligible)


def _event(builder: Builder, shipment: Row, day: date, hour: int, status: str, description: str, location: str | None = None) -> None:
    hour = min(hour, 14) if day >= TODAY else hour  # never after the world's clock (15:00 today)
    builder.add("tracking_events", {"event_id": None, "shipment_id": shipment, "at": stamp(day, hour, builder.rng.randint(0, 59)),
                                    "status": status, "location": location or builder.rng.choice(_LOCATIONS),
                                    "description": description})


def _ship(builder: Builder, order: Row, lines: list[Row], shipped: date, position: int) -> Row:
    """A shipment of ``lines``, its tracking events, and its fate (delivered on time or late, in transit, lost, stalled)."""
    rng = builder.rng
    carrier, prefix = rng.choice(cat.CARRIERS)
    promised = shipped + timedelta(days=rng.randint(4, 6))
    shipment = builder.add("shipments", {
        "shipment_id": None, "order_id": order, "carrier": carrier,
        "tracking_number": f"{prefix}{rng.randint(10**11, 10**12 - 1)}", "status": "label_created",
        "shipped_on": shipped.isoformat(), "promised_by": promised.isoformat(), "delivered_on": None, "_pos": position,
    })
    for line in lines:
        builder.add("shipment_items", {"shipment_id": shipment, "line_id": line, "quantity": line["quantity"]})
    _event(builder, shipment, shipped, 9, "label_created", "Shipping label created", "Brightwater fulfilment, Reno, NV")
    age = (TODAY - shipped).days
    if age < 1:
        return shipment
    _event(builder, shipment, shipped + timedelta(days=1), 8, "in_transit", "Picked up by carrier")
    roll = rng.random()
    if age >= 10 and roll < 0.03:
        _event(builder, shipment, shipped + timedelta(days=3), 14, "in_transit", "Arrived at sort facility")
        _event(builder, shipment, shipped + timedelta(days=9), 10, "lost", "Carrier reports the parcel lost in transit")
        shipment["status"] = "lost"
        return shipment
    if age >= 12 and roll < 0.06:
        _event(builder, shipment, shipped + timedelta(days=2), 16, "in_transit", "Departed sort facility")
        shipment["status"] = "in_transit"  # stalled: no scan since
        return shipment
    transit = rng.randint(2, 4) + (rng.randint(promised.day % 3 + 2, 7) if roll < 0.15 else 0)
    arrival = shipped + timedelta(days=transit)
    if arrival > TODAY:
        moved = shipped + timedelta(days=min(age, 2))
        _event(builder, shipment, moved, 18, "in_transit", "In transit to destination")
        if arrival == TODAY + timedelta(days=1) and age >= 2:
            _event(builder, shipment, TODAY, 7, "out_for_delivery", "Out for delivery", f"{order['ship_city']}, {order['ship_region']}")
            shipment["status"] = "out_for_delivery"
        else:
            shipment["status"] = "in_transit"
        return shipment
    _event(builder, shipment, arrival - timedelta(days=1), 18, "in_transit", "In transit to destination")
    _event(builder, shipment, arrival, 7, "out_for_delivery", "Out for delivery", f"{order['ship_city']}, {order['ship_region']}")
    _event(builder, shipment, arrival, rng.randint(11, 19), "delivered", "Delivered, left at front door",
           f"{order['ship_city']}, {order['ship_region']}")
    shipment["status"], shipment["delivered_on"] = "delivered", arrival.isoformat()
    return shipment


def _refund(builder: Builder, order: Row | None, amount: int, reason: str, at: str, *, method: str = "original_payment",
            rma: Row | None = None, invoice: Row | None = None) -> Row:
    by = builder.agent()
    row = builder.add("refunds", {"refund_id": None, "order_id": order, "invoice_id": invoice, "rma_id": rma, "method": method,
                                  "amount_minor": amount, "reason": reason, "issued_at": at, "issued_by": by})
    if method == "store_credit":
        customer = order["customer_id"] if order else invoice["_customer"]
        builder.add("credit_ledger", {"entry_id": None, "customer_id": customer, "amount_minor": amount, "kind": "refund",
                                      "reference": row, "created_at": at, "created_by": by})
    builder.audit(at, by, "issue_refund", "refund", row, amount_minor=amount, method=method)
    return row


def _returns(builder: Builder, order: Row, lines: list[Row], delivered: date) -> None:
    rng = builder.rng
    for line in lines:
        category = line["_variant"]["_category"]
        age = (TODAY - delivered).days
        if category == "grocery" or age < 4 or rng.random() > 0.07:
            continue
        reason = rng.choice(["changed_mind", "changed_mind", "damaged", "defective", "wrong_item", "not_as_described"])
        created = delivered + timedelta(days=rng.randint(1, min(age - 1, RETURN_DAYS[category] - 1)))
        fee = line["unit_price_minor"] * line["quantity"] * 15 // 100 if category == "electronics" and reason == "changed_mind" else 0
        by = builder.agent()
        photo = None
        if reason == "damaged":
            photo = builder.add("attachments", {"attachment_id": None, "customer_id": order["customer_id"], "kind": "photo",
                                                "description": f"Photo of the damaged {line['_variant']['_name']}",
                                                "uploaded_at": stamp(created, 10)})
        rma = builder.add("returns", {"rma_id": None, "order_id": order, "line_id": line, "quantity": line["quantity"],
                                      "kind": "return", "reason": reason, "status": "authorized", "photo_id": photo,
                                      "exchange_variant_id": None, "restocking_fee_minor": fee,
                                      "created_at": stamp(created, 11, rng.randint(0, 59)), "created_by": by})
        builder.audit(rma["created_at"], by, "create_return", "return", rma, reason=reason)
        received = created + timedelta(days=rng.randint(4, 8))
        if received > TODAY - timedelta(days=1):
            continue
        rma["status"] = "received"
        inspected = received + timedelta(days=1)
        if inspected >= TODAY:
            continue
        result = "fail" if rng.random() < 0.12 else "pass"
        builder.add("inspections", {"inspection_id": None, "rma_id": rma, "inspected_at": stamp(inspected, 15), "inspector": "STF-0014",
                                    "result": result, "notes": "Item as described by the customer" if result == "pass"
                                    else "Item shows wear and missing accessories"})
        rma["status"] = "inspected"
        if result == "pass" and inspected + timedelta(days=1) < TODAY:
            done = sum(r["amount_minor"] for r in builder.rows["refunds"] if r["order_id"] is order)
            amount = min(line["unit_price_minor"] * line["quantity"] - fee, order["total_minor"] - done)
            if amount <= 0:
                continue
            _refund(builder, order, amount, f"Return {reason}", stamp(inspected + timedelta(days=1), 10), rma=rma,
                    method="store_credit" if rng.random() < 0.2 else "original_payment")
            rma["status"] = "closed"
        elif result == "fail":
            rma["status"] = "rejected"


def _order(builder: Builder, customer: Row, day: date) -> None:
    rng = builder.rng
    address = builder.addresses[customer["customer_id"]][0]
    placed = stamp(day, rng.randint(7, 14 if day == TODAY else 22), rng.randint(0, 59))
    order = builder.add("orders", {
        "order_id": None, "customer_id": customer["customer_id"], "placed_at": placed, "status": "processing",
        "ship_line1": address["line1"], "ship_line2": address["line2"], "ship_city": address["city"],
        "ship_region": address["region"], "ship_postcode": address["postcode"], "subtotal_minor": 0, "shipping_minor": 0,
        "discount_minor": 0, "total_minor": 0, "coupon_code": None, "replacement_for": None,
    })
    lines = []
    for position, variant in enumerate(rng.sample(builder.variants, k=rng.choice([1, 1, 1, 2, 2, 3]))):
        lines.append(builder.add("order_lines", {"line_id": None, "order_id": order, "variant_id": variant["variant_id"],
                                                 "quantity": 2 if rng.random() < 0.1 else 1,
                                                 "unit_price_minor": variant["price_minor"], "_pos": position, "_variant": variant}))
    subtotal = sum(line["unit_price_minor"] * line["quantity"] for line in lines)
    used = builder.customer_orders.setdefault(customer["customer_id"], [])
    if rng.random() < 0.14:
        code = rng.choice([c[8] for c in cat.PROMOTIONS])
        if not (code == "WELCOME10" and any(o["coupon_code"] == code for o in used)):
            discount = _coupon_discount(builder, code, lines, subtotal, day)
            if discount:
                order["coupon_code"], order["discount_minor"] = code, discount
    order["subtotal_minor"], order["shipping_minor"] = subtotal, 0 if subtotal >= 5_000 else 599
    order["total_minor"] = subtotal + order["shipping_minor"] - order["discount_minor"]
    used.append(order)
    method = "card" if rng.random() < 0.75 else "paypal"
    builder.add("payments", {"payment_id": None, "order_id": order, "invoice_id": None, "method": method,
                             "card_last4": f"{rng.randint(0, 9999):04d}" if method == "card" else None,
                             "amount_minor": order["total_minor"], "status": "captured", "captured_at": placed})
    age = (TODAY - day).days
    if age >= 3 and rng.random() < 0.03:
        order["status"] = "cancelled"
        at = stamp(day + timedelta(days=1), 9)
        _refund(builder, order, order["total_minor"], "Order cancelled at customer request", at)
        return
    if age <= 1:
        return
    shipped = day + timedelta(days=1)
    if len(lines) > 1 and age >= 4 and rng.random() < 0.15:
        first = _ship(builder, order, lines[:-1], shipped, 0)
        later = shipped + timedelta(days=rng.randint(3, 12))
        backordered = later > TODAY - timedelta(days=1) or rng.random() < 0.3
        shipments = [first] + ([] if backordered else [_ship(builder, order, lines[-1:], later, 1)])
        shipped_lines = len(lines) if len(shipments) == 2 else len(lines) - 1
    else:
        shipments, shipped_lines = [_ship(builder, order, lines, shipped, 0)], len(lines)
    delivered = [s for s in shipments if s["status"] == "delivered"]
    if shipped_lines < len(lines):
        order["status"] = "partially_shipped"
    elif len(delivered) == len(shipments):
        order["status"] = "delivered"
    else:
        order["status"] = "shipped"
    if order["status"] == "delivered" and len(shipments) == 1:
        _returns(builder, order, lines, date.fromisoformat(delivered[0]["delivered_on"]))


def orders(builder: Builder) -> None:
    """Orders of every customer over the history, in time order, with their payments, shipping and returns."""
    rng = builder.rng
    plan: list[tuple[date, int, Row]] = []
    for customer in builder.rows["customers"]:
        since = max(date.fromisoformat(customer["created_on"]), TODAY - timedelta(days=HISTORY_DAYS))
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 6])):
            plan.append((since + timedelta(days=rng.randint(0, (TODAY - since).days)), len(plan), customer))
    for day, _, customer in sorted(plan, key=lambda p: (p[0], p[1])):
        _order(builder, customer, day)
    for customer in rng.sample(builder.rows["customers"], k=60 * builder.scale):
        for _ in range(rng.randint(1, 2)):
            at = stamp(TODAY - timedelta(days=rng.randint(2, 140)), rng.randint(9, 17))
            amount = rng.choice([500, 1_000, 1_500, 2_000])
            by = builder.agent()
            entry = builder.add("credit_ledger", {"entry_id": None, "customer_id": customer["customer_id"], "amount_minor": amount,
                                                  "kind": "goodwill", "reference": None, "created_at": at, "created_by": by})
            builder.audit(at, by, "issue_goodwill_credit", "customer", customer["customer_id"], amount_minor=amount, entry=entry)
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    for _ in range(80 * builder.scale):
        code = "GC-" + "".join(rng.choice(alphabet) for _ in range(4)) + "-" + "".join(rng.choice(alphabet) for _ in range(4))
        initial = rng.choice([2_500, 5_000, 10_000])
        balance = rng.choice([initial, initial, initial // 2, 0])
        builder.add("gift_cards", {"code": code, "initial_minor": initial, "balance_minor": balance,
                                   "purchased_by": rng.choice(builder.rows["customers"])["customer_id"],
                                   "status": "redeemed" if balance == 0 else "active",
                                   "issued_on": (TODAY - timedelta(days=rng.randint(5, 300))).isoformat()})


def add_months(day: date, months: int) -> date:
    """``day`` moved by whole months (days past the 28th never occur: billing anchors are 1-28)."""
    month = day.month - 1 + months
    return date(day.year + month // 12, month % 12 + 1, day.day)


def subscriptions(builder: Builder) -> None:
    """Subscription boxes: monthly periods anchored on the start day, one paid invoice per period (a few twice)."""
    rng = builder.rng
    plans = builder.rows["plans"]
    for customer in rng.sample([c for c in builder.rows["customers"] if "_twin_of" not in c], k=220 * builder.scale):
        plan = rng.choice(plans)
        started = TODAY - timedelta(days=rng.randint(20, 420))
        started = started.replace(day=min(started.day, 28))
        periods = 0
        while add_months(started, periods + 1) <= TODAY:
            periods += 1
        start, end = add_months(started, periods), add_months(started, periods + 1)
        roll = rng.random()
        status = "active" if roll < 0.74 else "paused" if roll < 0.82 else "past_due" if roll < 0.87 else "cancelled"
        sub = builder.add("subscriptions", {
            "subscription_id": None, "customer_id": customer["customer_id"], "plan_id": plan["plan_id"], "next_plan_id": None,
            "status": status, "started_on": started.isoformat(), "period_start": start.isoformat(), "period_end": end.isoformat(),
            "paused_until": None, "cancel_at_period_end": 0, "cancelled_on": None,
        })
        billed = periods + 1
        if status == "cancelled":
            cut = max(1, periods - rng.randint(0, min(periods, 3)))
            sub["period_start"], sub["period_end"] = add_months(started, cut - 1).isoformat(), add_months(started, cut).isoformat()
            sub["cancelled_on"] = (add_months(started, cut) - timedelta(days=rng.randint(1, 10))).isoformat()
            billed = cut
        elif status == "paused":
            sub["paused_until"] = add_months(started, periods + rng.randint(1, 2)).isoformat()
            billed = periods
        for index in range(max(0, billed - 6), billed):
            p_start, p_end = add_months(started, index), add_months(started, index + 1)
            unpaid = status == "past_due" and index == billed - 1
            invoice = builder.add("invoices", {"invoice_id": None, "subscription_id": sub, "period_start": p_start.isoformat(),
                                               "period_end": p_end.isoformat(), "amount_minor": plan["price_minor"],
                                               "status": "open" if unpaid else "paid", "issued_at": stamp(p_start, 6),
                                               "_customer": customer["customer_id"]})
            if not unpaid:
                builder.add("payments", {"payment_id": None, "order_id": None, "invoice_id": invoice, "method": "card",
                                         "card_last4": f"{rng.randint(0, 9999):04d}", "amount_minor": plan["price_minor"],
                                         "status": "captured", "captured_at": stamp(p_start, 6, 5)})
        if status == "active" and rng.random() < 0.06:
            p_start = add_months(started, periods - rng.randint(0, 1))
            twice = builder.add("invoices", {"invoice_id": None, "subscription_id": sub, "period_start": p_start.isoformat(),
                                             "period_end": add_months(p_start, 1).isoformat(), "amount_minor": plan["price_minor"],
                                             "status": "paid", "issued_at": stamp(p_start, 6, 40), "_customer": customer["customer_id"]})
            builder.add("payments", {"payment_id": None, "order_id": None, "invoice_id": twice, "method": "card",
                                     "card_last4": f"{rng.randint(0, 9999):04d}", "amount_minor": plan["price_minor"],
                                     "status": "captured", "captured_at": stamp(p_start, 6, 45)})
