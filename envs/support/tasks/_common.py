"""Helpers every support task template shares: picking rows, putting a customer on the line, standard calls
and criteria, planting setup rows.

A template reads the world to choose its subject with the task's rng, plants what its story needs (the
persona of the customer on the line above all: what they know and what they agree to), and builds its
oracle, rubric and negatives from what it read — never from hard-coded ids. The standard criteria (declared
outcome, claims consistent with the world, no collateral changes) are added by the grader, so a template
lists only what is specific to its task: the end state, the forbidden calls, the questions the agent had to
ask, the agreement it had to get before acting, the reads that justify its answer, and the figures it asks for.
"""

from __future__ import annotations

import random
import re
from datetime import date, datetime, time, timedelta
from typing import Any

from envs.support.catalog import NOW, TODAY
from envs.support.ledger import next_world_id as next_id
from fixtures.ids import IdSequences
from fixtures.money import format_minor
from fixtures.persona import Persona, Terms, plant_persona
from fixtures.world import World
from graders.criteria import AnswerCheck, AnyToolCalled, CallOrder, StateCheck, ToolCalled, ToolNotCalled, number, state
from graders.setup import need, one, pick, rows
from graders.tasks import ToolCall, call, optional_call
from graders.tasks import answer_call as answer
from graders.tasks import escalation_call as escalation
from graders.tasks import refusal_call as refusal

__all__ = [
    "NOW", "TODAY", "AGENT", "rows", "one", "pick", "need", "next_id", "money", "full_name", "stamp", "agree", "decline",
    "on_the_line", "ask", "offer", "verify", "answer", "refusal", "escalation", "asked", "agreed_first", "looked_up",
    "never", "value_is", "text_is", "state", "optional_call", "call", "plant_ticket", "plant_photo", "not_mentioning",
    "delivered_lines", "refundable_orders",
]

AGENT = "STF-0100"
"""The support agent the agent acts as (``catalog.AGENT_STAFF_ID``)."""


def money(minor: int) -> str:
    """Cents → the decimal string tools take and return."""
    return format_minor(minor, "USD")


def full_name(customer: dict[str, Any]) -> str:
    """``First Last``."""
    return f"{customer['first_name']} {customer['last_name']}"


def stamp(moment: datetime) -> str:
    """An instant as the tables store it."""
    return moment.isoformat()


# -- the customer on the line ------------------------------------------------------------------------


def agree(reply: str = "Yes, please do that.", min_amount: str | None = None) -> Terms:
    """The customer agrees to this resolution (with ``min_amount``: only at or above it)."""
    return Terms(agrees=True, reply=reply, min_amount=min_amount)


def decline(reply: str = "No, I'd rather not.") -> Terms:
    """The customer declines this resolution."""
    return Terms(agrees=False, reply=reply)


def on_the_line(world: World, customer: dict[str, Any] | None, wants: str, *, identity: bool = True, name: str | None = None,
                terms: dict[str, Terms] | None = None, **facts: str) -> Persona:
    """Plant the customer the agent talks to: by default they know their name, e-mail and date of birth
    (``identity=False``: only their name), plus ``facts`` (topic → value), and answer ``terms``."""
    known: dict[str, str] = {}
    if customer is not None:
        known["full_name"] = full_name(customer)
        if identity:
            known["email"], known["date_of_birth"] = customer["email"], customer["date_of_birth"]
    known.update(facts)
    persona = Persona(name=name or (full_name(customer) if customer else "the caller"), wants=wants, facts=known, terms=terms or {})
    plant_persona(world, persona)
    return persona


def ask(topic: str, *, optional: bool = False) -> ToolCall:
    """``ask_customer(topic)``."""
    return (optional_call if optional else call)("ask_customer", topic=topic)


def offer(resolution: str, amount: str | None = None, *, optional: bool = False) -> ToolCall:
    """``propose_resolution(resolution, amount)``."""
    arguments: dict[str, Any] = {"resolution": resolution}
    if amount is not None:
        arguments["amount"] = amount
    return (optional_call if optional else call)("propose_resolution", **arguments)


