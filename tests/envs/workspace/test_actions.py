"""Each action changes exactly the rows it should (and writes one audit row)."""

from __future__ import annotations

import pytest

from envs.workspace import rules
from envs.workspace.catalog import NOW
from envs.workspace.tasks._common import plant_issue, working_day
from tests.envs.workspace.helpers import Session, workspace_session


def _channel(s: Session, name: str) -> str:
    return s.one("SELECT channel_id FROM channels WHERE name = ?", (name,))["channel_id"]


async def test_chat_actions() -> None:
    async with workspace_session() as s:
        general = _channel(s, "general")
        posted = await s.ok("post_message", channel_id=general, body="Hello all")
        mid = posted["message_id"]
        assert s.touched() == {("messages", "insert", (mid,))} and s.audited() == ["post_message"]
        reply = await s.ok("reply_in_thread", message_id=mid, body="Replying")
        assert reply["thread_of"] == mid and s.tables() == {"messages"}
        await s.ok("add_reaction", message_id=mid, emoji="eyes")
        assert s.touched() == {("reactions", "insert", (mid, rules.AGENT, "eyes"))}
        await s.ok("pin_message", message_id=mid)
        assert s.touched() == {("messages", "update", (mid,))}
        dm = await s.ok("send_direct_message", user_id="USR-0042", body="Hi there")
        assert s.tables() == {"channels", "channel_members", "messages"} and dm["channel"] == f"dm-{rules.AGENT}-usr-0042".lower()
        await s.ok("send_direct_message", user_id="USR-0042", body="Again")
        assert s.tables() == {"messages"}, "the DM channel is reused"
        await s.ok("forward_message", message_id=mid, to_user_id="USR-0042")
        assert s.tables() == {"messages"}


async def test_secret_report_redacts_and_files() -> None:
    async with workspace_session() as s:
        deploys = _channel(s, "deploys")
        # a live credential pasted in the past was reported then (the world keeps its own policy): plant a fresh one
        earlier = [r for r in s.world.query("SELECT * FROM messages WHERE channel_id = ?", (deploys,)) if rules.find_secret(r["body"])]
        assert earlier and all(r["redacted"] for r in earlier)
        body = "Deploy it with: DEPLOY_TOKEN=AKIA" + "Q7" * 8 + " ./deploy.sh"
        s.world.execute("INSERT INTO messages (message_id, channel_id, user_id, at, body, thread_of, pinned, redacted) "
                        "VALUES ('MSG-999999', ?, 'USR-0002', '2026-03-30T10:00:00+00:00', ?, NULL, 0, 0)", (deploys, body))
        report = await s.ok("report_secret", message_id="MSG-999999", kind=rules.find_secret(body))
        assert report["redacted"] is True
        assert s.tables() == {"security_reports", "messages"}
        thread = await s.ok("get_thread", message_id="MSG-999999")
        assert thread["messages"][0]["body"] == "[redacted]"


async def test_tracker_actions() -> None:
    async with workspace_session() as s:
        created = await s.ok("create_issue", project_id="PRJ-02", title="Flaky login", description="It flakes", priority="high", labels=["bug"])
        iid = created["issue_id"]
        assert s.tables() == {"issues", "issue_labels"} and created["state"] == "todo" and created["you_may_change"] is True
        assignee = s.one("SELECT m.user_id FROM project_members m WHERE project_id = 'PRJ-02' AND user_id != ? AND NOT EXISTS "
                         "(SELECT 1 FROM leaves l WHERE l.user_id = m.user_id) ORDER BY user_id LIMIT 1", (rules.AGENT,))["user_id"]
        await s.ok("assign_issue", issue_id=iid, user_id=assignee)
        assert s.touched() == {("issues", "update", (iid,))}
        await s.ok("update_issue", issue_id=iid, priority="urgent", estimate=3)
        await s.ok("comment_on_issue", issue_id=iid, body="Looking")
        assert s.tables() == {"issue_comments", "issues"}
        other = plant_issue(s.world, "PRJ-02", "Other", reporter=assignee)
        await s.ok("link_issues", issue_id=other, kind="relates", other_issue_id=iid)
        assert s.tables() == {"issue_relations"}
        dup = plant_issue(s.world, "PRJ-02", "Flaky login again", reporter=assignee, days_ago=0)
        marked = await s.ok("mark_duplicate", issue_id=dup, of_issue_id=iid)
        assert marked["state"] == "duplicate" and s.tables() == {"issues", "issue_relations"}
        done = await s.ok("update_issue", issue_id=iid, state="done")
        assert done["closed_at"] is not None


