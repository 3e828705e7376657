"""Writing to the finance world: deterministic ids, ledger postings and the audit trail.

New ids continue each table's sequence (max existing number + 1), so the same calls on the same world
always create the same ids — never uuids or the machine's time. Every mutating tool ends by writing one
audit row through :func:`audit`.
"""

from __future__ import annotations

import json
from typing import Any

from envs.finance.rules import AGENT, now_iso
from fixtures.ids import IdSequences
from fixtures.world import World
from servers.tools import ToolContext

__all__ = ["next_id", "next_world_id", "post", "audit", "set_balance_delta"]

_IDS = IdSequences({
    "transactions": ("txn_id", "TXN", 7),
    "transfers": ("transfer_id", "TRF", 6),
    "approvals": ("approval_id", "APR", 6),
    "payees": ("payee_id", "PAY", 5),
    "disputes": ("dispute_id", "DSP", 5),
    "orders": ("order_id", "ORD", 6),
    "notes": ("note_id", "NTE", 6),
    "holds": ("hold_id", "HLD", 5),
    "verifications": ("verification_id", "VER", 6),
    "audit_log": ("audit_id", "AUD", 7),
    "compliance_alerts": ("alert_id", "ALR", 5),
})


def next_world_id(world: World, table: str) -> str:
    """The next id of ``table``'s sequence in ``world``, e.g. ``TXN-0034124`` after ``TXN-0034123``.

    Tools and task setups both mint ids here, so a planted row gets exactly the id a tool would give it.
    """
    return _IDS.next(world, table)


def next_id(ctx: ToolContext, table: str) -> str:
    """The next id of ``table``'s sequence in the tool's world (see :func:`next_world_id`)."""
    return next_world_id(ctx.world, table)


def set_balance_delta(ctx: ToolContext, account_id: str, delta: int) -> None:
    """Move the account's ledger balance by ``delta`` minor units (a posting's other half)."""
    ctx.world.execute("UPDATE accounts SET balance_minor = balance_minor + ? WHERE account_id = ?", (delta, account_id))


def post(
    ctx: ToolContext,
    account: dict[str, Any],
    amount: int,
    kind: str,
    category: str,
    *,
    reference: str,
    memo: str | None = None,
    merchant: str | None = None,
    transfer_id: str | None = None,
    pending: bool = False,
) -> str:
    """Write one ledger row dated today; a posted row also moves the account's balance.

    Why: ``balance_minor == sum(posted amount_minor)`` holds for every account of the fixture, and every
    tool that moves money keeps it true by posting through here.
    """
    txn_id = next_id(ctx, "transactions")
    today = ctx.clock.today.isoformat()
    ctx.world.execute(
        "INSERT INTO transactions (txn_id, account_id, txn_date, posted_on, amount_minor, currency, status, kind, merchant, "
        "merchant_country, category, memo, reference, card_id, transfer_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, NULL, ?)",
        (txn_id, account["account_id"], today, None if pending else today, amount, account["currency"],
         "pending" if pending else "posted", kind, merchant, category, memo, reference, transfer_id),
    )
    if not pending:
        set_balance_delta(ctx, account["account_id"], amount)
    return txn_id


def audit(ctx: ToolContext, action: str, entity_type: str, entity_id: str, **details: Any) -> str:
    """Record a staff action by the agent's analyst in the audit log (one row per mutating call)."""
    audit_id = next_id(ctx, "audit_log")
    ctx.world.execute(
        "INSERT INTO audit_log (audit_id, at, actor, action, entity_type, entity_id, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (audit_id, now_iso(ctx), AGENT, action, entity_type, entity_id, json.dumps(details, sort_keys=True, ensure_ascii=False)),
    )
    return audit_id
