"""Orders a support story is about: the variants and lines a story may pick, a basket of a given value,
planting an order (and its shipment) or a delivered purchase of a given age, a return case, and the policy's
restocking fee on a line. Parcels with seeded carriers and scans are ``parcel_setup``'s.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from envs.support.catalog import NOW, TODAY
from envs.support.ledger import next_world_id as next_id
from envs.support.rules import RESTOCKING_FEE_BPS
from envs.support.tasks._common import stamp
from envs.support.tasks.customer_setup import named_customers, plain_customers
from fixtures.world import World
from graders.setup import need, one, pick, rows

__all__ = [
    "Purchase",
    "basket",
    "days_ago",
    "delivered_lines",
    "plant_order",
    "plant_purchase",
    "plant_return",
    "refundable_orders",
    "restocking_fee_minor",
    "some_items",
    "variants",
]


def variants(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """Variants with their product (``name``, ``category``); ``extra`` adds conditions on ``v``/``p``."""
    return rows(world, f"SELECT v.*, p.name, p.category FROM variants v JOIN products p USING (product_id) WHERE 1 = 1 {extra} "
                       "ORDER BY v.variant_id", *params)


def some_items(world: World, rng: random.Random, *, count: int = 1, extra: str = "", min_stock: int = 5) -> list[tuple[dict[str, Any], int]]:
    """``count`` distinct in-stock variants (``extra``: conditions on ``v``/``p``), one unit each, drawn with ``rng``."""
    candidates = variants(world, f"AND v.stock >= ? {extra}", min_stock)
    need(len(candidates) >= count, f"some_items: only {len(candidates)} variants match")
    chosen: list[tuple[dict[str, Any], int]] = []
    while len(chosen) < count:
        variant = pick(rng, candidates, "variant in stock")
        if all(v["variant_id"] != variant["variant_id"] for v, _ in chosen):
            chosen.append((variant, 1))
    return chosen


def basket(rng: random.Random, pool: list[dict[str, Any]], low: int, high: int) -> list[tuple[dict[str, Any], int]]:
    """One to four seeded (variant, quantity 1-2) pairs from ``pool`` worth more than ``low`` and at most ``high``
    cents. Why: a template whose decision turns on an order's value (a refund limit) plants it on either side."""
    for _ in range(500):
        items = [(v, rng.randint(1, 2)) for v in rng.sample(pool, rng.randint(1, min(4, len(pool))))]
        if low < sum(int(v["price_minor"]) * q for v, q in items) <= high:
            return items
    need(False, f"basket: no items worth between {low} and {high} cents in a pool of {len(pool)}")
    return []


