"""Parcels: planting an order whose one parcel is in a given state, with a seeded carrier, tracking number,
dates and scans (``plant_parcel``); the parcels the shipping stories turn on (any status, a slow one, a lost
one); and the calls and gate that read a parcel back.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta
from typing import Any

from envs.support.catalog import NOW, TODAY
from envs.support.ledger import next_world_id as next_id
from envs.support.tasks._common import seen, stamp
from envs.support.tasks.order_setup import some_items
from fixtures.world import World
from graders.setup import need, one
from graders.tasks import call, optional_call

__all__ = [
    "CARRIERS",
    "HUBS",
    "parcel_seen",
    "plant_lost_parcel",
    "plant_parcel",
    "plant_slow_parcel",
    "plant_status_parcel",
    "read_order",
    "track",
]

HUBS = ("Louisville, KY", "Columbus, OH", "Indianapolis, IN", "Allentown, PA", "Memphis, TN", "Denver, CO")
"""Carrier facilities a planted parcel passes through."""

CARRIERS = ("UPS", "FedEx", "USPS", "DHL")

_FATES = ("processing", "label_created", "in_transit", "out_for_delivery", "lost", "delivered")


def _at(day: date, hour: int, minute: int) -> datetime:
    """``day`` at ``hour:minute`` on the world's clock (UTC)."""
    return datetime.combine(day, time(hour, minute), tzinfo=NOW.tzinfo)


def _tracking_number(world: World, rng: random.Random, carrier: str) -> str:
    """A fresh tracking number in the carrier's usual shape, unique in the world."""
    while True:
        number = {"UPS": f"1Z{rng.randrange(10**13, 10**14)}", "FedEx": f"{rng.randrange(10**11, 10**12)}",
                  "USPS": f"9400{rng.randrange(10**17, 10**18)}", "DHL": f"{rng.randrange(10**9, 10**10)}"}[carrier]
        if not world.query("SELECT 1 FROM shipments WHERE tracking_number = ?", (number,)):
            return number


def _scans(shipped: date, last: date, end_status: str, city: str, rng: random.Random) -> list[tuple[datetime, str, str, str]]:
    """Tracking events of a parcel shipped on ``shipped`` whose newest scan is on ``last`` (``end_status`` says what
    that scan is: ``in_transit``, ``out_for_delivery``, ``lost`` or ``delivered``)."""
    events = [(_at(shipped, 9, rng.randint(0, 59)), "label_created", "Brightwater fulfilment, Reno, NV", "Shipping label created")]
    if last <= shipped and end_status == "in_transit":
        return [*events, (_at(shipped, 17, rng.randint(0, 59)), "in_transit", "Brightwater fulfilment, Reno, NV", "Picked up by carrier")]
    events.append((_at(shipped, 17, rng.randint(0, 59)), "in_transit", "Brightwater fulfilment, Reno, NV", "Picked up by carrier"))
    day = shipped + timedelta(days=1)
    while day < last:  # a hub scan a day until the newest one
        events.append((_at(day, 6, rng.randint(0, 59)), "in_transit", rng.choice(HUBS), rng.choice(("Arrived at carrier facility",
                                                                                                    "Departed carrier facility"))))
        day += timedelta(days=1)
    final = {"in_transit": (6, "in_transit", rng.choice(HUBS), "Departed carrier facility"),
             "out_for_delivery": (7, "out_for_delivery", city, "Out for delivery"),
             "lost": (11, "lost", rng.choice(HUBS), "Carrier reports the parcel lost in transit"),
             "delivered": (14, "delivered", city, "Delivered, left at front door")}[end_status]
    events.append((_at(max(last, shipped + timedelta(days=1)), final[0], rng.randint(0, 59)), final[1], final[2], final[3]))
    return events


