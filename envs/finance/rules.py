"""The bank's rules, as numbers and as checks the tools share.

Each check raises :class:`servers.DomainError` with a stable code *before* the tool writes anything (the
dispatcher's savepoint would roll a partial write back anyway, but a refusal should never depend on it).
The numbers here are the ones ``policy.md`` states; a test keeps the two in agreement.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from envs.finance.catalog import AGENT_STAFF_ID
from fixtures.money import format_minor, parse_amount
from fixtures.world import World
from servers.tools import DomainError, ToolContext

__all__ = [
    "AGENT",
    "WIRE_FEE_MINOR",
    "DUAL_APPROVAL_THRESHOLD_USD_MINOR",
    "DISPUTE_WINDOW_DAYS",
    "VERIFICATION_VALID_MINUTES",
    "MAX_FAILED_VERIFICATIONS",
    "SUITABILITY",
    "RELEASE_NEEDS_COMPLIANCE",
    "ESCALATION_TEAM",
    "OUTCOMES",
    "REASON_CODES",
    "now_iso",
    "money",
    "rate_text",
    "parse_money",
    "customer_row",
    "account_row",
    "staff_row",
    "require_usable",
    "identity_verified",
    "require_identity",
    "require_kyc",
    "holds_minor",
    "pending_debits_minor",
    "available_minor",
    "require_funds",
    "daily_limit_minor",
    "used_today_minor",
    "require_daily_limit",
    "usd_equivalent",
    "customer_rate_micros",
    "is_suitable",
    "iban_valid",
    "aba_valid",
    "bic_valid",
]

AGENT = AGENT_STAFF_ID
"""Staff id of the operations analyst the agent acts as."""
OUTCOMES = ("completed", "refused", "escalated")
"""What a final answer may declare: done as asked, declined under the policy, or handed to someone who can decide."""
REASON_CODES = (
    "account_closed", "account_frozen", "alert_closed", "already_disputed", "already_escalated", "already_frozen",
    "approval_limit_exceeded", "approval_required", "approver_not_authorized", "balance_not_zero", "card_cancelled",
    "currency_mismatch", "daily_limit_exceeded", "dispute_window_expired", "duplicate_payee", "escalation_required",
    "hold_not_active", "identity_not_verified", "insufficient_funds", "insufficient_position", "invalid_account_number",
    "invalid_amount", "invalid_date_range", "invalid_payee", "invalid_routing_code", "kyc_not_verified", "no_price",
    "not_card_charge", "not_found", "not_frozen", "not_pending", "not_posted", "not_same_customer", "payee_not_registered",
    "payee_not_verified", "payee_removed", "pending_items", "positions_open", "rate_unavailable", "same_account",
    "same_approver", "same_currency", "unsuitable_instrument", "verification_locked", "wrong_account_type",
)
"""The policy's reason codes: every code a tool refuses with (a test keeps this list equal to the tools'),
and the only reasons a refusal or an escalation may give."""
WIRE_FEE_MINOR = 2_500
"""Outgoing external wire fee: 25.00 in the account's currency."""
DUAL_APPROVAL_THRESHOLD_USD_MINOR = 1_000_000
"""Wires above USD 10,000.00 (equivalent at the mid rate) wait for a supervisor's approval."""
DISPUTE_WINDOW_DAYS = 60
"""A card charge can be disputed up to 60 days after it posted."""
VERIFICATION_VALID_MINUTES = 30
"""An identity verification covers sensitive actions for 30 minutes (the current session)."""
MAX_FAILED_VERIFICATIONS = 3
"""After 3 failed identity checks in a session, verification locks for that customer."""
SUITABILITY: dict[str, tuple[str, ...]] = {
    "conservative": ("low",),
    "balanced": ("low", "medium"),
    "aggressive": ("low", "medium", "high"),
}
"""Instrument risk levels each customer risk profile may buy."""
RELEASE_NEEDS_COMPLIANCE = ("compliance", "legal")
"""Hold kinds whose release needs a compliance officer's approval."""
ESCALATION_TEAM = "Financial Crimes Unit"


def now_iso(ctx: ToolContext) -> str:
    """The world's frozen "now" as stored in the tables (ISO 8601, UTC)."""
    return ctx.clock.now.isoformat()


