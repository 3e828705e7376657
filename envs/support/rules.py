"""The support policy's rules, as numbers and as checks the tools share.

Each check raises :class:`servers.DomainError` with a stable code *before* the tool writes anything. The
numbers are the ones ``policy.md`` states; a test keeps the two in agreement, and another keeps
:data:`REASON_CODES` equal to the codes the tools refuse with.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from envs.support.catalog import AGENT_STAFF_ID, RETURN_DAYS
from fixtures.money import format_minor, parse_amount
from fixtures.world import World
from servers.tools import DomainError, ToolContext

__all__ = [
    "AGENT", "OUTCOMES", "REASON_CODES", "ESCALATION_CODES", "RETURN_DAYS", "RESTOCKING_FEE_BPS", "KEEP_IT_LIMIT_MINOR",
    "DAMAGE_REPORT_DAYS", "AGENT_REFUND_LIMIT_MINOR", "GOODWILL_CAPS_MINOR", "GOODWILL_INTERVAL_DAYS",
    "SLA_HOURS", "STALLED_DAYS", "ADJUSTMENT_WINDOW_DAYS", "VERIFICATION_VALID_MINUTES", "MAX_FAILED_VERIFICATIONS",
    "ESCALATION_TEAMS", "now_iso", "money", "parse_money", "one", "customer_row", "order_row", "require_identity",
    "identity_verified", "require_no_fraud_review", "require_not_chargeback", "delivered_on", "line_value",
    "returned_quantity", "refunded_minor", "paid_minor", "shipment_is_lost", "shipment_is_late", "stalled_days",
    "return_window_days", "rma_refundable",
]

AGENT = AGENT_STAFF_ID
"""Staff id of the support agent the agent acts as."""
OUTCOMES = ("completed", "refused", "escalated")
"""What a final answer may declare: done as asked, declined under the policy, or handed to the team that decides."""
REASON_CODES = (
    "account_not_active", "already_cancelled", "already_escalated", "already_refunded", "already_replaced",
    "already_returned", "already_shipped", "amount_exceeds_eligible", "chargeback_open", "coupon_already_applied",
    "coupon_already_used", "coupon_expired", "coupon_min_not_met", "coupon_not_applicable", "escalation_required",
    "final_sale", "fraud_review_required", "goodwill_cap_exceeded", "goodwill_too_soon", "identity_not_verified",
    "inspection_required", "invalid_amount", "no_customer_on_line", "not_delivered", "not_duplicate", "not_late",
    "not_lost", "not_same_customer", "not_same_person", "order_cancelled", "out_of_stock", "past_due_balance",
    "photo_required", "plan_family_mismatch", "refund_limit_exceeded", "return_window_expired", "same_account",
    "same_plan", "subscription_not_active", "ticket_merged", "verification_locked", "wrong_merge_direction",
    "adjustment_window_expired", "not_found", "not_same_product", "no_change",
)
"""The policy's reason codes: every code a tool refuses with (a test keeps this list equal to the tools'), and the
only reasons a refusal or an escalation may give."""
ESCALATION_TEAMS: dict[str, str] = {
    "refund_limit_exceeded": "billing",
    "chargeback_open": "billing",
    "fraud_review_required": "fraud",
    "escalation_required": "product_safety",
}
"""Why a case is escalated → the team that takes it (policy section 8)."""
ESCALATION_CODES = tuple(ESCALATION_TEAMS)
RESTOCKING_FEE_BPS = 1_500
"""15% of the item's price, on electronics returned because the customer changed their mind."""
KEEP_IT_LIMIT_MINOR = 10_000
"""Damaged or defective items (with a photo) worth up to 100.00 are refunded without being sent back; every
other return is refunded only after the warehouse's inspection passes."""
DAMAGE_REPORT_DAYS = 30
"""Damaged, defective and wrong items can be reported for at least 30 days after delivery (grocery included)."""
AGENT_REFUND_LIMIT_MINOR = 50_000
"""An agent may refund at most 500.00 per order in total (earlier refunds count); above, escalate to billing."""
GOODWILL_CAPS_MINOR = {"standard": 1_000, "silver": 2_000, "gold": 3_500, "platinum": 5_000}
"""Largest goodwill store credit per loyalty tier."""
GOODWILL_INTERVAL_DAYS = 30
"""At most one goodwill credit per customer in this many days."""
SLA_HOURS = {"urgent": 1, "high": 4, "normal": 24, "low": 72}
"""First-response target per ticket priority."""
STALLED_DAYS = 7
"""A parcel in transit with no tracking scan for this many days is treated as lost."""
ADJUSTMENT_WINDOW_DAYS = 30
"""A coupon that did not apply can be refunded as a price adjustment up to 30 days after the order."""
VERIFICATION_VALID_MINUTES = 30
"""An identity verification covers account changes for 30 minutes (this session)."""
MAX_FAILED_VERIFICATIONS = 3
"""After 3 failed identity checks in 30 minutes, verification locks for that customer."""


