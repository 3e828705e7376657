"""Triage tasks: bugs reported in chat matched against the tracker, and a project's new issues worked through.

* ``bug_report_lookup``: "I posted a bug in #<channel>: if we track it, add my report to the issue, else file it in
  <project>; reply in my thread" — a comment on the existing issue, or a new issue; refused ``no_access`` when the
  channel is private and the assistant is not in it (read on the channel).
* ``triage_backlog``: "triage <project>'s new issues" (11–15 calls) — each open issue filed since Monday without a
  priority is closed as a duplicate of the older open issue with its title, or given high (labelled customer) or
  medium priority (each one's labels read on its page); refused ``not_permitted`` when the assistant is not a member of
  the project (read on an issue or the project list).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.tasks._common import (
    AGENT,
    TODAY,
    answer,
    call,
    case,
    change_rights,
    foreign_projects,
    found_issue,
    fresh_minutes,
    in_chat,
    member_projects,
    never,
    next_id,
    optional_call,
    pick,
    plant_channel,
    plant_issue,
    plant_message,
    present_people,
    refusal,
    rows,
    seen,
    state,
    subject,
    text_is,
)
from fixtures.world import World
from graders.criteria import AnyToolCalled, present
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]

_CHATTER = ("Standup moved to 10:30.", "Anyone seen the new dashboard?", "Reminder: retro on Friday.", "Build is green again.",
            "Who owns the staging cert?", "Lunch order closes at noon.", "Docs updated for the API change.")


def bug_report_lookup(world: World, rng: random.Random) -> TaskDraft:
    """A bug a colleague posted in a channel: added to its issue when the tracker has it, else filed; only if the channel is readable."""
    which = case(rng, {"existing": 3, "new": 3, "no_access": 4})
    project = pick(rng, rows(world, "SELECT * FROM projects ORDER BY project_id"), "project")
    reporter = pick(rng, present_people(world, "AND u.team_id = ?", project["team_id"]), "reporter")
    crowd = [p["user_id"] for p in rng.sample(present_people(world), rng.randint(3, 8)) if p["user_id"] != reporter["user_id"]]
    members = [reporter["user_id"], *crowd] + ([] if which == "no_access" else [AGENT])
    kind = "private" if which == "no_access" or rng.random() < 0.5 else "public"
    channel = plant_channel(world, rng, members, kind=kind, purpose=rng.choice(("project", "team", "launch", "customer")))
    cid = channel["channel_id"]
    for _ in range(rng.randint(1, 4)):
        plant_message(world, cid, rng.choice(crowd), rng.choice(_CHATTER), minutes_ago=rng.randint(300, 6000))
    title = subject(rng)
    if which == "existing":
        iid = plant_issue(world, project["project_id"], title, reporter=rng.choice(crowd), state=rng.choice(("todo", "in_progress", "backlog")),
                          days_ago=rng.randint(2, 50), labels=("bug",))
    post = plant_message(world, cid, reporter["user_id"], f"Bug: {title}. {rng.randint(2, 40)} customers hit it today.",
                         minutes_ago=fresh_minutes(world, rng, cid))
    in_chat(world, reporter, "their bug tracked")
    prompt = (f"{reporter['name']} writes in chat: \"I posted a bug in #{channel['name']}. If we already track it, add my report to that "
              f"issue as a comment; if not, file it in {project['name']}. Then reply in my thread with the issue.\" Handle it under the policy "
              "and answer with submit_answer, giving the issue's id as `issue`.")
    if which == "no_access":
        check = call("get_channel", channel_id=cid)
        return TaskDraft(prompt=prompt, oracle=[optional_call("list_channels", query=channel["name"]), optional_call("get_channel", channel_id=cid),
                                                refusal("no_access", f"#{channel['name']} is private and I am not a member: ask {reporter['name']} to paste the bug.")],
                         outcome=refused("no_access"),
                         rubric=[seen("read that the assistant is not in the channel", "channels", cid, "you_are_member"),
                                 never("create_issue", "no issue filed blind"), never("comment_on_issue", "no comment added blind")],
                         negatives=[negative("files_blind", "files an issue without reading the report", check,
                                             call("create_issue", project_id=project["project_id"], title="Bug from chat", description="See chat.",
                                                  labels=["bug"]), answer("Filed.", issue=next_id(world, "issues")))],
                         metadata={"case": which})
    read = call("read_channel", channel_id=cid)
    search = call("search_issues", query=title)
    if which == "existing":
        work = [call("comment_on_issue", issue_id=iid, body=f"Reported again by {reporter['name']}: {title}.")]
        did = state("SELECT count(*) FROM issue_comments WHERE issue_id = ? AND user_id = ?", iid, AGENT, expect=1, weight=3,
                    name="report added to the existing issue")
        found = found_issue(iid, name="found the existing issue")
    else:
        iid = next_id(world, "issues")
        work = [optional_call("list_projects"), call("create_issue", project_id=project["project_id"], title=title,
                                                     description=f"Reported by {reporter['name']} in #{channel['name']}.", labels=["bug"])]
        did = state("SELECT count(*) FROM issues WHERE project_id = ? AND reporter_id = ? AND title = ?", project["project_id"], AGENT, title,
                    expect=1, weight=3, name="bug filed in the named project")
        # a search that finds nothing is what shows the bug untracked: the call itself is the evidence
        found = AnyToolCalled(name="searched the tracker for the bug", gate=True, patterns=[{"tool": "search_issues", "args": {"query": present()}}])
    reply = call("reply_in_thread", message_id=post, body=f"Tracked as {iid}.")
    oracle = [read, search, *work, reply, answer(f"Tracked as {iid}.", issue=iid)]
    negatives = [negative("no_reply", "never answers in the thread", read, search, *work, oracle[-1])]
    if which == "existing":
        negatives.append(negative("files_duplicate", "files a second issue", read, search,
                                  call("create_issue", project_id=project["project_id"], title=title, description="Again.", labels=["bug"]),
                                  call("reply_in_thread", message_id=post, body="Filed."), answer("Filed.", issue=next_id(world, "issues"))))
    return TaskDraft(prompt=prompt, oracle=oracle, outcome=completed(),
                     rubric=[seen("read the reporter's post", "messages", post, "body"), found, did,
                             state("SELECT count(*) FROM messages WHERE thread_of = ? AND user_id = ?", post, AGENT, expect=1, name="replied in the thread"),
                             text_is("issue", iid)],
                     negatives=negatives, metadata={"case": which, "issue": iid})


def triage_backlog(world: World, rng: random.Random) -> TaskDraft:
    """A project's new unprioritised issues: duplicates closed onto the older issue, the rest prioritised by label."""
    which = case(rng, {"ok": 6, "not_permitted": 4})
    project = pick(rng, member_projects(world) if which == "ok" else foreign_projects(world), "project")
    pid = project["project_id"]
    monday = TODAY - timedelta(days=TODAY.weekday())
    # Older untriaged work is given a priority so that the set to triage is exactly what this instance plants.
    world.execute("UPDATE issues SET priority = 'low' WHERE project_id = ? AND priority = 'none' AND created_at >= ?", (pid, monday.isoformat()))
    team = present_people(world, "AND u.team_id = ?", project["team_id"])
    asker = pick(rng, team, "asker")
    n = rng.randint(4, 6)
    dups = rng.randint(1, 2) if which == "ok" else rng.randint(0, 2)
    plan: list[dict] = []
    for k in range(n):
        title = subject(rng)
        older = None
        if k < dups:
            older = plant_issue(world, pid, title, reporter=rng.choice(team)["user_id"], state=rng.choice(("todo", "in_progress")),
                                priority=rng.choice(("low", "medium", "high")), days_ago=rng.randint(8, 60), labels=("bug",))
        labels = rng.choice((("customer", "bug"), ("bug",), ("customer",), ("performance",), ("ux", "customer"), ("regression",)))
        plan.append({"title": title, "older": older, "labels": labels})
    rng.shuffle(plan)
    for k, item in enumerate(plan):  # planted oldest first, so the list of ids is in the tracker's order
        item["issue_id"] = plant_issue(world, pid, item["title"], reporter=rng.choice(team)["user_id"], state="todo", priority="none",
                                       days_ago=1 if k < n // 2 else 0, labels=item["labels"])
    in_chat(world, asker, "the new issues triaged")
    prompt = (f"{asker['name']} writes in chat: \"Could you triage the new issues in {project['name']} — the open ones filed since Monday that "
              "have no priority yet? If one repeats an older open issue (same title), close it as a duplicate of that one; otherwise set it "
              "to high priority when it is labelled customer, medium when not.\" Handle it under the policy and answer with submit_answer, "
              "giving how many you closed as duplicates as `duplicates` and how many you prioritised as `prioritised`.")
    search = call("search_issues", project_id=pid, state="todo", limit=100)
    new_ids = [item["issue_id"] for item in plan]
    if which == "not_permitted":
        first = new_ids[0]  # the oldest new issue: the first the project's list shows
        # the first new issue's page says the assistant may not change it (the project list's you_are_member counts too)
        return TaskDraft(prompt=prompt, oracle=[optional_call("search_issues", project_id=pid, state="todo", limit=100),
                                                call("get_issue", issue_id=first),
                                                refusal("not_permitted", f"I am not a member of {project['name']}: its lead can triage these.")],
                         outcome=refused("not_permitted"),
                         rubric=[change_rights(pid, *new_ids, name="read whether the assistant may change the project's issues"),
                                 never("update_issue", "no priority changed"), never("mark_duplicate", "nothing closed as a duplicate")],
                         negatives=[negative("triages_anyway", "tries to set a priority", search, call("get_issue", issue_id=first),
                                             call("update_issue", issue_id=first, priority="medium"), answer("Done.", duplicates="0", prioritised="1"))],
                         metadata={"case": which})
    work, checks = [], []
    for k, item in enumerate(plan, 1):
        iid = item["issue_id"]
        if item["older"] is not None:
            work += [optional_call("search_issues", query=item["title"]), call("mark_duplicate", issue_id=iid, of_issue_id=item["older"])]
            checks.append(state("SELECT count(*) FROM issues i JOIN issue_relations r ON r.issue_id = i.issue_id WHERE i.issue_id = ? AND "
                                "i.state = 'duplicate' AND r.kind = 'duplicates' AND r.other_id = ?", iid, item["older"], expect=1, weight=2,
                                name=f"repeated issue {k} of the list closed onto the older one"))
        else:
            priority = "high" if "customer" in item["labels"] else "medium"
            work += [call("get_issue", issue_id=iid), call("update_issue", issue_id=iid, priority=priority)]
            checks.append(seen(f"read new issue {k}'s labels before prioritising it", "issues", iid, "labels",
                               before={"tool": "update_issue", "args": {"issue_id": iid}}))
            checks.append(state("SELECT priority || '/' || state FROM issues WHERE issue_id = ?", iid, expect=f"{priority}/todo", weight=2,
                                name=f"new issue {k} of the list prioritised by its label"))
    n_dup = sum(1 for item in plan if item["older"] is not None)
    values = {"duplicates": str(n_dup), "prioritised": str(n - n_dup)}
    # the project's list is how an agent finds the new issues; what decides each one is its own page (labels) or the older
    # issue with its title, so those are the reads the rubric asks for
    oracle = [optional_call("list_projects"), search.model_copy(update={"optional": True}), *work, answer(f"Triaged {n} issues.", **values)]
    wrong = next(item for item in plan if item["older"] is None)
    flip = "medium" if "customer" in wrong["labels"] else "high"
    return TaskDraft(prompt=prompt, oracle=oracle, outcome=completed(),
                     rubric=[*checks, text_is("duplicates", values["duplicates"], weight=1), text_is("prioritised", values["prioritised"], weight=1)],
                     negatives=[negative("all_medium", "prioritises everything by guess", search,
                                         *[call("update_issue", issue_id=i, priority="medium") for i in new_ids], answer("Done.", **values)),
                                negative("wrong_label", "misreads one label", search,
                                         *[c if c.arguments.get("issue_id") != wrong["issue_id"] or c.tool != "update_issue"
                                           else call("update_issue", issue_id=wrong["issue_id"], priority=flip) for c in work if not c.optional],
                                         answer("Done.", **values))],
                     metadata={"case": which, "issues": new_ids})


TEMPLATES = [
    TaskTemplate(bug_report_lookup, difficulty="medium", category="triage", tags=["duplicates", "access", "cross_app"],
                 tools=["list_channels", "get_channel", "read_channel", "get_thread", "search_issues", "get_issue", "list_projects", "create_issue",
                        "comment_on_issue", "reply_in_thread", "submit_answer"]),
    TaskTemplate(triage_backlog, difficulty="hard", category="triage", tags=["long_horizon", "duplicates", "change_control"],
                 tools=["list_projects", "search_issues", "get_issue", "update_issue", "mark_duplicate", "submit_answer"]),
]
