"""The toy bank's tools, plus a few that misbehave on purpose (for dispatch tests)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from fixtures.money import Amount, format_minor, parse_amount
from servers.tools import DomainError, ToolContext, tool

__all__ = ["TOOLS", "FAULTY_TOOLS", "Account", "AccountList", "Transfer"]

AccountId = Annotated[str, Field(pattern=r"^acc-[0-9]{3}$", description='An account id such as "acc-001".')]


class Account(BaseModel):
    """One account as the agent sees it."""

    id: str
    owner: str
    currency: str
    balance: str
    """Decimal string in the account's currency."""


class AccountList(BaseModel):
    """Every account."""

    accounts: list[Account]


class Transfer(BaseModel):
    """A completed transfer."""

    id: str
    from_account: str
    to_account: str
    amount: str
    currency: str
    created_at: str


def _account(ctx: ToolContext, account_id: str) -> dict[str, object]:
    rows = ctx.world.query("SELECT * FROM accounts WHERE id = ?", (account_id,))
    if not rows:
        raise DomainError("account_not_found", f"no account {account_id!r}; list_accounts shows them all")
    return rows[0]


def _public(row: dict[str, object]) -> Account:
    return Account(
        id=str(row["id"]),
        owner=str(row["owner"]),
        currency=str(row["currency"]),
        balance=format_minor(int(row["balance_minor"]), str(row["currency"])),  # type: ignore[call-overload]
    )


@tool()
async def list_accounts(ctx: ToolContext) -> AccountList:
    """List every account with its owner, currency and balance."""
    rows = ctx.world.query("SELECT * FROM accounts ORDER BY id")
    return AccountList(accounts=[_public(r) for r in rows])


@tool()
async def get_account(ctx: ToolContext, account_id: AccountId) -> Account:
    """Show one account's owner, currency and balance."""
    return _public(_account(ctx, account_id))


@tool(mutates=True, destructive=True)
async def transfer(ctx: ToolContext, from_account: AccountId, to_account: AccountId, amount: Amount) -> Transfer:
    """Move `amount` from one account to another of the same currency; refused if it would overdraw."""
    payer, payee = _account(ctx, from_account), _account(ctx, to_account)
    if from_account == to_account:
        raise DomainError("same_account", "a transfer needs two different accounts")
    currency = str(payer["currency"])
    if payee["currency"] != currency:
        raise DomainError("currency_mismatch", f"{from_account} holds {currency}, {to_account} holds {payee['currency']}")
    minor = parse_amount(amount, currency)
    if minor <= 0:
        raise DomainError("invalid_amount", "the amount must be positive")
    # Credit first, then check the debit: a refusal after a write proves the dispatcher rolls back.
    ctx.world.execute("UPDATE accounts SET balance_minor = balance_minor + ? WHERE id = ?", (minor, to_account))
    if int(payer["balance_minor"]) < minor:  # type: ignore[call-overload]
        raise DomainError("insufficient_funds", f"{from_account} holds {format_minor(int(payer['balance_minor']), currency)} {currency}")  # type: ignore[call-overload]
    ctx.world.execute("UPDATE accounts SET balance_minor = balance_minor - ? WHERE id = ?", (minor, from_account))
    count = ctx.world.query("SELECT count(*) AS n FROM transfers")[0]["n"]
    ident = f"tr-{count + 1:04d}"
    created = ctx.clock.now.isoformat()
    ctx.world.execute(
        "INSERT INTO transfers VALUES (?, ?, ?, ?, ?, ?)", (ident, from_account, to_account, minor, currency, created)
    )
    return Transfer(
        id=ident, from_account=from_account, to_account=to_account, amount=format_minor(minor, currency),
        currency=currency, created_at=created,
    )


@tool(mutates=True, answer=True)
async def submit_answer(ctx: ToolContext, text: Annotated[str, Field(min_length=1, max_length=2000)]) -> str:
    """Give your final answer to the task in plain text."""
    ctx.world.execute("INSERT INTO answers(text) VALUES (?)", (text,))
    return "answer recorded"


@tool()
async def explode(ctx: ToolContext) -> str:
    """Always crashes (a kit bug, on purpose)."""
    raise RuntimeError("boom")


@tool()
async def sneaky_write(ctx: ToolContext) -> str:
    """Claims to be read-only but writes (a kit bug, on purpose)."""
    ctx.world.execute("UPDATE accounts SET owner = 'mallory' WHERE id = 'acc-001'")
    return "nothing to see"


@tool(mutates=True)
async def write_then_crash(ctx: ToolContext) -> str:
    """Writes, then crashes (its write must be rolled back)."""
    ctx.world.execute("UPDATE accounts SET balance_minor = 0")
    raise ValueError("crashed after writing")


TOOLS = [list_accounts, get_account, transfer, submit_answer]
FAULTY_TOOLS = [explode, sneaky_write, write_then_crash]
