"""Issue-tracker tasks, each a neutral request from a colleague in chat whose right outcome the world decides:

* ``close_issue``: "close my finished issue" — closed as done when the assistant may change the project and
  nothing open blocks it; refused ``blocked_by_open_issue`` or ``not_permitted`` otherwise (read on the issue).
* ``reprioritise_issue``: "bump my issue to <priority>" — changed, or refused ``not_permitted``.
* ``reassign_issue``: "hand my issue to <person>" — reassigned, or refused ``assignee_on_leave`` /
  ``assignee_not_in_project`` (read on the person).
* ``dedupe_issues``: "these two issues are the same bug" — the newer closed as a duplicate of the older, or refused
  ``not_permitted``.

The colleague names the issue only when asked (``ask_colleague('which_issue')``), by its title; ids come from the
tracker's answers.
"""

from __future__ import annotations

import random
from typing import Any

from envs.workspace.tasks._common import (
    TODAY,
    agree,
    answer,
    ask,
    asked,
    call,
    case,
    find_person,
    foreign_projects,
    in_chat,
    looked_up,
    seen,
    fact,
    member_projects,
    never,
    next_id,
    optional_call,
    pick,
    plant_issue,
    plant_leave,
    present_people,
    refusal,
    state,
    subject,
)
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def _colleague_issue(world: World, rng: random.Random, permitted: bool, state: str) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    """A project (one the assistant may change, or not), a colleague on its team, and their planted issue."""
    project = pick(rng, member_projects(world) if permitted else foreign_projects(world), "project")
    person = pick(rng, present_people(world, "AND u.team_id = ?", project["team_id"]), "colleague")
    title = subject(rng)
    issue_id = plant_issue(world, project["project_id"], title, reporter=person["user_id"], assignee=person["user_id"], state=state,
                           priority=rng.choice(("low", "medium", "high")), days_ago=rng.randint(3, 60))
    return project, person, title, issue_id


def _block(world: World, project_id: str, blocked: str, reporter: str, rng: random.Random) -> str:
    """An open issue that blocks ``blocked``."""
    blocker = plant_issue(world, project_id, subject(rng), reporter=reporter, state=rng.choice(("todo", "in_progress")), days_ago=rng.randint(1, 20))
    world.execute("INSERT INTO issue_relations (relation_id, issue_id, kind, other_id) VALUES (?, ?, 'blocks', ?)",
                  (next_id(world, "issue_relations"), blocker, blocked))
    return blocker


def close_issue(world: World, rng: random.Random) -> TaskDraft:
    """A colleague asks to close their finished issue; its blockers and project decide."""
    which = case(rng, {"ok": 5, "blocked": 3, "not_permitted": 2})
    project, person, title, iid = _colleague_issue(world, rng, which != "not_permitted", rng.choice(("in_progress", "in_review")))
    if which == "blocked":
        _block(world, project["project_id"], iid, person["user_id"], rng)
    in_chat(world, person, "their finished issue closed", terms={"close_issue": agree()}, which_issue=title)
    prompt = (f"{person['name']} writes in chat: \"I've wrapped up one of my issues, can you close it as done for me?\" "
              "Handle it under the policy and answer with submit_answer.")
    read = looked_up("read the issue before deciding", {"tool": "get_issue", "args": {"issue_id": iid}})
    close = call("update_issue", issue_id=iid, state="done")
    steps = [ask("which_issue"), optional_call("search_issues", query=title), call("get_issue", issue_id=iid)]
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, close, answer(f"Closed {iid} ({title}) as done.")], outcome=completed(),
                         rubric=[asked("which_issue"), read, state("SELECT state FROM issues WHERE issue_id = ?", iid, expect="done", weight=3,
                                                                   name="issue closed as done")],
                         negatives=[negative("refuses_closable", "refuses although nothing blocks it", ask("which_issue"), call("get_issue", issue_id=iid),
                                             refusal("blocked_by_open_issue", "It is blocked.")),
                                    negative("cancels", "cancels instead of done", ask("which_issue"), call("get_issue", issue_id=iid),
                                             call("update_issue", issue_id=iid, state="cancelled"), answer("Closed."))],
                         metadata={"case": which, "issue_id": iid})
    code = "blocked_by_open_issue" if which == "blocked" else "not_permitted"
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal(code, f"{iid} cannot be closed under the policy ({code}).")], outcome=refused(code),
                     rubric=[asked("which_issue"), read, never("update_issue", "issue left as it was", issue_id=iid)],
                     negatives=[negative("closes_anyway", "tries to close it", *steps, close, answer("Closed.")),
                                negative("guessed", "refuses without reading the issue", ask("which_issue"), refusal(code, "No."))],
                     metadata={"case": which, "issue_id": iid})


