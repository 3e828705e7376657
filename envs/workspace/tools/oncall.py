"""On-call and incident tools: who is on call, shifts, handing a shift over, services, incidents, opening one and
paging the on-call engineer.

Escalation (policy section 5): an outage of a tier-1 service is sev1, tier 2 sev2, tier 3 sev3; sev1 and sev2
open an incident and page the on-call engineer of the owning team's rotation; sev3 and sev4 are filed as issues.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from envs.workspace import models as m
from envs.workspace import rules
from envs.workspace.catalog import TEAMS
from envs.workspace.ledger import audit, next_id
from envs.workspace.types import IncidentId, Limit, Offset, Rotation, ServiceId, Severity, ShiftId, Title, UserId
from envs.workspace.views import incident_view, page, shift_view
from fixtures.world import World
from servers.tools import DomainError, ToolContext, tool

__all__ = [
    "current_shift",
    "get_incident",
    "get_oncall",
    "get_service",
    "hand_over_shift",
    "list_incidents",
    "list_services",
    "open_incident",
    "page_oncall",
    "rotation_of",
]

_ROTATION_TEAM = {t.rotation: t.team_id for t in TEAMS if t.rotation}


def rotation_of(team_id: str) -> str | None:
    """The on-call rotation a team runs, if any."""
    return next((r for r, t in _ROTATION_TEAM.items() if t == team_id), None)


def current_shift(world: World, rotation: str, now: str) -> dict[str, Any] | None:
    """The shift of ``rotation`` covering ``now``."""
    rows = world.query("SELECT * FROM oncall_shifts WHERE rotation = ? AND starts_at <= ? AND ends_at > ? ORDER BY shift_id",
                       (rotation, now, now))
    return rows[0] if rows else None


def _service_view(world: World, s: dict[str, Any]) -> m.Service:
    team = world.query("SELECT name FROM teams WHERE team_id = ?", (s["team_id"],))[0]["name"]
    open_ = world.query("SELECT incident_id FROM incidents WHERE service_id = ? AND status = 'open' ORDER BY incident_id", (s["service_id"],))
    return m.Service(service_id=s["service_id"], name=s["name"], tier=s["tier"], team=team, rotation=rotation_of(s["team_id"]),
                     runbook_page_id=s["runbook_page_id"], open_incident_id=open_[0]["incident_id"] if open_ else None)


@tool(title="Get on-call")
async def get_oncall(ctx: ToolContext, rotation: Rotation) -> m.OnCall:
    """Who is on call now for a rotation, and the next four shifts (weekly, Monday 09:00 UTC)."""
    now = rules.now_iso(ctx)
    cur = current_shift(ctx.world, rotation, now)
    upcoming = ctx.world.query("SELECT * FROM oncall_shifts WHERE rotation = ? AND starts_at > ? ORDER BY starts_at LIMIT 4", (rotation, now))
    return m.OnCall(rotation=rotation, now=shift_view(ctx.world, cur) if cur else None, upcoming=[shift_view(ctx.world, s) for s in upcoming])


@tool(mutates=True, title="Hand over shift")
async def hand_over_shift(ctx: ToolContext, shift_id: ShiftId, to_user_id: UserId) -> m.Shift:
    """Give an on-call shift (current or upcoming) to another member of the rotation's team who is not on leave during it."""
    shift = rules.one(ctx.world, "SELECT * FROM oncall_shifts WHERE shift_id = ?", (shift_id,), f"shift {shift_id}", "get_oncall shows shifts")
    if shift["ends_at"] <= rules.now_iso(ctx):
        raise DomainError("shift_over", f"shift {shift_id} is over")
    person = rules.user_row(ctx.world, to_user_id)
    if shift["user_id"] == to_user_id:
        raise DomainError("no_change", f"{person['name']} already has shift {shift_id}")
    if person["team_id"] != _ROTATION_TEAM[shift["rotation"]] or to_user_id == rules.AGENT:
        raise DomainError("not_in_rotation", f"{person['name']} is not on the {shift['rotation']} rotation's team")
    start, end = rules.parse_instant(shift["starts_at"]), rules.parse_instant(shift["ends_at"])
    day = max(start, ctx.clock.now).date()
    while day < end.date():
        if rules.on_leave(ctx.world, to_user_id, day):
            raise DomainError("assignee_on_leave", f"{person['name']} is on leave on {day.isoformat()}, during the shift")
        day += timedelta(days=1)
    ctx.world.execute("UPDATE oncall_shifts SET user_id = ? WHERE shift_id = ?", (to_user_id, shift_id))
    audit(ctx, "hand_over_shift", "shift", shift_id, to=to_user_id)
    return shift_view(ctx.world, ctx.world.query("SELECT * FROM oncall_shifts WHERE shift_id = ?", (shift_id,))[0])


@tool(title="List services")
async def list_services(ctx: ToolContext) -> m.ServiceList:
    """Every service with its tier (1 = customer-facing critical), owning team, rotation, runbook page and open incident."""
    return m.ServiceList(services=[_service_view(ctx.world, s) for s in ctx.world.query("SELECT * FROM services ORDER BY service_id")])


