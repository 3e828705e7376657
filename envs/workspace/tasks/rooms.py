"""Booking a named room for a group at a time given in the asker's own time zone (policy section 4):

* ``book_room``: "book <room> for a <n>-minute <topic> on <day> at <hh:mm> my time with <names> and me" — booked when the
  room holds everyone and every required attendee is free; refused ``room_too_small`` (read on the rooms) or
  ``attendee_busy`` (read on the busy person's calendar).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    answer,
    call,
    case,
    find_person,
    in_chat,
    need,
    never,
    optional_call,
    pick,
    plant_event,
    present_people,
    refusal,
    rows,
    seen,
    stamp,
    state,
    working_day,
)
from envs.workspace.tasks.meetings import _TOPICS, _slots, _when
from envs.workspace.tools.calendar import meeting_problem
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def book_room(world: World, rng: random.Random) -> TaskDraft:
    """Book a named room for a group at a local time: the room's capacity and the attendees' calendars decide."""
    which = case(rng, {"ok": 5, "room_too_small": 3, "attendee_busy": 3})
    minutes = rng.choice((30, 45, 60))
    day = working_day(rng.randint(1, 5))
    size = rng.randint(5, 7)
    people, free = [], []
    pool = present_people(world)
    for _ in range(80):
        people = rng.sample(pool, size)
        free = _slots(world, day, minutes, [p["user_id"] for p in people])
        if free:
            break
    need(bool(free), "a group of people sharing a free slot")
    ids = sorted(p["user_id"] for p in people)
    start = rng.choice(free)
    asker, others = people[0], people[1:]
    rooms = rows(world, "SELECT * FROM rooms ORDER BY room_id")
    if which == "room_too_small":
        room = pick(rng, [r for r in rooms if r["capacity"] < size], "small room")
    else:
        room = pick(rng, [r for r in rooms if r["capacity"] >= size and meeting_problem(world, NOW, start, minutes, [], size,
                                                                                          r["room_id"]) is None], "free room")
    busy = None
    if which == "attendee_busy":
        busy = rng.choice(others)
        outsiders = [p["user_id"] for p in rng.sample(pool, 6) if p["user_id"] not in ids][:2]
        clash = plant_event(world, rng.choice(_TOPICS).capitalize(), outsiders[0] if outsiders else busy["user_id"],
                            start - timedelta(minutes=rng.choice((0, 15, 30))), rng.choice((45, 60)), [busy["user_id"], *outsiders])
    local = start + timedelta(minutes=asker["utc_offset_minutes"])
    topic = rng.choice(_TOPICS)
    names = ", ".join(p["name"] for p in others[:-1]) + f" and {others[-1]['name']}"
    in_chat(world, asker, "a room booked")
    prompt = (f"{asker['name']} writes in chat: \"Please book {room['name']} for a {minutes}-minute {topic} on {_when(local.date())} at "
              f"{local:%H:%M} my time, with {names} and me.\" Handle it under the policy and answer with submit_answer.")
    finds = [find_person(p, optional=True) for p in people]
    book = call("schedule_event", title=topic.capitalize(), starts_at=stamp(start), minutes=minutes, required_user_ids=ids, room_id=room["room_id"])
    nothing = never("schedule_event", "nothing booked", starts_at=stamp(start))
    if which == "room_too_small":
        see = call("list_rooms")
        return TaskDraft(prompt=prompt, oracle=[*finds, see, refusal("room_too_small", f"{room['name']} holds {room['capacity']}; we are {size}.")],
                         outcome=refused("room_too_small"), rubric=[seen("read the room's capacity", "rooms", room["room_id"], "capacity"), nothing],
                         negatives=[negative("books_anyway", "books a room too small", see,
                                             call("schedule_event", title=topic, starts_at=stamp(start), minutes=minutes, required_user_ids=[AGENT],
                                                  room_id=room["room_id"]), answer("Booked."))],
                         metadata={"case": which})
    if which == "attendee_busy":
        see = call("list_events", user_id=busy["user_id"], from_date=start.date().isoformat())
        return TaskDraft(prompt=prompt, oracle=[*finds, optional_call("list_rooms"), see,
                                                refusal("attendee_busy", f"{busy['name']} is in another meeting then.")],
                         outcome=refused("attendee_busy"),
                         rubric=[seen("read the meeting the attendee is in then", "events", clash, "starts_at", "ends_at", "attendees"), nothing],
                         negatives=[negative("drops_attendee", "books without the busy person", see,
                                             call("schedule_event", title=topic, starts_at=stamp(start), minutes=minutes,
                                                  required_user_ids=[i for i in ids if i != busy["user_id"]], room_id=room["room_id"]), answer("Booked."))],
                         metadata={"case": which})
    got = state("SELECT count(*) FROM events e WHERE e.organizer_id = ? AND e.status = 'confirmed' AND e.starts_at = ? AND e.ends_at = ? AND e.room_id = ? "
                "AND (SELECT group_concat(user_id, ',') FROM (SELECT user_id FROM attendees a WHERE a.event_id = e.event_id AND a.required = 1 "
                "ORDER BY user_id)) = ?", AGENT, stamp(start), stamp(start + timedelta(minutes=minutes)), room["room_id"], ",".join(ids),
                expect=1, weight=3, name="room booked for the group at the asked time")
    return TaskDraft(prompt=prompt, oracle=[*finds, optional_call("list_rooms"), book, answer(f"Booked {room['name']} at {stamp(start)}.")], outcome=completed(),
                     rubric=[got],
                     negatives=[negative("utc_time", "reads the local time as UTC", *[f for f in finds if not f.optional],
                                         call("schedule_event", title=topic, starts_at=stamp(start.replace(hour=local.hour, minute=local.minute)),
                                              minutes=minutes, required_user_ids=ids, room_id=room["room_id"]), answer("Booked."))]
                     if local.hour != start.hour else
                     [negative("no_room", "books without the room", call("schedule_event", title=topic, starts_at=stamp(start), minutes=minutes,
                                                                         required_user_ids=ids), answer("Booked."))],
                     metadata={"case": which})


TEMPLATES = [
    TaskTemplate(book_room, difficulty="medium", category="meetings", tags=["time_zones", "rooms"],
                 tools=["search_people", "list_rooms", "list_events", "find_free_slots", "schedule_event", "submit_answer"]),
]
