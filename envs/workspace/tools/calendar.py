"""Calendar tools: people's events, rooms, free slots, scheduling, moving and cancelling meetings.

Meeting rules (policy section 4): every required attendee must be within their own working hours, not on leave
and free; the room must hold everyone and be free; meetings start at least an hour ahead and last at most two
hours; only the organizer (you, for meetings you scheduled) moves or cancels a meeting.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Annotated, Any

from pydantic import Field

from envs.workspace import models as m
from envs.workspace import rules
from envs.workspace.ledger import audit, next_id
from envs.workspace.types import DateText, EventId, Instant, Minutes, RoomId, Title, UserId
from envs.workspace.views import event_view
from fixtures.world import World
from servers.tools import DomainError, ToolContext, tool

__all__ = ["cancel_event", "find_free_slots", "free_starts", "get_event", "list_events", "list_rooms", "meeting_problem", "move_event", "schedule_event"]

People = Annotated[list[UserId], Field(min_length=1, max_length=20, description="User ids")]
Days = Annotated[int, Field(strict=True, ge=1, le=14, description="How many days from `from_date`")]


def meeting_problem(world: World, now: datetime, start: datetime, minutes: int, required: list[str], headcount: int,
                    room_id: str | None, ignore_event: str | None = None) -> DomainError | None:
    """The first meeting rule a meeting would break, as the refusal to raise, or None (shared by tools and tasks)."""
    end = start + timedelta(minutes=minutes)
    if minutes > rules.MAX_MEETING_MINUTES:
        return DomainError("meeting_too_long", f"meetings last at most {rules.MAX_MEETING_MINUTES} minutes")
    if start < now + timedelta(minutes=rules.MEETING_NOTICE_MINUTES):
        return DomainError("in_the_past", f"meetings start at least {rules.MEETING_NOTICE_MINUTES} minutes from now ({now.isoformat()})")
    for uid in required:
        user = rules.user_row(world, uid)
        day, first = rules.local_minutes(user, start)
        _, last = rules.local_minutes(user, end)
        if rules.on_leave(world, uid, day):
            return DomainError("attendee_on_leave", f"{user['name']} is on leave on {day.isoformat()} (their time)")
        if last == 0:
            last = 1440
        if not (user["work_start_minute"] <= first and last <= user["work_end_minute"] and first < last):
            return DomainError("outside_working_hours", f"that is outside {user['name']}'s working hours ({user['tz']})")
        clash = rules.busy(world, uid, start, end, ignore_event)
        if clash:
            return DomainError("attendee_busy", f"{user['name']} is busy then ({clash[0]['title']}, {clash[0]['event_id']})")
    if room_id is not None:
        room = rules.one(world, "SELECT * FROM rooms WHERE room_id = ?", (room_id,), f"room {room_id}", "list_rooms shows rooms")
        if room["capacity"] < headcount:
            return DomainError("room_too_small", f"{room['name']} holds {room['capacity']}, the meeting has {headcount} people")
        taken = world.query("SELECT event_id FROM events WHERE room_id = ? AND status = 'confirmed' AND starts_at < ? AND ends_at > ? "
                            "AND event_id IS NOT ?", (room_id, end.isoformat(), start.isoformat(), ignore_event))
        if taken:
            return DomainError("room_booked", f"{room['name']} is booked then ({taken[0]['event_id']})")
    return None


def free_starts(world: World, now: datetime, day: datetime, minutes: int, required: list[str], ignore_event: str | None = None) -> list[datetime]:
    """Half-hour starts on the UTC day beginning at ``day`` at which :func:`meeting_problem` finds nothing for ``required``
    (no room): the same answer, from one read of each person's leave and events instead of queries per slot."""
    if minutes > rules.MAX_MEETING_MINUTES:
        return []
    window_start, window_end = (day - timedelta(days=1)).isoformat(), (day + timedelta(days=2)).isoformat()
    people = []
    for uid in required:
        user = rules.user_row(world, uid)
        leaves = [(r["starts_on"], r["ends_on"]) for r in world.query("SELECT starts_on, ends_on FROM leaves WHERE user_id = ?", (uid,))]
        events = [(r["starts_at"], r["ends_at"]) for r in world.query(
            "SELECT e.starts_at, e.ends_at FROM events e JOIN attendees a USING (event_id) WHERE a.user_id = ? AND e.status = 'confirmed' "
            "AND e.starts_at < ? AND e.ends_at > ? AND e.event_id IS NOT ?", (uid, window_end, window_start, ignore_event))]
        people.append((user, leaves, events))
    earliest = now + timedelta(minutes=rules.MEETING_NOTICE_MINUTES)
    found = []
    for k in range(0, 1440, rules.SLOT_MINUTES):
        start = day + timedelta(minutes=k)
        end = start + timedelta(minutes=minutes)
        if start < earliest:
            continue
        start_text, end_text = start.isoformat(), end.isoformat()
        for user, leaves, events in people:
            local_day, first = rules.local_minutes(user, start)
            _, last = rules.local_minutes(user, end)
            local = local_day.isoformat()
            if any(a <= local <= b for a, b in leaves):
                break
            last = 1440 if last == 0 else last
            if not (user["work_start_minute"] <= first and last <= user["work_end_minute"] and first < last):
                break
            if any(a < end_text and b > start_text for a, b in events):
                break
        else:
            found.append(start)
    return found


