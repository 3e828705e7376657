"""Rows of the support world → the models tools return (money formatted, derived figures computed).

Several tools return the same thing (an order after a cancellation, a return after it is created), so
each model is built in exactly one place here.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from envs.support import models as m
from envs.support import rules
from envs.support.rules import money
from fixtures.world import World
from servers.tools import DomainError, ToolContext

__all__ = [
    "like_pattern", "page", "credit_balance", "customer_view", "order_view", "shipment_view", "return_view", "refund_view",
    "plan_view", "subscription_view", "ticket_summary", "ticket_view", "load",
]


def like_pattern(text: str) -> str:
    """``text`` as a literal LIKE substring pattern (``%``, ``_`` and ``\\`` escaped; pair with ``ESCAPE '\\'``)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def page(offset: int, shown: int, total: int) -> int | None:
    """The next page's offset, or None on the last page."""
    following = offset + shown
    return following if following < total else None


def load(world: World, table: str, column: str, value: str, what: str, hint: str) -> dict[str, Any]:
    """The row of ``table`` whose ``column`` is ``value``, or ``not_found`` (table and column are constants)."""
    return rules.one(world, f"SELECT * FROM {table} WHERE {column} = ?", (value,), f"{what} {value}", hint)


def credit_balance(world: World, customer_id: str) -> int:
    """The customer's store credit: the sum of their ledger."""
    return int(world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM credit_ledger WHERE customer_id = ?",
                           (customer_id,))[0]["s"])


def customer_view(ctx: ToolContext, row: dict[str, Any]) -> m.Customer:
    """A customer's account; the date of birth (an identity answer) is left out on purpose."""
    world, cid = ctx.world, row["customer_id"]
    addresses = [m.Address(is_default=bool(a["is_default"]), **{k: a[k] for k in ("address_id", "line1", "line2", "city", "region", "postcode")})
                 for a in world.query("SELECT * FROM addresses WHERE customer_id = ? ORDER BY is_default DESC, address_id", (cid,))]
    signals = [m.FraudSignal(**{k: s[k] for k in ("signal_id", "kind", "severity", "status", "created_at")})
               for s in world.query("SELECT * FROM fraud_signals WHERE customer_id = ? ORDER BY status = 'open' DESC, signal_id",
                                    (cid,))]
    subs = world.query("SELECT subscription_id FROM subscriptions WHERE customer_id = ? ORDER BY subscription_id", (cid,))
    orders = world.query("SELECT count(*) AS n FROM orders WHERE customer_id = ?", (cid,))[0]["n"]
    credits = [m.CreditEntry(entry_id=e["entry_id"], customer_id=cid, amount=money(e["amount_minor"]), kind=e["kind"],
                             created_at=e["created_at"], balance=None)
               for e in world.query("SELECT * FROM credit_ledger WHERE customer_id = ? ORDER BY created_at DESC, entry_id DESC LIMIT 5", (cid,))]
    return m.Customer(
        **{k: row[k] for k in ("customer_id", "first_name", "last_name", "email", "phone", "tier", "status", "merged_into", "created_on")},
        addresses=addresses, store_credit=money(credit_balance(world, cid)), recent_credits=credits, identity_verified=rules.identity_verified(ctx, cid),
        fraud_signals=signals, subscription_ids=[s["subscription_id"] for s in subs], order_count=orders,
    )


def refund_view(row: dict[str, Any]) -> m.Refund:
    """A refund."""
    return m.Refund(amount=money(row["amount_minor"]), **{k: row[k] for k in (
        "refund_id", "order_id", "invoice_id", "rma_id", "method", "reason", "issued_at", "issued_by")})


