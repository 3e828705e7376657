"""Subscription tools: read a subscription and the plans, pause it, change its plan, cancel it, refund a duplicate charge."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import Field

from envs.support import models as m
from envs.support import rules
from envs.support.ledger import audit, write_refund
from envs.support.types import InvoiceId, PlanId, Reason, SubscriptionId
from envs.support.views import load, plan_view, refund_view, subscription_view
from servers.tools import DomainError, ToolContext, tool

__all__ = ["get_subscription", "list_plans", "pause_subscription", "change_plan", "cancel_subscription", "refund_invoice",
           "add_months", "prorated_refund_minor"]


def add_months(day: date, months: int) -> date:
    """``day`` moved by whole months (billing anchors are days 1-28)."""
    month = day.month - 1 + months
    return date(day.year + month // 12, month % 12 + 1, min(day.day, 28))


def prorated_refund_minor(price: int, period_start: str, period_end: str, today: date) -> int:
    """The unused part of a paid period: price × days left ÷ days in the period, rounded down to the cent."""
    start, end = date.fromisoformat(period_start), date.fromisoformat(period_end)
    left = max(0, (end - today).days)
    return price * left // (end - start).days


def _subscription(ctx: ToolContext, subscription_id: str, action: str) -> dict[str, Any]:
    row = load(ctx.world, "subscriptions", "subscription_id", subscription_id, "subscription", "get_customer lists subscriptions")
    if row["status"] == "cancelled":
        raise DomainError("already_cancelled", f"subscription {subscription_id} was cancelled on {row['cancelled_on']}")
    rules.require_identity(ctx, row["customer_id"], action)
    return row


@tool(title="Get subscription")
async def get_subscription(ctx: ToolContext, subscription_id: SubscriptionId) -> m.Subscription:
    """A subscription: plan, status, current billing period (days left), scheduled changes and invoices with refunds."""
    return subscription_view(ctx.world, subscription_id, ctx.clock.today)


@tool(title="List plans")
async def list_plans(ctx: ToolContext) -> m.PlanList:
    """Every subscription plan with its box family, tier and monthly price (plans change only within a family)."""
    return m.PlanList(plans=[plan_view(r) for r in ctx.world.query("SELECT * FROM plans ORDER BY plan_id")])


@tool(mutates=True, title="Pause subscription")
async def pause_subscription(
    ctx: ToolContext, subscription_id: SubscriptionId, periods: Annotated[int, Field(strict=True, ge=1, le=3, description="Billing periods to skip (1-3)")]
) -> m.Subscription:
    """Pause an active subscription for 1-3 billing periods after the current one (needs the customer's identity
    verified; a past-due subscription must be paid first)."""
    row = _subscription(ctx, subscription_id, "pausing a subscription")
    if row["status"] == "past_due":
        raise DomainError("past_due_balance", f"subscription {subscription_id} has an unpaid invoice; it must be paid before pausing")
    if row["status"] != "active":
        raise DomainError("subscription_not_active", f"subscription {subscription_id} is {row['status']}")
    until = add_months(date.fromisoformat(row["period_end"]), periods).isoformat()
    ctx.world.execute("UPDATE subscriptions SET status = 'paused', paused_until = ? WHERE subscription_id = ?", (until, subscription_id))
    audit(ctx, "pause_subscription", "subscription", subscription_id, periods=periods)
    return subscription_view(ctx.world, subscription_id, ctx.clock.today)


@tool(mutates=True, title="Change plan")
async def change_plan(ctx: ToolContext, subscription_id: SubscriptionId, plan_id: PlanId) -> m.Subscription:
    """Move a subscription to another plan of the same box family (upgrade or downgrade), from the next billing
    period; nothing is charged or refunded for the current one. Needs the customer's identity verified."""
    row = _subscription(ctx, subscription_id, "changing a plan")
    if row["status"] not in ("active", "paused"):
        raise DomainError("subscription_not_active", f"subscription {subscription_id} is {row['status']}")
    plan = load(ctx.world, "plans", "plan_id", plan_id, "plan", "list_plans shows every plan")
    current = ctx.world.query("SELECT * FROM plans WHERE plan_id = ?", (row["plan_id"],))[0]
    if plan_id == row["plan_id"]:
        raise DomainError("same_plan", f"subscription {subscription_id} is already on {current['name']}")
    if plan["family"] != current["family"]:
        raise DomainError("plan_family_mismatch", f"{plan['name']} is not a {current['family']} plan; plans change only within a family")
    if row["next_plan_id"] == plan_id:
        raise DomainError("no_change", f"subscription {subscription_id} already moves to {plan['name']} next period")
    ctx.world.execute("UPDATE subscriptions SET next_plan_id = ? WHERE subscription_id = ?", (plan_id, subscription_id))
    audit(ctx, "change_plan", "subscription", subscription_id, plan_id=plan_id)
    return subscription_view(ctx.world, subscription_id, ctx.clock.today)