@tool(title="Get service")
async def get_service(ctx: ToolContext, service_id: ServiceId) -> m.Service:
    """One service: tier, owning team, on-call rotation, runbook page and open incident (if any)."""
    return _service_view(ctx.world, rules.one(ctx.world, "SELECT * FROM services WHERE service_id = ?", (service_id,), f"service {service_id}",
                                              "list_services shows them"))


@tool(title="List incidents")
async def list_incidents(ctx: ToolContext, status: Literal["open", "mitigated", "resolved"] | None = None,
                         service_id: ServiceId | None = None, limit: Limit = 20, offset: Offset = 0) -> m.IncidentPage:
    """Incidents, newest first, optionally only open / mitigated / resolved ones or one service's."""
    where, params = ["1 = 1"], []
    for column, value in (("status", status), ("service_id", service_id)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    clause = " AND ".join(where)
    total = ctx.world.query(f"SELECT count(*) AS n FROM incidents WHERE {clause}", tuple(params))[0]["n"]
    rows = ctx.world.query(f"SELECT * FROM incidents WHERE {clause} ORDER BY opened_at DESC, incident_id DESC LIMIT ? OFFSET ?", (*params, limit, offset))
    incidents = [incident_view(ctx.world, r) for r in rows]
    return m.IncidentPage(incidents=incidents, total=total, next_offset=page(offset, len(incidents), total))


@tool(title="Get incident")
async def get_incident(ctx: ToolContext, incident_id: IncidentId) -> m.Incident:
    """One incident with its severity, status, commander and who was paged."""
    return incident_view(ctx.world, rules.one(ctx.world, "SELECT * FROM incidents WHERE incident_id = ?", (incident_id,),
                                              f"incident {incident_id}", "list_incidents shows them"))


@tool(mutates=True, title="Open incident")
async def open_incident(ctx: ToolContext, service_id: ServiceId, severity: Severity, title: Title) -> m.Incident:
    """Open an incident on a service (one open incident per service). Severity follows the policy: an outage of a tier-1
    service is sev1, tier 2 sev2, tier 3 sev3."""
    rules.one(ctx.world, "SELECT * FROM services WHERE service_id = ?", (service_id,), f"service {service_id}", "list_services shows them")
    rules.require_no_secret(title)
    existing = ctx.world.query("SELECT incident_id FROM incidents WHERE service_id = ? AND status = 'open'", (service_id,))
    if existing:
        raise DomainError("incident_already_open", f"{existing[0]['incident_id']} is already open for this service: work on it")
    incident_id = next_id(ctx, "incidents")
    ctx.world.execute("INSERT INTO incidents (incident_id, service_id, title, severity, status, commander_id, opened_at, resolved_at) "
                      "VALUES (?, ?, ?, ?, 'open', NULL, ?, NULL)", (incident_id, service_id, title, severity, rules.now_iso(ctx)))
    audit(ctx, "open_incident", "incident", incident_id, service=service_id, severity=severity)
    return incident_view(ctx.world, ctx.world.query("SELECT * FROM incidents WHERE incident_id = ?", (incident_id,))[0])


@tool(mutates=True, escalation=True, title="Page on-call")
async def page_oncall(ctx: ToolContext, incident_id: IncidentId) -> m.Paged:
    """Page the engineer on call for the incident's service (its team's rotation). Only sev1 and sev2 incidents page."""
    inc = rules.one(ctx.world, "SELECT * FROM incidents WHERE incident_id = ?", (incident_id,), f"incident {incident_id}", "list_incidents shows them")
    if inc["severity"] not in rules.PAGE_SEVERITIES:
        raise DomainError("severity_too_low", f"{incident_id} is {inc['severity']}: only sev1 and sev2 page on-call")
    team = ctx.world.query("SELECT team_id FROM services WHERE service_id = ?", (inc["service_id"],))[0]["team_id"]
    rotation = rotation_of(team)
    shift = current_shift(ctx.world, rotation, rules.now_iso(ctx)) if rotation else None
    if shift is None:
        raise DomainError("not_in_rotation", "the service's team runs no on-call rotation covering now")
    if ctx.world.query("SELECT 1 FROM pages_sent WHERE incident_id = ? AND user_id = ?", (incident_id, shift["user_id"])):
        raise DomainError("no_change", f"the on-call engineer was already paged for {incident_id}")
    page_id, now = next_id(ctx, "pages_sent"), rules.now_iso(ctx)
    ctx.world.execute("INSERT INTO pages_sent (page_id, incident_id, user_id, sent_at) VALUES (?, ?, ?, ?)", (page_id, incident_id, shift["user_id"], now))
    audit(ctx, "page_oncall", "incident", incident_id, user=shift["user_id"])
    name = ctx.world.query("SELECT name FROM users WHERE user_id = ?", (shift["user_id"],))[0]["name"]
    return m.Paged(incident_id=incident_id, user_id=shift["user_id"], name=name, sent_at=now)
