"""Directory tools: find people, read one person's profile (time zone, working hours, leave), list teams."""

from __future__ import annotations

from envs.workspace import models as m
from envs.workspace import rules
from envs.workspace.types import Limit, Offset, Query, UserId
from envs.workspace.views import page, person_view
from fixtures.search import match
from servers.tools import ToolContext, tool

__all__ = ["get_person", "list_teams", "search_people"]


def _like(text: str) -> str:
    """A LIKE pattern matching ``text`` literally anywhere."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@tool(title="Search people")
async def search_people(ctx: ToolContext, query: Query, limit: Limit = 20, offset: Offset = 0) -> m.PersonPage:
    """Find people by name, handle, e-mail, team or title (case-insensitive, any part). Each result shows their time
    zone, working hours (local and UTC) and leave."""
    pattern = _like(query.strip())
    where = ("(u.name LIKE ? ESCAPE '\\' OR u.handle LIKE ? ESCAPE '\\' OR u.email LIKE ? ESCAPE '\\' OR t.name LIKE ? ESCAPE '\\' "
             "OR u.title LIKE ? ESCAPE '\\')")
    params: tuple[object, ...] = (pattern,) * 5
    candidates = match(ctx.world, "people_search", query.strip())
    if candidates is not None:  # the trigram index, or the team's name: every person the LIKE can match, only they are read
        where = ("(u.rowid IN (SELECT rowid FROM people_search WHERE people_search MATCH ?) "
                 "OR u.team_id IN (SELECT team_id FROM teams WHERE name LIKE ? ESCAPE '\\')) AND " + where)
        params = (candidates, pattern, *params)
    total = ctx.world.query(f"SELECT count(*) AS n FROM users u JOIN teams t USING (team_id) WHERE {where}", params)[0]["n"]
    rows = ctx.world.query(f"SELECT u.* FROM users u JOIN teams t USING (team_id) WHERE {where} ORDER BY u.name, u.user_id LIMIT ? OFFSET ?",
                           (*params, limit, offset))
    people = [person_view(ctx.world, r) for r in rows]
    return m.PersonPage(people=people, total=total, next_offset=page(offset, len(people), total))


@tool(title="Get person")
async def get_person(ctx: ToolContext, user_id: UserId) -> m.Person:
    """One person's profile: team, title, time zone and UTC offset, working hours (local and UTC), and their leave
    from two weeks ago on (on_leave_today says whether they are away today)."""
    return person_view(ctx.world, rules.user_row(ctx.world, user_id))


@tool(title="List teams")
async def list_teams(ctx: ToolContext) -> m.TeamList:
    """Every team with its chat handle, lead and size."""
    rows = ctx.world.query("SELECT t.*, u.name AS lead_name, (SELECT count(*) FROM users x WHERE x.team_id = t.team_id) AS members "
                           "FROM teams t JOIN users u ON u.user_id = t.lead_id ORDER BY t.team_id")
    return m.TeamList(teams=[m.Team(team_id=r["team_id"], name=r["name"], handle=r["handle"], lead_id=r["lead_id"], lead_name=r["lead_name"],
                   members=r["members"]) for r in rows])