def money(minor: int | None, currency: str) -> str:
    """Minor units → the decimal string tools return."""
    return format_minor(minor or 0, currency)


def rate_text(micros: int) -> str:
    """A rate in micro-units → decimal string with 6 decimals."""
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


def parse_money(amount: str, currency: str, what: str = "amount") -> int:
    """A validated ``Amount`` string → positive minor units of ``currency``.

    Raises:
        DomainError: ``invalid_amount`` when it is zero or has more decimals than the currency allows.
    """
    try:
        minor = parse_amount(amount, currency)
    except ValueError as exc:
        raise DomainError("invalid_amount", f"{what} {amount!r}: {exc}") from None
    if minor <= 0:
        raise DomainError("invalid_amount", f"{what} must be greater than zero, got {amount!r}")
    return minor


def _one(world: World, sql: str, params: tuple[Any, ...], code: str, message: str) -> dict[str, Any]:
    rows = world.query(sql, params)
    if not rows:
        raise DomainError(code, message)
    return rows[0]


def customer_row(world: World, customer_id: str) -> dict[str, Any]:
    """The customer's row, or ``not_found``."""
    return _one(world, "SELECT * FROM customers WHERE customer_id = ?", (customer_id,), "not_found",
                f"no customer {customer_id}; find customers with search_customers")


def account_row(world: World, account_id: str) -> dict[str, Any]:
    """The account's row, or ``not_found``."""
    return _one(world, "SELECT * FROM accounts WHERE account_id = ?", (account_id,), "not_found",
                f"no account {account_id}; list a customer's accounts with list_accounts")


def staff_row(world: World, staff_id: str) -> dict[str, Any]:
    """The staff member's row, or ``not_found``."""
    return _one(world, "SELECT * FROM staff WHERE staff_id = ?", (staff_id,), "not_found", f"no staff member {staff_id}")


def require_usable(account: dict[str, Any]) -> None:
    """Money may move in or out only of an open account (``account_frozen`` / ``account_closed``)."""
    if account["status"] == "frozen":
        raise DomainError("account_frozen", f"account {account['account_id']} is frozen ({account['status_reason']}); no money can move")
    if account["status"] == "closed":
        raise DomainError("account_closed", f"account {account['account_id']} was closed on {account['closed_on']}")


def identity_verified(ctx: ToolContext, customer_id: str) -> bool:
    """Whether the customer passed an identity check within the last 30 minutes of the world's clock."""
    since = (ctx.clock.now - timedelta(minutes=VERIFICATION_VALID_MINUTES)).isoformat()
    rows = ctx.world.query(
        "SELECT 1 FROM verifications WHERE customer_id = ? AND outcome = 'passed' AND verified_at >= ? LIMIT 1",
        (customer_id, since),
    )
    return bool(rows)


def require_identity(ctx: ToolContext, customer_id: str, action: str) -> None:
    """Sensitive actions need a fresh identity verification of the customer (``identity_not_verified``)."""
    if not identity_verified(ctx, customer_id):
        raise DomainError(
            "identity_not_verified",
            f"{action} needs the identity of customer {customer_id} verified in this session; use verify_identity first",
        )


def require_kyc(customer: dict[str, Any], action: str) -> None:
    """Wires, new payees and purchases need a current KYC review (``kyc_not_verified``)."""
    if customer["kyc_status"] != "verified":
        raise DomainError(
            "kyc_not_verified",
            f"{action} is not allowed: KYC of customer {customer['customer_id']} is {customer['kyc_status']}; "
            "the customer must complete a KYC review first",
        )


def holds_minor(world: World, account_id: str) -> int:
    """Sum of the account's active holds."""
    return int(world.query("SELECT coalesce(sum(amount_minor), 0) AS s FROM holds WHERE account_id = ? AND status = 'active'",
                           (account_id,))[0]["s"])


def pending_debits_minor(world: World, account_id: str) -> int:
    """Sum of the account's pending debits, as a positive number."""
    return -int(world.query(
        "SELECT coalesce(sum(amount_minor), 0) AS s FROM transactions WHERE account_id = ? AND status = 'pending' AND amount_minor < 0",
        (account_id,))[0]["s"])


