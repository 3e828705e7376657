"""Ledger tools: search an account's (or the bank's) transactions and read one transaction."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from envs.finance import models as m
from envs.finance import rules
from envs.finance.types import AccountId, Amount, CustomerId, IsoDate, Limit, Offset, TxnId
from envs.finance.views import like_pattern, transaction_view
from fixtures.money import parse_amount
from servers.tools import DomainError, ToolContext, tool

__all__ = ["search_transactions", "get_transaction"]

_Kind = Literal["card", "atm", "direct_debit", "salary", "deposit", "transfer", "wire", "fee", "interest", "fx", "trade",
                "refund", "opening"]
_SELECT = "SELECT t.*, d.dispute_id FROM transactions t LEFT JOIN disputes d ON d.txn_id = t.txn_id"


@tool(title="Search transactions")
async def search_transactions(
    ctx: ToolContext,
    account_id: AccountId | None = None,
    customer_id: CustomerId | None = None,
    date_from: IsoDate | None = None,
    date_to: IsoDate | None = None,
    merchant: Annotated[str, Field(min_length=1, max_length=100, description="Part of the merchant or counterparty name")] | None = None,
    category: Annotated[str, Field(min_length=1, max_length=40, description="Exact category, e.g. groceries")] | None = None,
    kind: _Kind | None = None,
    status: Literal["pending", "posted", "reversed"] | None = None,
    direction: Literal["debit", "credit"] | None = None,
    min_amount: Amount | None = None,
    max_amount: Amount | None = None,
    limit: Limit = 25,
    offset: Offset = 0,
) -> m.TransactionPage:
    """Search ledger transactions, newest first, with a total count and the signed sum of all matches.

    Filters combine: an account or a customer's accounts, a transaction-date range (inclusive), part of
    the merchant name, category, kind, status, direction, and a range on the absolute amount. Without an
    account or customer the whole bank is searched. Page with `offset` (use `next_offset`).
    """
    where: list[str] = []
    params: dict[str, Any] = {}
    if account_id is not None:
        rules.account_row(ctx.world, account_id)
        where.append("t.account_id = :account")
        params["account"] = account_id
    if customer_id is not None:
        rules.customer_row(ctx.world, customer_id)
        where.append("t.account_id IN (SELECT account_id FROM accounts WHERE customer_id = :customer)")
        params["customer"] = customer_id
    if date_from is not None and date_to is not None and date_from > date_to:
        raise DomainError("invalid_date_range", f"date_from {date_from} is after date_to {date_to}")
    if date_from is not None:
        where.append("t.txn_date >= :date_from")
        params["date_from"] = date_from.isoformat()
    if date_to is not None:
        where.append("t.txn_date <= :date_to")
        params["date_to"] = date_to.isoformat()
    if merchant is not None:
        where.append("t.merchant LIKE :merchant ESCAPE '\\'")
        params["merchant"] = like_pattern(merchant)
    for column, value in (("category", category), ("kind", kind), ("status", status)):
        if value is not None:
            where.append(f"t.{column} = :{column}")
            params[column] = value
    if direction is not None:
        where.append("t.amount_minor < 0" if direction == "debit" else "t.amount_minor > 0")
    # every currency of this bank has two decimals, so one parse serves a filter spanning accounts
    low = parse_amount(min_amount, "USD") if min_amount is not None else None
    high = parse_amount(max_amount, "USD") if max_amount is not None else None
    if low is not None and high is not None and low > high:
        raise DomainError("invalid_amount", f"min_amount {min_amount} is greater than max_amount {max_amount}")
    if low is not None:
        where.append("abs(t.amount_minor) >= :low")
        params["low"] = low
    if high is not None:
        where.append("abs(t.amount_minor) <= :high")
        params["high"] = high
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    summary = ctx.world.query(
        f"SELECT count(*) AS n, sum(t.amount_minor) AS total, count(DISTINCT t.currency) AS currencies, max(t.currency) AS currency "
        f"FROM transactions t {clause}", params,
    )[0]
    rows = ctx.world.query(f"{_SELECT} {clause} ORDER BY t.txn_date DESC, t.txn_id DESC LIMIT :limit OFFSET :offset",
                           {**params, "limit": limit, "offset": offset})
    total = int(summary["n"])
    single = summary["currencies"] == 1
    following = offset + len(rows)
    return m.TransactionPage(
        transactions=[transaction_view(r) for r in rows], total=total, offset=offset,
        next_offset=following if following < total else None,
        total_amount=rules.money(summary["total"], summary["currency"]) if single else None,
        currency=summary["currency"] if single else None,
    )


@tool(title="Get transaction")
async def get_transaction(ctx: ToolContext, txn_id: TxnId) -> m.Transaction:
    """One ledger transaction, including the dispute opened on it, if any."""
    rows = ctx.world.query(f"{_SELECT} WHERE t.txn_id = ?", (txn_id,))
    if not rows:
        raise DomainError("not_found", f"no transaction {txn_id}; find transactions with search_transactions")
    return transaction_view(rows[0])
