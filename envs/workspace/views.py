"""Rows → result models: how the tools show people, channels, messages, issues, pages, events and incidents."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from envs.workspace import models as m
from envs.workspace import rules
from envs.workspace.catalog import TODAY
from fixtures.world import World

__all__ = [
    "channel_view",
    "event_view",
    "hhmm",
    "incident_view",
    "issue_view",
    "message_view",
    "names",
    "page",
    "person_view",
    "shift_view",
    "wiki_view",
]


def page(offset: int, shown: int, total: int) -> int | None:
    """The next page's offset, or None on the last page."""
    following = offset + shown
    return following if following < total else None


def hhmm(minute: int) -> str:
    """Minute of the day → ``HH:MM`` (wrapping past midnight)."""
    minute %= 1440
    return f"{minute // 60:02d}:{minute % 60:02d}"


def names(world: World, user_ids: list[str]) -> dict[str, str]:
    """User id → name for the given ids."""
    if not user_ids:
        return {}
    marks = ",".join("?" * len(user_ids))
    return {r["user_id"]: r["name"] for r in world.query(f"SELECT user_id, name FROM users WHERE user_id IN ({marks})", tuple(user_ids))}


def person_view(world: World, u: dict[str, Any]) -> m.Person:
    """A directory entry with working hours in local time and UTC, and leave from two weeks back."""
    off = u["utc_offset_minutes"]
    sign = "-" if off < 0 else "+"
    leave = world.query("SELECT * FROM leaves WHERE user_id = ? AND ends_on >= ? ORDER BY starts_on, leave_id",
                        (u["user_id"], (TODAY - timedelta(days=14)).isoformat()))
    team = world.query("SELECT name FROM teams WHERE team_id = ?", (u["team_id"],))[0]["name"]
    return m.Person(user_id=u["user_id"], name=u["name"], handle=u["handle"], email=u["email"], team=team, title=u["title"],
                    tz=u["tz"], utc_offset=f"{sign}{hhmm(abs(off))}",
                    working_hours_local=f"{hhmm(u['work_start_minute'])}-{hhmm(u['work_end_minute'])}",
                    working_hours_utc=f"{hhmm(u['work_start_minute'] - off)}-{hhmm(u['work_end_minute'] - off)}",
                    on_leave_today=rules.on_leave(world, u["user_id"], TODAY) is not None,
                    projects=[r["name"] for r in world.query("SELECT p.name FROM project_members pm JOIN projects p USING (project_id) "
                                                             "WHERE pm.user_id = ? ORDER BY p.name", (u["user_id"],))],
                    leave=[m.Leave(starts_on=r["starts_on"], ends_on=r["ends_on"], kind=r["kind"]) for r in leave])


def channel_view(world: World, c: dict[str, Any]) -> m.Channel:
    """A channel; its member list only when private (public channels are open to all)."""
    members = [r["user_id"] for r in world.query("SELECT user_id FROM channel_members WHERE channel_id = ? ORDER BY user_id", (c["channel_id"],))]
    pinned = [r["message_id"] for r in world.query("SELECT message_id FROM messages WHERE channel_id = ? AND pinned = 1 ORDER BY message_id",
                                                   (c["channel_id"],))]
    readable = rules.can_read_channel(world, rules.AGENT, c)
    return m.Channel(channel_id=c["channel_id"], name=c["name"], kind=c["kind"], topic=c["topic"], member_count=len(members),
                     you_are_member=rules.AGENT in members, members=members if c["kind"] != "public" and readable else [],
                     pinned=pinned if readable else [])


def message_view(world: World, msg: dict[str, Any]) -> m.Message:
    """A message with its author, reply count and reactions (a redacted body reads ``[redacted]``)."""
    extra = world.query(
        "SELECT (SELECT name FROM users WHERE user_id = ?) AS author, (SELECT name FROM channels WHERE channel_id = ?) AS channel, "
        "(SELECT count(*) FROM messages WHERE thread_of = ?) AS replies", (msg["user_id"], msg["channel_id"], msg["message_id"]))[0]
    reactions: dict[str, int] = {}
    for r in world.query("SELECT emoji, count(*) AS n FROM reactions WHERE message_id = ? GROUP BY emoji ORDER BY emoji", (msg["message_id"],)):
        reactions[r["emoji"]] = r["n"]
    return m.Message(message_id=msg["message_id"], channel_id=msg["channel_id"], channel=extra["channel"], user_id=msg["user_id"],
                     author=extra["author"], at=msg["at"], body="[redacted]" if msg["redacted"] else msg["body"],
                     thread_of=msg["thread_of"], replies=extra["replies"], reactions=reactions, pinned=bool(msg["pinned"]),
                     redacted=bool(msg["redacted"]))