def _lines(world: World, order_id: str) -> list[m.OrderLine]:
    out = []
    for line in world.query("SELECT l.*, v.product_id, v.option, p.name, p.category FROM order_lines l JOIN variants v USING (variant_id) "
                            "JOIN products p USING (product_id) WHERE l.order_id = ? ORDER BY l.line_id", (order_id,)):
        shipped = world.query("SELECT coalesce(sum(quantity), 0) AS q FROM shipment_items WHERE line_id = ?", (line["line_id"],))[0]["q"]
        delivered = rules.delivered_on(world, line["line_id"])
        window = rules.RETURN_DAYS[line["category"]]
        return_by = (delivered + timedelta(days=window)).isoformat() if delivered and window else None
        out.append(m.OrderLine(
            line_id=line["line_id"], product_id=line["product_id"], variant_id=line["variant_id"], product_name=line["name"],
            option=line["option"], category=line["category"], quantity=line["quantity"], unit_price=money(line["unit_price_minor"]),
            shipped_quantity=shipped, delivered_on=delivered.isoformat() if delivered else None, return_by=return_by,
            returned_quantity=rules.returned_quantity(world, line["line_id"]),
        ))
    return out


def order_view(world: World, order_id: str) -> m.Order:
    """An order in full (re-read, so it reflects the calling tool's writes)."""
    row = rules.order_row(world, order_id)
    payments = [m.Payment(amount=money(p["amount_minor"]), **{k: p[k] for k in ("payment_id", "method", "card_last4", "status", "captured_at")})
                for p in world.query("SELECT * FROM payments WHERE order_id = ? ORDER BY payment_id", (order_id,))]
    shipments = []
    for s in world.query("SELECT * FROM shipments WHERE order_id = ? ORDER BY shipment_id", (order_id,)):
        items = world.query("SELECT line_id FROM shipment_items WHERE shipment_id = ? ORDER BY line_id", (s["shipment_id"],))
        shipments.append(m.ShipmentSummary(line_ids=[i["line_id"] for i in items], **{k: s[k] for k in (
            "shipment_id", "carrier", "tracking_number", "status", "promised_by", "delivered_on")}))
    refunds = [refund_view(r) for r in world.query("SELECT * FROM refunds WHERE order_id = ? ORDER BY refund_id", (order_id,))]
    rmas = world.query("SELECT rma_id FROM returns WHERE order_id = ? ORDER BY rma_id", (order_id,))
    address = ", ".join(p for p in (row["ship_line1"], row["ship_line2"], row["ship_city"], f"{row['ship_region']} {row['ship_postcode']}") if p)
    return m.Order(
        order_id=order_id, customer_id=row["customer_id"], placed_at=row["placed_at"], status=row["status"], ship_to=address,
        subtotal=money(row["subtotal_minor"]), shipping=money(row["shipping_minor"]), discount=money(row["discount_minor"]),
        total=money(row["total_minor"]), refunded=money(rules.refunded_minor(world, order_id)), coupon_code=row["coupon_code"],
        replacement_for=row["replacement_for"], lines=_lines(world, order_id), payments=payments, shipments=shipments,
        refunds=refunds, rma_ids=[r["rma_id"] for r in rmas],
    )


def shipment_view(world: World, row: dict[str, Any], today: date) -> m.Shipment:
    """A shipment with its tracking and the policy's reading of it (late, lost)."""
    events = [m.TrackingEvent(**{k: e[k] for k in ("at", "status", "location", "description")})
              for e in world.query("SELECT * FROM tracking_events WHERE shipment_id = ? ORDER BY at, event_id", (row["shipment_id"],))]
    items = world.query("SELECT line_id FROM shipment_items WHERE shipment_id = ? ORDER BY line_id", (row["shipment_id"],))
    return m.Shipment(
        **{k: row[k] for k in ("shipment_id", "order_id", "carrier", "tracking_number", "status", "shipped_on", "promised_by", "delivered_on")},
        late=rules.shipment_is_late(row, today), lost=rules.shipment_is_lost(world, row, today),
        days_since_last_scan=rules.stalled_days(world, row, today), line_ids=[i["line_id"] for i in items], events=events,
    )