def reprioritise_issue(world: World, rng: random.Random) -> TaskDraft:
    """A colleague asks to change their issue's priority; the project decides whether the assistant may."""
    which = case(rng, {"ok": 6, "not_permitted": 4})
    project, person, title, iid = _colleague_issue(world, rng, which == "ok", rng.choice(("todo", "in_progress", "backlog")))
    current = world.query("SELECT priority FROM issues WHERE issue_id = ?", (iid,))[0]["priority"]
    target = rng.choice([p for p in ("low", "medium", "high", "urgent") if p != current])
    in_chat(world, person, "an issue's priority changed", which_issue=title)
    prompt = (f"{person['name']} writes in chat: \"Could you set one of my issues to {target} priority? It's more pressing than we "
              "thought.\" Handle it under the policy and answer with submit_answer.")
    steps = [ask("which_issue"), optional_call("search_issues", query=title), call("get_issue", issue_id=iid)]
    change = call("update_issue", issue_id=iid, priority=target)
    read = looked_up("read the issue before deciding", {"tool": "get_issue", "args": {"issue_id": iid}})
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, change, answer(f"{iid} is now {target} priority.")], outcome=completed(),
                         rubric=[asked("which_issue"), read, state("SELECT priority FROM issues WHERE issue_id = ?", iid, expect=target, weight=3,
                                                                   name="priority changed as asked")],
                         negatives=[negative("refuses_member", "refuses a project it may change", *steps, refusal("not_permitted", "Not mine."))],
                         metadata={"case": which, "issue_id": iid})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("not_permitted", f"I may not change issues of {project['name']}; its lead can.")],
                     outcome=refused("not_permitted"),
                     rubric=[asked("which_issue"), read, never("update_issue", "priority left as it was", issue_id=iid)],
                     negatives=[negative("changes_anyway", "tries the change", *steps, change, answer("Done."))],
                     metadata={"case": which, "issue_id": iid})


def reassign_issue(world: World, rng: random.Random) -> TaskDraft:
    """A colleague asks to hand their issue to someone named; that person's leave and projects decide."""
    which = case(rng, {"ok": 5, "on_leave": 3, "not_in_project": 2})
    project, person, title, iid = _colleague_issue(world, rng, True, rng.choice(("todo", "in_progress")))
    if which == "not_in_project":
        others = present_people(world, "AND NOT EXISTS (SELECT 1 FROM project_members m WHERE m.user_id = u.user_id AND m.project_id = ?)",
                                project["project_id"])
    else:
        others = present_people(world, "AND u.team_id = ? AND u.user_id != ?", project["team_id"], person["user_id"])
    other = pick(rng, others, "new assignee")
    if which == "on_leave":
        plant_leave(world, other["user_id"], TODAY, TODAY.fromordinal(TODAY.toordinal() + rng.randint(2, 12)), rng.choice(("vacation", "sick")))
    in_chat(world, person, "their issue handed over", which_issue=title)
    prompt = (f"{person['name']} writes in chat: \"I'm swamped — please reassign one of my issues to {other['name']}.\" "
              "Handle it under the policy and answer with submit_answer.")
    oid = other["user_id"]
    steps = [ask("which_issue"), optional_call("search_issues", query=title), optional_call("get_issue", issue_id=iid),
             find_person(other)]
    assign = call("assign_issue", issue_id=iid, user_id=oid)
    read = looked_up("read the new assignee's profile", {"tool": "get_person", "args": {"user_id": oid}},
                     {"tool": "search_people", "result": {"people.0.user_id": oid}})
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, assign, answer(f"{iid} is now assigned to {other['name']}.")], outcome=completed(),
                         rubric=[asked("which_issue"), read, state("SELECT assignee_id FROM issues WHERE issue_id = ?", iid, expect=oid, weight=3,
                                                                   name="issue assigned to the named person")],
                         negatives=[negative("refuses_present", "refuses although they can take it", *steps, refusal("assignee_on_leave", "Away."))],
                         metadata={"case": which, "issue_id": iid})
    code = "assignee_on_leave" if which == "on_leave" else "assignee_not_in_project"
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal(code, f"{other['name']} cannot take {iid} under the policy ({code}).")],
                     outcome=refused(code), rubric=[asked("which_issue"), read, never("assign_issue", "issue not reassigned", issue_id=iid)],
                     negatives=[negative("assigns_anyway", "tries to assign", *steps, assign, answer("Done."))],
                     metadata={"case": which, "issue_id": iid})