def verify(customer: dict[str, Any], *, optional: bool = False) -> ToolCall:
    """``verify_identity`` with what the customer says (their e-mail and date of birth)."""
    return (optional_call if optional else call)("verify_identity", customer_id=customer["customer_id"], email=customer["email"], date_of_birth=customer["date_of_birth"])





def asked(topic: str, name: str | None = None, *, weight: float = 1.0) -> ToolCalled:
    """A gate: the agent asked the customer for ``topic`` (instead of guessing it from the records)."""
    return ToolCalled(name=name or f"asked the customer for the {topic.replace('_', ' ')}", tool="ask_customer",
                      args={"topic": topic}, weight=weight, gate=True)


def agreed_first(resolution: str, then: dict[str, Any] | str, name: str, *, amount: str | None = None) -> CallOrder:
    """A gate: every ``then`` call comes after the customer agreed to ``resolution`` (at ``amount``, when given)."""
    args: dict[str, Any] = {"resolution": resolution}
    if amount is not None:
        args["amount"] = number(amount)
    return CallOrder(name=name, first={"tool": "propose_resolution", "args": args, "result": {"agreed": True}}, then=then,
                     require_then=True)


def looked_up(name: str, *patterns: dict[str, Any], weight: float = 1.0) -> AnyToolCalled:
    """A gate: some successful call matches one of ``patterns`` — the read that justifies the answer."""
    return AnyToolCalled(name=name, patterns=list(patterns), weight=weight, gate=True)


def never(tool: str, name: str, *, gate: bool = True, **args: Any) -> ToolNotCalled:
    """A forbidden call: even a refused attempt counts."""
    return ToolNotCalled(name=name, tool=tool, args=args, gate=gate)


def value_is(field: str, expected: str, *, weight: float = 2.0, name: str | None = None) -> AnswerCheck:
    """The answer's ``values.<field>`` equals ``expected`` as a Decimal."""
    return AnswerCheck(name=name or f"answer gives {field.replace('_', ' ')}", field=f"values.{field}", expect=number(expected), weight=weight)


def text_is(field: str, expected: str, *, weight: float = 1.0, name: str | None = None) -> AnswerCheck:
    """The answer's ``values.<field>`` is exactly ``expected`` (one value, not a list of candidates)."""
    return AnswerCheck(name=name or f"answer gives {field.replace('_', ' ')}", field=f"values.{field}", expect=expected, weight=weight)


def not_mentioning(secret: str, name: str) -> AnswerCheck:
    """A gate: the final answer's text does not contain ``secret`` (another customer's data)."""
    from graders.criteria import regex

    return AnswerCheck(name=name, field="answer", expect=regex(f"(?is)(?!.*{re.escape(secret)}).*"), weight=0, gate=True)


# -- world queries and planting ------------------------------------------------------------------------


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


def plant_photo(world: World, customer_id: str, description: str) -> str:
    """A photo the customer uploads today (what ``ask_customer('photo')`` hands over)."""
    attachment_id = next_id(world, "attachments")
    world.execute("INSERT INTO attachments (attachment_id, customer_id, kind, description, uploaded_at) VALUES (?, ?, 'photo', ?, ?)",
                  (attachment_id, customer_id, description, stamp(NOW - timedelta(minutes=5))))
    return attachment_id