def now_iso(ctx: ToolContext) -> str:
    """The world's frozen "now" as stored in the tables (ISO 8601, UTC)."""
    return ctx.clock.now.isoformat()


def money(minor: int | None) -> str:
    """Cents → the decimal string tools return."""
    return format_minor(minor or 0, "USD")


def parse_money(amount: str, what: str = "amount") -> int:
    """A validated ``Amount`` string → positive cents (``invalid_amount`` when zero or over-precise)."""
    try:
        minor = parse_amount(amount, "USD")
    except ValueError as exc:
        raise DomainError("invalid_amount", f"{what} {amount!r}: {exc}") from None
    if minor <= 0:
        raise DomainError("invalid_amount", f"{what} must be greater than zero, got {amount!r}")
    return minor


def one(world: World, sql: str, params: tuple[Any, ...], what: str, hint: str) -> dict[str, Any]:
    """The single row ``sql`` finds, or ``not_found`` naming ``what`` and where to look."""
    rows = world.query(sql, params)
    if not rows:
        raise DomainError("not_found", f"no {what}; {hint}")
    return rows[0]


def customer_row(world: World, customer_id: str) -> dict[str, Any]:
    """The customer's row, or ``not_found``."""
    return one(world, "SELECT * FROM customers WHERE customer_id = ?", (customer_id,), f"customer {customer_id}",
               "find customers with search_customers")


def order_row(world: World, order_id: str) -> dict[str, Any]:
    """The order's row, or ``not_found``."""
    return one(world, "SELECT * FROM orders WHERE order_id = ?", (order_id,), f"order {order_id}",
               "list a customer's orders with list_orders")


def identity_verified(ctx: ToolContext, customer_id: str) -> bool:
    """Whether the customer passed an identity check within the last 30 minutes of the world's clock."""
    since = (ctx.clock.now - timedelta(minutes=VERIFICATION_VALID_MINUTES)).isoformat()
    return bool(ctx.world.query("SELECT 1 FROM verifications WHERE customer_id = ? AND outcome = 'passed' AND verified_at >= ? "
                                "LIMIT 1", (customer_id, since)))


def require_identity(ctx: ToolContext, customer_id: str, action: str) -> None:
    """Account, address and subscription changes need the customer verified (``identity_not_verified``)."""
    if not identity_verified(ctx, customer_id):
        raise DomainError("identity_not_verified", f"{action} needs customer {customer_id}'s identity verified in this "
                                                   "session: ask them for their e-mail and date of birth, then verify_identity")


def require_no_fraud_review(world: World, customer_id: str, action: str) -> None:
    """No refunds, credits, replacements or merges while a high-severity fraud signal is open (``fraud_review_required``)."""
    rows = world.query("SELECT signal_id, kind FROM fraud_signals WHERE customer_id = ? AND severity = 'high' AND status = 'open' "
                       "ORDER BY signal_id LIMIT 1", (customer_id,))
    if rows:
        raise DomainError("fraud_review_required", f"{action} is not allowed: customer {customer_id} has an open high-severity "
                                                   f"fraud signal {rows[0]['signal_id']} ({rows[0]['kind']}); escalate to the "
                                                   "fraud team")


def require_not_chargeback(world: World, order_id: str) -> None:
    """An order whose payment is in chargeback is handled by billing only (``chargeback_open``)."""
    if world.query("SELECT 1 FROM payments WHERE order_id = ? AND status = 'chargeback'", (order_id,)):
        raise DomainError("chargeback_open", f"order {order_id}'s payment is in chargeback with the card issuer; "
                                             "escalate to billing instead of refunding")