async def test_wiki_actions() -> None:
    async with workspace_session() as s:
        page = s.one("SELECT * FROM pages WHERE restricted = 0 ORDER BY page_id LIMIT 1")
        edited = await s.ok("edit_page", page_id=page["page_id"], body=page["body"] + "\nMore.", base_version=page["version"])
        assert edited["version"] == page["version"] + 1
        assert s.touched() == {("pages", "update", (page["page_id"],)), ("page_versions", "insert", (page["page_id"], page["version"] + 1))}
        created = await s.ok("create_page", space_id="SPC-02", title="New page", body="Text")
        assert created["version"] == 1 and s.tables() == {"pages", "page_versions"}
        await s.ok("link_page_to_issue", page_id=created["page_id"], issue_id="ISS-00010")
        assert s.touched() == {("page_links", "insert", (created["page_id"], "ISS-00010"))}
        await s.ok("share_page", page_id=created["page_id"], user_id="USR-0042")
        assert s.tables() == {"channels", "channel_members", "messages"}


async def test_calendar_actions() -> None:
    async with workspace_session() as s:
        day = working_day(2)
        people = [r["user_id"] for r in s.world.query(
            "SELECT user_id FROM users u WHERE team_id = 'TM-02' AND NOT EXISTS (SELECT 1 FROM leaves l WHERE l.user_id = u.user_id) ORDER BY user_id LIMIT 2")]
        slots = await s.ok("find_free_slots", user_ids=people, date=day.isoformat(), minutes=30)
        start = slots["slots"][0]["starts_at"]
        event = await s.ok("schedule_event", title="Sync", starts_at=start, minutes=30, required_user_ids=people)
        eid = event["event_id"]
        assert s.tables() == {"events", "attendees"} and len(event["attendees"]) == 2
        later = slots["slots"][-1]["starts_at"]
        if later != start:
            moved = await s.ok("move_event", event_id=eid, starts_at=later)
            assert moved["starts_at"] == later and s.touched() == {("events", "update", (eid,))}
        cancelled = await s.ok("cancel_event", event_id=eid)
        assert cancelled["status"] == "cancelled"


async def test_oncall_actions() -> None:
    async with workspace_session() as s:
        shift = s.one("SELECT * FROM oncall_shifts WHERE rotation = 'platform' AND starts_at > ? ORDER BY starts_at LIMIT 1", (NOW.isoformat(),))
        mate = s.one("SELECT user_id FROM users u WHERE team_id = 'TM-02' AND user_id != ? AND NOT EXISTS (SELECT 1 FROM leaves l WHERE "
                     "l.user_id = u.user_id) ORDER BY user_id LIMIT 1", (shift["user_id"],))["user_id"]
        handed = await s.ok("hand_over_shift", shift_id=shift["shift_id"], to_user_id=mate)
        assert handed["user_id"] == mate and s.touched() == {("oncall_shifts", "update", (shift["shift_id"],))}
        incident = await s.ok("open_incident", service_id="SVC-04", severity="sev1", title="API gateway down")
        assert incident["status"] == "open" and s.tables() == {"incidents"}
        paged = await s.ok("page_oncall", incident_id=incident["incident_id"])
        assert s.tables() == {"pages_sent"} and paged["user_id"]
        again = await s.ok("get_incident", incident_id=incident["incident_id"])
        assert again["paged"] == [paged["user_id"]]


async def test_colleague_answers_and_confirms() -> None:
    from tests.envs.workspace.helpers import colleague

    async with workspace_session() as s:
        await s.refused("ask_colleague", "no_colleague_in_chat", topic="which_issue")
        s.plant(colleague(which_issue="Flaky login"))
        known = await s.ok("ask_colleague", topic="which_issue")
        assert known == {"topic": "which_issue", "known": True, "value": "Flaky login", "text": "Flaky login"}
        unknown = await s.ok("ask_colleague", topic="deadline")
        assert unknown["known"] is False and unknown["value"] is None
        assert (await s.ok("propose_to_colleague", proposal="close_issue"))["agreed"] is True
        assert (await s.ok("propose_to_colleague", proposal="cancel_meeting"))["agreed"] is False
        assert (await s.ok("propose_to_colleague", proposal="share_page"))["agreed"] is False
        assert s.world.change_mark() == 1, "only the planted persona; the colleague tools write nothing"


async def test_a_model_words_the_colleague_as_a_colleague_and_never_the_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The persona mechanism is the kit's, shared with support's customer: here the model is told it plays a colleague."""
    import anyio

    from tests.clients.fake_provider import Reply, openai_message, running_provider
    from tests.envs.workspace.helpers import colleague

    with anyio.fail_after(30):
        async with running_provider([Reply(body=openai_message("It's the flaky login one, thanks!"))]) as provider:
            monkeypatch.setenv("TOOLGYM_CUSTOMER_BASE_URL", provider.url + "/v1")
            monkeypatch.setenv("TOOLGYM_CUSTOMER_MODEL", "colleague-sim")
            async with workspace_session() as s:
                s.plant(colleague(which_issue="Flaky login"))
                worded = await s.ok("ask_colleague", topic="which_issue")
    assert worded == {"topic": "which_issue", "known": True, "value": "Flaky login", "text": "It's the flaky login one, thanks!"}
    system, _ = provider.requests[0].body["messages"]
    assert "colleague" in system["content"] and "customer" not in system["content"]
