"""The refund tool: money back for a returned or damaged item, a lost parcel or a late delivery, under the limits."""

from __future__ import annotations

from typing import Any

from envs.support import models as m
from envs.support import rules
from envs.support.ledger import audit, write_refund
from envs.support.types import Amount, OrderId, RefundMethod, RefundReason, RmaId
from envs.support.views import load, refund_view, require_order_open
from fixtures.world import World
from servers.tools import DomainError, ToolContext, tool

__all__ = ["issue_refund", "eligible_minor"]


def _rma(world: World, order_id: str, rma_id: str | None, kind: str, code: str, need: str) -> dict[str, Any]:
    if rma_id is None:
        raise DomainError(code, f"{need}; pass its rma_id")
    rma = load(world, "returns", "rma_id", rma_id, "return", "get_order lists an order's returns")
    if rma["order_id"] != order_id:
        raise DomainError("not_found", f"return {rma_id} belongs to order {rma['order_id']}, not {order_id}")
    if rma["kind"] != kind:
        raise DomainError(code, f"return {rma_id} is a {rma['kind']} case; {need}")
    return rma


def eligible_minor(ctx: ToolContext, order: dict[str, Any], reason: str, rma_id: str | None) -> int:
    """What the policy lets the agent refund on ``order`` for ``reason`` now (refusing with the rule's code when nothing)."""
    world, today, order_id = ctx.world, ctx.clock.today, order["order_id"]
    if reason == "returned_item":
        rma = _rma(world, order_id, rma_id, "return", "inspection_required", "a returned item is refunded through its return case")
        if not world.query("SELECT 1 FROM inspections WHERE rma_id = ? AND result = 'pass'", (rma["rma_id"],)):
            raise DomainError("inspection_required", f"return {rma['rma_id']} is {rma['status']}: it is refunded once the warehouse's "
                                                     "inspection passes")
        return rules.rma_refundable(world, rma)
    if reason == "damaged_item":
        rma = _rma(world, order_id, rma_id, "keep", "photo_required",
                   "a damaged item is refunded through a keep-it case opened with the customer's photo (create_return)")
        return rules.rma_refundable(world, rma)
    shipments = world.query("SELECT * FROM shipments WHERE order_id = ? ORDER BY shipment_id", (order_id,))
    if reason == "lost_parcel":
        lost = [s for s in shipments if rules.shipment_is_lost(world, s, today)]
        if not lost:
            raise DomainError("not_lost", f"no parcel of order {order_id} is lost")
        if world.query("SELECT 1 FROM orders WHERE replacement_for = ?", (order_id,)):
            raise DomainError("already_replaced", f"the lost items of order {order_id} were already sent again")
        value = world.query(
            "SELECT coalesce(sum(l.unit_price_minor * i.quantity), 0) AS v FROM shipment_items i JOIN order_lines l USING (line_id) "
            f"WHERE i.shipment_id IN ({', '.join('?' for _ in lost)})", tuple(s["shipment_id"] for s in lost))[0]["v"]
        done = world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM refunds WHERE order_id = ? AND reason = 'lost_parcel'",
                           (order_id,))[0]["s"]
        return max(0, int(value) - int(done))
    if not any(rules.shipment_is_late(s, today) for s in shipments):
        raise DomainError("not_late", f"no parcel of order {order_id} is late")
    done = world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM refunds WHERE order_id = ? AND reason = 'late_delivery'",
                       (order_id,))[0]["s"]
    return max(0, int(order["shipping_minor"]) - int(done))


@tool(mutates=True, destructive=True, title="Issue refund")
async def issue_refund(
    ctx: ToolContext,
    order_id: OrderId,
    amount: Amount,
    method: RefundMethod,
    reason: RefundReason,
    rma_id: RmaId | None = None,
) -> m.Refund:
    """Refund money on an order, to the original payment (3-5 days) or as store credit (at once).

    What may be refunded depends on `reason`: `returned_item` — the return case's refundable amount once its
    inspection passed (less any restocking fee); `damaged_item` — a keep-it case opened with a photo; `lost_parcel` —
    the items of a lost parcel; `late_delivery` — the shipping fee of a late parcel. Agents may refund at most 500.00
    per order in total (escalate to billing above); orders in chargeback or customers with an open high-severity
    fraud signal are escalated instead. Agree the refund with the customer first."""
    world = ctx.world
    order = rules.order_row(world, order_id)
    require_order_open(order)
    rules.require_not_chargeback(world, order_id)
    rules.require_no_fraud_review(world, str(order["customer_id"]), "a refund")
    minor = rules.parse_money(amount)
    eligible = min(eligible_minor(ctx, order, reason, rma_id), rules.paid_minor(world, order_id) - rules.refunded_minor(world, order_id))
    if minor > eligible:
        raise DomainError("amount_exceeds_eligible", f"at most {rules.money(eligible)} can be refunded on order {order_id} for {reason}")
    already = rules.refunded_minor(world, order_id)
    if already + minor > rules.AGENT_REFUND_LIMIT_MINOR:
        raise DomainError("refund_limit_exceeded", f"order {order_id} would have {rules.money(already + minor)} refunded in total; "
                                                   f"agents may refund up to {rules.money(rules.AGENT_REFUND_LIMIT_MINOR)} per order: "
                                                   "escalate to billing")
    refund_id = write_refund(ctx, customer_id=str(order["customer_id"]), amount=minor, method=method, reason=reason,
                             order_id=order_id, rma_id=rma_id if reason in ("returned_item", "damaged_item") else None)
    if reason in ("returned_item", "damaged_item") and rma_id is not None:
        rma = world.query("SELECT * FROM returns WHERE rma_id = ?", (rma_id,))[0]
        if rules.rma_refundable(world, rma) == 0:
            world.execute("UPDATE returns SET status = 'closed' WHERE rma_id = ?", (rma_id,))
    audit(ctx, "issue_refund", "refund", refund_id, order_id=order_id, amount=rules.money(minor), method=method, reason=reason)
    return refund_view(world.query("SELECT * FROM refunds WHERE refund_id = ?", (refund_id,))[0])
