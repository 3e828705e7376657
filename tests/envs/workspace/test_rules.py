"""Every policy rule refuses with its stable code and leaves the world exactly as it was (``Session.refused`` checks
the hash and the change log around each refused call)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from envs.workspace import rules
from envs.workspace.catalog import NOW, TODAY
from envs.workspace.tasks._common import plant_event, plant_issue, plant_leave, plant_message, plant_page, working_day
from tests.envs.workspace.helpers import Session, workspace_session

KEY = "AKIA" + "Q7RT2K9MZP4XW8LB"


def _present(s: Session, team: str, n: int = 2) -> list[str]:
    return [r["user_id"] for r in s.world.query(
        "SELECT user_id FROM users u WHERE team_id = ? AND user_id != ? AND NOT EXISTS (SELECT 1 FROM leaves l WHERE l.user_id = u.user_id) "
        "ORDER BY user_id LIMIT ?", (team, rules.AGENT, n))]


async def test_access_and_secret_rules() -> None:
    async with workspace_session() as s:
        private = s.one("SELECT channel_id FROM channels WHERE name = 'security-private'")["channel_id"]
        secret_msg = s.one("SELECT message_id FROM messages WHERE channel_id = ? ORDER BY message_id LIMIT 1", (private,))["message_id"]
        await s.refused("read_channel", "no_access", channel_id=private)
        await s.refused("get_thread", "no_access", message_id=secret_msg)
        await s.refused("post_message", "no_access", channel_id=private, body="hi")
        mine = s.one("SELECT channel_id FROM channels WHERE name = 'eng-ops-internal'")["channel_id"]
        inside = plant_message(s.world, mine, "USR-0003", "Internal note", minutes_ago=5)
        outsider = s.one("SELECT user_id FROM users u WHERE NOT EXISTS (SELECT 1 FROM channel_members m WHERE m.channel_id = ? AND "
                         "m.user_id = u.user_id) ORDER BY user_id LIMIT 1", (mine,))["user_id"]
        await s.refused("forward_message", "recipient_no_access", message_id=inside, to_user_id=outsider)
        page = plant_page(s.world, "SPC-03", "Budget", "Secret numbers", "USR-0030", restricted=True, access=(rules.AGENT,))
        await s.refused("share_page", "recipient_no_access", page_id=page, user_id=outsider)
        closed = plant_page(s.world, "SPC-03", "Closed", "Hidden", "USR-0030", restricted=True)
        await s.refused("edit_page", "no_access", page_id=closed, body="x", base_version=1)
        await s.refused("get_page_history", "no_access", page_id=closed)
        general = s.one("SELECT channel_id FROM channels WHERE name = 'general'")["channel_id"]
        await s.refused("post_message", "secret_in_content", channel_id=general, body=f"key {KEY}")
        await s.refused("comment_on_issue", "secret_in_content", issue_id="ISS-00010", body=f"key {KEY}")
        leaked = plant_message(s.world, general, "USR-0003", f"oops {KEY}", minutes_ago=3)
        await s.refused("forward_message", "secret_in_content", message_id=leaked, to_user_id="USR-0042")
        harmless = plant_message(s.world, general, "USR-0003", "use AKIAXXXXXXXXXXXXXXXX in examples", minutes_ago=2)
        await s.refused("report_secret", "no_secret_found", message_id=harmless, kind="cloud_key")
        await s.ok("report_secret", message_id=leaked, kind="cloud_key")
        await s.refused("report_secret", "already_redacted", message_id=leaked, kind="cloud_key")
        await s.refused("send_direct_message", "no_change", user_id=rules.AGENT, body="me")
        await s.refused("get_person", "not_found", user_id="USR-9999")


async def test_change_control_rules() -> None:
    async with workspace_session() as s:
        foreign = s.one("SELECT project_id FROM projects p WHERE NOT EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = p.project_id "
                        "AND m.user_id = ?) ORDER BY project_id LIMIT 1", (rules.AGENT,))["project_id"]
        theirs = plant_issue(s.world, foreign, "Theirs", reporter="USR-0060")
        await s.refused("update_issue", "not_permitted", issue_id=theirs, priority="urgent")
        await s.refused("assign_issue", "not_permitted", issue_id=theirs, user_id="USR-0060")
        a, b = _present(s, "TM-02")
        mine = plant_issue(s.world, "PRJ-02", "Mine", reporter=a)
        blocker = plant_issue(s.world, "PRJ-02", "Blocker", reporter=a)
        await s.ok("link_issues", issue_id=blocker, kind="blocks", other_issue_id=mine)
        await s.refused("update_issue", "blocked_by_open_issue", issue_id=mine, state="done")
        await s.refused("link_issues", "already_linked", issue_id=mine, kind="relates", other_issue_id=blocker)
        await s.refused("link_issues", "same_issue", issue_id=mine, kind="relates", other_issue_id=mine)
        await s.refused("mark_duplicate", "same_issue", issue_id=mine, of_issue_id=mine)
        await s.refused("update_issue", "no_change", issue_id=mine, state="todo")
        plant_leave(s.world, b, TODAY, TODAY + timedelta(days=2))
        await s.refused("assign_issue", "assignee_on_leave", issue_id=mine, user_id=b)
        stranger = _present(s, "TM-09", 1)[0]
        await s.refused("assign_issue", "assignee_not_in_project", issue_id=mine, user_id=stranger)
        page = s.one("SELECT page_id FROM pages WHERE restricted = 0 ORDER BY page_id LIMIT 1")["page_id"]
        await s.ok("link_page_to_issue", page_id=page, issue_id=mine)
        await s.refused("link_page_to_issue", "already_linked", page_id=page, issue_id=mine)
        row = s.one("SELECT * FROM pages WHERE page_id = ?", (page,))
        await s.refused("edit_page", "version_conflict", page_id=page, body="new", base_version=row["version"] + 1)
        await s.refused("edit_page", "no_change", page_id=page, body=row["body"], base_version=row["version"])


async def test_meeting_rules() -> None:
    async with workspace_session() as s:
        a, b = _present(s, "TM-02")
        day = working_day(2)
        slots = (await s.ok("find_free_slots", user_ids=[a, b], date=day.isoformat(), minutes=30))["slots"]
        start = slots[0]["starts_at"]
        await s.refused("schedule_event", "meeting_too_long", title="Long", starts_at=start, minutes=180, required_user_ids=[a, b])
        await s.refused("schedule_event", "in_the_past", title="Now", starts_at=(NOW + timedelta(minutes=15)).isoformat(), minutes=30,
                        required_user_ids=[a])
        night = datetime.combine(day, time(0), tzinfo=UTC) + timedelta(hours=12)
        person = s.one("SELECT * FROM users WHERE user_id = ?", (a,))
        local = (12 * 60 + person["utc_offset_minutes"]) % 1440
        if not (person["work_start_minute"] <= local < person["work_end_minute"]):
            await s.refused("schedule_event", "outside_working_hours", title="Odd", starts_at=night.isoformat(), minutes=30, required_user_ids=[a])
        else:
            late = night + timedelta(hours=12)
            await s.refused("schedule_event", "outside_working_hours", title="Odd", starts_at=late.isoformat(), minutes=30, required_user_ids=[a])
        busy = plant_event(s.world, "Busy", b, datetime.fromisoformat(start), 30, [b])
        await s.refused("schedule_event", "attendee_busy", title="Clash", starts_at=start, minutes=30, required_user_ids=[a, b])
        s.world.execute("UPDATE events SET status = 'cancelled' WHERE event_id = ?", (busy,))
        await s.refused("schedule_event", "room_too_small", title="Crowd", starts_at=start, minutes=30, required_user_ids=[a, b],
                        optional_user_ids=_present(s, "TM-03", 4), room_id="RM-01")
        plant_event(s.world, "Room hog", "USR-0100", datetime.fromisoformat(start), 30, ["USR-0100"], room_id="RM-03")
        await s.refused("schedule_event", "room_booked", title="Room", starts_at=start, minutes=30, required_user_ids=[a, b], room_id="RM-03")
        plant_leave(s.world, b, day, day)
        await s.refused("schedule_event", "attendee_on_leave", title="Away", starts_at=start, minutes=30, required_user_ids=[a, b])
        theirs = s.one("SELECT event_id FROM events WHERE organizer_id != ? AND starts_at > ? ORDER BY event_id LIMIT 1", (rules.AGENT, NOW.isoformat()))
        await s.refused("move_event", "not_organizer", event_id=theirs["event_id"], starts_at=start)
        await s.refused("cancel_event", "not_organizer", event_id=theirs["event_id"])


async def test_oncall_rules() -> None:
    async with workspace_session() as s:
        past = s.one("SELECT shift_id FROM oncall_shifts WHERE ends_at < ? ORDER BY shift_id LIMIT 1", (NOW.isoformat(),))["shift_id"]
        await s.refused("hand_over_shift", "shift_over", shift_id=past, to_user_id="USR-0010")
        nxt = s.one("SELECT * FROM oncall_shifts WHERE rotation = 'platform' AND starts_at > ? ORDER BY starts_at LIMIT 1", (NOW.isoformat(),))
        await s.refused("hand_over_shift", "no_change", shift_id=nxt["shift_id"], to_user_id=nxt["user_id"])
        await s.refused("hand_over_shift", "not_in_rotation", shift_id=nxt["shift_id"], to_user_id=_present(s, "TM-09", 1)[0])
        mate = next(u for u in _present(s, "TM-02", 4) if u != nxt["user_id"])
        start = datetime.fromisoformat(nxt["starts_at"]).date()
        plant_leave(s.world, mate, start + timedelta(days=1), start + timedelta(days=2))
        await s.refused("hand_over_shift", "assignee_on_leave", shift_id=nxt["shift_id"], to_user_id=mate)
        minor = await s.ok("open_incident", service_id="SVC-08", severity="sev3", title="Reports late")
        await s.refused("page_oncall", "severity_too_low", incident_id=minor["incident_id"])
        await s.refused("open_incident", "incident_already_open", service_id="SVC-08", severity="sev2", title="Again")
        web = await s.ok("create_issue", project_id="PRJ-06", title="x y z", description="d")
        assert web["project"] == "Web App"
        s.world.execute("INSERT INTO services (service_id, name, tier, team_id, runbook_page_id) VALUES ('SVC-99', 'web-shell', 1, 'TM-06', NULL)")
        lone = await s.ok("open_incident", service_id="SVC-99", severity="sev1", title="Web shell down")
        await s.refused("page_oncall", "not_in_rotation", incident_id=lone["incident_id"])
        await s.ok("page_oncall", incident_id=(await s.ok("open_incident", service_id="SVC-04", severity="sev1", title="Gateway"))["incident_id"])
        opened = s.one("SELECT incident_id FROM incidents WHERE service_id = 'SVC-04' AND status = 'open'")["incident_id"]
        await s.refused("page_oncall", "no_change", incident_id=opened)


def test_every_reason_code_is_exercised_by_the_tests() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in Path(__file__).parent.glob("test_*.py"))
    exercised = set(re.findall(r'"([a-z_]+)"', source)) & set(rules.REFUSAL_CODES)
    assert set(rules.REFUSAL_CODES) - exercised == set(), "a refusal code no test exercises"