def available_minor(world: World, account: dict[str, Any]) -> int:
    """balance + overdraft - active holds - pending debits."""
    key = account["account_id"]
    return account["balance_minor"] + account["overdraft_limit_minor"] - holds_minor(world, key) - pending_debits_minor(world, key)


def require_funds(world: World, account: dict[str, Any], needed: int) -> None:
    """``insufficient_funds`` when ``needed`` exceeds the available balance."""
    available = available_minor(world, account)
    if needed > available:
        currency = account["currency"]
        raise DomainError(
            "insufficient_funds",
            f"account {account['account_id']} has {money(available, currency)} {currency} available; "
            f"{money(needed, currency)} {currency} is needed",
        )


def daily_limit_minor(world: World, account_id: str, channel: str) -> int | None:
    """The account's daily limit for ``channel`` (None when it has none)."""
    rows = world.query("SELECT limit_minor FROM daily_limits WHERE account_id = ? AND channel = ?", (account_id, channel))
    return int(rows[0]["limit_minor"]) if rows else None


def used_today_minor(ctx: ToolContext, account_id: str, channel: str) -> int:
    """What the account already sent today on ``channel`` (wires awaiting approval count)."""
    kind = "external_wire" if channel == "external_wire" else "internal"
    rows = ctx.world.query(
        "SELECT coalesce(sum(amount_minor), 0) AS s FROM transfers WHERE from_account_id = ? AND kind = ? "
        "AND status IN ('pending_approval', 'completed') AND substr(requested_at, 1, 10) = ?",
        (account_id, kind, ctx.clock.today.isoformat()),
    )
    return int(rows[0]["s"])


def require_daily_limit(ctx: ToolContext, account: dict[str, Any], channel: str, amount: int) -> None:
    """``daily_limit_exceeded`` when today's total on ``channel`` would pass the account's limit."""
    limit = daily_limit_minor(ctx.world, account["account_id"], channel)
    if limit is None:
        return
    used = used_today_minor(ctx, account["account_id"], channel)
    if used + amount > limit:
        currency = account["currency"]
        raise DomainError(
            "daily_limit_exceeded",
            f"the {channel} daily limit of account {account['account_id']} is {money(limit, currency)} {currency}; "
            f"{money(used, currency)} already sent today, so at most {money(max(0, limit - used), currency)} more",
        )


def usd_equivalent(world: World, amount: int, currency: str) -> int:
    """``amount`` minor units of ``currency`` in US cents at the mid rate (rounded down)."""
    if currency == "USD":
        return amount
    rows = world.query("SELECT mid_rate_micros FROM fx_rates WHERE base = ? AND quote = 'USD'", (currency,))
    if not rows:
        raise DomainError("rate_unavailable", f"no {currency}/USD rate is published")
    return amount * int(rows[0]["mid_rate_micros"]) // 1_000_000


def customer_rate_micros(mid_micros: int, spread_bps: int) -> int:
    """The rate a customer gets: mid × (1 − spread), truncated to the micro-unit (the bank never rounds up)."""
    return mid_micros * (10_000 - spread_bps) // 10_000


def is_suitable(risk_profile: str, risk_level: str) -> bool:
    """Whether a customer of ``risk_profile`` may buy an instrument of ``risk_level``."""
    return risk_level in SUITABILITY.get(risk_profile, ())


def iban_valid(text: str) -> bool:
    """Whether ``text`` (upper-case, no spaces) has a correct IBAN mod-97 check."""
    if len(text) < 15 or not text[:2].isalpha() or not text[2:4].isdigit():
        return False
    digits = "".join(str(int(ch, 36)) for ch in text[4:] + text[:4])
    return int(digits) % 97 == 1


def aba_valid(text: str) -> bool:
    """Whether ``text`` is a 9-digit ABA routing number with a correct checksum."""
    if len(text) != 9 or not text.isdigit():
        return False
    d = [int(c) for c in text]
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])) % 10 == 0


def bic_valid(text: str) -> bool:
    """Whether ``text`` looks like a BIC/SWIFT code: 4 bank letters, 2 country letters, 2 (+3) alphanumerics."""
    return len(text) in (8, 11) and text[:6].isalpha() and text[6:].isalnum()
