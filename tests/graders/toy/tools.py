"""The toy help desk's six tools (descriptions are written for the agent)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from fixtures.money import Amount, format_minor, parse_amount
from servers.tools import DomainError, ToolContext, tool

__all__ = ["TOOLS", "Account", "Customer", "TransferRow"]

AccountId = Annotated[int, Field(ge=1, description="An account id, e.g. 7.")]


class AccountSummary(BaseModel):
    """An account as listed under its customer."""

    id: int
    kind: str


class Customer(BaseModel):
    """A customer and the ids of their accounts."""

    id: int
    name: str
    email: str
    accounts: list[AccountSummary]


class TransferRow(BaseModel):
    """One transfer."""

    id: str
    from_account: int
    to_account: int
    amount: str
    memo: str
    created_at: str


class Account(BaseModel):
    """An account with its balance and its latest outgoing transfers."""

    id: int
    customer_id: int
    kind: str
    currency: str
    balance: str
    """Decimal string in the account's currency."""
    status: str
    recent_transfers: list[TransferRow]


class Receipt(BaseModel):
    """What a write returns."""

    ok: bool
    detail: str


def _account_row(ctx: ToolContext, account_id: int) -> dict[str, object]:
    rows = ctx.world.query("SELECT * FROM accounts WHERE id = ?", (account_id,))
    if not rows:
        raise DomainError("account_not_found", f"no account {account_id}")
    return rows[0]


@tool(title="Find customer")
async def find_customer(ctx: ToolContext, email: Annotated[str, Field(min_length=3, max_length=200)]) -> Customer:
    """Find a customer by email address; returns their id, name and account ids."""
    rows = ctx.world.query("SELECT id, name, email FROM customers WHERE email = ?", (email.strip().lower(),))
    if not rows:
        raise DomainError("customer_not_found", f"no customer with email {email!r}")
    accounts = ctx.world.query("SELECT id, kind FROM accounts WHERE customer_id = ? ORDER BY id", (rows[0]["id"],))
    return Customer(**rows[0], accounts=[AccountSummary(**a) for a in accounts])


@tool(title="Get account")
async def get_account(ctx: ToolContext, account_id: AccountId) -> Account:
    """Show one account: balance (decimal string), status and its 5 latest outgoing transfers."""
    row = _account_row(ctx, account_id)
    transfers = ctx.world.query(
        "SELECT * FROM transfers WHERE from_account = ? ORDER BY created_at DESC, id DESC LIMIT 5", (account_id,)
    )
    currency = str(row["currency"])
    return Account(
        id=int(row["id"]),  # type: ignore[call-overload]
        customer_id=int(row["customer_id"]),  # type: ignore[call-overload]
        kind=str(row["kind"]),
        currency=currency,
        balance=format_minor(int(row["balance_minor"]), currency),  # type: ignore[call-overload]
        status=str(row["status"]),
        recent_transfers=[
            TransferRow(**{**t, "amount": format_minor(t["amount_minor"], currency)}) for t in transfers
        ],
    )


@tool(title="Verify identity")
async def verify_identity(
    ctx: ToolContext,
    customer_id: Annotated[int, Field(ge=1)],
    passcode: Annotated[str, Field(pattern=r"^[0-9]{4}$", description="The customer's 4-digit passcode.")],
) -> Receipt:
    """Check a customer's passcode. Required before moving money for them."""
    rows = ctx.world.query("SELECT passcode FROM customers WHERE id = ?", (customer_id,))
    if not rows or rows[0]["passcode"] != passcode:
        raise DomainError("identity_mismatch", "the passcode does not match this customer")
    return Receipt(ok=True, detail=f"customer {customer_id} verified")


@tool(mutates=True, destructive=True, title="Transfer")
async def transfer(
    ctx: ToolContext,
    from_account: AccountId,
    to_account: AccountId,
    amount: Amount,
    memo: Annotated[str, Field(max_length=140)] = "",
) -> TransferRow:
    """Move money between two active accounts of the same currency. Irreversible."""
    src, dst = _account_row(ctx, from_account), _account_row(ctx, to_account)
    if from_account == to_account:
        raise DomainError("same_account", "from_account and to_account must differ")
    if src["status"] != "active" or dst["status"] != "active":
        raise DomainError("account_frozen", "both accounts must be active")
    minor = parse_amount(amount, str(src["currency"]))
    if minor <= 0:
        raise DomainError("invalid_amount", "the amount must be positive")
    if int(src["balance_minor"]) < minor:  # type: ignore[call-overload]
        raise DomainError("insufficient_funds", f"account {from_account} has {format_minor(int(src['balance_minor']), 'USD')}")  # type: ignore[call-overload]
    # the id is generated from the call's position: realistic, and different whenever the agent's path differs
    ident = f"tr-e{ctx.call_seq:04d}"
    created = ctx.clock.now.isoformat()
    ctx.world.execute("UPDATE accounts SET balance_minor = balance_minor - ? WHERE id = ?", (minor, from_account))
    ctx.world.execute("UPDATE accounts SET balance_minor = balance_minor + ? WHERE id = ?", (minor, to_account))
    ctx.world.execute(
        "INSERT INTO transfers (id, from_account, to_account, amount_minor, memo, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (ident, from_account, to_account, minor, memo, created),
    )
    return TransferRow(id=ident, from_account=from_account, to_account=to_account, amount=amount, memo=memo, created_at=created)


@tool(mutates=True, title="Freeze account")
async def freeze_account(ctx: ToolContext, account_id: AccountId, reason: Annotated[str, Field(min_length=1, max_length=200)]) -> Receipt:
    """Freeze an account so no money can move in or out of it."""
    row = _account_row(ctx, account_id)
    if row["status"] == "frozen":
        raise DomainError("already_frozen", f"account {account_id} is already frozen")
    ctx.world.execute("UPDATE accounts SET status = 'frozen' WHERE id = ?", (account_id,))
    return Receipt(ok=True, detail=f"account {account_id} frozen: {reason}")


@tool(answer=True, title="Submit answer")
async def submit_answer(
    ctx: ToolContext,
    answer: Annotated[str, Field(min_length=1, max_length=4000, description="Your answer to the customer.")],
    amount: Annotated[str | None, Field(description='An amount the answer is about, as a decimal string, e.g. "125.50".')] = None,
) -> Receipt:
    """Give your final answer to the customer (call it once, at the end)."""
    return Receipt(ok=True, detail="answer recorded")


TOOLS = [find_customer, get_account, verify_identity, transfer, freeze_account, submit_answer]