def delivered_on(world: World, line_id: str) -> date | None:
    """When the line was delivered (its last delivered shipment), or None when it has not been."""
    rows = world.query("SELECT max(s.delivered_on) AS d FROM shipment_items i JOIN shipments s USING (shipment_id) "
                       "WHERE i.line_id = ? AND s.status = 'delivered'", (line_id,))
    return date.fromisoformat(rows[0]["d"]) if rows and rows[0]["d"] else None


def line_value(line: dict[str, Any], quantity: int | None = None) -> int:
    """Price paid for ``quantity`` units of the line (default: all of them)."""
    return int(line["unit_price_minor"]) * (line["quantity"] if quantity is None else quantity)


def returned_quantity(world: World, line_id: str) -> int:
    """Units of the line already in a return, exchange or keep-it case that was not rejected."""
    return int(world.query("SELECT coalesce(sum(quantity), 0) AS q FROM returns WHERE line_id = ? AND status != 'rejected'",
                           (line_id,))[0]["q"])


def refunded_minor(world: World, order_id: str) -> int:
    """Everything refunded on the order so far."""
    return int(world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM refunds WHERE order_id = ?", (order_id,))[0]["s"])


def paid_minor(world: World, order_id: str) -> int:
    """Everything captured for the order."""
    return int(world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM payments WHERE order_id = ?", (order_id,))[0]["s"])


def _last_scan(world: World, shipment_id: str) -> date | None:
    rows = world.query("SELECT max(at) AS at FROM tracking_events WHERE shipment_id = ?", (shipment_id,))
    return date.fromisoformat(rows[0]["at"][:10]) if rows and rows[0]["at"] else None


def shipment_is_lost(world: World, shipment: dict[str, Any], today: date) -> bool:
    """Lost: the carrier says so, or in transit with no scan for :data:`STALLED_DAYS` days."""
    if shipment["status"] == "lost":
        return True
    last = _last_scan(world, shipment["shipment_id"])
    return shipment["status"] == "in_transit" and last is not None and (today - last).days >= STALLED_DAYS


def shipment_is_late(shipment: dict[str, Any], today: date) -> bool:
    """Late: delivered after its promised date, or not delivered by it."""
    promised = shipment["promised_by"]
    if shipment["delivered_on"]:
        return bool(shipment["delivered_on"] > promised)
    return today.isoformat() > promised


def stalled_days(world: World, shipment: dict[str, Any], today: date) -> int | None:
    """Days since the parcel's last scan, while it is in transit (None otherwise)."""
    last = _last_scan(world, shipment["shipment_id"])
    if shipment["status"] not in ("in_transit", "out_for_delivery") or last is None:
        return None
    return (today - last).days


def return_window_days(category: str, reason: str) -> int:
    """Days after delivery a return for ``reason`` is accepted (damage reports get at least 30)."""
    base = RETURN_DAYS[category]
    return max(base, DAMAGE_REPORT_DAYS) if reason in ("damaged", "defective", "wrong_item") else base


def rma_refundable(world: World, rma: dict[str, Any]) -> int:
    """What may still be refunded for a return case now: a keep-it case at once; a return after a passed
    inspection, less the restocking fee; an exchange or a rejected case nothing — never more than the order has
    left of what was paid (a coupon discount shrinks it)."""
    if rma["kind"] == "exchange" or rma["status"] == "rejected":
        return 0
    if rma["kind"] == "return":
        passed = world.query("SELECT 1 FROM inspections WHERE rma_id = ? AND result = 'pass'", (rma["rma_id"],))
        if not passed:
            return 0
    line = world.query("SELECT * FROM order_lines WHERE line_id = ?", (rma["line_id"],))[0]
    done = world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM refunds WHERE rma_id = ?", (rma["rma_id"],))[0]["s"]
    left = line_value(line, rma["quantity"]) - int(rma["restocking_fee_minor"]) - int(done)
    order_id = str(rma["order_id"])
    return max(0, min(left, paid_minor(world, order_id) - refunded_minor(world, order_id)))
