"""Every read tool answers through a real MCP client, writes nothing, and hides what the assistant may not read."""

from __future__ import annotations

from envs.workspace import rules
from envs.workspace.catalog import TODAY
from tests.envs.workspace.helpers import workspace_session


async def test_people_and_teams() -> None:
    async with workspace_session() as s:
        found = await s.ok("search_people", query="platform")
        assert found["total"] >= 18 and all(p["working_hours_utc"] for p in found["people"])
        person = await s.ok("get_person", user_id="USR-0042")
        assert person["user_id"] == "USR-0042" and person["tz"] and isinstance(person["on_leave_today"], bool)
        teams = await s.ok("list_teams")
        assert len(teams["teams"]) == 11 and sum(t["members"] for t in teams["teams"]) == 150
        assert s.world.change_mark() == 0


async def test_chat_reads_and_private_channels() -> None:
    async with workspace_session() as s:
        channels = await s.ok("list_channels")
        assert channels["total"] >= 30
        public = s.one("SELECT channel_id FROM channels WHERE name = 'general'")["channel_id"]
        page = await s.ok("read_channel", channel_id=public, limit=5)
        assert len(page["messages"]) == 5 and page["next_offset"] == 5
        thread = s.one("SELECT thread_of FROM messages m JOIN channels c USING (channel_id) WHERE thread_of IS NOT NULL AND c.kind = 'public' "
                       "ORDER BY message_id LIMIT 1")["thread_of"]
        replies = await s.ok("get_thread", message_id=thread)
        assert replies["messages"][0]["message_id"] == thread and len(replies["messages"]) >= 2
        hits = await s.ok("search_messages", query="deploy")
        assert hits["total"] > 0
        private = s.one("SELECT channel_id FROM channels WHERE name = 'security-private'")["channel_id"]
        await s.refused("read_channel", "no_access", channel_id=private)
        info = await s.ok("get_channel", channel_id=private)
        assert info["you_are_member"] is False and info["members"] == [] and info["pinned"] == []
        hidden = s.one("SELECT count(*) AS n FROM messages WHERE channel_id = ?", (private,))["n"]
        assert hidden > 0
        assert all(m["channel_id"] != private for m in (await s.ok("search_messages", query="the", limit=100))["messages"])
        assert s.world.change_mark() == 0


async def test_tracker_reads() -> None:
    async with workspace_session() as s:
        projects = await s.ok("list_projects")
        assert len(projects["projects"]) == 11 and any(p["you_are_member"] for p in projects["projects"])
        assert not all(p["you_are_member"] for p in projects["projects"])
        issues = await s.ok("search_issues", query="timeout", limit=5)
        assert issues["total"] > 0
        blocked = s.one("SELECT other_id FROM issue_relations WHERE kind = 'blocks' ORDER BY relation_id LIMIT 1")["other_id"]
        issue = await s.ok("get_issue", issue_id=blocked)
        assert any(r["kind"] == "blocked_by" for r in issue["relations"])
        assert s.world.change_mark() == 0


async def test_wiki_reads_and_restricted_pages() -> None:
    async with workspace_session() as s:
        found = await s.ok("search_pages", query="Runbook")
        assert found["total"] >= 10
        open_page = s.one("SELECT page_id, version FROM pages WHERE restricted = 0 ORDER BY page_id LIMIT 1")
        page = await s.ok("get_page", page_id=open_page["page_id"])
        assert page["version"] == open_page["version"]
        history = await s.ok("get_page_history", page_id=open_page["page_id"])
        assert [v["version"] for v in history["versions"]] == list(range(1, open_page["version"] + 1))
        closed = s.one("SELECT page_id FROM pages p WHERE restricted = 1 AND owner_id != ? AND NOT EXISTS "
                       "(SELECT 1 FROM page_access a WHERE a.page_id = p.page_id AND a.user_id = ?) ORDER BY page_id LIMIT 1",
                       (rules.AGENT, rules.AGENT))["page_id"]
        stub = await s.ok("get_page", page_id=closed)
        assert stub["you_can_read"] is False and stub["access"] == [] and "restricted" in stub["body"]
        body = s.one("SELECT body FROM pages WHERE page_id = ?", (closed,))["body"]
        assert body not in str(stub)
        await s.refused("get_page_history", "no_access", page_id=closed)
        assert s.world.change_mark() == 0


async def test_calendar_reads() -> None:
    async with workspace_session() as s:
        rooms = await s.ok("list_rooms")
        assert len(rooms["rooms"]) == 8
        attendee = s.one("SELECT a.user_id, e.event_id FROM attendees a JOIN events e USING (event_id) WHERE e.starts_at >= ? "
                         "ORDER BY e.starts_at, a.user_id LIMIT 1", (TODAY.isoformat(),))
        events = await s.ok("list_events", user_id=attendee["user_id"], from_date=TODAY.isoformat(), days=3)
        assert attendee["event_id"] in [e["event_id"] for e in events["events"]]
        event = await s.ok("get_event", event_id=attendee["event_id"])
        assert any(a["user_id"] == attendee["user_id"] for a in event["attendees"])
        tomorrow = TODAY.replace(day=TODAY.day + 1).isoformat()
        pair = [r["user_id"] for r in s.world.query(
            "SELECT user_id FROM users u WHERE team_id = 'TM-02' AND NOT EXISTS (SELECT 1 FROM leaves l WHERE l.user_id = u.user_id) "
            "ORDER BY user_id LIMIT 2")]
        slots = await s.ok("find_free_slots", user_ids=pair, date=tomorrow, minutes=30)
        assert slots["slots"] and all(x["starts_at"].startswith(tomorrow) for x in slots["slots"])
        assert s.world.change_mark() == 0


async def test_oncall_reads() -> None:
    async with workspace_session() as s:
        oncall = await s.ok("get_oncall", rotation="platform")
        assert oncall["now"] is not None and len(oncall["upcoming"]) == 4
        services = await s.ok("list_services")
        assert len(services["services"]) == 14 and {x["tier"] for x in services["services"]} == {1, 2, 3}
        service = await s.ok("get_service", service_id="SVC-01")
        assert service["rotation"] == "payments" and service["runbook_page_id"]
        incidents = await s.ok("list_incidents", status="resolved")
        assert incidents["total"] == 36
        one = await s.ok("get_incident", incident_id=incidents["incidents"][0]["incident_id"])
        assert one["status"] == "resolved"
        assert s.world.change_mark() == 0