def return_view(world: World, rma_id: str) -> m.Return:
    """A return case with what may be refunded for it now."""
    row = load(world, "returns", "rma_id", rma_id, "return", "get_order lists an order's returns (rma_ids)")
    found = world.query("SELECT * FROM inspections WHERE rma_id = ? ORDER BY inspection_id DESC LIMIT 1", (rma_id,))
    inspection = m.Inspection(**{k: found[0][k] for k in ("inspection_id", "result", "notes", "inspected_at")}) if found else None
    return m.Return(
        **{k: row[k] for k in ("rma_id", "order_id", "line_id", "quantity", "kind", "reason", "status", "photo_id",
                               "exchange_variant_id", "created_at")},
        restocking_fee=money(row["restocking_fee_minor"]), refundable=money(rules.rma_refundable(world, row)), inspection=inspection,
    )


def plan_view(row: dict[str, Any]) -> m.Plan:
    """A plan."""
    return m.Plan(price=money(row["price_minor"]), **{k: row[k] for k in ("plan_id", "name", "family", "tier")})


def subscription_view(world: World, subscription_id: str, today: date) -> m.Subscription:
    """A subscription with its plan and invoices (re-read after writes)."""
    row = load(world, "subscriptions", "subscription_id", subscription_id, "subscription", "get_customer lists a customer's subscriptions")
    plan = world.query("SELECT * FROM plans WHERE plan_id = ?", (row["plan_id"],))[0]
    invoices = []
    for inv in world.query("SELECT * FROM invoices WHERE subscription_id = ? ORDER BY period_start DESC, invoice_id DESC", (subscription_id,)):
        refunded = world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM refunds WHERE invoice_id = ?", (inv["invoice_id"],))[0]["s"]
        invoices.append(m.Invoice(amount=money(inv["amount_minor"]), refunded=money(refunded), **{k: inv[k] for k in (
            "invoice_id", "period_start", "period_end", "status", "issued_at")}))
    left = max(0, (date.fromisoformat(row["period_end"]) - today).days)
    return m.Subscription(
        plan=plan_view(plan), cancel_at_period_end=bool(row["cancel_at_period_end"]), days_left_in_period=left, invoices=invoices,
        **{k: row[k] for k in ("subscription_id", "customer_id", "next_plan_id", "status", "started_on", "period_start", "period_end",
                               "paused_until", "cancelled_on")},
    )


def ticket_summary(row: dict[str, Any], now: str) -> m.TicketSummary:
    """A ticket line of the queue."""
    breached = row["first_responded_at"] is None and row["status"] not in ("solved", "merged") and row["first_response_due"] < now
    return m.TicketSummary(sla_breached=breached, **{k: row[k] for k in (
        "ticket_id", "customer_id", "order_id", "subject", "status", "priority", "team_id", "assignee", "created_at", "first_response_due")})


def ticket_view(world: World, ticket_id: str) -> m.Ticket:
    """A ticket with its thread, tags and escalations."""
    row = load(world, "tickets", "ticket_id", ticket_id, "ticket", "list_tickets shows the queue")
    messages = [m.Message(**{k: r[k] for k in ("message_id", "at", "author", "kind", "body")})
                for r in world.query("SELECT * FROM ticket_messages WHERE ticket_id = ? ORDER BY at, message_id", (ticket_id,))]
    tags = [r["tag"] for r in world.query("SELECT tag FROM ticket_tags WHERE ticket_id = ? ORDER BY tag", (ticket_id,))]
    escalations = [m.Escalation(**{k: r[k] for k in ("escalation_id", "team_id", "reason_code", "note", "created_at")})
                   for r in world.query("SELECT * FROM escalations WHERE ticket_id = ? ORDER BY escalation_id", (ticket_id,))]
    return m.Ticket(tags=tags, messages=messages, escalations=escalations, **{k: row[k] for k in (
        "ticket_id", "customer_id", "order_id", "subject", "channel", "status", "priority", "team_id", "assignee", "created_at",
        "first_response_due", "first_responded_at", "merged_into")})


def require_order_open(row: dict[str, Any]) -> None:
    """Nothing is returned, refunded or replaced on a cancelled order (``order_cancelled``)."""
    if row["status"] == "cancelled":
        raise DomainError("order_cancelled", f"order {row['order_id']} was cancelled and fully refunded")
