"""Helpers every workspace task template shares: picking people and rows, putting a colleague in chat, planting
messages, issues, pages, leave and meetings, and the standard calls and criteria.

A template reads the world to choose its subject with the task's rng, draws its case (``graders.setup.case``),
plants what makes the deciding fact hold, and builds its oracle, rubric and negatives from what it read — never
from hard-coded ids. Prompts name people and things as a person would (a name, a title, a channel's name); the ids
the oracle needs come from tool results.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from typing import Any

from envs.workspace.catalog import AGENT_USER_ID, NOW, TODAY
from envs.workspace.ledger import next_world_id as next_id
from fixtures.persona import Persona, Terms, plant_persona
from fixtures.world import World
from graders.criteria import AnswerCheck, AnyToolCalled, CallOrder, ToolCalled, ToolNotCalled, fact, seen, state
from graders.setup import case, need, one, pick, rows
from graders.tasks import ToolCall, call, optional_call
from graders.tasks import answer_call as answer
from graders.tasks import escalation_call as escalation
from graders.tasks import refusal_call as refusal

__all__ = [
    "AGENT",
    "NOW",
    "TODAY",
    "agree",
    "answer",
    "ask",
    "asked",
    "call",
    "case",
    "channel_id",
    "confirmed_first",
    "decline",
    "escalation",
    "find_person",
    "foreign_projects",
    "in_chat",
    "looked_up",
    "seen",
    "fact",
    "member_projects",
    "need",
    "never",
    "next_id",
    "one",
    "optional_call",
    "pick",
    "plant_event",
    "plant_issue",
    "plant_leave",
    "plant_message",
    "plant_page",
    "present_people",
    "propose",
    "refusal",
    "rows",
    "stamp",
    "state",
    "subject",
    "text_is",
    "tried",
    "working_day",
]

AGENT = AGENT_USER_ID

_THINGS = ("export", "invoice", "login", "search", "upload", "webhook", "report", "sync", "checkout", "avatar", "billing page",
           "audit trail", "token refresh", "CSV import", "password reset", "dark mode", "SSO", "push notification")
_FAULTS = ("times out", "returns a blank page", "shows the wrong totals", "fails for large files", "loops forever",
           "drops the last row", "is slow on mobile", "ignores the time zone", "crashes on retry", "logs users out")


def stamp(moment: datetime) -> str:
    """An instant as the tables store it."""
    return moment.replace(microsecond=0).isoformat()


def subject(rng: random.Random) -> str:
    """A seeded, human-sounding problem title (e.g. "CSV import drops the last row")."""
    return f"{rng.choice(_THINGS).capitalize() if rng.random() < 0.5 else rng.choice(_THINGS)} {rng.choice(_FAULTS)} ({rng.randint(2, 999)})"


def working_day(offset: int) -> date:
    """The ``offset``-th working day after today (1 = tomorrow's working day)."""
    day, left = TODAY, offset
    while left > 0:
        day += timedelta(days=1)
        if day.weekday() < 5:
            left -= 1
    return day


def channel_id(world: World, name: str) -> str:
    """A channel's id by name."""
    return one(world, "SELECT channel_id FROM channels WHERE name = ?", name)["channel_id"]


# -- the colleague in chat ---------------------------------------------------------------------------


def agree(reply: str = "Yes, go ahead.") -> Terms:
    """The colleague confirms this decision."""
    return Terms(agrees=True, reply=reply)


def decline(reply: str = "No, leave it as it is.") -> Terms:
    """The colleague declines this decision."""
    return Terms(agrees=False, reply=reply)


def in_chat(world: World, person: dict[str, Any], wants: str, *, terms: dict[str, Terms] | None = None, **facts: str) -> Persona:
    """Plant the colleague who brought the request: what they know (topic → value) and what they confirm."""
    persona = Persona(name=person["name"], wants=wants, facts=facts, terms=terms or {}, unknown="I don't know that, sorry.")
    plant_persona(world, persona)
    return persona


def ask(topic: str, *, optional: bool = False) -> ToolCall:
    """``ask_colleague(topic)``."""
    return (optional_call if optional else call)("ask_colleague", topic=topic)


def propose(proposal: str, *, optional: bool = False) -> ToolCall:
    """``propose_to_colleague(proposal)``."""
    return (optional_call if optional else call)("propose_to_colleague", proposal=proposal)


def asked(topic: str, *, weight: float = 1.0) -> ToolCalled:
    """A gate: the agent asked the colleague for ``topic`` (the request's subject is theirs to give)."""
    return ToolCalled(name=f"asked the colleague for the {topic.replace('_', ' ')}", tool="ask_colleague", args={"topic": topic},
                      weight=weight, gate=True)


def confirmed_first(proposal: str, then: dict[str, Any] | str, name: str) -> CallOrder:
    """A gate: every ``then`` call comes after the colleague confirmed ``proposal``."""
    return CallOrder(name=name, first={"tool": "propose_to_colleague", "args": {"proposal": proposal}, "result": {"agreed": True}},
                     then=then, require_then=True)


def looked_up(name: str, *patterns: dict[str, Any], weight: float = 1.0) -> AnyToolCalled:
    """A gate: some successful call matches one of ``patterns`` — the read that justifies the decision."""
    return AnyToolCalled(name=name, patterns=list(patterns), weight=weight, gate=True)


def tried(name: str, tool: str, *, weight: float = 1.0, **args: Any) -> ToolCalled:
    """A gate: the call was made (refused or not) — for a decision only the refusal itself reveals."""
    return ToolCalled(name=name, tool=tool, args=args, status="any", weight=weight, gate=True)


def never(tool: str, name: str, *, gate: bool = True, **args: Any) -> ToolNotCalled:
    """A forbidden call: even a refused attempt counts."""
    return ToolNotCalled(name=name, tool=tool, args=args, gate=gate)


def text_is(field: str, expected: str, *, weight: float = 2.0, name: str | None = None) -> AnswerCheck:
    """The answer's ``values.<field>`` is exactly ``expected``."""
    return AnswerCheck(name=name or f"answer gives the {field.replace('_', ' ')}", field=f"values.{field}", expect=expected, weight=weight)


def find_person(person: dict[str, Any], *, optional: bool = False) -> ToolCall:
    """``search_people`` by the person's name, as the prompt gives it."""
    return (optional_call if optional else call)("search_people", query=person["name"])


# -- reading and planting the world --------------------------------------------------------------------


def present_people(world: World, extra: str = "", *params: Any) -> list[dict[str, Any]]:
    """People other than the assistant with no leave from two weeks ago on (``extra`` adds conditions on ``u``)."""
    return rows(world, f"""SELECT u.* FROM users u WHERE u.user_id != '{AGENT}' AND NOT EXISTS
        (SELECT 1 FROM leaves l WHERE l.user_id = u.user_id AND l.ends_on >= '{(TODAY - timedelta(days=14)).isoformat()}') {extra}
        ORDER BY u.user_id""", *params)


def member_projects(world: World) -> list[dict[str, Any]]:
    """Projects the assistant is a member of (it may change their issues)."""
    return rows(world, "SELECT p.* FROM projects p JOIN project_members m USING (project_id) WHERE m.user_id = ? ORDER BY project_id", AGENT)


def foreign_projects(world: World) -> list[dict[str, Any]]:
    """Projects the assistant is not a member of."""
    return rows(world, "SELECT p.* FROM projects p WHERE NOT EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = p.project_id "
                       "AND m.user_id = ?) ORDER BY project_id", AGENT)


def plant_message(world: World, channel: str, user_id: str, body: str, *, minutes_ago: int, thread_of: str | None = None) -> str:
    """A message posted ``minutes_ago`` minutes before now; returns its id."""
    message_id = next_id(world, "messages")
    world.execute("INSERT INTO messages (message_id, channel_id, user_id, at, body, thread_of, pinned, redacted) VALUES (?, ?, ?, ?, ?, ?, 0, 0)",
                  (message_id, channel, user_id, stamp(NOW - timedelta(minutes=minutes_ago)), body, thread_of))
    return message_id


def plant_issue(world: World, project_id: str, title: str, *, reporter: str, state: str = "todo", assignee: str | None = None,
                priority: str = "medium", days_ago: int = 5, cycle_id: str | None = None, labels: tuple[str, ...] = ()) -> str:
    """An issue filed ``days_ago`` days ago; returns its id."""
    issue_id = next_id(world, "issues")
    created = stamp(NOW - timedelta(days=days_ago, hours=3))
    closed = stamp(NOW - timedelta(days=max(days_ago - 1, 0), hours=1)) if state in ("done", "cancelled", "duplicate") else None
    world.execute("INSERT INTO issues (issue_id, project_id, title, description, state, priority, estimate, assignee_id, reporter_id, cycle_id, "
                  "parent_id, created_at, updated_at, closed_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, NULL, ?, ?, ?)",
                  (issue_id, project_id, title, f"{title}. Seen by customers; steps to reproduce in the thread.", state, priority, assignee,
                   reporter, cycle_id, created, closed or created, closed))
    for label in labels:
        world.execute("INSERT INTO issue_labels (issue_id, label) VALUES (?, ?)", (issue_id, label))
    return issue_id


def plant_leave(world: World, user_id: str, starts: date, ends: date, kind: str = "vacation") -> str:
    """Leave for the person (inclusive dates)."""
    leave_id = next_id(world, "leaves")
    world.execute("INSERT INTO leaves (leave_id, user_id, starts_on, ends_on, kind) VALUES (?, ?, ?, ?, ?)",
                  (leave_id, user_id, starts.isoformat(), ends.isoformat(), kind))
    return leave_id


def plant_page(world: World, space_id: str, title: str, body: str, owner: str, *, restricted: bool = False, access: tuple[str, ...] = (),
               days_ago: int = 30) -> str:
    """A wiki page at version 1; returns its id."""
    page_id = next_id(world, "pages")
    at = stamp(NOW - timedelta(days=days_ago))
    world.execute("INSERT INTO pages (page_id, space_id, title, body, owner_id, restricted, version, updated_at, updated_by) "
                  "VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?)", (page_id, space_id, title, body, owner, int(restricted), at, owner))
    world.execute("INSERT INTO page_versions (page_id, version, body, edited_by, edited_at) VALUES (?, 1, ?, ?, ?)", (page_id, body, owner, at))
    for uid in sorted(set(access) - {owner}):
        world.execute("INSERT INTO page_access (page_id, user_id) VALUES (?, ?)", (page_id, uid))
    return page_id


def plant_event(world: World, title: str, organizer: str, start: datetime, minutes: int, required: list[str], optional: list[str] = (),
                room_id: str | None = None) -> str:
    """A confirmed meeting; returns its id."""
    event_id = next_id(world, "events")
    world.execute("INSERT INTO events (event_id, title, organizer_id, starts_at, ends_at, room_id, status) VALUES (?, ?, ?, ?, ?, ?, 'confirmed')",
                  (event_id, title, organizer, stamp(start), stamp(start + timedelta(minutes=minutes)), room_id))
    for uid in sorted(set(required)):
        world.execute("INSERT INTO attendees (event_id, user_id, required) VALUES (?, ?, 1)", (event_id, uid))
    for uid in sorted(set(optional) - set(required)):
        world.execute("INSERT INTO attendees (event_id, user_id, required) VALUES (?, ?, 0)", (event_id, uid))
    return event_id


_CHANNEL_WORDS = ("atlas", "beacon", "cobalt", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper", "kepler",
                  "lumen", "maple", "nimbus", "onyx", "pioneer", "quartz", "raven", "sierra", "tundra")


def plant_channel(world: World, rng: random.Random, members: list[str], *, kind: str = "private", purpose: str = "project") -> dict[str, Any]:
    """A seeded channel (e.g. ``#proj-cobalt-42``) with ``members``; returns its row."""
    channel_id = next_id(world, "channels")
    name = f"{purpose[:4]}-{rng.choice(_CHANNEL_WORDS)}-{rng.randint(10, 99)}"
    while world.query("SELECT 1 FROM channels WHERE name = ?", (name,)):
        name += "x"
    world.execute("INSERT INTO channels (channel_id, name, kind, topic, team_id, created_at) VALUES (?, ?, ?, ?, NULL, ?)",
                  (channel_id, name, kind, f"{purpose.capitalize()} channel", stamp(NOW - timedelta(days=rng.randint(20, 200)))))
    for uid in sorted(set(members)):
        world.execute("INSERT INTO channel_members (channel_id, user_id) VALUES (?, ?)", (channel_id, uid))
    return {"channel_id": channel_id, "name": name, "kind": kind}


__all__ += ["plant_channel"]


def fresh_minutes(world: World, rng: random.Random, channel: str) -> int:
    """Minutes ago for a message that is newer than everything already in ``channel`` (at least 1)."""
    last = world.query("SELECT max(at) AS at FROM messages WHERE channel_id = ?", (channel,))[0]["at"]
    gap = int((NOW - datetime.fromisoformat(last)).total_seconds() // 60) if last else 600
    return rng.randint(1, max(1, gap - 1))


__all__ += ["fresh_minutes"]
