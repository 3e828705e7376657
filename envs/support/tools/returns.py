"""Return tools: open a return (or a keep-it case for a damaged item), read it, exchange an item for another variant."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from envs.support import models as m
from envs.support import rules
from envs.support.ledger import audit, next_id
from envs.support.types import AttachmentId, LineId, OrderId, Quantity, ReturnReason, RmaId, VariantId
from envs.support.views import load, require_order_open, return_view
from servers.tools import DomainError, ToolContext, tool

__all__ = ["create_return", "get_return", "create_exchange"]


def _returnable_line(ctx: ToolContext, order_id: str, line_id: str, quantity: int, reason: str) -> dict[str, Any]:
    """The order line joined with its product, checked for delivery, window, final sale and units left."""
    world = ctx.world
    order = rules.order_row(world, order_id)
    require_order_open(order)
    rows = world.query("SELECT l.*, v.product_id, p.category FROM order_lines l JOIN variants v USING (variant_id) "
                       "JOIN products p USING (product_id) WHERE l.line_id = ? AND l.order_id = ?", (line_id, order_id))
    if not rows:
        raise DomainError("not_found", f"order {order_id} has no line {line_id}; get_order lists its lines")
    line = rows[0]
    delivered = rules.delivered_on(world, line_id)
    if delivered is None:
        raise DomainError("not_delivered", f"line {line_id} has not been delivered yet; returns start after delivery")
    if line["category"] == "grocery" and reason not in ("damaged", "defective", "wrong_item"):
        raise DomainError("final_sale", "grocery items are final sale; only damaged, defective or wrong items are refunded")
    window = rules.return_window_days(line["category"], reason)
    last_day = delivered + timedelta(days=window)
    if ctx.clock.today > last_day:
        raise DomainError("return_window_expired", f"line {line_id} was delivered on {delivered.isoformat()}; the {window}-day window "
                                                   f"for this item ended on {last_day.isoformat()}")
    left = line["quantity"] - rules.returned_quantity(world, line_id)
    if quantity > left:
        raise DomainError("already_returned", f"only {left} unit(s) of line {line_id} can still be returned")
    line["_customer_id"] = order["customer_id"]
    return line


def _insert_rma(ctx: ToolContext, line: dict[str, Any], quantity: int, kind: str, reason: str, *, photo_id: str | None = None,
                variant_id: str | None = None, fee: int = 0) -> str:
    rma_id = next_id(ctx, "returns")
    ctx.world.execute(
        "INSERT INTO returns (rma_id, order_id, line_id, quantity, kind, reason, status, photo_id, exchange_variant_id, "
        "restocking_fee_minor, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, 'authorized', ?, ?, ?, ?, ?)",
        (rma_id, line["order_id"], line["line_id"], quantity, kind, reason, photo_id, variant_id, fee, rules.now_iso(ctx), rules.AGENT))
    return rma_id


@tool(mutates=True, title="Create return")
async def create_return(
    ctx: ToolContext, order_id: OrderId, line_id: LineId, quantity: Quantity, reason: ReturnReason, photo_id: AttachmentId | None = None
) -> m.Return:
    """Open a return case for delivered units of an order line, within the item's return window.

    Damaged or defective items need the customer's photo (`photo_id`, ask_customer for it). With a photo, items worth
    up to 100.00 become a keep-it case, refundable at once; everything else gets a return label and is refunded after
    the warehouse's inspection passes. Electronics returned for changed_mind carry a 15% restocking fee. Grocery is
    final sale (damage excepted)."""
    line = _returnable_line(ctx, order_id, line_id, quantity, reason)
    value = rules.line_value(line, quantity)
    if reason in ("damaged", "defective"):
        if photo_id is None:
            raise DomainError("photo_required", f"a {reason} item needs the customer's photo first: ask_customer for it")
        photos = ctx.world.query("SELECT 1 FROM attachments WHERE attachment_id = ? AND customer_id = ? AND kind = 'photo'",
                                 (photo_id, line["_customer_id"]))
        if not photos:
            raise DomainError("not_found", f"no photo {photo_id} from this customer")
    keep = reason in ("damaged", "defective") and value <= rules.KEEP_IT_LIMIT_MINOR
    fee = value * rules.RESTOCKING_FEE_BPS // 10_000 if line["category"] == "electronics" and reason == "changed_mind" else 0
    rma_id = _insert_rma(ctx, line, quantity, "keep" if keep else "return", reason, photo_id=photo_id, fee=fee)
    audit(ctx, "create_return", "return", rma_id, order_id=order_id, line_id=line_id, quantity=quantity, reason=reason)
    return return_view(ctx.world, rma_id)


@tool(title="Get return")
async def get_return(ctx: ToolContext, rma_id: RmaId) -> m.Return:
    """A return case: its status, the warehouse inspection, the restocking fee, and what may be refunded for it now."""
    return return_view(ctx.world, rma_id)


@tool(mutates=True, title="Create exchange")
async def create_exchange(
    ctx: ToolContext, order_id: OrderId, line_id: LineId, new_variant_id: VariantId, reason: ReturnReason = "changed_mind"
) -> m.Return:
    """Exchange one delivered unit of an order line for another variant (size, colour) of the same product, within
    the return window and when the new variant is in stock (one unit is reserved now). No restocking fee."""
    line = _returnable_line(ctx, order_id, line_id, 1, reason)
    variant = load(ctx.world, "variants", "variant_id", new_variant_id, "variant", "get_product lists a product's variants")
    if variant["product_id"] != line["product_id"] or new_variant_id == line["variant_id"]:
        raise DomainError("not_same_product", f"{new_variant_id} is not another variant of the same product; exchanges stay within a product")
    if variant["stock"] < 1:
        raise DomainError("out_of_stock", f"variant {new_variant_id} ({variant['option']}) is out of stock")
    ctx.world.execute("UPDATE variants SET stock = stock - 1 WHERE variant_id = ?", (new_variant_id,))
    rma_id = _insert_rma(ctx, line, 1, "exchange", reason, variant_id=new_variant_id)
    audit(ctx, "create_exchange", "return", rma_id, order_id=order_id, line_id=line_id, new_variant_id=new_variant_id)
    return return_view(ctx.world, rma_id)
