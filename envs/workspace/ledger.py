"""Writing to the workspace world: deterministic ids and the audit trail.

New ids continue each table's sequence (``fixtures.ids.IdSequences``), so the same calls on the same world
always create the same ids, and a task's setup plants rows with exactly the ids a tool would give them.
Every mutating tool ends by writing one audit row through :func:`audit`.
"""

from __future__ import annotations

import json
from typing import Any

from envs.workspace.rules import AGENT, now_iso
from fixtures.ids import IdSequences
from fixtures.world import World
from servers.tools import ToolContext

__all__ = ["audit", "next_id", "next_world_id"]

_IDS = IdSequences({
    "users": ("user_id", "USR", 4),
    "leaves": ("leave_id", "LV", 4),
    "channels": ("channel_id", "CH", 5),
    "messages": ("message_id", "MSG", 6),
    "security_reports": ("report_id", "SEC", 4),
    "issues": ("issue_id", "ISS", 5),
    "issue_relations": ("relation_id", "REL", 5),
    "issue_comments": ("comment_id", "CMT", 6),
    "pages": ("page_id", "PG", 5),
    "events": ("event_id", "EVT", 5),
    "oncall_shifts": ("shift_id", "ONC", 4),
    "incidents": ("incident_id", "INC", 5),
    "pages_sent": ("page_id", "PGR", 4),
    "audit_log": ("audit_id", "AUD", 6),
})


def next_world_id(world: World, table: str) -> str:
    """The next id of ``table``'s sequence in ``world`` (tools and task setups both mint ids here)."""
    return _IDS.next(world, table)


def next_id(ctx: ToolContext, table: str) -> str:
    """The next id of ``table``'s sequence in the tool's world."""
    return next_world_id(ctx.world, table)


def audit(ctx: ToolContext, action: str, entity_type: str, entity_id: str, **details: Any) -> str:
    """Record an action by the assistant in the audit log (one row per mutating call)."""
    audit_id = next_id(ctx, "audit_log")
    ctx.world.execute(
        "INSERT INTO audit_log (audit_id, at, actor, action, entity_type, entity_id, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (audit_id, now_iso(ctx), AGENT, action, entity_type, entity_id, json.dumps(details, sort_keys=True, ensure_ascii=False)),
    )
    return audit_id