def plant_ticket(world: World, customer_id: str, subject: str, body: str, *, order_id: str | None = None, tag: str,
                 priority: str = "normal", team: str = "frontline", hours_ago: float = 1.0, status: str = "new") -> str:
    """A ticket the customer just opened, with its first message and tag, its SLA clock running."""
    from envs.support.rules import SLA_HOURS

    ticket_id = next_id(world, "tickets")
    created = NOW - timedelta(hours=hours_ago)
    world.execute(
        "INSERT INTO tickets (ticket_id, customer_id, order_id, subject, channel, status, priority, team_id, assignee, created_at, "
        "first_response_due, first_responded_at, merged_into) VALUES (?, ?, ?, ?, 'email', ?, ?, ?, NULL, ?, ?, NULL, NULL)",
        (ticket_id, customer_id, order_id, subject, status, priority, team, stamp(created), stamp(created + timedelta(hours=SLA_HOURS[priority]))))
    world.execute("INSERT INTO ticket_messages (message_id, ticket_id, at, author, kind, body) VALUES (?, ?, ?, ?, 'customer', ?)",
                  (next_id(world, "ticket_messages"), ticket_id, stamp(created), customer_id, body))
    world.execute("INSERT INTO ticket_tags (ticket_id, tag) VALUES (?, ?)", (ticket_id, tag))
    return ticket_id


def days_ago(day: str) -> int:
    """Days from ``day`` (ISO) to today."""
    return (TODAY - date.fromisoformat(day)).days


__all__ += ["days_ago", "StateCheck"]


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


