"""Rows of the finance world → the models tools return (money formatted, derived figures computed).

Several tools return the same thing (an account after a freeze, a transfer after an approval), so each
model is built in exactly one place here.
"""

from __future__ import annotations

from typing import Any

from envs.finance import models as m
from envs.finance import rules
from envs.finance.rules import money, rate_text
from fixtures.world import World
from servers.tools import DomainError, ToolContext

__all__ = [
    "like_pattern",
    "customer_view",
    "account_view",
    "account_summary",
    "hold_view",
    "transaction_view",
    "payee_view",
    "transfer_view",
    "card_view",
    "dispute_view",
    "quote_view",
    "alert_view",
    "note_view",
    "load_transfer",
]


def like_pattern(text: str) -> str:
    """``text`` as a literal LIKE substring pattern (``%``, ``_`` and ``\\`` escaped; pair with ``ESCAPE '\\'``).

    Why: search text comes from the agent; a ``%`` in it must match a percent sign, not everything.
    """
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def customer_view(ctx: ToolContext, row: dict[str, Any]) -> m.Customer:
    """A customer's profile; the identity secret (``id_last4``) is left out on purpose."""
    accounts = ctx.world.query("SELECT account_id FROM accounts WHERE customer_id = ? ORDER BY account_id", (row["customer_id"],))
    return m.Customer(
        **{k: row[k] for k in ("customer_id", "first_name", "last_name", "email", "phone", "date_of_birth", "address_line",
                               "city", "postcode", "country", "segment", "kyc_status", "kyc_expires_on", "risk_profile",
                               "customer_since", "relationship_manager")},
        identity_verified=rules.identity_verified(ctx, row["customer_id"]),
        account_ids=[a["account_id"] for a in accounts],
    )


def hold_view(row: dict[str, Any]) -> m.HoldInfo:
    """A hold with its amount formatted."""
    return m.HoldInfo(
        amount=money(row["amount_minor"], row["currency"]),
        **{k: row[k] for k in ("hold_id", "account_id", "currency", "kind", "reason", "status", "placed_at", "placed_by",
                               "released_at", "released_by", "release_reason")},
    )


def account_summary(world: World, row: dict[str, Any]) -> m.AccountSummary:
    """One line of a customer's account list."""
    return m.AccountSummary(
        account_id=row["account_id"], type=row["type"], currency=row["currency"], status=row["status"],
        balance=money(row["balance_minor"], row["currency"]),
        available_balance=money(rules.available_minor(world, row), row["currency"]), nickname=row["nickname"],
    )


def account_view(ctx: ToolContext, account_id: str) -> m.Account:
    """An account in full (re-read, so it reflects writes made by the calling tool)."""
    world = ctx.world
    row = rules.account_row(world, account_id)
    currency = row["currency"]
    limits = []
    for limit in world.query("SELECT channel, limit_minor FROM daily_limits WHERE account_id = ? ORDER BY channel", (account_id,)):
        used = rules.used_today_minor(ctx, account_id, limit["channel"])
        limits.append(m.DailyLimit(channel=limit["channel"], limit=money(limit["limit_minor"], currency),
                                   used_today=money(used, currency), remaining=money(max(0, limit["limit_minor"] - used), currency)))
    holds = world.query("SELECT * FROM holds WHERE account_id = ? AND status = 'active' ORDER BY hold_id", (account_id,))
    cards = world.query("SELECT card_id FROM cards WHERE account_id = ? ORDER BY card_id", (account_id,))
    bps = row["interest_rate_bps"]
    return m.Account(
        account_id=account_id, customer_id=row["customer_id"], type=row["type"], currency=currency, status=row["status"],
        status_reason=row["status_reason"], balance=money(row["balance_minor"], currency),
        available_balance=money(rules.available_minor(world, row), currency),
        overdraft_limit=money(row["overdraft_limit_minor"], currency),
        holds_total=money(sum(h["amount_minor"] for h in holds), currency),
        pending_debits=money(rules.pending_debits_minor(world, account_id), currency),
        interest_rate=f"{bps // 100}.{bps % 100:02d}", nickname=row["nickname"], opened_on=row["opened_on"],
        closed_on=row["closed_on"], daily_limits=limits, active_holds=[hold_view(h) for h in holds],
        card_ids=[c["card_id"] for c in cards],
    )


def transaction_view(row: dict[str, Any]) -> m.Transaction:
    """A ledger row; ``row`` may carry a ``dispute_id`` column from a join."""
    return m.Transaction(
        amount=money(row["amount_minor"], row["currency"]), dispute_id=row.get("dispute_id"),
        **{k: row[k] for k in ("txn_id", "account_id", "txn_date", "posted_on", "currency", "status", "kind", "merchant",
                               "merchant_country", "category", "memo", "reference", "card_id", "transfer_id")},
    )