def _event(ctx: ToolContext, event_id: str) -> dict[str, Any]:
    return rules.one(ctx.world, "SELECT * FROM events WHERE event_id = ?", (event_id,), f"event {event_id}", "list_events shows a person's events")


def _iso(moment: datetime) -> str:
    return moment.replace(microsecond=0).isoformat()


@tool(title="List events")
async def list_events(ctx: ToolContext, user_id: UserId, from_date: DateText, days: Days = 1) -> m.EventPage:
    """A person's meetings (confirmed and cancelled) from `from_date` (UTC) for `days` days, in start order."""
    rules.user_row(ctx.world, user_id)
    start = datetime.fromisoformat(from_date).replace(tzinfo=UTC)
    rows = ctx.world.query("SELECT e.* FROM events e JOIN attendees a USING (event_id) WHERE a.user_id = ? AND e.starts_at >= ? "
                           "AND e.starts_at < ? ORDER BY e.starts_at, e.event_id", (user_id, _iso(start), _iso(start + timedelta(days=days))))
    events = [event_view(ctx.world, r) for r in rows]
    return m.EventPage(events=events, total=len(events), next_offset=None)


@tool(title="Get event")
async def get_event(ctx: ToolContext, event_id: EventId) -> m.Event:
    """A meeting with its organizer, room and attendees (required or optional)."""
    return event_view(ctx.world, _event(ctx, event_id))


@tool(title="List rooms")
async def list_rooms(ctx: ToolContext) -> m.RoomList:
    """Meeting rooms with their capacity and site."""
    return m.RoomList(rooms=[m.Room(**r) for r in ctx.world.query("SELECT room_id, name, capacity, site FROM rooms ORDER BY room_id")])


@tool(title="Find free slots")
async def find_free_slots(ctx: ToolContext, user_ids: People, date: DateText, minutes: Minutes) -> m.FreeSlots:
    """Half-hour-aligned slots on `date` (a UTC day) in which every listed person is within working hours, not on
    leave and free, at least an hour from now. Earliest first."""
    for uid in user_ids:
        rules.user_row(ctx.world, uid)
    day = datetime.combine(datetime.fromisoformat(date).date(), time(0), tzinfo=UTC)
    slots = [m.Slot(starts_at=_iso(start), ends_at=_iso(start + timedelta(minutes=minutes)))
             for start in free_starts(ctx.world, ctx.clock.now, day, minutes, list(user_ids))]
    return m.FreeSlots(date=date, minutes=minutes, slots=slots)