@tool(mutates=True, destructive=True, title="Cancel subscription")
async def cancel_subscription(
    ctx: ToolContext, subscription_id: SubscriptionId, timing: Literal["end_of_period", "immediately"], reason: Reason
) -> m.Subscription:
    """Cancel a subscription (needs the customer's identity verified): `end_of_period` keeps it until the period ends
    with no refund; `immediately` ends it today and refunds the unused days of the current paid period to the
    original payment (price × days left ÷ days in the period, rounded down to the cent)."""
    row = _subscription(ctx, subscription_id, "cancelling a subscription")
    world, today = ctx.world, ctx.clock.today
    if timing == "end_of_period":
        if row["cancel_at_period_end"]:
            raise DomainError("already_cancelled", f"subscription {subscription_id} already ends on {row['period_end']}")
        world.execute("UPDATE subscriptions SET cancel_at_period_end = 1 WHERE subscription_id = ?", (subscription_id,))
    else:
        paid = world.query("SELECT * FROM invoices WHERE subscription_id = ? AND period_start = ? AND status = 'paid' "
                           "ORDER BY invoice_id LIMIT 1", (subscription_id, row["period_start"]))
        refund = 0
        if paid and not world.query("SELECT 1 FROM refunds WHERE invoice_id = ?", (paid[0]["invoice_id"],)):
            refund = prorated_refund_minor(int(paid[0]["amount_minor"]), row["period_start"], row["period_end"], today)
        world.execute("UPDATE invoices SET status = 'void' WHERE subscription_id = ? AND status = 'open'", (subscription_id,))
        world.execute("UPDATE subscriptions SET status = 'cancelled', cancelled_on = ?, cancel_at_period_end = 0 WHERE subscription_id = ?",
                      (today.isoformat(), subscription_id))
        if refund > 0:
            write_refund(ctx, customer_id=row["customer_id"], amount=refund, method="original_payment", reason="prorated_cancellation",
                         invoice_id=paid[0]["invoice_id"])
    audit(ctx, "cancel_subscription", "subscription", subscription_id, timing=timing, reason=reason)
    return subscription_view(world, subscription_id, today)


@tool(mutates=True, destructive=True, title="Refund invoice")
async def refund_invoice(ctx: ToolContext, invoice_id: InvoiceId, reason: Reason) -> m.Refund:
    """Refund a subscription invoice that charged a billing period a second time (the later of two paid invoices
    for the same period), in full, to the original payment."""
    world = ctx.world
    invoice = load(world, "invoices", "invoice_id", invoice_id, "invoice", "get_subscription lists a subscription's invoices")
    if world.query("SELECT 1 FROM refunds WHERE invoice_id = ?", (invoice_id,)):
        raise DomainError("already_refunded", f"invoice {invoice_id} was already refunded")
    earlier = world.query("SELECT invoice_id FROM invoices WHERE subscription_id = ? AND period_start = ? AND status = 'paid' "
                          "AND invoice_id < ? ORDER BY invoice_id LIMIT 1", (invoice["subscription_id"], invoice["period_start"], invoice_id))
    if invoice["status"] != "paid" or not earlier:
        raise DomainError("not_duplicate", f"invoice {invoice_id} is not a second charge for its period; only duplicates are refunded")
    customer = world.query("SELECT customer_id FROM subscriptions WHERE subscription_id = ?", (invoice["subscription_id"],))[0]["customer_id"]
    refund_id = write_refund(ctx, customer_id=customer, amount=int(invoice["amount_minor"]), method="original_payment",
                             reason="duplicate_charge", invoice_id=invoice_id)
    audit(ctx, "refund_invoice", "invoice", invoice_id, duplicate_of=earlier[0]["invoice_id"], reason=reason)
    return refund_view(world.query("SELECT * FROM refunds WHERE refund_id = ?", (refund_id,))[0])