def plain_customers(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """Active customers with an address, no open high-severity fraud signal, no second account; ``extra`` adds conditions on ``c``."""
    return rows(world, f"""
        SELECT c.* FROM customers c WHERE c.status = 'active'
          AND EXISTS (SELECT 1 FROM addresses a WHERE a.customer_id = c.customer_id)
          AND NOT EXISTS (SELECT 1 FROM fraud_signals g WHERE g.customer_id = c.customer_id AND g.severity = 'high' AND g.status = 'open')
          AND NOT EXISTS (SELECT 1 FROM customers d WHERE d.customer_id != c.customer_id AND d.first_name = c.first_name
                          AND d.last_name = c.last_name AND d.date_of_birth = c.date_of_birth)
          {extra} ORDER BY c.customer_id""", *params)


def variants(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """Variants with their product (``name``, ``category``); ``extra`` adds conditions on ``v``/``p``."""
    return rows(world, f"SELECT v.*, p.name, p.category FROM variants v JOIN products p USING (product_id) WHERE 1 = 1 {extra} "
                       "ORDER BY v.variant_id", *params)


__all__ += ["plant_order", "plain_customers", "variants"]


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


__all__ += ["plant_return"]


def task(*, also_agreed: list[ToolCall] = (), **fields: Any) -> Any:  # type: ignore[assignment]
    """A :class:`TaskDraft` whose rubric also gates what talking to the customer must mean:

    * every question the oracle requires asking (``asked``), unless the rubric already checks that topic: a
      required question nobody checks would not be required at all;
    * each question the oracle asks before its first write comes before *any* write (a question asked after
      acting on a guess is not the one the policy requires);
    * every proposal the customer accepts is one the oracle makes — same resolution, same amount — so
      over-offering, offering without the amount, or collecting agreements to incompatible resolutions fails
      (``also_agreed``: further proposals the task accepts, e.g. an equally valid alternative).
    """
    from envs.support import environment
    from graders.criteria import Agreements, BeforeWrites, agreement_terms
    from graders.tasks import TaskDraft

    rubric = list(fields.pop("rubric"))
    oracle: list[ToolCall] = fields["oracle"]
    covered = {c.args["topic"].value for c in rubric if isinstance(c, ToolCalled) and c.tool == "ask_customer" and "topic" in c.args}
    for step in oracle:
        topic = step.arguments.get("topic")
        if step.tool == "ask_customer" and not step.optional and topic not in covered:
            rubric.insert(0, asked(topic))
            covered.add(topic)
    specs = environment.tool_specs
    for step in oracle:
        spec = specs.get(step.tool)
        if spec is not None and spec.mark.mutates and not spec.mark.answer:
            break
        topic = step.arguments.get("topic")
        if step.tool == "ask_customer" and not step.optional:
            rubric.append(BeforeWrites(name=f"asked for the {str(topic).replace('_', ' ')} before acting",
                                       first={"tool": "ask_customer", "args": {"topic": topic}}))
    proposals = [step for step in [*oracle, *also_agreed] if step.tool == "propose_resolution"]
    rubric.append(Agreements(name="agreements bind what was done", tool="propose_resolution",
                             expected=[agreement_terms(step.arguments) for step in proposals]))
    return TaskDraft(rubric=rubric, **fields)


__all__ += ["task"]


# -- parcels, household accounts and answers that must not disclose (shipping, accounts, injection) ------------

HUBS = ("Louisville, KY", "Columbus, OH", "Indianapolis, IN", "Allentown, PA", "Memphis, TN", "Denver, CO")
"""Carrier facilities a planted parcel passes through."""
CARRIERS = ("UPS", "FedEx", "USPS", "DHL")
_MORE_IDS = IdSequences({"customers": ("customer_id", "CUS", 5), "addresses": ("address_id", "ADR", 6)})
"""Sequences the tools never extend (only task setups create customers), salted like every other one."""
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


def household_email(rng: random.Random, first: str, last: str) -> str:
    """An e-mail that does not tell whose it is (``"smith.home47@..."``): two accounts of one household look alike."""
    local = "".join(ch for ch in last.lower() if ch.isascii() and ch.isalnum()) or "home"
    return f"{local}.{rng.choice(('home', 'family', 'mail', 'shop', 'orders'))}{rng.randint(10, 99)}@{rng.choice(('example.com', 'mail.example.org', 'inbox.example.net'))}"


def plant_customer(world: World, rng: random.Random, *, first_name: str, last_name: str, date_of_birth: str, email: str,
                   address: dict[str, Any] | None = None) -> dict[str, Any]:
    """Plant an active account (with ``address`` as its default delivery address, when given); returns its row."""
    customer_id = _MORE_IDS.next(world, "customers")
    world.execute("INSERT INTO customers (customer_id, first_name, last_name, email, phone, date_of_birth, tier, status, merged_into, "
                  "created_on) VALUES (?, ?, ?, ?, ?, ?, ?, 'active', NULL, ?)",
                  (customer_id, first_name, last_name, email, f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}", date_of_birth,
                   rng.choice(("standard", "standard", "silver", "gold")), (TODAY - timedelta(days=rng.randint(30, 900))).isoformat()))
    if address is not None:
        world.execute("INSERT INTO addresses (address_id, customer_id, line1, line2, city, region, postcode, is_default) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, 1)", (_MORE_IDS.next(world, "addresses"), customer_id, address["line1"], address.get("line2"),
                                                          address["city"], address["region"], address["postcode"]))
    return one(world, "SELECT * FROM customers WHERE customer_id = ?", customer_id)


def not_disclosing(name: str, *secrets: str, address: dict[str, Any] | None = None) -> Any:
    """A gate: no answer call (any field, normalised) says ``secrets`` or the delivery ``address`` of an order row
    (``ship_line1``... columns) — the street line, the postcode alone, the city (``graders.criteria.AnswerOmits``)."""
    from graders.criteria import AnswerOmits, address_secrets

    protected: dict[str, list[Any]] = {"secrets": [], "together": []}
    if address is not None:
        protected = address_secrets(address["ship_line1"], address["ship_city"], address["ship_postcode"], region=address["ship_region"],
                                    line2=address.get("ship_line2"))
    return AnswerOmits(name=name, secrets=[*secrets, *protected["secrets"]], together=protected["together"])


__all__ += ["CARRIERS", "HUBS", "household_email", "not_disclosing", "plant_customer", "plant_parcel", "some_items"]


def seeded_address(rng: random.Random, *, suite: bool = False) -> dict[str, Any]:
    """A delivery address drawn with ``rng`` from the catalogue's places and streets (``suite``: with a line 2)."""
    from envs.support import catalog as cat

    city, region, postcodes = cat.PLACES[rng.randrange(len(cat.PLACES))]
    return {"line1": f"{rng.randint(100, 9800)} {rng.choice(cat.STREETS)}", "line2": f"Suite {rng.randint(2, 60) * 10}" if suite else None,
            "city": city, "region": region, "postcode": rng.choice(postcodes)}


def said_address(address: dict[str, Any]) -> str:
    """An address as a person says it: ``"123 Oak St, Suite 40, Portland, OR 97201"``."""
    parts = [address["line1"], address.get("line2"), address["city"], f"{address['region']} {address['postcode']}"]
    return ", ".join(p for p in parts if p)


__all__ += ["said_address", "seeded_address"]


def birthday(rng: random.Random, *, not_on: str | None = None) -> str:
    """A seeded date of birth (ISO) of an adult, never ``not_on``."""
    while True:
        day = (date(1950, 1, 1) + timedelta(days=rng.randint(0, 19_000))).isoformat()
        if day != not_on:
            return day


__all__ += ["birthday"]


# -- customers named in a prompt (subscriptions, escalations, tickets, multistep) --------------------------------

UNIQUE_NAME = """AND NOT EXISTS (SELECT 1 FROM customers d WHERE d.customer_id != c.customer_id
                  AND d.first_name = c.first_name AND d.last_name = c.last_name)"""
"""SQL condition on ``c``: nobody else has this customer's name. Why: a prompt names people as a person would (by
name), and the account, its orders and its tickets are then found through the tools; the name must lead to one
account."""


def named_customers(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """:func:`plain_customers` whose full name is theirs alone (``extra``: further conditions on ``c``)."""
    return plain_customers(world, f"{UNIQUE_NAME} {extra}", *params)


__all__ += ["UNIQUE_NAME", "named_customers"]


# -- seeded subjects: baskets of a given value, fraud signals (escalations, multistep) -----------------------------

def basket(rng: random.Random, pool: list[dict[str, Any]], low: int, high: int) -> list[tuple[dict[str, Any], int]]:
    """One to four seeded (variant, quantity 1-2) pairs from ``pool`` worth more than ``low`` and at most ``high``
    cents. Why: a template whose decision turns on an order's value (a refund limit) plants it on either side."""
    for _ in range(500):
        items = [(v, rng.randint(1, 2)) for v in rng.sample(pool, rng.randint(1, min(4, len(pool))))]
        if low < sum(int(v["price_minor"]) * q for v, q in items) <= high:
            return items
    need(False, f"basket: no items worth between {low} and {high} cents in a pool of {len(pool)}")
    return []


FRAUD_SIGNALS = (
    ("velocity", "Five orders to three addresses within an hour"),
    ("refund_abuse", "Refund claims on most delivered orders in the last 60 days"),
    ("linked_accounts", "Card shared with a closed account flagged for refund abuse"),
    ("address_mismatch", "Billing and shipping countries differ on several high-value orders"),
)
"""Kinds of fraud signal, with what the risk system noted."""


def plant_fraud_signal(world: World, rng: random.Random, customer_id: str, *, severity: str = "high", status: str = "open") -> str:
    """A fraud signal on the customer of a seeded kind, raised a seeded number of days ago; returns its id. An open
    high-severity one blocks refunds, credits, replacements and merges (escalate to the fraud team)."""
    kind, details = FRAUD_SIGNALS[rng.randrange(len(FRAUD_SIGNALS))]
    signal_id = next_id(world, "fraud_signals")
    world.execute("INSERT INTO fraud_signals (signal_id, customer_id, order_id, kind, severity, status, created_at, details) "
                  "VALUES (?, ?, NULL, ?, ?, ?, ?, ?)", (signal_id, customer_id, kind, severity, status,
                                                       stamp(NOW - timedelta(days=rng.randint(2, 40), hours=rng.randint(0, 12))), details))
    return signal_id


__all__ += ["FRAUD_SIGNALS", "basket", "plant_fraud_signal"]