@tool(mutates=True, title="Schedule event")
async def schedule_event(
    ctx: ToolContext, title: Title, starts_at: Instant, minutes: Minutes, required_user_ids: People,
    optional_user_ids: Annotated[list[UserId], Field(max_length=20, description="Optional attendees")] | None = None,
    room_id: RoomId | None = None,
) -> m.Event:
    """Schedule a meeting you organize. Refused when a required attendee is outside working hours, on leave or busy,
    when the room is too small or taken, when it starts within the hour or lasts over two hours."""
    start = rules.parse_instant(starts_at)
    required = sorted(set(required_user_ids))
    optional = sorted(set(optional_user_ids or []) - set(required))
    problem = meeting_problem(ctx.world, ctx.clock.now, start, minutes, required, len(required) + len(optional), room_id)
    for uid in optional:
        rules.user_row(ctx.world, uid)
    if problem is not None:
        raise problem
    event_id = next_id(ctx, "events")
    ctx.world.execute("INSERT INTO events (event_id, title, organizer_id, starts_at, ends_at, room_id, status) VALUES (?, ?, ?, ?, ?, ?, 'confirmed')",
                      (event_id, title, rules.AGENT, _iso(start), _iso(start + timedelta(minutes=minutes)), room_id))
    for uid in required:
        ctx.world.execute("INSERT INTO attendees (event_id, user_id, required) VALUES (?, ?, 1)", (event_id, uid))
    for uid in optional:
        ctx.world.execute("INSERT INTO attendees (event_id, user_id, required) VALUES (?, ?, 0)", (event_id, uid))
    audit(ctx, "schedule_event", "event", event_id, starts_at=_iso(start), minutes=minutes)
    return event_view(ctx.world, _event(ctx, event_id))


@tool(mutates=True, title="Move event")
async def move_event(ctx: ToolContext, event_id: EventId, starts_at: Instant) -> m.Event:
    """Move a meeting you organize to a new start (same length, same room); the meeting rules apply at the new time."""
    row = _event(ctx, event_id)
    if row["organizer_id"] != rules.AGENT:
        raise DomainError("not_organizer", f"you do not organize {event_id}: ask its organizer to move it")
    old = rules.parse_instant(row["starts_at"])
    minutes = int((rules.parse_instant(row["ends_at"]) - old).total_seconds() // 60)
    start = rules.parse_instant(starts_at)
    if start == old:
        raise DomainError("no_change", f"{event_id} already starts then")
    people = ctx.world.query("SELECT user_id, required FROM attendees WHERE event_id = ? ORDER BY user_id", (event_id,))
    problem = meeting_problem(ctx.world, ctx.clock.now, start, minutes, [p["user_id"] for p in people if p["required"]], len(people),
                              row["room_id"], ignore_event=event_id)
    if problem is not None:
        raise problem
    ctx.world.execute("UPDATE events SET starts_at = ?, ends_at = ? WHERE event_id = ?",
                      (_iso(start), _iso(start + timedelta(minutes=minutes)), event_id))
    audit(ctx, "move_event", "event", event_id, starts_at=_iso(start))
    return event_view(ctx.world, _event(ctx, event_id))


@tool(mutates=True, destructive=True, title="Cancel event")
async def cancel_event(ctx: ToolContext, event_id: EventId) -> m.Event:
    """Cancel a meeting you organize (its attendees see it cancelled)."""
    row = _event(ctx, event_id)
    if row["organizer_id"] != rules.AGENT:
        raise DomainError("not_organizer", f"you do not organize {event_id}: ask its organizer to cancel it")
    if row["status"] == "cancelled":
        raise DomainError("no_change", f"{event_id} is already cancelled")
    ctx.world.execute("UPDATE events SET status = 'cancelled' WHERE event_id = ?", (event_id,))
    audit(ctx, "cancel_event", "event", event_id)
    return event_view(ctx.world, _event(ctx, event_id))
