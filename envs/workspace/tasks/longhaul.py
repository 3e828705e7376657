"""Long-horizon tasks (10–20 calls) across the tracker, wiki, calendar and chat, each decided by the world:

* ``postmortem_prep``: "set up the postmortem of <service>'s resolved incident" — a follow-up issue filed in the owning
  team's project, the service's runbook linked to it, a 60-minute review booked with the incident's commander and the
  project's lead at the earliest common slot of the day named, and #incidents told; refused ``attendee_on_leave``
  (nothing set up) when the commander is away that day (read on the incident and the commander's profile).
* ``release_notes_long``: "release notes for <project> <cycle>: a section on <page>, a comment on each shipped issue, a
  note in #releases" — done for every issue completed in the cycle; refused ``no_access`` (nothing done) when the page
  is restricted and the assistant is not on it (read on the page).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    TODAY,
    answer,
    call,
    case,
    channel_id,
    in_chat,
    need,
    never,
    next_id,
    one,
    optional_call,
    pick,
    plant_issue,
    plant_leave,
    plant_page,
    present_people,
    profile,
    refusal,
    rows,
    seen,
    stamp,
    state,
    subject,
    text_is,
    working_day,
)
from envs.workspace.tasks.meetings import _slots, _when
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def postmortem_prep(world: World, rng: random.Random) -> TaskDraft:
    """A resolved incident's postmortem set up across the tracker, wiki, calendar and chat, unless its commander is away that day."""
    which = case(rng, {"ok": 6, "commander_away": 4})
    day = working_day(rng.randint(1, 4))
    services = rows(world, "SELECT s.*, p.project_id, p.name AS project, p.lead_id FROM services s JOIN projects p USING (team_id) "
                           "WHERE s.runbook_page_id IS NOT NULL ORDER BY s.service_id")
    rng.shuffle(services)
    chosen = None
    for service in services:
        lead = present_people(world, "AND u.user_id = ?", service["lead_id"])
        if not lead:
            continue
        team = [p for p in present_people(world, "AND u.team_id = ?", service["team_id"]) if p["user_id"] != service["lead_id"]]
        rng.shuffle(team)
        commander = next((p for p in team if _slots(world, day, 60, sorted([p["user_id"], service["lead_id"]]))), None)
        if commander is not None:
            chosen = (service, lead[0], commander)
            break
    need(chosen is not None, "a service whose lead and a teammate share a slot")
    service, lead, commander = chosen
    people = sorted([commander["user_id"], lead["user_id"]])
    slot = _slots(world, day, 60, people)[0]
    inc_id = next_id(world, "incidents")
    opened = NOW - timedelta(days=rng.randint(2, 9), hours=rng.randint(0, 12))
    inc_title = f"{service['name']} {rng.choice(('error spike', 'latency', 'partial outage', 'failed deploy', 'queue backlog'))} {rng.randint(2, 99)}"
    world.execute("INSERT INTO incidents (incident_id, service_id, title, severity, status, commander_id, opened_at, resolved_at) "
                  "VALUES (?, ?, ?, ?, 'resolved', ?, ?, ?)", (inc_id, service["service_id"], inc_title, rng.choice(("sev1", "sev2", "sev3")),
                                                               commander["user_id"], stamp(opened), stamp(opened + timedelta(hours=rng.randint(1, 20)))))
    if which == "commander_away":
        plant_leave(world, commander["user_id"], day - timedelta(days=rng.randint(0, 2)), day + timedelta(days=rng.randint(0, 3)),
                    rng.choice(("vacation", "sick", "conference")))
    asker = pick(rng, [p for p in present_people(world) if p["user_id"] not in people], "asker")
    incidents = channel_id(world, "incidents")
    in_chat(world, asker, "a postmortem set up")
    prompt = (f"{asker['name']} writes in chat: \"The '{inc_title}' incident is resolved. Please set up its postmortem: file a follow-up issue "
              f"in the owning team's project, link the service's runbook to it, book a 60-minute review with the incident's commander and that "
              f"project's lead at the earliest time on {_when(day)} that suits both, and post the issue and the time in #incidents. If they "
              "can't both make that day, don't set anything up and tell me.\" Handle it under the policy and answer with submit_answer, giving "
              "the issue's id as `issue`.")
    look = [optional_call("list_incidents", status="resolved"), optional_call("get_incident", incident_id=inc_id)]
    read_inc = seen("read the incident's commander", "incidents", inc_id, "commander_id")
    if which == "commander_away":
        return TaskDraft(prompt=prompt, oracle=[*look, call("get_person", user_id=commander["user_id"]),
                                                refusal("attendee_on_leave", f"{commander['name']} is on leave on {day.isoformat()}: nothing set up.")],
                         outcome=refused("attendee_on_leave"),
                         rubric=[read_inc, profile("read the commander's leave", commander["user_id"], "leave"),
                                 never("create_issue", "no follow-up filed"), never("schedule_event", "no review booked")],
                         negatives=[negative("files_anyway", "files the follow-up anyway", *look,
                                             call("create_issue", project_id=service["project_id"], title=f"Postmortem: {inc_title}", description="Follow-up."),
                                             refusal("attendee_on_leave", "Away."))],
                         metadata={"case": which})
    iid = next_id(world, "issues")
    runbook = service["runbook_page_id"]
    work = [*look, optional_call("get_service", service_id=service["service_id"]), optional_call("list_projects"),
            call("create_issue", project_id=service["project_id"], title=f"Postmortem: {inc_title}", description=f"Follow-up of {inc_id}."),
            call("link_page_to_issue", page_id=runbook, issue_id=iid),
            optional_call("get_person", user_id=commander["user_id"]), optional_call("get_person", user_id=lead["user_id"]),
            optional_call("find_free_slots", user_ids=people, date=day.isoformat(), minutes=60),
            call("schedule_event", title=f"Postmortem: {inc_title}", starts_at=stamp(slot), minutes=60, required_user_ids=people),
            call("post_message", channel_id=incidents, body=f"Postmortem of {inc_id}: follow-up {iid}, review at {stamp(slot)}.")]
    rubric = [read_inc,
              state("SELECT count(*) FROM issues WHERE project_id = ? AND reporter_id = ?", service["project_id"], AGENT, expect=1, weight=2,
                    name="follow-up filed in the owning project"),
              state("SELECT count(*) FROM page_links l JOIN issues i USING (issue_id) WHERE l.page_id = ? AND i.reporter_id = ? AND i.project_id = ?",
                    runbook, AGENT, service["project_id"], expect=1, weight=2, name="runbook linked to the follow-up"),
              state("SELECT group_concat(e.starts_at, ';') FROM events e WHERE e.organizer_id = ? AND e.status = 'confirmed' AND e.ends_at = ? AND "
                    "(SELECT group_concat(user_id, ',') FROM (SELECT user_id FROM attendees a WHERE a.event_id = e.event_id ORDER BY user_id)) = ?",
                    AGENT, stamp(slot + timedelta(minutes=60)), ",".join(people), expect=stamp(slot), weight=3,
                    name="review booked with the commander and the lead at the earliest slot"),
              state("SELECT count(*) FROM messages WHERE channel_id = ? AND user_id = ? AND body LIKE ?", incidents, AGENT, f"%{iid}%", expect=1,
                    name="#incidents told"),
              text_is("issue", iid, weight=1)]
    later = _slots(world, day, 60, people)[-1]
    return TaskDraft(prompt=prompt, oracle=[*work, answer(f"Postmortem set up: {iid}, review at {stamp(slot)}.", issue=iid)], outcome=completed(),
                     rubric=rubric,
                     negatives=[negative("no_link", "forgets the runbook", *[c for c in work if not c.optional and c.tool != "link_page_to_issue"],
                                         answer("Done.", issue=iid))] +
                               ([negative("later_slot", "books a later slot", *[c if c.tool != "schedule_event" else
                                                                               call("schedule_event", title="Postmortem", starts_at=stamp(later), minutes=60,
                                                                                    required_user_ids=people) for c in work if not c.optional],
                                          answer("Done.", issue=iid))] if later != slot else []),
                     metadata={"case": which, "issue": iid})


