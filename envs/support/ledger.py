"""Writing to the support world: deterministic ids, refunds, store credit and the audit trail.

New ids continue each table's sequence (max existing number + 1), so the same calls on the same world
always create the same ids — never uuids or the machine's time. Every mutating tool ends by writing one
audit row through :func:`audit`.
"""

from __future__ import annotations

import json
from typing import Any

from envs.support.rules import AGENT, now_iso
from fixtures.ids import IdSequences
from fixtures.world import World
from servers.tools import ToolContext

__all__ = ["next_world_id", "next_id", "audit", "write_refund", "credit"]

_IDS = IdSequences({
    "orders": ("order_id", "ORD", 6),
    "order_lines": ("line_id", "LIN", 7),
    "payments": ("payment_id", "PAY", 6),
    "shipments": ("shipment_id", "SHP", 6),
    "tracking_events": ("event_id", "TRK", 7),
    "attachments": ("attachment_id", "ATT", 5),
    "returns": ("rma_id", "RMA", 5),
    "inspections": ("inspection_id", "INS", 5),
    "refunds": ("refund_id", "RFD", 6),
    "credit_ledger": ("entry_id", "SCL", 6),
    "invoices": ("invoice_id", "INV", 6),
    "tickets": ("ticket_id", "TCK", 5),
    "ticket_messages": ("message_id", "MSG", 6),
    "escalations": ("escalation_id", "ESC", 5),
    "fraud_signals": ("signal_id", "FRS", 5),
    "verifications": ("verification_id", "VER", 6),
    "reviews": ("review_id", "REV", 5),
    "audit_log": ("audit_id", "AUD", 7),
})


def next_world_id(world: World, table: str) -> str:
    """The next id of ``table``'s sequence in ``world`` (tools and task setups both mint ids here)."""
    return _IDS.next(world, table)


def next_id(ctx: ToolContext, table: str) -> str:
    """The next id of ``table``'s sequence in the tool's world."""
    return next_world_id(ctx.world, table)


def audit(ctx: ToolContext, action: str, entity_type: str, entity_id: str, **details: Any) -> str:
    """Record an action by the agent's staff id in the audit log (one row per mutating call)."""
    audit_id = next_id(ctx, "audit_log")
    ctx.world.execute(
        "INSERT INTO audit_log (audit_id, at, actor, action, entity_type, entity_id, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (audit_id, now_iso(ctx), AGENT, action, entity_type, entity_id, json.dumps(details, sort_keys=True, ensure_ascii=False)),
    )
    return audit_id


def credit(ctx: ToolContext, customer_id: str, amount: int, kind: str, reference: str | None) -> str:
    """One store-credit ledger entry (positive adds credit) by the agent, now."""
    entry_id = next_id(ctx, "credit_ledger")
    ctx.world.execute(
        "INSERT INTO credit_ledger (entry_id, customer_id, amount_minor, kind, reference, created_at, created_by) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (entry_id, customer_id, amount, kind, reference, now_iso(ctx), AGENT),
    )
    return entry_id


def write_refund(ctx: ToolContext, *, customer_id: str, amount: int, method: str, reason: str, order_id: str | None = None,
                 invoice_id: str | None = None, rma_id: str | None = None) -> str:
    """A refund row (and, to store credit, its ledger entry)."""
    refund_id = next_id(ctx, "refunds")
    ctx.world.execute(
        "INSERT INTO refunds (refund_id, order_id, invoice_id, rma_id, method, amount_minor, reason, issued_at, issued_by) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (refund_id, order_id, invoice_id, rma_id, method, amount, reason, now_iso(ctx), AGENT),
    )
    if method == "store_credit":
        credit(ctx, customer_id, amount, "refund", refund_id)
    return refund_id