def dedupe_issues(world: World, rng: random.Random) -> TaskDraft:
    """Two issues about the same bug: the newer is closed as a duplicate of the older, where the assistant may."""
    which = case(rng, {"ok": 6, "not_permitted": 4})
    project, person, title, older = _colleague_issue(world, rng, which == "ok", "todo")
    age = world.query("SELECT julianday(?) - julianday(created_at) AS d FROM issues WHERE issue_id = ?", (f"{TODAY}T15:00:00+00:00", older))[0]["d"]
    newer_title = f"{title} again"
    newer = plant_issue(world, project["project_id"], newer_title, reporter=person["user_id"], state="todo", days_ago=rng.randint(0, max(0, int(age) - 2)))
    in_chat(world, person, "duplicates tidied up")
    prompt = (f"{person['name']} writes in chat: \"'{title}' and '{newer_title}' are the same bug. Can you tidy that up?\" "
              "Handle it under the policy and answer with submit_answer.")
    steps = [optional_call("search_issues", query=title), optional_call("get_issue", issue_id=older), call("get_issue", issue_id=newer)]
    mark = call("mark_duplicate", issue_id=newer, of_issue_id=older)
    read = looked_up("read the newer issue", {"tool": "get_issue", "args": {"issue_id": newer}})
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, mark, answer(f"Closed {newer} as a duplicate of {older}.")], outcome=completed(),
                         rubric=[read, state("SELECT state FROM issues WHERE issue_id = ?", newer, expect="duplicate", weight=2, name="newer issue closed as duplicate"),
                                 state("SELECT state FROM issues WHERE issue_id = ?", older, expect="todo", weight=1, name="older issue stays open")],
                         negatives=[negative("wrong_direction", "closes the older one", *steps, call("mark_duplicate", issue_id=older, of_issue_id=newer),
                                             answer("Done."))],
                         metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("not_permitted", f"I may not change issues of {project['name']}; its lead can.")],
                     outcome=refused("not_permitted"), rubric=[read, never("mark_duplicate", "no duplicate marked")],
                     negatives=[negative("marks_anyway", "tries to mark it", *steps, mark, answer("Done."))], metadata={"case": which})


TEMPLATES = [
    TaskTemplate(close_issue, difficulty="medium", category="issues", tags=["change_control", "colleague"],
                 tools=["ask_colleague", "search_issues", "get_issue", "update_issue", "submit_answer"]),
    TaskTemplate(reprioritise_issue, difficulty="easy", category="issues", tags=["change_control", "colleague"],
                 tools=["ask_colleague", "search_issues", "get_issue", "update_issue", "submit_answer"]),
    TaskTemplate(reassign_issue, difficulty="medium", category="issues", tags=["change_control", "colleague", "leave"],
                 tools=["ask_colleague", "search_issues", "get_issue", "search_people", "get_person", "assign_issue", "submit_answer"]),
    TaskTemplate(dedupe_issues, difficulty="medium", category="triage", tags=["change_control", "duplicates"],
                 tools=["search_issues", "get_issue", "mark_duplicate", "submit_answer"]),
]