def release_notes_long(world: World, rng: random.Random) -> TaskDraft:
    """Release notes for a past cycle: a section on the notes page, a comment on every shipped issue, a note in #releases."""
    which = case(rng, {"ok": 6, "no_access": 4})
    cycles = rows(world, "SELECT c.*, p.name AS project, p.team_id FROM cycles c JOIN projects p USING (project_id) WHERE c.ends_on < ? AND "
                         "(SELECT count(*) FROM issues i WHERE i.cycle_id = c.cycle_id AND i.state = 'done') <= 5 ORDER BY c.cycle_id", TODAY.isoformat())
    cycle = pick(rng, cycles, "cycle")
    team = present_people(world, "AND u.team_id = ?", cycle["team_id"])
    asker, owner = rng.sample(team, 2)
    for _ in range(rng.randint(3, 5)):
        plant_issue(world, cycle["project_id"], subject(rng), reporter=asker["user_id"], state="done", days_ago=rng.randint(1, 20), cycle_id=cycle["cycle_id"])
    done = [r["issue_id"] for r in world.query("SELECT issue_id FROM issues WHERE cycle_id = ? AND state = 'done' ORDER BY issue_id", (cycle["cycle_id"],))]
    space = one(world, "SELECT * FROM spaces WHERE team_id = ?", cycle["team_id"])
    title = f"{cycle['project']} release notes {rng.randint(2, 99)}"
    body = f"# {title}\n\nOne section per cycle, newest first."
    restricted = which == "no_access" or rng.random() < 0.3
    access = tuple(p["user_id"] for p in rng.sample(team, min(3, len(team)))) + (() if which == "no_access" else (AGENT,))
    page_id = plant_page(world, space["space_id"], title, body, owner["user_id"], restricted=restricted, access=access if restricted else (),
                         days_ago=rng.randint(20, 100))
    releases = channel_id(world, "releases")
    in_chat(world, asker, "release notes done")
    prompt = (f"{asker['name']} writes in chat: \"Please do the release notes for {cycle['project']} {cycle['name']}: add a section listing every "
              f"issue completed in that cycle (by id) to the '{title}' page, comment 'Shipped in {cycle['name']}' on each of those issues, and "
              "post in #releases that the notes are up. If you can't edit the page, don't do the rest and tell me.\" Handle it under the policy "
              "and answer with submit_answer, giving how many issues shipped as `count`.")
    read = optional_call("get_page", page_id=page_id)
    gate = seen("read whether the assistant can read the notes page", "pages", page_id, "you_can_read")
    if which == "no_access":
        return TaskDraft(prompt=prompt, oracle=[optional_call("search_pages", query=title), read,
                                                refusal("no_access", f"'{title}' is restricted and I am not on it; ask {owner['name']}.")],
                         outcome=refused("no_access"),
                         rubric=[gate, never("comment_on_issue", "no issue commented"), never("post_message", "nothing posted")],
                         negatives=[negative("comments_anyway", "comments without the page", read,
                                             *[call("comment_on_issue", issue_id=i, body=f"Shipped in {cycle['name']}") for i in done],
                                             refusal("no_access", "Restricted."))],
                         metadata={"case": which})
    section = f"{body}\n\n## {cycle['name']}\n" + "\n".join(f"- {i}" for i in done)
    search = call("search_issues", cycle_id=cycle["cycle_id"], state="done", limit=100)
    comments = [call("comment_on_issue", issue_id=i, body=f"Shipped in {cycle['name']}") for i in done]
    oracle = [optional_call("list_projects"), search, optional_call("search_pages", query=title), optional_call("get_page", page_id=page_id),
              call("edit_page", page_id=page_id, body=section, base_version=1), *comments,
              call("post_message", channel_id=releases, body=f"Release notes for {cycle['project']} {cycle['name']} are up: {title}."),
              answer(f"{len(done)} issues shipped.", count=str(len(done)))]
    listed = " AND ".join(["body LIKE ?"] * len(done))
    marks = ",".join("?" * len(done))
    return TaskDraft(prompt=prompt, oracle=oracle, outcome=completed(),
                     rubric=[gate, seen("listed the cycle's completed issues", "issues", done, "state", "cycle"),
                             state(f"SELECT count(*) FROM pages WHERE page_id = ? AND version = 2 AND {listed}", page_id, *[f"%{i}%" for i in done],
                                   expect=1, weight=3, name="notes section lists every completed issue"),
                             state(f"SELECT count(DISTINCT issue_id) FROM issue_comments WHERE user_id = ? AND issue_id IN ({marks})", AGENT, *done,
                                   expect=len(done), weight=2, name="every shipped issue commented"),
                             state("SELECT count(*) FROM messages WHERE channel_id = ? AND user_id = ?", releases, AGENT, expect=1, name="#releases told"),
                             text_is("count", str(len(done)), weight=1)],
                     negatives=[negative("misses_one", "leaves the last issue out", search, read,
                                         call("edit_page", page_id=page_id, body="\n".join(f"- {i}" for i in done[:-1]) or "none", base_version=1),
                                         *comments[:-1], oracle[-2], answer("Done.", count=str(len(done) - 1)))],
                     metadata={"case": which, "done": done})


TEMPLATES = [
    TaskTemplate(postmortem_prep, difficulty="hard", category="cross_app", tags=["long_horizon", "incidents", "meetings", "leave"],
                 tools=["list_incidents", "get_incident", "get_service", "list_projects", "create_issue", "link_page_to_issue", "get_person",
                        "find_free_slots", "schedule_event", "post_message", "submit_answer"]),
    TaskTemplate(release_notes_long, difficulty="hard", category="cross_app", tags=["long_horizon", "reporting", "restricted_pages"],
                 tools=["list_projects", "search_issues", "search_pages", "get_page", "edit_page", "comment_on_issue", "post_message", "submit_answer"]),
]
