"""A group meeting across time zones (policy section 4):

* ``team_sync_across_zones``: "set up a <n>-minute <topic> on <day> with <three or four people in several zones> and
  me, earliest time that works for everyone" — booked at the first slot inside everyone's own working hours and free
  time, or refused ``attendee_on_leave`` when one of them is away that day (read on that person's profile).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.tasks._common import (
    AGENT,
    answer,
    call,
    case,
    find_person,
    in_chat,
    need,
    never,
    optional_call,
    plant_leave,
    profile,
    refusal,
    stamp,
    state,
    working_day,
)
from envs.workspace.tasks.meetings import _TOPICS, _pair, _slots, _when
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def team_sync_across_zones(world: World, rng: random.Random) -> TaskDraft:
    """Book a group meeting at the earliest slot inside everyone's working hours, unless one of them is on leave that day."""
    which = case(rng, {"ok": 6, "on_leave": 4})
    minutes = rng.choice((30, 45, 60))
    day = working_day(rng.randint(1, 6))
    size = rng.randint(3, 4)
    people = []
    for _ in range(20):
        people = _pair(world, rng, [day], minutes, size=size)
        if len({p["utc_offset_minutes"] for p in people}) >= 2:
            break
    need(len({p["utc_offset_minutes"] for p in people}) >= 2, "a group spread over time zones")
    host, others = people[0], people[1:]
    ids = sorted(p["user_id"] for p in people)
    topic = rng.choice(_TOPICS)
    away = rng.choice(others)
    if which == "on_leave":
        plant_leave(world, away["user_id"], day - timedelta(days=rng.randint(0, 2)), day + timedelta(days=rng.randint(0, 2)),
                    rng.choice(("vacation", "sick", "conference")))
    names = ", ".join(p["name"] for p in others[:-1]) + f" and {others[-1]['name']}"
    in_chat(world, host, "a team sync booked")
    prompt = (f"{host['name']} writes in chat: \"Please set up a {minutes}-minute {topic} on {_when(day)} (UTC) with {names} and me, at the "
              "earliest time that works for everyone.\" Handle it under the policy and answer with submit_answer.")
    finds = [find_person(p, optional=p["user_id"] != away["user_id"] or which == "ok") for p in people]
    slots = optional_call("find_free_slots", user_ids=ids, date=day.isoformat(), minutes=minutes)
    if which == "on_leave":
        return TaskDraft(prompt=prompt, oracle=[*finds, slots, refusal("attendee_on_leave", f"{away['name']} is on leave on {day.isoformat()}.")],
                         outcome=refused("attendee_on_leave"),
                         rubric=[profile("read the absent person's leave", away["user_id"], "leave"),
                                 never("schedule_event", "nothing booked")],
                         negatives=[negative("books_without", "books without the absent person", *finds,
                                             call("schedule_event", title=topic, starts_at=stamp(_slots(world, day, minutes,
                                                                                                           [i for i in ids if i != away["user_id"]])[0]),
                                                  minutes=minutes, required_user_ids=[i for i in ids if i != away["user_id"]]), answer("Booked."))],
                         metadata={"case": which})
    free = _slots(world, day, minutes, ids)
    start = free[0]
    got = state("SELECT group_concat(e.starts_at || '/' || e.ends_at, ';') FROM events e WHERE e.organizer_id = ? AND e.status = 'confirmed' AND "
                "(SELECT group_concat(user_id, ',') FROM (SELECT user_id FROM attendees a WHERE a.event_id = e.event_id AND a.required = 1 "
                "ORDER BY user_id)) = ?", AGENT, ",".join(ids), expect=f"{stamp(start)}/{stamp(start + timedelta(minutes=minutes))}", weight=3,
                name="meeting booked at the earliest slot for everyone")
    book = call("schedule_event", title=topic.capitalize(), starts_at=stamp(start), minutes=minutes, required_user_ids=ids)
    return TaskDraft(prompt=prompt, oracle=[*finds, slots, book, answer(f"Booked the {topic} at {stamp(start)}.")], outcome=completed(), rubric=[got],
                     negatives=[negative("later_slot", "books a later slot", call("schedule_event", title=topic, starts_at=stamp(free[-1]), minutes=minutes,
                                                                                  required_user_ids=ids), answer("Booked."))] if len(free) > 1 else
                     [negative("host_only", "books without the others", call("schedule_event", title=topic, starts_at=stamp(start), minutes=minutes,
                                                                             required_user_ids=[host["user_id"]]), answer("Booked."))],
                     metadata={"case": which})


TEMPLATES = [
    TaskTemplate(team_sync_across_zones, split="test", difficulty="medium", category="meetings", tags=["time_zones", "leave"],
                 tools=["search_people", "get_person", "find_free_slots", "schedule_event", "submit_answer"]),
]
