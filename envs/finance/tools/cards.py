"""Card tools: list cards, freeze and unfreeze them, open and list card disputes."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import Field

from envs.finance import models as m
from envs.finance import rules
from envs.finance.ledger import audit, next_id
from envs.finance.types import Amount, CardId, CustomerId, Reason, TxnId
from envs.finance.views import card_view, dispute_view
from servers.tools import DomainError, ToolContext, tool

__all__ = ["list_cards", "freeze_card", "unfreeze_card", "open_dispute", "list_disputes"]


def _card(ctx: ToolContext, card_id: str) -> dict[str, Any]:
    rows = ctx.world.query("SELECT * FROM cards WHERE card_id = ?", (card_id,))
    if not rows:
        raise DomainError("not_found", f"no card {card_id}; list_cards shows a customer's cards")
    return rows[0]


def _card_result(ctx: ToolContext, card_id: str) -> m.Card:
    return card_view(ctx.world, _card(ctx, card_id))


@tool(title="List cards")
async def list_cards(ctx: ToolContext, customer_id: CustomerId) -> m.CardList:
    """A customer's debit cards (cancelled ones included) with status and limits."""
    rules.customer_row(ctx.world, customer_id)
    rows = ctx.world.query("SELECT * FROM cards WHERE customer_id = ? ORDER BY card_id", (customer_id,))
    return m.CardList(customer_id=customer_id, cards=[card_view(ctx.world, r) for r in rows])


@tool(mutates=True, title="Freeze card")
async def freeze_card(ctx: ToolContext, card_id: CardId, reason: Reason) -> m.Card:
    """Freeze a card at once (lost, stolen, suspicious charges): new card payments are declined. No identity
    verification is needed to protect a customer."""
    card = _card(ctx, card_id)
    if card["status"] == "cancelled":
        raise DomainError("card_cancelled", f"card {card_id} is cancelled ({card['status_reason']})")
    if card["status"] == "frozen":
        raise DomainError("already_frozen", f"card {card_id} has been frozen since {card['frozen_at']}")
    ctx.world.execute("UPDATE cards SET status = 'frozen', frozen_at = ?, status_reason = ? WHERE card_id = ?",
                      (rules.now_iso(ctx), reason, card_id))
    audit(ctx, "freeze_card", "card", card_id, reason=reason)
    return _card_result(ctx, card_id)


@tool(mutates=True, title="Unfreeze card")
async def unfreeze_card(ctx: ToolContext, card_id: CardId) -> m.Card:
    """Reactivate a frozen card at the cardholder's request (needs their identity verified; the linked
    account must be open).
    Check these conditions in the records first: an attempt the policy forbids counts against you
    even when this tool refuses it."""
    card = _card(ctx, card_id)
    if card["status"] == "cancelled":
        raise DomainError("card_cancelled", f"card {card_id} is cancelled and cannot be reactivated; order a replacement")
    if card["status"] == "active":
        raise DomainError("not_frozen", f"card {card_id} is not frozen")
    rules.require_usable(rules.account_row(ctx.world, card["account_id"]))
    rules.require_identity(ctx, card["customer_id"], "unfreezing a card")
    ctx.world.execute("UPDATE cards SET status = 'active', frozen_at = NULL, status_reason = NULL WHERE card_id = ?", (card_id,))
    audit(ctx, "unfreeze_card", "card", card_id)
    return _card_result(ctx, card_id)


@tool(mutates=True, title="Open dispute")
async def open_dispute(
    ctx: ToolContext,
    txn_id: TxnId,
    reason: Literal["fraud", "duplicate", "not_received", "incorrect_amount", "cancelled_service"],
    description: Annotated[str, Field(min_length=3, max_length=1000, pattern=r"\S", description="What the customer says happened")],
    amount: Amount | None = None,
) -> m.Dispute:
    """Open a dispute on a posted card charge (default: the full amount; or part of it with `amount`).

    Allowed within 60 days of the charge's posting date, once per transaction, with the cardholder's
    identity verified. Pending charges must post first.
    Check these conditions in the records first: an attempt the policy forbids counts against you
    even when this tool refuses it.
    """
    world = ctx.world
    rows = world.query("SELECT * FROM transactions WHERE txn_id = ?", (txn_id,))
    if not rows:
        raise DomainError("not_found", f"no transaction {txn_id}")
    txn = rows[0]
    if txn["kind"] != "card" or txn["card_id"] is None or txn["amount_minor"] >= 0:
        raise DomainError("not_card_charge", f"{txn_id} is a {txn['kind']} transaction; only card charges can be disputed")
    if txn["status"] == "pending":
        raise DomainError("not_posted", f"{txn_id} is still pending; it can be disputed once it posts")
    if txn["status"] == "reversed":
        raise DomainError("not_posted", f"{txn_id} was reversed; there is nothing to dispute")
    existing = world.query("SELECT dispute_id FROM disputes WHERE txn_id = ?", (txn_id,))
    if existing:
        raise DomainError("already_disputed", f"{txn_id} is already disputed in {existing[0]['dispute_id']}")
    age = (ctx.clock.today - date.fromisoformat(txn["posted_on"])).days
    if age > rules.DISPUTE_WINDOW_DAYS:
        raise DomainError("dispute_window_expired", f"{txn_id} posted on {txn['posted_on']}, {age} days ago; "
                                                    f"disputes must be opened within {rules.DISPUTE_WINDOW_DAYS} days")
    customer_id = world.query("SELECT customer_id FROM accounts WHERE account_id = ?", (txn["account_id"],))[0]["customer_id"]
    rules.require_identity(ctx, customer_id, "opening a dispute")
    charge = -txn["amount_minor"]
    disputed = charge if amount is None else rules.parse_money(amount, txn["currency"])
    if disputed > charge:
        raise DomainError("invalid_amount", f"the charge was {rules.money(charge, txn['currency'])}; "
                                            f"{amount} cannot be disputed")
    dispute_id = next_id(ctx, "disputes")
    world.execute(
        "INSERT INTO disputes (dispute_id, txn_id, card_id, customer_id, reason, amount_minor, currency, status, opened_on, "
        "opened_by, description) VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)",
        (dispute_id, txn_id, txn["card_id"], customer_id, reason, disputed, txn["currency"], ctx.clock.today.isoformat(),
         rules.AGENT, description),
    )
    audit(ctx, "open_dispute", "dispute", dispute_id, txn_id=txn_id, reason=reason,
          amount=rules.money(disputed, txn["currency"]), currency=txn["currency"])
    return dispute_view(world.query("SELECT * FROM disputes WHERE dispute_id = ?", (dispute_id,))[0])


@tool(title="List disputes")
async def list_disputes(ctx: ToolContext, customer_id: CustomerId) -> m.DisputeList:
    """A customer's card disputes, newest first."""
    rules.customer_row(ctx.world, customer_id)
    rows = ctx.world.query("SELECT * FROM disputes WHERE customer_id = ? ORDER BY opened_on DESC, dispute_id DESC", (customer_id,))
    return m.DisputeList(customer_id=customer_id, disputes=[dispute_view(r) for r in rows])