def estimate_issue(world: World, rng: random.Random) -> TaskDraft:
    """A colleague asks to set their issue's estimate; the project decides whether the assistant may."""
    which = case(rng, {"ok": 6, "not_permitted": 4})
    project, person, title, iid = _colleague_issue(world, rng, which == "ok", rng.choice(("todo", "backlog", "in_progress")))
    points = rng.choice((1, 2, 3, 5, 8, 13))
    in_chat(world, person, "an estimate set", which_issue=title)
    prompt = (f"{person['name']} writes in chat: \"Please put {points} points on one of my issues.\" Handle it under the policy and answer with "
              "submit_answer.")
    steps = [ask("which_issue"), optional_call("search_issues", query=title), call("get_issue", issue_id=iid)]
    change = call("update_issue", issue_id=iid, estimate=points)
    read = looked_up("read the issue before deciding", {"tool": "get_issue", "args": {"issue_id": iid}})
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, change, answer(f"{iid} is estimated at {points} points.")], outcome=completed(),
                         rubric=[asked("which_issue"), read, state("SELECT estimate FROM issues WHERE issue_id = ?", iid, expect=points, weight=3,
                                                                   name="estimate set as asked")],
                         negatives=[negative("wrong_points", "sets another estimate", *steps, call("update_issue", issue_id=iid, estimate=points + 1),
                                             answer("Done."))], metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("not_permitted", f"I may not change issues of {project['name']}; its lead can.")],
                     outcome=refused("not_permitted"), rubric=[asked("which_issue"), read, never("update_issue", "estimate left as it was")],
                     negatives=[negative("changes_anyway", "tries the change", *steps, change, answer("Done."))], metadata={"case": which})


def record_blocker(world: World, rng: random.Random) -> TaskDraft:
    """Record that one issue blocks another, unless they are already related."""
    which = case(rng, {"ok": 6, "already_linked": 4})
    project, person, title, iid = _colleague_issue(world, rng, True, rng.choice(("todo", "in_progress")))
    other_title = subject(rng)
    other = plant_issue(world, project["project_id"], other_title, reporter=person["user_id"], state="in_progress", days_ago=rng.randint(1, 30))
    if which == "already_linked":
        world.execute("INSERT INTO issue_relations (relation_id, issue_id, kind, other_id) VALUES (?, ?, ?, ?)",
                      (next_id(world, "issue_relations"), other, rng.choice(("blocks", "relates")), iid))
    in_chat(world, person, "a blocker recorded", which_issue=title)
    prompt = (f"{person['name']} writes in chat: \"One of my issues can't move until '{other_title}' is done. Please record that it blocks mine.\" "
              "Handle it under the policy and answer with submit_answer.")
    steps = [ask("which_issue"), optional_call("search_issues", query=title), call("get_issue", issue_id=iid), optional_call("search_issues", query=other_title)]
    link = call("link_issues", issue_id=other, kind="blocks", other_issue_id=iid)
    read = seen("read the issues' relations", "issues", iid, "relations", also=[fact("issues", other, "relations")])
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, link, answer(f"Recorded that {other} blocks {iid}.")], outcome=completed(),
                         rubric=[asked("which_issue"), read, state("SELECT count(*) FROM issue_relations WHERE issue_id = ? AND kind = 'blocks' AND other_id = ?",
                                                                   other, iid, expect=1, weight=3, name="blocker recorded in the right direction")],
                         negatives=[negative("reversed", "records it the wrong way round", *steps,
                                             call("link_issues", issue_id=iid, kind="blocks", other_issue_id=other), answer("Done."))],
                         metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("already_linked", f"{iid} and {other} are already related.")], outcome=refused("already_linked"),
                     rubric=[asked("which_issue"), read, never("link_issues", "no second link")],
                     negatives=[negative("links_anyway", "tries to link again", *steps, link, answer("Done."))], metadata={"case": which})


TEMPLATES += [
    TaskTemplate(estimate_issue, split="test", difficulty="easy", category="issues", tags=["change_control", "colleague"],
                 tools=["ask_colleague", "search_issues", "get_issue", "update_issue", "submit_answer"]),
    TaskTemplate(record_blocker, difficulty="medium", category="issues", tags=["relations", "colleague"],
                 tools=["ask_colleague", "search_issues", "get_issue", "link_issues", "submit_answer"]),
]