def plant_parcel(world: World, rng: random.Random, customer: dict[str, Any], items: list[tuple[dict[str, Any], int]], *, fate: str,
                 shipped_days_ago: int = 5, transit_days: int = 4, last_scan_days_ago: int = 1, delivered_days_ago: int = 1,
                 shipping_minor: int | None = None, address: dict[str, Any] | None = None) -> dict[str, Any]:
    """Plant an order of ``items`` ((variant row, quantity)...) paid by card, with seeded carrier, tracking number,
    times and (optionally) shipping fee, and its one parcel in the state ``fate`` names:

    * ``processing``: not shipped yet (placed within the last day, no shipment);
    * ``label_created``: a label printed ``shipped_days_ago`` days ago, no carrier scan yet;
    * ``in_transit`` / ``lost``: shipped ``shipped_days_ago`` days ago, newest scan ``last_scan_days_ago`` days ago
      (a ``lost`` parcel's newest scan is the carrier's lost report);
    * ``out_for_delivery``: on the van this morning;
    * ``delivered``: delivered ``delivered_days_ago`` days ago.

    The promised date is ``transit_days`` after shipping, so the caller decides late / on time / stalled with
    the numbers it draws. Why a helper of its own: the fixture's parcels give few candidates per story, and a
    template needs its subject's deciding facts (dates, scans, fee) to differ by seed.

    Returns:
        The order's ids and figures: ``order_id``, ``shipment_id``, ``tracking_number``, ``carrier``, ``status``,
        ``line_ids``, ``subtotal``, ``shipping``, ``total``, ``promised_by``, ``delivered_on``, ``last_scan`` and
        the delivery address (``ship_line1``, ``ship_line2``, ``ship_city``, ``ship_region``, ``ship_postcode``).
    """
    need(fate in _FATES, f"plant_parcel: unknown fate {fate!r}")
    where = address or one(world, "SELECT * FROM addresses WHERE customer_id = ? ORDER BY is_default DESC, address_id LIMIT 1",
                           customer["customer_id"])
    ship = {"ship_line1": where["line1"], "ship_line2": where.get("line2"), "ship_city": where["city"], "ship_region": where["region"],
            "ship_postcode": where["postcode"]}
    subtotal = sum(int(v["price_minor"]) * q for v, q in items)
    shipping = (0 if subtotal >= 5_000 else 599) if shipping_minor is None else shipping_minor
    shipped_on = TODAY - timedelta(days=shipped_days_ago)
    placed = (NOW - timedelta(hours=rng.randint(2, 26))) if fate == "processing" else _at(shipped_on - timedelta(days=1), rng.randint(8, 22),
                                                                                          rng.randint(0, 59))
    order_id = next_id(world, "orders")
    status = {"processing": "processing", "delivered": "delivered"}.get(fate, "shipped")
    world.execute(
        "INSERT INTO orders (order_id, customer_id, placed_at, status, ship_line1, ship_line2, ship_city, ship_region, ship_postcode, "
        "subtotal_minor, shipping_minor, discount_minor, total_minor, coupon_code, replacement_for) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, NULL, NULL)",
        (order_id, customer["customer_id"], stamp(placed), status, *ship.values(), subtotal, shipping, subtotal + shipping))
    line_ids = []
    for variant, quantity in items:
        line_id = next_id(world, "order_lines")
        world.execute("INSERT INTO order_lines (line_id, order_id, variant_id, quantity, unit_price_minor) VALUES (?, ?, ?, ?, ?)",
                      (line_id, order_id, variant["variant_id"], quantity, variant["price_minor"]))
        line_ids.append(line_id)
    world.execute("INSERT INTO payments (payment_id, order_id, invoice_id, method, card_last4, amount_minor, status, captured_at) "
                  "VALUES (?, ?, NULL, 'card', ?, ?, 'captured', ?)",
                  (next_id(world, "payments"), order_id, f"{rng.randint(0, 9999):04d}", subtotal + shipping, stamp(placed)))
    planted: dict[str, Any] = {"order_id": order_id, "line_ids": line_ids, "subtotal": subtotal, "shipping": shipping,
                               "total": subtotal + shipping, "shipment_id": None, "tracking_number": None, "carrier": None,
                               "status": None, "promised_by": None, "delivered_on": None, "last_scan": None, **ship}
    if fate == "processing":
        return planted
    carrier = rng.choice(CARRIERS)
    tracking = _tracking_number(world, rng, carrier)
    promised = shipped_on + timedelta(days=transit_days)
    if fate == "label_created":
        events = [(_at(shipped_on, 9, rng.randint(0, 59)), "label_created", "Brightwater fulfilment, Reno, NV", "Shipping label created")]
    else:
        last = TODAY - timedelta(days={"out_for_delivery": 0, "delivered": delivered_days_ago}.get(fate, last_scan_days_ago))
        events = _scans(shipped_on, last, fate, str(ship["ship_city"]), rng)
    delivered = events[-1][0].date().isoformat() if fate == "delivered" else None
    shipment_id = next_id(world, "shipments")
    world.execute("INSERT INTO shipments (shipment_id, order_id, carrier, tracking_number, status, shipped_on, promised_by, delivered_on) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (shipment_id, order_id, carrier, tracking, fate, shipped_on.isoformat(),
                                                      promised.isoformat(), delivered))
    for line_id, (_, quantity) in zip(line_ids, items):
        world.execute("INSERT INTO shipment_items (shipment_id, line_id, quantity) VALUES (?, ?, ?)", (shipment_id, line_id, quantity))
    for at, event_status, location, description in events:
        world.execute("INSERT INTO tracking_events (event_id, shipment_id, at, status, location, description) VALUES (?, ?, ?, ?, ?, ?)",
                      (next_id(world, "tracking_events"), shipment_id, stamp(at), event_status, location, description))
    planted.update(shipment_id=shipment_id, tracking_number=tracking, carrier=carrier, status=fate, promised_by=promised.isoformat(),
                   delivered_on=delivered, last_scan=events[-1][0].date().isoformat())
    return planted


