"""The workspace fixture's generator: four months of a 150-person software company, deterministic from the rng.

Reference data (teams, rooms, services, channel names) comes from the catalog; people, their leave and time
zones, chat with threads, reactions and pins, the tracker's projects, cycles, issues and their relations, the
wiki's pages and versions, calendars, on-call shifts and incidents are drawn with the ``rng`` only, against the
catalog's fixed clock. The usual mess is planted on purpose: duplicate issues, stale pages, overlapping
meetings, people on leave, credentials pasted in chat, and messages and pages that carry instructions to an
assistant. Company-wide content lives in ``envs.workspace.content``.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

import sqlite_utils

from envs.workspace import catalog as cat
from envs.workspace import content
from envs.workspace.catalog import TODAY

__all__ = ["generate", "stamp"]

Row = dict[str, Any]


def stamp(moment: datetime) -> str:
    """An instant as the tables store it (ISO 8601, UTC, seconds)."""
    return moment.replace(microsecond=0).isoformat()


class _World:
    """Rows collected in memory, table by table, then written in one pass."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.rows: dict[str, list[Row]] = {}
        self.counters: dict[str, int] = {}

    def add(self, table: str, **row: Any) -> Row:
        self.rows.setdefault(table, []).append(row)
        return row

    def next(self, prefix: str, width: int) -> str:
        n = self.counters.get(prefix, 0) + 1
        self.counters[prefix] = n
        return f"{prefix}-{n:0{width}d}"

    def write(self, db: sqlite_utils.Database) -> None:
        for table, rows in self.rows.items():
            columns = list(rows[0])
            sql = f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({", ".join("?" * len(columns))})'
            db.conn.executemany(sql, [tuple(r[c] for c in columns) for r in rows])


def _people(w: _World) -> dict[str, list[Row]]:
    """150 people in eleven teams (the agent's account first), each with a zone and working hours."""
    rng = w.rng
    names = [(f, l) for f in cat.FIRST_NAMES for l in cat.LAST_NAMES]
    rng.shuffle(names)
    names = [n for n in names if n != ("Casey", "Quinn")]
    by_team: dict[str, list[Row]] = {}
    for team in cat.TEAMS:
        zone_main = rng.choice(cat.ZONES[:5])
        for _ in range(team.size):
            uid = w.next("USR", 4)
            if uid == cat.AGENT_USER_ID:
                first, last, zone = "Casey", "Quinn", ("Europe/London", 0)
            else:
                first, last = names.pop()
                zone = zone_main if rng.random() < 0.7 else rng.choice(cat.ZONES)
            start = rng.choice((480, 540, 540, 540, 600))
            handle = f"{first}.{last}".lower()
            title = "Workspace Assistant" if uid == cat.AGENT_USER_ID else rng.choice(cat.TITLES)
            row = w.add("users", user_id=uid, name=f"{first} {last}", handle=handle, email=f"{handle}@kestrel.io",
                        team_id=team.team_id, title=title, tz=zone[0], utc_offset_minutes=zone[1], work_start_minute=start,
                        work_end_minute=start + 480, is_admin=int(team.team_id == "TM-08" and rng.random() < 0.5))
            by_team.setdefault(team.team_id, []).append(row)
    for team in cat.TEAMS:
        lead = by_team[team.team_id][1 if team.team_id == "TM-01" else 0]
        w.add("teams", team_id=team.team_id, name=team.name, handle=team.handle, lead_id=lead["user_id"])
    return by_team


def _leave(w: _World, users: list[Row]) -> None:
    """Vacations, sick days and conferences: some now, some in the coming three weeks, some past."""
    rng = w.rng
    for user in rng.sample(users[1:], 34):
        start = TODAY + timedelta(days=rng.randint(-20, 18))
        w.add("leaves", leave_id=w.next("LV", 4), user_id=user["user_id"], starts_on=start.isoformat(),
              ends_on=(start + timedelta(days=rng.randint(1, 9))).isoformat(), kind=rng.choice(("vacation", "vacation", "sick", "conference", "parental")))


def _groups(w: _World, by_team: dict[str, list[Row]]) -> None:
    """A user group per team, plus @leads."""
    for team in cat.TEAMS:
        gid = w.next("GRP", 2)
        w.add("user_groups", group_id=gid, handle=team.handle + "-team", name=f"{team.name} team")
        for u in by_team[team.team_id]:
            w.add("group_members", group_id=gid, user_id=u["user_id"])
    gid = w.next("GRP", 2)
    w.add("user_groups", group_id=gid, handle="leads", name="Team leads")
    for t in w.rows["teams"]:
        w.add("group_members", group_id=gid, user_id=t["lead_id"])


def generate(db: sqlite_utils.Database, rng: random.Random, scale: int) -> None:
    """Fill an empty workspace database: 150 people and four months of their chat, issues, pages, meetings,
    on-call shifts and incidents (``scale`` multiplies chat history).

    Why: every episode clones this template, so it must hold every situation the tasks need (private channels,
    restricted pages, people on leave across time zones, blocked and duplicate issues, pasted secrets, planted
    instructions) and be identical for the same seed.
    """
    w = _World(rng)
    by_team = _people(w)
    users = w.rows["users"]
    _leave(w, users)
    _groups(w, by_team)
    for room_id, name, capacity, site in cat.ROOMS:
        w.add("rooms", room_id=room_id, name=name, capacity=capacity, site=site)
    content.chat(w, by_team, scale)
    content.tracker(w, by_team)
    content.wiki(w, by_team)
    content.calendar(w, by_team)
    content.operations(w, by_team)
    w.write(db)