def payee_view(row: dict[str, Any]) -> m.Payee:
    """A payee."""
    return m.Payee(verified=bool(row["verified"]), **{k: row[k] for k in (
        "payee_id", "customer_id", "kind", "name", "bank_name", "account_number", "routing_code", "internal_account_id",
        "currency", "status", "added_on")})


def transfer_view(world: World, row: dict[str, Any]) -> m.Transfer:
    """A transfer with its payee's name and USD equivalent."""
    currency = row["currency"]
    payee = None
    if row["payee_id"]:
        names = world.query("SELECT name FROM payees WHERE payee_id = ?", (row["payee_id"],))
        payee = names[0]["name"] if names else None
    to_currency = row["to_currency"]
    return m.Transfer(
        transfer_id=row["transfer_id"], kind=row["kind"], status=row["status"], from_account_id=row["from_account_id"],
        to_account_id=row["to_account_id"], payee_id=row["payee_id"], payee_name=payee,
        amount=money(row["amount_minor"], currency), currency=currency, fee=money(row["fee_minor"], currency),
        usd_equivalent=money(rules.usd_equivalent(world, row["amount_minor"], currency), "USD"),
        to_amount=money(row["to_amount_minor"], to_currency) if to_currency else None, to_currency=to_currency,
        rate=rate_text(row["rate_micros"]) if row["rate_micros"] else None, channel=row["channel"],
        requested_by=row["requested_by"], requested_at=row["requested_at"], decided_by=row["decided_by"],
        decided_at=row["decided_at"], memo=row["memo"], reference=row["reference"], rejection_reason=row["rejection_reason"],
    )


def load_transfer(world: World, transfer_id: str) -> dict[str, Any]:
    """The transfer's row, or ``not_found``."""
    rows = world.query("SELECT * FROM transfers WHERE transfer_id = ?", (transfer_id,))
    if not rows:
        raise DomainError("not_found", f"no transfer {transfer_id}; list_pending_approvals shows the ones awaiting approval")
    return rows[0]


def card_view(world: World, row: dict[str, Any]) -> m.Card:
    """A card; its limit is in the linked account's currency."""
    currency = world.query("SELECT currency FROM accounts WHERE account_id = ?", (row["account_id"],))[0]["currency"]
    return m.Card(daily_limit=money(row["daily_limit_minor"], currency), currency=currency, **{k: row[k] for k in (
        "card_id", "account_id", "customer_id", "last4", "network", "status", "issued_on", "expires", "frozen_at",
        "status_reason")})


def dispute_view(row: dict[str, Any]) -> m.Dispute:
    """A dispute."""
    return m.Dispute(amount=money(row["amount_minor"], row["currency"]), **{k: row[k] for k in (
        "dispute_id", "txn_id", "card_id", "customer_id", "reason", "currency", "status", "opened_on", "opened_by",
        "description")})


def quote_view(world: World, row: dict[str, Any], today: str) -> m.Quote:
    """An instrument with its last close on or before ``today`` and its recent moves."""
    closes = world.query(
        "SELECT price_date, close_minor FROM prices WHERE symbol = ? AND price_date <= ? ORDER BY price_date DESC LIMIT 2",
        (row["symbol"], today),
    )
    currency = row["currency"]
    last = closes[0]
    month_ago = world.query(
        "SELECT close_minor FROM prices WHERE symbol = ? AND price_date <= date(?, '-30 days') ORDER BY price_date DESC LIMIT 1",
        (row["symbol"], today),
    )
    change = None
    if month_ago:
        basis = month_ago[0]["close_minor"]
        moved = last["close_minor"] - basis
        bp = abs(moved) * 10_000 // basis  # basis points, truncated toward zero
        change = f"{'-' if moved < 0 else ''}{bp // 100}.{bp % 100:02d}"
    return m.Quote(
        symbol=row["symbol"], name=row["name"], asset_class=row["asset_class"], currency=currency, risk_level=row["risk_level"],
        exchange=row["exchange"], price=money(last["close_minor"], currency), price_date=last["price_date"],
        previous_close=money(closes[1]["close_minor"], currency) if len(closes) > 1 else None, change_30d_pct=change,
    )


def alert_view(row: dict[str, Any]) -> m.Alert:
    """A compliance alert."""
    return m.Alert(**{k: row[k] for k in m.Alert.model_fields})


def note_view(row: dict[str, Any]) -> m.Note:
    """A note."""
    return m.Note(**{k: row[k] for k in m.Note.model_fields})
