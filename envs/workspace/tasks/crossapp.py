"""Tasks that cross the company's applications (chat → tracker → wiki → calendar → on-call → chat):

* ``bug_triage``: a bug reported in #support-escalations — find its issue or file one, link the service's runbook,
  book a 30-minute triage with the project's lead and the service's on-call engineer at the earliest common slot of
  the next working day, and reply in the reporter's thread (10–14 calls). One-sided: a triage always goes ahead; the
  world decides whether the issue exists, who attends and when.
* ``release_notes``: the issues a project completed in a past cycle, posted in #releases and counted.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, time

from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    TODAY,
    answer,
    call,
    case,
    channel_id,
    fresh_minutes,
    found_issue,
    in_chat,
    need,
    next_id,
    one,
    optional_call,
    pick,
    plant_issue,
    plant_message,
    present_people,
    rows,
    seen,
    stamp,
    state,
    subject,
    text_is,
    working_day,
)
from envs.workspace.tools.calendar import free_starts
from envs.workspace.tools.oncall import current_shift, rotation_of
from fixtures.world import World
from graders.criteria import AnswerCheck, AnyToolCalled, present
from graders.outcome import completed
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _first_slot(world: World, day, minutes: int, people: list[str]) -> datetime | None:
    starts = free_starts(world, NOW, datetime.combine(day, time(0), tzinfo=UTC), minutes, people)
    return starts[0] if starts else None


def bug_triage(world: World, rng: random.Random) -> TaskDraft:
    """A customer bug from chat worked through the tracker, wiki, on-call and calendar, and answered in its thread."""
    which = case(rng, {"existing": 5, "new": 5})
    service = pick(rng, rows(world, "SELECT * FROM services WHERE runbook_page_id IS NOT NULL ORDER BY service_id"), "service")
    project = one(world, "SELECT * FROM projects WHERE team_id = ?", service["team_id"])
    lead = project["lead_id"]
    rotation = rotation_of(service["team_id"])
    shift = current_shift(world, rotation, stamp(NOW))
    day = working_day(1)
    mates = [p for p in present_people(world, "AND u.team_id = ?", service["team_id"]) if p["user_id"] != lead]
    rng.shuffle(mates)
    engineer, slot = None, None
    for mate in mates:
        slot = _first_slot(world, day, 30, sorted([lead, mate["user_id"]]))
        if slot is not None:
            engineer = mate
            break
    need(engineer is not None and slot is not None, "an on-call engineer sharing a slot with the lead tomorrow")
    world.execute("UPDATE oncall_shifts SET user_id = ? WHERE shift_id = ?", (engineer["user_id"], shift["shift_id"]))
    reporter = pick(rng, present_people(world, "AND u.team_id = 'TM-09'"), "reporter")
    title = subject(rng)
    if which == "existing":
        iid = plant_issue(world, project["project_id"], title, reporter=rng.choice(mates)["user_id"], state="todo", days_ago=rng.randint(1, 40))
    escalations = channel_id(world, "support-escalations")
    post = plant_message(world, escalations, reporter["user_id"], f"Bug from customers on {service['name']}: {title}.",
                         minutes_ago=fresh_minutes(world, rng, escalations))
    in_chat(world, reporter, "the bug triaged")
    prompt = (f"{reporter['name']} writes in chat: \"I just posted a customer bug in #support-escalations. Please triage it: find its issue "
              "(or file one in the owning team's project), link the service's runbook to it, book a 30-minute triage with that project's lead "
              "and whoever is on call for the service at the earliest time that works for both on the next working day, and reply in my "
              "thread with the issue.\" Answer with submit_answer, giving the issue's id as `issue`.")
    people = sorted([lead, engineer["user_id"]])
    found = [call("read_channel", channel_id=escalations), call("search_issues", query=title)]
    if which == "existing":
        work = []
    else:
        iid = next_id(world, "issues")
        work = [call("create_issue", project_id=project["project_id"], title=title, description=f"Reported by customers on {service['name']}.",
                     labels=["bug", "customer"])]
    runbook = service["runbook_page_id"]
    oracle = [*found, optional_call("list_services"), *work, call("link_page_to_issue", page_id=runbook, issue_id=iid), call("get_oncall", rotation=rotation),
              optional_call("list_projects"), optional_call("find_free_slots", user_ids=people, date=day.isoformat(), minutes=30),
              call("schedule_event", title=f"Triage: {title}", starts_at=stamp(slot), minutes=30, required_user_ids=people),
              call("reply_in_thread", message_id=post, body=f"Tracked as {iid}; triage booked for {stamp(slot)}."),
              answer(f"Triaged as {iid}.", issue=iid)]
    searched = (found_issue(iid, name="found the bug's issue") if which == "existing" else
                # a search that finds nothing is what proves the bug untracked: the call itself is the evidence
                AnyToolCalled(name="searched the tracker for the bug", gate=True, patterns=[{"tool": "search_issues", "args": {"query": present()}}]))
    rubric = [
        seen("read the reporter's post", "messages", post, "body"),
        searched,
        seen("read who is on call now", "oncall_shifts", shift["shift_id"], "user_id", before="schedule_event"),
        state("SELECT count(*) FROM page_links WHERE page_id = ? AND issue_id = ?", runbook, iid, expect=1, weight=2, name="runbook linked to the issue"),
        state("SELECT group_concat(e.starts_at, ';') FROM events e WHERE e.organizer_id = ? AND e.status = 'confirmed' AND "
              "(SELECT group_concat(user_id, ',') FROM (SELECT user_id FROM attendees a WHERE a.event_id = e.event_id ORDER BY user_id)) = ?",
              AGENT, ",".join(people), expect=stamp(slot), weight=2, name="triage booked with the lead and on-call at the earliest slot"),
        state("SELECT count(*) FROM messages WHERE thread_of = ? AND user_id = ?", post, AGENT, expect=1, weight=1, name="replied in the thread"),
        text_is("issue", iid),
    ]
    dup = call("create_issue", project_id=project["project_id"], title=title, description="Duplicate", labels=["bug"])
    return TaskDraft(prompt=prompt, oracle=oracle, outcome=completed(), rubric=rubric,
                     negatives=[negative("no_meeting", "skips the triage meeting", *oracle[:6], oracle[-2], oracle[-1])] +
                               ([negative("files_duplicate", "files a new issue although one exists", *found, dup,
                                          call("link_page_to_issue", page_id=runbook, issue_id=next_id(world, "issues")), oracle[-1])]
                                if which == "existing" else []),
                     metadata={"case": which, "issue": iid})


def release_notes(world: World, rng: random.Random) -> TaskDraft:
    """Release notes for a past cycle: every issue completed in it, posted in #releases, and their count."""
    cycle = pick(rng, rows(world, "SELECT c.*, p.name AS project FROM cycles c JOIN projects p USING (project_id) WHERE c.ends_on < ? "
                                  "ORDER BY c.cycle_id", TODAY.isoformat()), "cycle")
    asker = pick(rng, present_people(world), "asker")
    extra = rng.randint(1, 3)
    for _ in range(extra):  # late-closed work the cycle also shipped
        plant_issue(world, cycle["project_id"], subject(rng), reporter=asker["user_id"], state="done", days_ago=rng.randint(1, 20), cycle_id=cycle["cycle_id"])
    done = [r["issue_id"] for r in world.query("SELECT issue_id FROM issues WHERE cycle_id = ? AND state = 'done' ORDER BY issue_id", (cycle["cycle_id"],))]
    need(0 < len(done) <= 40, "a cycle with some completed issues")
    releases = channel_id(world, "releases")
    in_chat(world, asker, "release notes posted")
    prompt = (f"{asker['name']} writes in chat: \"Please post release notes for {cycle['project']} {cycle['name']} in #releases — every issue "
              "completed (done) in that cycle, by id.\" Answer with submit_answer, giving how many issues as `count`.")
    search = call("search_issues", cycle_id=cycle["cycle_id"], state="done", limit=100)
    post = call("post_message", channel_id=releases, body=f"{cycle['project']} {cycle['name']} release notes: " + ", ".join(done))
    listed = " AND ".join(["body LIKE ?"] * len(done))
    return TaskDraft(prompt=prompt, oracle=[optional_call("list_projects"), search, post, answer(f"Posted {len(done)} issues.", count=str(len(done)))],
                     outcome=completed(),
                     rubric=[seen("listed the cycle's completed issues", "issues", done, "state", "cycle"),
                             state(f"SELECT count(*) FROM messages WHERE channel_id = ? AND user_id = ? AND {listed}", releases, AGENT,
                                   *[f"%{i}%" for i in done], expect=1, weight=3, name="notes list every completed issue"),
                             AnswerCheck(name="answer gives the count", field="values.count", expect=str(len(done)), weight=2)],
                     negatives=[negative("missing_one", "leaves one issue out", call("list_projects"), search,
                                         call("post_message", channel_id=releases, body="Notes: " + ", ".join(done[1:])), answer("Posted.", count=str(len(done) - 1)))],
                     metadata={"cycle": cycle["cycle_id"]})


TEMPLATES = [
    TaskTemplate(bug_triage, difficulty="hard", category="cross_app", tags=["long_horizon", "meetings", "oncall"],
                 tools=["read_channel", "search_issues", "list_services", "get_issue", "create_issue", "link_page_to_issue", "get_oncall",
                        "list_projects", "find_free_slots", "schedule_event", "reply_in_thread", "submit_answer"],
                 one_sided="a customer bug is always triaged: the world decides whether its issue exists or is filed, who attends and when"),
    TaskTemplate(release_notes, difficulty="medium", category="cross_app", tags=["reporting"],
                 tools=["list_projects", "search_issues", "post_message", "submit_answer"],
                 one_sided="release notes are always posted: the world decides which issues and how many"),
]
