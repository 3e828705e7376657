"""Cover for a colleague's leave across the tracker, on-call and chat (11–17 calls):

* ``leave_coverage``: "I'm off next week: hand my <rotation> shift to <cover>, reassign my open <project> issues to them,
  and tell #oncall" — every open issue of theirs in the project reassigned, next week's shift handed over and the
  note posted; refused ``assignee_on_leave`` when the cover is away themselves (read on the cover's profile).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.rules import CLOSED_STATES
from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    TODAY,
    answer,
    call,
    case,
    channel_id,
    find_person,
    in_chat,
    member_projects,
    need,
    never,
    one,
    optional_call,
    pick,
    plant_issue,
    plant_leave,
    present_people,
    profile,
    refusal,
    seen,
    stamp,
    state,
    subject,
    text_is,
)
from envs.workspace.tools.oncall import rotation_of
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _open_issues(world: World, project_id: str, user_id: str) -> list[str]:
    marks = ",".join("?" * len(CLOSED_STATES))
    return [r["issue_id"] for r in world.query(f"SELECT issue_id FROM issues WHERE project_id = ? AND assignee_id = ? AND state NOT IN ({marks}) "
                                               "ORDER BY created_at, issue_id", (project_id, user_id, *CLOSED_STATES))]


def leave_coverage(world: World, rng: random.Random) -> TaskDraft:
    """A colleague's week of leave covered: their open issues and their on-call shift go to the cover, and #oncall is told."""
    which = case(rng, {"ok": 6, "cover_on_leave": 4})
    project = pick(rng, [p for p in member_projects(world) if rotation_of(p["team_id"])], "project")
    pid, rotation = project["project_id"], rotation_of(project["team_id"])
    mates = present_people(world, "AND u.team_id = ? AND EXISTS (SELECT 1 FROM project_members m WHERE m.user_id = u.user_id AND m.project_id = ?)",
                           project["team_id"], pid)
    rng.shuffle(mates)
    leaver = next((p for p in mates if len(_open_issues(world, pid, p["user_id"])) <= 2), None)
    need(leaver is not None, "a colleague with few open issues")
    cover = pick(rng, [p for p in mates if p["user_id"] != leaver["user_id"]], "cover")
    monday = TODAY + timedelta(days=7 - TODAY.weekday())
    plant_leave(world, leaver["user_id"], monday, monday + timedelta(days=4), rng.choice(("vacation", "conference", "parental")))
    shift = one(world, "SELECT * FROM oncall_shifts WHERE rotation = ? AND starts_at > ? ORDER BY starts_at LIMIT 1", rotation, stamp(NOW))
    world.execute("UPDATE oncall_shifts SET user_id = ? WHERE shift_id = ?", (leaver["user_id"], shift["shift_id"]))
    for _ in range(rng.randint(2, 3)):
        plant_issue(world, pid, subject(rng), reporter=rng.choice(mates)["user_id"], assignee=leaver["user_id"],
                    state=rng.choice(("todo", "in_progress", "in_review")), priority=rng.choice(("low", "medium", "high")), days_ago=rng.randint(1, 40))
    plant_issue(world, pid, subject(rng), reporter=leaver["user_id"], assignee=leaver["user_id"], state="done", days_ago=rng.randint(5, 30))
    issues = _open_issues(world, pid, leaver["user_id"])
    if which == "cover_on_leave":
        plant_leave(world, cover["user_id"], TODAY - timedelta(days=rng.randint(0, 3)), monday + timedelta(days=rng.randint(4, 9)),
                    rng.choice(("vacation", "sick")))
    oncall = channel_id(world, "oncall")
    in_chat(world, leaver, "their leave covered")
    prompt = (f"{leaver['name']} writes in chat: \"I'm off all next week. Please hand my {rotation} on-call shift next week to "
              f"{cover['name']}, reassign my open {project['name']} issues to them, and let #oncall know who covers.\" Handle it under the "
              "policy and answer with submit_answer, giving how many issues you reassigned as `reassigned`.")
    uid, sid = cover["user_id"], shift["shift_id"]
    read = profile("read the cover's leave", uid, "leave")
    if which == "cover_on_leave":
        return TaskDraft(prompt=prompt, oracle=[find_person(leaver, optional=True), find_person(cover), optional_call("get_oncall", rotation=rotation),
                                                refusal("assignee_on_leave", f"{cover['name']} is on leave too; please find another cover.")],
                         outcome=refused("assignee_on_leave"),
                         rubric=[read, never("assign_issue", "no issue reassigned"), never("hand_over_shift", "shift not handed over")],
                         negatives=[negative("hands_anyway", "hands the shift over anyway", find_person(cover), call("get_oncall", rotation=rotation),
                                             call("hand_over_shift", shift_id=sid, to_user_id=uid), answer("Done.", reassigned="0"))],
                         metadata={"case": which})
    work = [find_person(leaver, optional=True), find_person(cover), call("get_oncall", rotation=rotation),
            call("search_issues", assignee_id=leaver["user_id"], limit=100)]
    for iid in issues:
        work.append(call("assign_issue", issue_id=iid, user_id=uid))
    note = call("post_message", channel_id=oncall, body=f"{leaver['name']} is away next week: {cover['name']} covers the {rotation} shift and their "
                                                       f"open {project['name']} issues.")
    oracle = [*work, call("hand_over_shift", shift_id=sid, to_user_id=uid), note, answer(f"Covered: {len(issues)} issues and shift {sid}.",
                                                                                          reassigned=str(len(issues)))]
    marks = ",".join("?" * len(issues))
    rubric = [read,
              seen("read next week's shift", "oncall_shifts", sid, "user_id"),
              seen("listed the colleague's open issues", "issues", issues, "assignee_id", "state"),
              state(f"SELECT count(*) FROM issues WHERE issue_id IN ({marks}) AND assignee_id = ?", *issues, uid, expect=len(issues), weight=3,
                    name="every open issue reassigned to the cover"),
              state("SELECT user_id FROM oncall_shifts WHERE shift_id = ?", sid, expect=uid, weight=2, name="next week's shift handed to the cover"),
              state("SELECT count(*) FROM messages WHERE channel_id = ? AND user_id = ? AND body LIKE ?", oncall, AGENT, f"%{cover['name']}%", expect=1,
                    name="#oncall told who covers"),
              text_is("reassigned", str(len(issues)), weight=1)]
    return TaskDraft(prompt=prompt, oracle=oracle, outcome=completed(), rubric=rubric,
                     negatives=[negative("misses_one", "leaves one issue with the colleague", *[c for c in work if not c.optional and c.tool != "assign_issue"],
                                         *[c for c in work if c.tool == "assign_issue"][1:], oracle[-3], note, oracle[-1]),
                                negative("no_shift", "forgets the shift", *[c for c in work if not c.optional], note, oracle[-1])],
                     metadata={"case": which, "issues": issues})


TEMPLATES = [
    TaskTemplate(leave_coverage, difficulty="hard", category="oncall", tags=["long_horizon", "leave", "cross_app"],
                 tools=["search_people", "get_person", "get_oncall", "search_issues", "get_issue", "assign_issue", "hand_over_shift", "post_message",
                        "submit_answer"]),
]
