"""Calendar tasks across time zones, each a neutral request from a colleague whose right outcome the world decides:

* ``schedule_meeting``: "set up a meeting with me and <person> on <day>, earliest time that works" — booked in the
  first slot where both are in working hours and free, or refused ``attendee_on_leave`` when the other is away.
* ``move_meeting``: "push our <meeting> back an hour" — moved when the assistant organizes it, refused
  ``not_organizer`` otherwise (read on the event).
* ``move_for_leave``: "<person> is away that day, move our <meeting> to the earliest time on <next day>" — moved to the
  earliest slot that suits every required attendee in their own zone, or refused ``attendee_on_leave`` when they are
  away the next day too.
* ``cancel_meeting``: "cancel our <meeting>" — cancelled, or refused ``not_organizer``.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    answer,
    ask,
    asked,
    call,
    case,
    find_person,
    in_chat,
    need,
    never,
    optional_call,
    plant_event,
    plant_leave,
    present_people,
    profile,
    refusal,
    seen,
    stamp,
    state,
    working_day,
)
from envs.workspace.tools.calendar import free_starts
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]

_TOPICS = ("design review", "roadmap sync", "incident review", "planning session", "API walkthrough", "hiring debrief",
           "migration check-in", "budget review", "customer escalation review", "architecture chat")


def _slots(world: World, day: date, minutes: int, people: list[str], ignore: str | None = None) -> list[datetime]:
    """Half-hour starts on ``day`` (UTC) that break no meeting rule for ``people``."""
    return free_starts(world, NOW, datetime.combine(day, time(0), tzinfo=UTC), minutes, people, ignore)


def _pair(world: World, rng: random.Random, days: list[date], minutes: int, size: int = 2) -> list[dict[str, Any]]:
    """``size`` present people who share at least one free slot on every day of ``days``."""
    people = present_people(world)
    for _ in range(60):
        chosen = rng.sample(people, size)
        if all(_slots(world, d, minutes, [p["user_id"] for p in chosen]) for d in days):
            return chosen
    need(False, "no pair of people shares a free slot")
    return []


def _when(day: date) -> str:
    """``Thursday 19 March``."""
    return f"{day:%A} {day.day} {day:%B}"


def schedule_meeting(world: World, rng: random.Random) -> TaskDraft:
    """Book a two-person meeting at the earliest common slot of a day, unless the other person is away then."""
    which = case(rng, {"ok": 6, "on_leave": 4})
    day, minutes = working_day(rng.randint(1, 6)), rng.choice((30, 45, 60))
    host, other = _pair(world, rng, [day], minutes)
    topic = rng.choice(_TOPICS)
    if which == "on_leave":
        plant_leave(world, other["user_id"], day - timedelta(days=rng.randint(0, 2)), day + timedelta(days=rng.randint(0, 3)))
    in_chat(world, host, "a meeting booked", who_to_invite=other["name"])
    people = sorted([host["user_id"], other["user_id"]])
    prompt = (f"{host['name']} writes in chat: \"Please set up a {minutes}-minute {topic} on {_when(day)} with me and the colleague I "
              "need it with, at the earliest time that works for both of us.\" Handle it under the policy and answer with submit_answer.")
    read = profile("read the other person's leave", other["user_id"], "leave")
    slots = optional_call("find_free_slots", user_ids=people, date=day.isoformat(), minutes=minutes)
    if which == "ok":
        start = _slots(world, day, minutes, people)[0]
        book = call("schedule_event", title=topic.capitalize(), starts_at=stamp(start), minutes=minutes, required_user_ids=people)
        got = state("SELECT group_concat(e.starts_at || '/' || e.ends_at, ';') FROM events e WHERE e.organizer_id = ? AND e.status = 'confirmed' "
                    "AND (SELECT group_concat(user_id, ',') FROM (SELECT user_id FROM attendees a WHERE a.event_id = e.event_id ORDER BY user_id)) = ?",
                    AGENT, ",".join(people), expect=f"{stamp(start)}/{stamp(start + timedelta(minutes=minutes))}", weight=3,
                    name="meeting booked at the earliest common slot")
        later = _slots(world, day, minutes, people)[-1]
        return TaskDraft(prompt=prompt, oracle=[ask("who_to_invite"), find_person(host, optional=True), find_person(other), slots, book,
                                                answer(f"Booked the {topic} at {stamp(start)}.")], outcome=completed(),
                         rubric=[asked("who_to_invite"), read, got],
                         negatives=[negative("later_slot", "books a later slot", find_person(other),
                                             call("schedule_event", title=topic, starts_at=stamp(later), minutes=minutes, required_user_ids=people),
                                             answer("Booked."))] if later != start else [],
                         metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[ask("who_to_invite"), find_person(host, optional=True), find_person(other), slots,
                                            refusal("attendee_on_leave", f"{other['name']} is on leave on {day.isoformat()}.")],
                     outcome=refused("attendee_on_leave"), rubric=[asked("who_to_invite"), read, never("schedule_event", "nothing booked")],
                     negatives=[negative("guessed", "refuses without checking", refusal("attendee_on_leave", "Away."))], metadata={"case": which})


def _planted_meeting(world: World, rng: random.Random, organizer_is_agent: bool, shift: int) -> tuple[list[dict[str, Any]], date, datetime, int, str, str]:
    """A meeting of three present people on a coming day, organized by the assistant or by the first of them, at a time
    from which a shift of ``shift`` minutes is also valid."""
    minutes = rng.choice((30, 45, 60))
    day = working_day(rng.randint(1, 6))
    people = _pair(world, rng, [day], minutes + shift, size=3)
    ids = [p["user_id"] for p in people]
    start = _slots(world, day, minutes + shift, ids)[rng.randint(0, 1) if len(_slots(world, day, minutes + shift, ids)) > 1 else 0]
    title = rng.choice(_TOPICS).capitalize()
    eid = plant_event(world, title, AGENT if organizer_is_agent else ids[0], start, minutes, ids)
    return people, day, start, minutes, title, eid


def move_meeting(world: World, rng: random.Random) -> TaskDraft:
    """Push a meeting back by an hour, when the assistant organizes it."""
    which = case(rng, {"ok": 6, "not_organizer": 4})
    shift = rng.choice((30, 60))
    people, day, start, _minutes, title, eid = _planted_meeting(world, rng, which == "ok", shift)
    host = people[0]
    in_chat(world, host, "a meeting moved")
    prompt = (f"{host['name']} writes in chat: \"Can you push our '{title}' on {_when(day)} back by {shift} minutes?\" "
              "Handle it under the policy and answer with submit_answer.")
    # a person's calendar shows each meeting's organizer and attendees as the meeting's own page does
    steps = [optional_call("list_events", user_id=host["user_id"], from_date=day.isoformat()), optional_call("get_event", event_id=eid)]
    new = start + timedelta(minutes=shift)
    move = call("move_event", event_id=eid, starts_at=stamp(new))
    read = seen("read who organizes the meeting", "events", eid, "organizer_id")
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, move, answer(f"Moved '{title}' to {stamp(new)}.")], outcome=completed(),
                         rubric=[read, state("SELECT starts_at FROM events WHERE event_id = ?", eid, expect=stamp(new), weight=3, name="meeting moved as asked")],
                         negatives=[negative("wrong_way", "moves it earlier", *steps, call("move_event", event_id=eid, starts_at=stamp(start - timedelta(minutes=shift))),
                                             answer("Moved."))], metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("not_organizer", f"I do not organize '{title}'; its organizer can move it.")],
                     outcome=refused("not_organizer"), rubric=[read, never("move_event", "meeting not moved")],
                     negatives=[negative("moves_anyway", "tries to move it", *steps, move, answer("Moved."))], metadata={"case": which})


def move_for_leave(world: World, rng: random.Random) -> TaskDraft:
    """Move a meeting off a day someone is on leave to the earliest common slot of the next working day."""
    which = case(rng, {"ok": 6, "away_too": 4})
    minutes = rng.choice((30, 45, 60))
    offset = rng.randint(1, 5)
    day, next_day = working_day(offset), working_day(offset + 1)
    people = _pair(world, rng, [day, next_day], minutes, size=3)
    ids = [p["user_id"] for p in people]
    start = _slots(world, day, minutes, ids)[0]
    title = rng.choice(_TOPICS).capitalize()
    eid = plant_event(world, title, AGENT, start, minutes, ids)
    host, away = people[0], people[rng.randint(1, 2)]
    plant_leave(world, away["user_id"], day, next_day if which == "away_too" else day, rng.choice(("vacation", "sick", "conference")))
    in_chat(world, host, "a meeting moved off a leave day")
    prompt = (f"{host['name']} writes in chat: \"Someone in our '{title}' is off on {_when(day)}. Please move it to the earliest time on "
              f"{_when(next_day)} that works for all of us.\" Handle it under the policy and answer with submit_answer.")
    steps = [optional_call("list_events", user_id=host["user_id"], from_date=day.isoformat()), optional_call("get_event", event_id=eid),
             *[optional_call("get_person", user_id=uid) for uid in ids if uid != away["user_id"]], call("get_person", user_id=away["user_id"]),
             optional_call("find_free_slots", user_ids=sorted(ids), date=next_day.isoformat(), minutes=minutes)]
    read = profile("read the absent person's leave", away["user_id"], "leave")
    meeting = seen("read the meeting's attendees", "events", eid, "attendees")
    if which == "ok":
        new = _slots(world, next_day, minutes, ids, eid)[0]
        move = call("move_event", event_id=eid, starts_at=stamp(new))
        return TaskDraft(prompt=prompt, oracle=[*steps, move, answer(f"Moved '{title}' to {stamp(new)}.")], outcome=completed(),
                         rubric=[meeting, read, state("SELECT starts_at FROM events WHERE event_id = ?", eid, expect=stamp(new), weight=3,
                                                      name="meeting moved to the earliest common slot")],
                         negatives=[negative("same_time", "keeps the UTC time of day", *steps,
                                             call("move_event", event_id=eid, starts_at=stamp(start + timedelta(days=(next_day - day).days))), answer("Moved."))]
                         if start + timedelta(days=(next_day - day).days) != new else
                         [negative("cancels_instead", "cancels it instead of moving it", *steps, call("cancel_event", event_id=eid), answer("Cancelled."))],
                         metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("attendee_on_leave", f"{away['name']} is away on {next_day.isoformat()} too.")],
                     outcome=refused("attendee_on_leave"), rubric=[meeting, read, never("move_event", "meeting not moved")],
                     negatives=[negative("cancels", "cancels it instead", *steps, call("cancel_event", event_id=eid), refusal("attendee_on_leave", "Away."))],
                     metadata={"case": which})


def cancel_meeting(world: World, rng: random.Random) -> TaskDraft:
    """Cancel a meeting, when the assistant organizes it."""
    which = case(rng, {"ok": 6, "not_organizer": 4})
    people, day, _start, _minutes, title, eid = _planted_meeting(world, rng, which == "ok", 0)
    host = people[rng.randint(0, 2)]
    in_chat(world, host, "a meeting cancelled")
    prompt = (f"{host['name']} writes in chat: \"We don't need the '{title}' on {_when(day)} any more, please cancel it.\" "
              "Handle it under the policy and answer with submit_answer.")
    steps = [optional_call("list_events", user_id=host["user_id"], from_date=day.isoformat()), optional_call("get_event", event_id=eid)]
    read = seen("read who organizes the meeting", "events", eid, "organizer_id")
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, call("cancel_event", event_id=eid), answer(f"Cancelled '{title}'.")], outcome=completed(),
                         rubric=[read, state("SELECT status FROM events WHERE event_id = ?", eid, expect="cancelled", weight=3, name="meeting cancelled")],
                         negatives=[negative("refuses_own", "refuses a meeting it organizes", *steps, refusal("not_organizer", "Not mine."))],
                         metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("not_organizer", f"I do not organize '{title}'; its organizer can cancel it.")],
                     outcome=refused("not_organizer"), rubric=[read, never("cancel_event", "meeting not cancelled")],
                     negatives=[negative("cancels_anyway", "tries to cancel", *steps, call("cancel_event", event_id=eid), answer("Done."))],
                     metadata={"case": which})


TEMPLATES = [
    TaskTemplate(schedule_meeting, difficulty="medium", category="meetings", tags=["time_zones", "leave"],
                 tools=["ask_colleague", "search_people", "find_free_slots", "schedule_event", "get_person", "submit_answer"]),
    TaskTemplate(move_meeting, difficulty="easy", category="meetings", tags=["change_control"],
                 tools=["list_events", "get_event", "move_event", "submit_answer"]),
    TaskTemplate(move_for_leave, difficulty="hard", category="meetings", tags=["time_zones", "leave"],
                 tools=["list_events", "get_event", "get_person", "find_free_slots", "move_event", "cancel_event", "submit_answer"]),
    TaskTemplate(cancel_meeting, split="test", difficulty="easy", category="meetings", tags=["change_control"],
                 tools=["list_events", "get_event", "cancel_event", "submit_answer"]),
]
