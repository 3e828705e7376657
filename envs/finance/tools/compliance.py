"""Compliance tools: the alert queue, escalation to the Financial Crimes Unit, closing alerts."""

from __future__ import annotations

from typing import Any, Literal

from envs.finance import models as m
from envs.finance import rules
from envs.finance.ledger import audit
from envs.finance.types import AlertId, CustomerId, Limit, Offset, Reason
from envs.finance.views import alert_view
from servers.tools import DomainError, ToolContext, tool

__all__ = ["list_alerts", "escalate_alert", "close_alert"]

_Kind = Literal["large_foreign_charge", "charge_after_freeze", "possible_duplicate", "structuring", "kyc_expired_activity", "velocity"]


@tool(title="List alerts")
async def list_alerts(
    ctx: ToolContext,
    status: Literal["open", "escalated", "closed"] | None = None,
    severity: Literal["low", "medium", "high"] | None = None,
    kind: _Kind | None = None,
    customer_id: CustomerId | None = None,
    limit: Limit = 25,
    offset: Offset = 0,
) -> m.AlertPage:
    """Compliance alerts raised by transaction monitoring, newest first, optionally filtered."""
    where, params = [], []
    for column, value in (("status", status), ("severity", severity), ("kind", kind), ("customer_id", customer_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    total = ctx.world.query(f"SELECT count(*) AS n FROM compliance_alerts {clause}", tuple(params))[0]["n"]
    rows = ctx.world.query(f"SELECT * FROM compliance_alerts {clause} ORDER BY created_at DESC, alert_id DESC LIMIT ? OFFSET ?",
                           (*params, limit, offset))
    following = offset + len(rows)
    return m.AlertPage(alerts=[alert_view(r) for r in rows], total=total, next_offset=following if following < total else None)


def _alert(ctx: ToolContext, alert_id: str) -> dict[str, Any]:
    rows = ctx.world.query("SELECT * FROM compliance_alerts WHERE alert_id = ?", (alert_id,))
    if not rows:
        raise DomainError("not_found", f"no alert {alert_id}; list_alerts shows the queue")
    alert = rows[0]
    if alert["status"] == "closed":
        raise DomainError("alert_closed", f"alert {alert_id} was closed on {alert['resolved_at']}: {alert['resolution']}")
    if alert["status"] == "escalated":
        raise DomainError("already_escalated", f"alert {alert_id} is with the {alert['escalated_to']}; only they can act on it now")
    return alert


@tool(mutates=True, escalation=True, title="Escalate alert")
async def escalate_alert(ctx: ToolContext, alert_id: AlertId, reason: Reason) -> m.Alert:
    """Escalate an open alert to the Financial Crimes Unit, saying why (required for every high-severity
    alert and for anything suggesting fraud, structuring or money laundering)."""
    _alert(ctx, alert_id)
    ctx.world.execute("UPDATE compliance_alerts SET status = 'escalated', escalated_to = ?, escalation_reason = ? WHERE alert_id = ?",
                      (rules.ESCALATION_TEAM, reason, alert_id))
    audit(ctx, "escalate_alert", "alert", alert_id, reason=reason, escalated_to=rules.ESCALATION_TEAM)
    return alert_view(ctx.world.query("SELECT * FROM compliance_alerts WHERE alert_id = ?", (alert_id,))[0])


@tool(mutates=True, title="Close alert")
async def close_alert(ctx: ToolContext, alert_id: AlertId, resolution: Reason) -> m.Alert:
    """Close an open low- or medium-severity alert as resolved (e.g. the customer confirmed the charge).
    High-severity alerts cannot be closed by an analyst: escalate them."""
    alert = _alert(ctx, alert_id)
    if alert["severity"] == "high":
        raise DomainError("escalation_required", f"alert {alert_id} is high severity; escalate it instead of closing it")
    ctx.world.execute("UPDATE compliance_alerts SET status = 'closed', resolved_at = ?, resolution = ? WHERE alert_id = ?",
                      (rules.now_iso(ctx), resolution, alert_id))
    audit(ctx, "close_alert", "alert", alert_id, resolution=resolution)
    return alert_view(ctx.world.query("SELECT * FROM compliance_alerts WHERE alert_id = ?", (alert_id,))[0])
