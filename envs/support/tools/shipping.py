"""Shipping tools: carrier tracking, and a replacement shipment for a lost parcel."""

from __future__ import annotations

from envs.support import models as m
from envs.support import rules
from envs.support.ledger import audit, next_id
from envs.support.types import OrderId, Reason, ShipmentId
from envs.support.views import load, order_view, require_order_open, shipment_view
from servers.tools import DomainError, ToolContext, tool

__all__ = ["track_shipment", "send_replacement"]


@tool(title="Track shipment")
async def track_shipment(ctx: ToolContext, shipment_id: ShipmentId) -> m.Shipment:
    """A shipment's carrier tracking, oldest scan first, with the policy's reading: `late` (delivered after, or not
    delivered by, the promised date) and `lost` (the carrier says so, or no scan for 7+ days in transit)."""
    row = load(ctx.world, "shipments", "shipment_id", shipment_id, "shipment", "get_order lists an order's shipments")
    return shipment_view(ctx.world, row, ctx.clock.today)


@tool(mutates=True, title="Send replacement")
async def send_replacement(ctx: ToolContext, order_id: OrderId, reason: Reason) -> m.Order:
    """Ship the items of an order's lost parcel(s) again, free of charge, as a new replacement order (only when a
    parcel is lost, every item is in stock, and no replacement was sent before; not while a high-severity fraud
    signal is open). The alternative is a refund of the lost items (issue_refund, reason lost_parcel)."""
    world, today = ctx.world, ctx.clock.today
    order = rules.order_row(world, order_id)
    require_order_open(order)
    lost = [s for s in world.query("SELECT * FROM shipments WHERE order_id = ? ORDER BY shipment_id", (order_id,))
            if rules.shipment_is_lost(world, s, today)]
    if not lost:
        raise DomainError("not_lost", f"no parcel of order {order_id} is lost; a late parcel is not lost until tracking stalls "
                                      f"for {rules.STALLED_DAYS} days")
    existing = world.query("SELECT order_id FROM orders WHERE replacement_for = ?", (order_id,))
    if existing:
        raise DomainError("already_replaced", f"order {order_id} was already replaced by {existing[0]['order_id']}")
    if world.query("SELECT 1 FROM refunds WHERE order_id = ? AND reason = 'lost_parcel'", (order_id,)):
        raise DomainError("already_replaced", f"the lost items of order {order_id} were already refunded")
    rules.require_no_fraud_review(world, str(order["customer_id"]), "a replacement shipment")
    items = world.query(
        "SELECT l.variant_id, i.quantity, v.stock FROM shipment_items i JOIN order_lines l USING (line_id) JOIN variants v USING (variant_id) "
        f"WHERE i.shipment_id IN ({', '.join('?' for _ in lost)}) ORDER BY l.line_id", tuple(s["shipment_id"] for s in lost))
    for item in items:
        if item["stock"] < item["quantity"]:
            raise DomainError("out_of_stock", f"variant {item['variant_id']} has {item['stock']} in stock; offer a refund instead")
    new_id = next_id(ctx, "orders")
    world.execute(
        "INSERT INTO orders (order_id, customer_id, placed_at, status, ship_line1, ship_line2, ship_city, ship_region, ship_postcode, "
        "subtotal_minor, shipping_minor, discount_minor, total_minor, coupon_code, replacement_for) "
        "VALUES (?, ?, ?, 'processing', ?, ?, ?, ?, ?, 0, 0, 0, 0, NULL, ?)",
        (new_id, order["customer_id"], rules.now_iso(ctx), order["ship_line1"], order["ship_line2"], order["ship_city"],
         order["ship_region"], order["ship_postcode"], order_id))
    for item in items:
        world.execute("INSERT INTO order_lines (line_id, order_id, variant_id, quantity, unit_price_minor) VALUES (?, ?, ?, ?, 0)",
                      (next_id(ctx, "order_lines"), new_id, item["variant_id"], item["quantity"]))
        world.execute("UPDATE variants SET stock = stock - ? WHERE variant_id = ?", (item["quantity"], item["variant_id"]))
    audit(ctx, "send_replacement", "order", order_id, replacement=new_id, reason=reason)
    return order_view(world, new_id)
