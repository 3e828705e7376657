"""``free_starts`` (what find_free_slots and the meeting templates use) gives exactly the starts at which
``meeting_problem`` finds nothing, across time zones, leave, busy calendars and the notice period."""

from __future__ import annotations

import random
from datetime import UTC, datetime, time, timedelta

from envs.workspace import environment
from envs.workspace.catalog import NOW, TODAY
from envs.workspace.tools.calendar import free_starts, meeting_problem


def test_free_starts_agree_with_meeting_problem() -> None:
    world = environment.new_world(0)
    try:
        people = [r["user_id"] for r in world.query("SELECT user_id FROM users ORDER BY user_id")]
        busy_events = [r["event_id"] for r in world.query("SELECT event_id FROM events WHERE status = 'confirmed' ORDER BY event_id LIMIT 40")]
        rng = random.Random(7)
        found_any = 0
        for _ in range(150):
            group = rng.sample(people, rng.randint(1, 4))
            day = datetime.combine(TODAY + timedelta(days=rng.randint(0, 12)), time(0), tzinfo=UTC)
            minutes = rng.choice((30, 45, 60, 90, 120, 150))
            ignore = rng.choice([None, *busy_events])
            brute = [day + timedelta(minutes=k) for k in range(0, 1440, 30)
                     if meeting_problem(world, NOW, day + timedelta(minutes=k), minutes, group, 0, None, ignore) is None]
            assert free_starts(world, NOW, day, minutes, group, ignore) == brute, (group, day, minutes, ignore)
            found_any += bool(brute)
        assert found_any > 30
    finally:
        world.release()
