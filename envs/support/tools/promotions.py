"""Promotion tools: read a coupon's terms, and refund a valid coupon that did not apply at checkout."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from envs.support import models as m
from envs.support import rules
from envs.support.ledger import audit, write_refund
from envs.support.types import CouponCode, OrderId
from envs.support.views import order_view, require_order_open
from fixtures.world import World
from servers.tools import DomainError, ToolContext, tool

__all__ = ["get_coupon", "apply_coupon", "coupon_discount_minor"]


def _coupon(world: World, code: str) -> dict[str, Any]:
    return rules.one(world, "SELECT c.*, p.* FROM coupons c JOIN promotions p USING (promo_id) WHERE c.code = ?", (code,),
                     f"coupon {code}", "check the code with the customer")


def coupon_discount_minor(world: World, order: dict[str, Any], coupon: dict[str, Any]) -> int:
    """The discount ``coupon`` gives ``order`` at its order date, refusing with the rule it breaks."""
    day = order["placed_at"][:10]
    if not coupon["starts_on"] <= day <= coupon["ends_on"]:
        raise DomainError("coupon_expired", f"{coupon['code']} was valid {coupon['starts_on']} to {coupon['ends_on']}; the order was "
                                            f"placed on {day}")
    if order["subtotal_minor"] < coupon["min_subtotal_minor"]:
        raise DomainError("coupon_min_not_met", f"{coupon['code']} needs a subtotal of {rules.money(coupon['min_subtotal_minor'])}; the "
                                                f"order's is {rules.money(order['subtotal_minor'])}")
    eligible = world.query("SELECT coalesce(sum(l.unit_price_minor * l.quantity), 0) AS v FROM order_lines l JOIN variants v USING (variant_id) "
                           "JOIN products p USING (product_id) WHERE l.order_id = ? AND (? IS NULL OR p.category = ?)",
                           (order["order_id"], coupon["category"], coupon["category"]))[0]["v"]
    if eligible == 0:
        raise DomainError("coupon_not_applicable", f"{coupon['code']} applies only to {coupon['category']} items; the order has none")
    if coupon["once_per_customer"] and world.query("SELECT 1 FROM orders WHERE customer_id = ? AND coupon_code = ?",
                                                   (order["customer_id"], coupon["code"])):
        raise DomainError("coupon_already_used", f"{coupon['code']} is once per customer and this customer has used it")
    if coupon["kind"] == "percent":
        return int(eligible) * int(coupon["value"]) // 10_000
    return min(int(coupon["value"]), int(eligible))


@tool(title="Get coupon")
async def get_coupon(ctx: ToolContext, code: CouponCode) -> m.Coupon:
    """A coupon's terms: the discount, the minimum subtotal, the category it is limited to, its validity dates and
    whether it is once per customer."""
    c = _coupon(ctx.world, code)
    value = f"{c['value'] // 100}" if c["kind"] == "percent" else rules.money(c["value"])
    return m.Coupon(code=code, promotion=c["name"], kind=c["kind"], value=value, min_subtotal=rules.money(c["min_subtotal_minor"]),
                    category=c["category"], starts_on=c["starts_on"], ends_on=c["ends_on"], once_per_customer=bool(c["once_per_customer"]))


@tool(mutates=True, destructive=True, title="Apply coupon")
async def apply_coupon(ctx: ToolContext, order_id: OrderId, code: CouponCode) -> m.Order:
    """Apply a coupon the customer forgot (or that failed) at checkout: the discount is refunded to the original
    payment as a price adjustment. Only within 30 days of the order, for an order without a coupon, and only if the
    coupon was valid for it on its order date (dates, minimum subtotal, category, once per customer)."""
    world = ctx.world
    order = rules.order_row(world, order_id)
    require_order_open(order)
    if order["coupon_code"]:
        raise DomainError("coupon_already_applied", f"order {order_id} already used coupon {order['coupon_code']}; one coupon per order")
    placed = date.fromisoformat(order["placed_at"][:10])
    if ctx.clock.today > placed + timedelta(days=rules.ADJUSTMENT_WINDOW_DAYS):
        raise DomainError("adjustment_window_expired", f"order {order_id} was placed on {placed.isoformat()}; price adjustments are "
                                                       f"possible for {rules.ADJUSTMENT_WINDOW_DAYS} days")
    coupon = _coupon(world, code)
    rules.require_not_chargeback(world, order_id)
    discount = coupon_discount_minor(world, order, coupon)
    world.execute("UPDATE orders SET coupon_code = ?, discount_minor = ?, total_minor = subtotal_minor + shipping_minor - ? WHERE order_id = ?",
                  (code, discount, discount, order_id))
    write_refund(ctx, customer_id=str(order["customer_id"]), amount=discount, method="original_payment", reason="price_adjustment",
                 order_id=order_id)
    audit(ctx, "apply_coupon", "order", order_id, code=code, discount=rules.money(discount))
    return order_view(world, order_id)