def delivered_lines(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """Delivered single-shipment order lines (no coupon, so an item's refund is its price) with their product,
    delivery date and customer, nothing returned yet,
    on active customers without an open high-severity fraud signal or chargeback; ``extra`` adds conditions."""
    return rows(world, f"""
        SELECT * FROM (
          SELECT l.line_id, l.order_id, l.variant_id, l.quantity, l.unit_price_minor, v.product_id, v.option, p.name AS product,
                 p.category, o.customer_id, o.shipping_minor, o.total_minor, s.delivered_on, s.shipment_id,
                 (julianday('{TODAY.isoformat()}') - julianday(s.delivered_on)) AS age
          FROM order_lines l JOIN orders o USING (order_id) JOIN variants v USING (variant_id) JOIN products p USING (product_id)
          JOIN shipment_items i ON i.line_id = l.line_id JOIN shipments s ON s.shipment_id = i.shipment_id AND s.status = 'delivered'
          JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
          WHERE o.status = 'delivered' AND o.replacement_for IS NULL AND o.coupon_code IS NULL
            AND NOT EXISTS (SELECT 1 FROM returns r WHERE r.order_id = o.order_id)
            AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.order_id = o.order_id)
            AND NOT EXISTS (SELECT 1 FROM payments y WHERE y.order_id = o.order_id AND y.status = 'chargeback')
            AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = o.customer_id AND g.severity = 'high' AND g.status = 'open')
            AND (SELECT count(*) FROM shipments x WHERE x.order_id = o.order_id) = 1
        ) q WHERE 1 = 1 {extra} ORDER BY line_id""", *params)


def refundable_orders(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """Orders with one shipment, no coupon, no refund, no return, no chargeback, of active customers without an open
    high-severity fraud signal, with their shipment; ``extra`` adds conditions on the joined row."""
    return rows(world, f"""
        SELECT * FROM (
          SELECT o.*, s.shipment_id, s.status AS ship_status, s.promised_by, s.delivered_on,
                 (SELECT max(at) FROM tracking_events t WHERE t.shipment_id = s.shipment_id) AS last_scan,
                 (SELECT count(*) FROM orders z WHERE z.customer_id = o.customer_id) AS orders_of_customer,
                 (SELECT coalesce(sum(l.unit_price_minor * i.quantity), 0) FROM shipment_items i JOIN order_lines l USING (line_id)
                  WHERE i.shipment_id = s.shipment_id) AS shipped_minor
          FROM orders o JOIN shipments s ON s.order_id = o.order_id
          JOIN customers c ON c.customer_id = o.customer_id AND c.status = 'active'
          WHERE o.replacement_for IS NULL AND o.coupon_code IS NULL
            AND NOT EXISTS (SELECT 1 FROM refunds f WHERE f.order_id = o.order_id)
            AND NOT EXISTS (SELECT 1 FROM returns r WHERE r.order_id = o.order_id)
            AND NOT EXISTS (SELECT 1 FROM orders rep WHERE rep.replacement_for = o.order_id)
            AND NOT EXISTS (SELECT 1 FROM payments y WHERE y.order_id = o.order_id AND y.status = 'chargeback')
            AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = o.customer_id AND g.severity = 'high' AND g.status = 'open')
            AND (SELECT count(*) FROM shipments x WHERE x.order_id = o.order_id) = 1
        ) q WHERE 1 = 1 {extra} ORDER BY order_id""", *params)


def days_ago(day: str) -> int:
    """Days from ``day`` (ISO) to today."""
    return (TODAY - date.fromisoformat(day)).days


# -- planting orders and returns ---------------------------------------------------------------------


def plant_order(world: World, customer: dict[str, Any], items: list[tuple[dict[str, Any], int]], *, placed_days_ago: int,
                fate: str, carrier: str = "UPS") -> dict[str, Any]:
    """Plant an order of ``items`` ((variant row, quantity)...) paid by card, and its shipment by ``fate``:
    ``processing`` (not shipped), ``in_transit_late`` (past its promised date, scanned yesterday), ``lost``
    (marked lost by the carrier) or ``delivered``. Returns the order's ids and figures."""
    placed = NOW - timedelta(days=placed_days_ago, hours=3)
    address = one(world, "SELECT * FROM addresses WHERE customer_id = ? ORDER BY is_default DESC, address_id LIMIT 1", customer["customer_id"])
    order_id = next_id(world, "orders")
    subtotal = sum(v["price_minor"] * q for v, q in items)
    shipping = 0 if subtotal >= 5_000 else 599
    world.execute(
        "INSERT INTO orders (order_id, customer_id, placed_at, status, ship_line1, ship_line2, ship_city, ship_region, ship_postcode, "
        "subtotal_minor, shipping_minor, discount_minor, total_minor, coupon_code, replacement_for) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, NULL, NULL)",
        (order_id, customer["customer_id"], stamp(placed), "processing", address["line1"], address["line2"], address["city"],
         address["region"], address["postcode"], subtotal, shipping, subtotal + shipping))
    line_ids = []
    for variant, quantity in items:
        line_id = next_id(world, "order_lines")
        world.execute("INSERT INTO order_lines (line_id, order_id, variant_id, quantity, unit_price_minor) VALUES (?, ?, ?, ?, ?)",
                      (line_id, order_id, variant["variant_id"], quantity, variant["price_minor"]))
        line_ids.append(line_id)
    world.execute("INSERT INTO payments (payment_id, order_id, invoice_id, method, card_last4, amount_minor, status, captured_at) "
                  "VALUES (?, ?, NULL, 'card', '4417', ?, 'captured', ?)", (next_id(world, "payments"), order_id, subtotal + shipping, stamp(placed)))
    planted: dict[str, Any] = {"order_id": order_id, "line_ids": line_ids, "subtotal": subtotal, "shipping": shipping,
                               "total": subtotal + shipping, "shipment_id": None, "tracking_number": None}
    if fate == "processing":
        return planted
    shipped = placed + timedelta(days=1)
    promised = (shipped + timedelta(days=4)).date()
    shipment_id = next_id(world, "shipments")
    tracking = f"1Z{900_000_000_000 + int(order_id[4:])}"
    status = {"in_transit_late": "in_transit", "lost": "lost", "delivered": "delivered"}[fate]
    delivered = (shipped + timedelta(days=3)).date().isoformat() if fate == "delivered" else None
    world.execute("INSERT INTO shipments (shipment_id, order_id, carrier, tracking_number, status, shipped_on, promised_by, delivered_on) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (shipment_id, order_id, carrier, tracking, status, shipped.date().isoformat(),
                                                      promised.isoformat(), delivered))
    for line_id, (_, quantity) in zip(line_ids, items):
        world.execute("INSERT INTO shipment_items (shipment_id, line_id, quantity) VALUES (?, ?, ?)", (shipment_id, line_id, quantity))
    events = [(shipped, "label_created", "Shipping label created"), (shipped + timedelta(days=1), "in_transit", "Picked up by carrier")]
    if fate == "in_transit_late":
        events.append((NOW - timedelta(days=1, hours=2), "in_transit", "Delayed at sort facility: weather"))
    elif fate == "lost":
        events.append((shipped + timedelta(days=5), "lost", "Carrier reports the parcel lost in transit"))
    else:
        events.append((shipped + timedelta(days=3), "delivered", "Delivered, left at front door"))
    for at, event_status, description in events:
        world.execute("INSERT INTO tracking_events (event_id, shipment_id, at, status, location, description) VALUES (?, ?, ?, ?, ?, ?)",
                      (next_id(world, "tracking_events"), shipment_id, stamp(at), event_status, "Memphis, TN", description))
    world.execute("UPDATE orders SET status = ? WHERE order_id = ?", ("delivered" if fate == "delivered" else "shipped", order_id))
    planted.update(shipment_id=shipment_id, tracking_number=tracking, promised_by=promised.isoformat())
    return planted


def plant_return(world: World, line: dict[str, Any], *, status: str, inspected: bool, reason: str = "changed_mind") -> dict[str, Any]:
    """A return case opened 9 days ago by a colleague for ``line`` (all its units), ``received`` or ``inspected`` (passed)."""
    rma_id = next_id(world, "returns")
    value = int(line["unit_price_minor"]) * int(line["quantity"])
    fee = value * 1_500 // 10_000 if line["category"] == "electronics" and reason == "changed_mind" else 0
    world.execute(
        "INSERT INTO returns (rma_id, order_id, line_id, quantity, kind, reason, status, photo_id, exchange_variant_id, restocking_fee_minor, "
        "created_at, created_by) VALUES (?, ?, ?, ?, 'return', ?, ?, NULL, NULL, ?, ?, 'STF-0011')",
        (rma_id, line["order_id"], line["line_id"], line["quantity"], reason, status, fee, stamp(NOW - timedelta(days=9))))
    if inspected:
        world.execute("INSERT INTO inspections (inspection_id, rma_id, inspected_at, inspector, result, notes) VALUES (?, ?, ?, 'STF-0014', 'pass', ?)",
                      (next_id(world, "inspections"), rma_id, stamp(NOW - timedelta(days=1)), "Item as described by the customer"))
    return {"rma_id": rma_id, "fee": fee, "refundable": value - fee}


# -- a delivered purchase (returns, damaged) ---------------------------------------------------------

_SHIP_DAYS = 4
"""``plant_order`` delivers a parcel 4 days after the order date (placed, shipped a day later, 3 days in transit)."""


@dataclass(frozen=True)
class Purchase:
    """A delivered order planted for a task: its customer, the line the story is about, and the order's id."""

    customer: dict[str, Any]
    order_id: str
    line: dict[str, Any]
    """``line_id``, ``product_id``, ``variant_id``, ``product``, ``option``, ``category``, ``unit_price_minor``,
    ``quantity`` (1), ``order_id``, ``delivered_on``."""
    lines: int
    """How many lines the order has (a second, unrelated item makes "which item" a real question)."""


def _in(categories: tuple[str, ...]) -> str:
    """A SQL ``IN`` list of fixed category names (constants of this module, never agent text)."""
    return "(" + ", ".join(f"'{c}'" for c in categories) + ")"


def plant_purchase(world: World, rng: random.Random, *, categories: tuple[str, ...], delivered_days_ago: int,
                   min_price: int = 1, max_price: int = 10**9, extra: str = "", found_by_name: bool = False) -> Purchase:
    """Plant a delivered order for a seeded active customer: one unit of a seeded variant of ``categories`` priced
    within [``min_price``, ``max_price``] (``extra`` adds conditions on ``v``/``p``), on half the seeds beside an
    unrelated second item, delivered exactly ``delivered_days_ago`` days before today.

    Why plant instead of picking an existing line: the case drawn by the template must decide the outcome (a
    delivery date just inside or past the window, a grocery product or not), and a fresh order makes that fact
    hold exactly while the customer, product and amounts still vary by seed.

    ``found_by_name``: the customer's name is theirs alone and the product is on no other order of theirs, so an agent
    who is told only who they are and which item (not the order number) finds exactly one order."""
    customer = pick(rng, named_customers(world) if found_by_name else plain_customers(world), "active customer with an address")
    if found_by_name:
        extra += (" AND NOT EXISTS (SELECT 1 FROM order_lines ol JOIN orders oo USING (order_id) JOIN variants ov USING (variant_id) "
                  "WHERE oo.customer_id = ? AND ov.product_id = p.product_id)")
    variant = pick(rng, variants(world, f"AND p.category IN {_in(categories)} AND v.price_minor BETWEEN ? AND ? {extra}",
                                 min_price, max_price, *([customer["customer_id"]] if found_by_name else [])),
                   f"variant of {', '.join(categories)}")
    items = [(variant, 1)]
    if rng.random() < 0.5:  # a second item: the customer must say which one they mean
        other = pick(rng, variants(world, "AND p.product_id != ? AND p.category != 'grocery'", variant["product_id"]), "another product")
        items.insert(rng.randrange(2), (other, 1))
    planted = plant_order(world, customer, items, placed_days_ago=delivered_days_ago + _SHIP_DAYS, fate="delivered")
    line_id = planted["line_ids"][[v["variant_id"] for v, _ in items].index(variant["variant_id"])]
    line = one(world, "SELECT l.line_id, l.order_id, l.variant_id, l.quantity, l.unit_price_minor, v.product_id, v.option, "
                      "p.name AS product, p.category, s.delivered_on FROM order_lines l JOIN variants v USING (variant_id) "
                      "JOIN products p USING (product_id) JOIN shipment_items i ON i.line_id = l.line_id "
                      "JOIN shipments s ON s.shipment_id = i.shipment_id WHERE l.line_id = ?", line_id)
    need(line["delivered_on"] == (TODAY - timedelta(days=delivered_days_ago)).isoformat(),
         f"planted delivery date {line['delivered_on']} is not {delivered_days_ago} days ago")
    return Purchase(customer=customer, order_id=planted["order_id"], line=line, lines=len(items))


def restocking_fee_minor(line: dict[str, Any], reason: str = "changed_mind") -> int:
    """The policy's restocking fee on one unit of ``line``: 15% on electronics returned for a change of mind."""
    if line["category"] == "electronics" and reason == "changed_mind":
        return int(line["unit_price_minor"]) * RESTOCKING_FEE_BPS // 10_000
    return 0
