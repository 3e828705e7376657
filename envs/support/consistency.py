"""Support's own coherence checks of a task instance's world (``Environment.consistency``, run by ``toolgym check``).

The kit's lint already holds planted rows to the timeline of their parents and the customer on the line to an answer
for what they would like and why they called (``graders/consistency.py``). What only this domain knows:

* the customer on the line speaks of records that exist: the order number they give is an order of the world, the
  item they name is a line of that order, the photo they hand over is a photo of that order's customer;
* a planted parcel's record agrees with its own scans: the shipment's status is its newest scan's, and a delivered
  parcel's delivery date is the day of its delivery scan (an agent reads either, and both must tell one story);
* a planted ticket that names an order in its text is about that order (its ``order_id``), so the ticket and the
  record it points to never disagree.

Each problem is a sentence naming the record; an instance with none is coherent.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fixtures.changes import fold_changes
from fixtures.persona import load_persona

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.tasks import TaskInstance

__all__ = ["support_consistency"]

_ORDER_ID = re.compile(r"\bORD-[0-9]{6}\b")


def _planted(world: World, table: str) -> list[str]:
    """Keys of the rows of ``table`` the task's setup inserted or changed."""
    return [str(c.key[0]) for c in fold_changes(world.changes_since(0)) if c.table == table and c.op in ("insert", "update") and c.key]


def _persona_problems(world: World) -> list[str]:
    persona = load_persona(world)
    if persona is None:
        return []
    problems = []
    order_id = persona.facts.get("order_number")
    order = world.query("SELECT customer_id FROM orders WHERE order_id = ?", (order_id,)) if order_id else []
    if order_id and not order:
        problems.append(f"the customer on the line gives order number {order_id}, which is no order of the world")
    item = persona.facts.get("which_item")
    if item and order:
        named = world.query("SELECT 1 FROM order_lines l JOIN variants v USING (variant_id) JOIN products p USING (product_id) "
                            "WHERE l.order_id = ? AND p.name = ?", (order_id, item))
        if not named:
            problems.append(f"the customer on the line names the item {item!r}, which is no line of their order {order_id}")
    photo = persona.facts.get("photo")
    if photo and order:
        owned = world.query("SELECT 1 FROM attachments WHERE attachment_id = ? AND customer_id = ? AND kind = 'photo'",
                            (photo, order[0]["customer_id"]))
        if not owned:
            problems.append(f"the customer on the line hands over photo {photo}, which is not a photo of the customer of {order_id}")
    return problems


def _parcel_problems(world: World) -> list[str]:
    problems = []
    for shipment_id in _planted(world, "shipments"):
        found = world.query("SELECT status, delivered_on FROM shipments WHERE shipment_id = ?", (shipment_id,))
        if not found:
            continue
        shipment = found[0]
        last = world.query("SELECT status, at FROM tracking_events WHERE shipment_id = ? ORDER BY at DESC, event_id DESC LIMIT 1",
                           (shipment_id,))
        if last and last[0]["status"] != shipment["status"]:
            problems.append(f"planted shipment {shipment_id} is {shipment['status']} but its newest scan says {last[0]['status']}")
        if shipment["status"] == "delivered" and last and shipment["delivered_on"] != str(last[0]["at"])[:10]:
            problems.append(f"planted shipment {shipment_id} was delivered on {shipment['delivered_on']} but scanned delivered on "
                            f"{str(last[0]['at'])[:10]}")
    return problems


def _ticket_problems(world: World) -> list[str]:
    problems = []
    for ticket_id in _planted(world, "tickets"):
        found = world.query("SELECT order_id, subject FROM tickets WHERE ticket_id = ?", (ticket_id,))
        if not found:
            continue
        ticket = found[0]
        words = " ".join([str(ticket["subject"])] + [str(r["body"]) for r in world.query(
            "SELECT body FROM ticket_messages WHERE ticket_id = ? AND kind = 'customer'", (ticket_id,))])
        for named in sorted(set(_ORDER_ID.findall(words))):
            if named != ticket["order_id"]:
                problems.append(f"planted ticket {ticket_id} names order {named} but is about {ticket['order_id'] or 'no order'}")
    return problems


def support_consistency(world: World, instance: TaskInstance) -> list[str]:
    """Every domain coherence problem of one instance's world right after its setup (see the module docstring)."""
    return _persona_problems(world) + _parcel_problems(world) + _ticket_problems(world)