def issue_view(world: World, issue_id: str) -> m.Issue:
    """An issue with everything around it."""
    i = world.query("SELECT i.*, p.name AS project, c.name AS cycle, u.name AS assignee FROM issues i JOIN projects p USING (project_id) "
                    "LEFT JOIN cycles c USING (cycle_id) LEFT JOIN users u ON u.user_id = i.assignee_id WHERE issue_id = ?", (issue_id,))[0]
    relations = [m.Relation(kind=r["kind"], issue_id=r["iid"], title=r["title"], state=r["state"]) for r in world.query(
        "SELECT r.kind AS kind, r.other_id AS iid, o.title, o.state FROM issue_relations r JOIN issues o ON o.issue_id = r.other_id "
        "WHERE r.issue_id = ? UNION ALL "
        "SELECT CASE r.kind WHEN 'blocks' THEN 'blocked_by' WHEN 'duplicates' THEN 'duplicated_by' ELSE 'relates' END, r.issue_id, o.title, o.state "
        "FROM issue_relations r JOIN issues o ON o.issue_id = r.issue_id WHERE r.other_id = ? ORDER BY 2, 1", (issue_id, issue_id))]
    comments = [m.Comment(comment_id=c["comment_id"], user_id=c["user_id"], author=c["name"], at=c["at"], body=c["body"]) for c in world.query(
        "SELECT c.*, u.name FROM issue_comments c JOIN users u USING (user_id) WHERE issue_id = ? ORDER BY at, comment_id", (issue_id,))]
    return m.Issue(
        issue_id=i["issue_id"], project_id=i["project_id"], project=i["project"], title=i["title"], description=i["description"],
        state=i["state"], priority=i["priority"], estimate=i["estimate"], assignee_id=i["assignee_id"], assignee=i["assignee"],
        reporter_id=i["reporter_id"], cycle_id=i["cycle_id"], cycle=i["cycle"], parent_id=i["parent_id"],
        sub_issues=[r["issue_id"] for r in world.query("SELECT issue_id FROM issues WHERE parent_id = ? ORDER BY issue_id", (issue_id,))],
        labels=[r["label"] for r in world.query("SELECT label FROM issue_labels WHERE issue_id = ? ORDER BY label", (issue_id,))],
        relations=relations,
        linked_pages=[r["page_id"] for r in world.query("SELECT page_id FROM page_links WHERE issue_id = ? ORDER BY page_id", (issue_id,))],
        comments=comments, created_at=i["created_at"], updated_at=i["updated_at"], closed_at=i["closed_at"],
        you_may_change=bool(world.query("SELECT 1 FROM project_members WHERE project_id = ? AND user_id = ?", (i["project_id"], rules.AGENT))))


def wiki_view(world: World, p: dict[str, Any]) -> m.WikiPage:
    """A page with its space, owner and linked issues; a restricted page the assistant is not on shows only its title,
    owner and restriction (content, links and access list withheld)."""
    if not rules.can_read_page(world, rules.AGENT, p):
        extra = world.query("SELECT s.name AS space, u.name AS owner FROM spaces s, users u WHERE s.space_id = ? AND u.user_id = ?",
                            (p["space_id"], p["owner_id"]))[0]
        return m.WikiPage(page_id=p["page_id"], space=extra["space"], title=p["title"], body="(restricted: you are not on this page's access list)",
                          owner_id=p["owner_id"], owner=extra["owner"], restricted=True, version=p["version"], updated_at=p["updated_at"],
                          updated_by=p["updated_by"], linked_issues=[], access=[], you_can_read=False)
    extra = world.query("SELECT s.name AS space, u.name AS owner FROM spaces s, users u WHERE s.space_id = ? AND u.user_id = ?",
                        (p["space_id"], p["owner_id"]))[0]
    links = [r["issue_id"] for r in world.query("SELECT issue_id FROM page_links WHERE page_id = ? ORDER BY issue_id", (p["page_id"],))]
    access = sorted({p["owner_id"], *(r["user_id"] for r in world.query("SELECT user_id FROM page_access WHERE page_id = ?", (p["page_id"],)))}
                    ) if p["restricted"] else []
    return m.WikiPage(page_id=p["page_id"], space=extra["space"], title=p["title"], body=p["body"], owner_id=p["owner_id"],
                      owner=extra["owner"], restricted=bool(p["restricted"]), version=p["version"], updated_at=p["updated_at"],
                      updated_by=p["updated_by"], linked_issues=links, access=access, you_can_read=True)


def event_view(world: World, e: dict[str, Any]) -> m.Event:
    """An event with its attendees."""
    people = world.query("SELECT a.user_id, a.required, u.name FROM attendees a JOIN users u USING (user_id) WHERE event_id = ? "
                         "ORDER BY a.user_id", (e["event_id"],))
    return m.Event(event_id=e["event_id"], title=e["title"], organizer_id=e["organizer_id"], starts_at=e["starts_at"], ends_at=e["ends_at"],
                   room_id=e["room_id"], status=e["status"],
                   attendees=[m.Attendee(user_id=a["user_id"], name=a["name"], required=bool(a["required"])) for a in people])


def shift_view(world: World, s: dict[str, Any]) -> m.Shift:
    """An on-call shift with the person's name."""
    return m.Shift(shift_id=s["shift_id"], rotation=s["rotation"], user_id=s["user_id"], name=names(world, [s["user_id"]])[s["user_id"]],
                   starts_at=s["starts_at"], ends_at=s["ends_at"])


def incident_view(world: World, i: dict[str, Any]) -> m.Incident:
    """An incident with its service and who was paged."""
    service = world.query("SELECT name FROM services WHERE service_id = ?", (i["service_id"],))[0]["name"]
    paged = [r["user_id"] for r in world.query("SELECT user_id FROM pages_sent WHERE incident_id = ? ORDER BY page_id", (i["incident_id"],))]
    return m.Incident(incident_id=i["incident_id"], service_id=i["service_id"], service=service, title=i["title"], severity=i["severity"],
                      status=i["status"], commander_id=i["commander_id"], opened_at=i["opened_at"], resolved_at=i["resolved_at"], paged=paged)