# -- the shipping stories' parcels ---------------------------------------------------------------------


def plant_status_parcel(world: World, rng: random.Random, owner: dict[str, Any], address: dict[str, Any] | None = None) -> dict[str, Any]:
    """A parcel in a seeded state: on its way, on the van, delivered, lost or only labelled."""
    fate = rng.choice(("in_transit", "in_transit", "out_for_delivery", "delivered", "lost", "label_created"))
    shipped = {"label_created": rng.randint(0, 1), "lost": rng.randint(6, 12), "delivered": rng.randint(3, 9)}.get(fate, rng.randint(2, 7))
    return plant_parcel(world, rng, owner, some_items(world, rng, count=rng.randint(1, 2)), fate=fate, shipped_days_ago=shipped,
                        transit_days=rng.randint(3, 7), last_scan_days_ago=rng.randint(0, min(3, shipped - 1)) if shipped > 1 else 0,
                        delivered_days_ago=rng.randint(0, shipped - 2) if shipped > 2 else 0, address=address)


def plant_slow_parcel(world: World, rng: random.Random, customer: dict[str, Any], late: bool) -> dict[str, Any]:
    """A parcel that took its time, with a seeded shipping fee: late against its promised date (delivered late, or
    still on its way past the date), or delivered on (or just before) the date of a slow service."""
    items, fee = some_items(world, rng, count=rng.randint(1, 2), extra="AND v.price_minor <= 20000"), rng.randint(399, 1499)
    if late and rng.random() < 0.7:
        transit, late_by = rng.randint(3, 5), rng.randint(1, 4)
        shipped = transit + late_by + rng.randint(0, 6)
        return plant_parcel(world, rng, customer, items, fate="delivered", shipped_days_ago=shipped, transit_days=transit,
                            delivered_days_ago=shipped - transit - late_by, shipping_minor=fee)
    if late:
        transit = rng.randint(3, 4)
        return plant_parcel(world, rng, customer, items, fate="in_transit", shipped_days_ago=transit + rng.randint(2, 5), transit_days=transit,
                            last_scan_days_ago=rng.randint(0, 2), shipping_minor=fee)
    transit, early = rng.randint(5, 9), rng.randint(0, 2)
    shipped = transit - early + rng.randint(0, 6)
    return plant_parcel(world, rng, customer, items, fate="delivered", shipped_days_ago=shipped, transit_days=transit,
                        delivered_days_ago=shipped - (transit - early), shipping_minor=fee)


def plant_lost_parcel(world: World, rng: random.Random, customer: dict[str, Any]) -> dict[str, Any]:
    """A parcel the carrier reported lost a few days ago: one or two items in stock, worth under the refund limit."""
    shipped = rng.randint(7, 14)
    return plant_parcel(world, rng, customer, some_items(world, rng, count=rng.randint(1, 2), extra="AND v.price_minor <= 20000"),
                        fate="lost", shipped_days_ago=shipped, transit_days=rng.randint(3, 5), last_scan_days_ago=rng.randint(1, 4))


# -- reading a parcel back -----------------------------------------------------------------------------


def track(parcel: dict[str, Any], *, optional: bool = False) -> Any:
    """The ``track_shipment`` call on the parcel's shipment."""
    return (optional_call if optional else call)("track_shipment", shipment_id=parcel["shipment_id"])


def read_order(parcel: dict[str, Any], *, optional: bool = False) -> Any:
    """The ``get_order`` call on the parcel's order."""
    return (optional_call if optional else call)("get_order", order_id=parcel["order_id"])


def parcel_seen(name: str, parcel: dict[str, Any], *fields: str, weight: float = 1.0) -> Any:
    """A gate: ``fields`` of the parcel's shipment were shown before the decision — by the order (its shipments
    show carrier, tracking number, status and dates) or by the tracking (which alone shows the scans, whether the
    parcel is late or lost, and the days since its last scan)."""
    return seen(name, "shipments", parcel["shipment_id"], *fields, weight=weight)
