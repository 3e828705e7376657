"""On-call and incident tasks, each a neutral request whose right outcome the world decides:

* ``oncall_handover``: "hand my shift next week to the person I found" — handed over, or refused
  ``assignee_on_leave`` (they are away during it) / ``not_in_rotation`` (another team); the colleague names them.
* ``outage_report``: "customers say <service> is down" — tier 3: an issue filed in the owning team's project (high,
  bug); tier 1 or 2: an incident of the tier's severity opened and the on-call engineer paged, escalated
  ``major_incident`` (read on the service).
* ``page_open_incident``: "page whoever is on call for the open incident on <service>" — paged and escalated
  ``major_incident`` when it is sev1/sev2 (paging hands the incident on), refused ``severity_too_low`` otherwise (read
  on the incident or the open-incident list).
* ``oncall_lookup``: "who is on call for <service>? tell them <asker> needs them" — a DM to the engineer whose shift
  covers now (one-sided: the world decides who, never whether).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.rules import TIER_SEVERITY
from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    TODAY,
    answer,
    ask,
    asked,
    call,
    case,
    channel_id,
    escalation,
    find_person,
    fresh_minutes,
    in_chat,
    need,
    never,
    next_id,
    one,
    optional_call,
    pick,
    plant_leave,
    plant_message,
    present_people,
    profile,
    refusal,
    rows,
    seen,
    stamp,
    state,
    text_is,
)
from envs.workspace.tools.oncall import current_shift, rotation_of
from fixtures.world import World
from graders.criteria import ToolNotCalled, one_of
from graders.outcome import completed, escalated, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def oncall_handover(world: World, rng: random.Random) -> TaskDraft:
    """Hand next week's shift to the colleague's stand-in; the stand-in's team and leave decide."""
    which = case(rng, {"ok": 5, "on_leave": 3, "not_in_rotation": 2})
    team = pick(rng, [t for t in rows(world, "SELECT * FROM teams ORDER BY team_id") if rotation_of(t["team_id"])], "team")
    rotation = rotation_of(team["team_id"])
    shift = one(world, "SELECT * FROM oncall_shifts WHERE rotation = ? AND starts_at > ? ORDER BY starts_at LIMIT 1", rotation, stamp(NOW))
    mates = present_people(world, "AND u.team_id = ?", team["team_id"])
    holder = pick(rng, mates, "shift holder")
    world.execute("UPDATE oncall_shifts SET user_id = ? WHERE shift_id = ?", (holder["user_id"], shift["shift_id"]))
    if which == "not_in_rotation":
        standin = pick(rng, present_people(world, "AND u.team_id != ?", team["team_id"]), "stand-in")
    else:
        standin = pick(rng, [p for p in mates if p["user_id"] != holder["user_id"]], "stand-in")
    if which == "on_leave":
        start = (NOW + timedelta(days=(7 - TODAY.weekday()) + rng.randint(0, 4))).date()
        plant_leave(world, standin["user_id"], start, start + timedelta(days=rng.randint(0, 3)), rng.choice(("vacation", "conference")))
    in_chat(world, holder, "their shift covered", who_takes_over=standin["name"])
    prompt = (f"{holder['name']} writes in chat: \"I can't do my {rotation} on-call shift next week — I've found someone to cover it. "
              "Could you hand it over?\" Handle it under the policy and answer with submit_answer.")
    sid, uid = shift["shift_id"], standin["user_id"]
    steps = [ask("who_takes_over"), optional_call("get_oncall", rotation=rotation), find_person(standin)]
    hand = call("hand_over_shift", shift_id=sid, to_user_id=uid)
    read = profile("read the stand-in's team and leave", uid, *{"ok": ("team", "leave"), "on_leave": ("leave",), "not_in_rotation": ("team",)}[which])
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, hand, answer(f"{standin['name']} now has shift {sid}.")], outcome=completed(),
                         rubric=[asked("who_takes_over"), read, state("SELECT user_id FROM oncall_shifts WHERE shift_id = ?", sid, expect=uid, weight=3,
                                                                      name="shift handed to the stand-in")],
                         negatives=[negative("refuses_ok", "refuses a valid stand-in", *steps, refusal("assignee_on_leave", "Away."))],
                         metadata={"case": which})
    code = "assignee_on_leave" if which == "on_leave" else "not_in_rotation"
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal(code, f"{standin['name']} cannot take the shift ({code}).")], outcome=refused(code),
                     rubric=[asked("who_takes_over"), read, never("hand_over_shift", "shift not handed over")],
                     negatives=[negative("hands_anyway", "tries the hand-over", *steps, hand, answer("Done."))], metadata={"case": which})


def outage_report(world: World, rng: random.Random) -> TaskDraft:
    """A customer-reported outage: the service's tier decides between an issue and an incident with a page."""
    which = case(rng, {"tier3": 6, "tier1": 2, "tier2": 2})
    tier = int(which[-1])
    service = pick(rng, rows(world, "SELECT * FROM services WHERE tier = ? ORDER BY service_id", tier), "service")
    asker = pick(rng, present_people(world, "AND u.team_id = 'TM-09'"), "customer success colleague")
    symptom = rng.choice(("is down", "is not responding", "keeps failing", "is returning errors for everyone"))
    escalations = channel_id(world, "support-escalations")
    post = plant_message(world, escalations, asker["user_id"], f"Customers report {service['name']} {symptom} "
                         f"(ticket batch {rng.randint(100, 999)}).", minutes_ago=fresh_minutes(world, rng, escalations))
    in_chat(world, asker, "the outage handled")
    prompt = (f"{asker['name']} writes in chat: \"Customers are telling us {service['name']} {symptom} — I posted the details in "
              "#support-escalations. Can you get the right people on it and let me know in my thread?\" Handle it under the policy and answer "
              "with submit_answer.")
    sid = service["service_id"]
    reply = call("reply_in_thread", message_id=post, body=f"On it: handled {service['name']} under the incident policy.")
    replied = state("SELECT count(*) FROM messages WHERE thread_of = ? AND user_id = ?", post, AGENT, expect=1, weight=1, name="replied in the asker's thread")
    thread = optional_call("read_channel", channel_id=escalations)
    read = seen("read the service's tier", "services", sid, "tier")
    steps = [optional_call("list_services"), optional_call("get_service", service_id=sid)]  # the list shows each tier too
    if tier == 3:
        project = one(world, "SELECT project_id FROM projects WHERE team_id = ?", service["team_id"])["project_id"]
        file = call("create_issue", project_id=project, title=f"{service['name']} outage reported by customers", description=f"Customers report {service['name']} {symptom}.",
                    priority="high", labels=["bug"])
        return TaskDraft(prompt=prompt, oracle=[thread, *steps, file, reply, answer(f"Filed a high-priority bug for {service['name']} with its team.")],
                         outcome=completed(),
                         rubric=[read, replied, state("SELECT count(*) FROM issues i WHERE project_id = ? AND reporter_id = ? AND priority = 'high' AND EXISTS "
                                             "(SELECT 1 FROM issue_labels l WHERE l.issue_id = i.issue_id AND l.label = 'bug')", project, AGENT,
                                             expect=1, weight=3, name="bug filed with the owning team"),
                                 never("open_incident", "no incident for a tier-3 service"), never("page_oncall", "nobody paged")],
                         negatives=[negative("pages_tier3", "opens an incident anyway", *steps,
                                             call("open_incident", service_id=sid, severity="sev3", title="Outage"), escalation("major_incident", "Escalated."))],
                         metadata={"case": which})
    severity = TIER_SEVERITY[tier]
    incident = next_id(world, "incidents")
    shift = current_shift(world, rotation_of(service["team_id"]), stamp(NOW))
    need(shift is not None, "the service's rotation has a current shift")
    steps += [call("open_incident", service_id=sid, severity=severity, title=f"{service['name']} outage"), call("page_oncall", incident_id=incident)]
    others = [s for s in ("sev1", "sev2", "sev3", "sev4") if s != severity]
    return TaskDraft(prompt=prompt, oracle=[thread, *steps, reply, escalation("major_incident", f"Opened {incident} ({severity}) and paged the on-call engineer.")],
                     outcome=escalated("major_incident"),
                     rubric=[read, replied, ToolNotCalled(name="no incident at another severity", tool="open_incident", args={"severity": one_of(*others)}),
                             state("SELECT count(*) FROM incidents WHERE service_id = ? AND status = 'open' AND severity = ?", sid, severity, expect=1,
                                         weight=2, name="incident opened at the tier's severity"),
                             state("SELECT count(*) FROM pages_sent WHERE user_id = ?", shift["user_id"], expect=1, weight=2, name="on-call engineer paged")],
                     negatives=[negative("files_issue", "files an issue instead", call("get_service", service_id=sid),
                                         call("create_issue", project_id="PRJ-01", title="Outage", description="Down", priority="high", labels=["bug"]),
                                         answer("Filed.")),
                                negative("wrong_severity", "opens it one severity lower", call("get_service", service_id=sid),
                                         call("open_incident", service_id=sid, severity="sev3", title="Outage"),
                                         escalation("major_incident", "Opened."))],
                     metadata={"case": which})


def page_open_incident(world: World, rng: random.Random) -> TaskDraft:
    """Page on-call for an open incident: its severity decides."""
    which = case(rng, {"sev1": 3, "sev2": 3, "sev3": 2, "sev4": 2})
    service = pick(rng, rows(world, "SELECT * FROM services ORDER BY service_id"), "service")
    iid = next_id(world, "incidents")
    opened = NOW - timedelta(minutes=rng.randint(5, 180))
    world.execute("INSERT INTO incidents (incident_id, service_id, title, severity, status, commander_id, opened_at, resolved_at) "
                  "VALUES (?, ?, ?, ?, 'open', NULL, ?, NULL)", (iid, service["service_id"], f"{service['name']} {rng.choice(('latency', 'errors', 'degraded'))}",
                                                                 which, stamp(opened)))
    asker = pick(rng, present_people(world), "asker")
    in_chat(world, asker, "on-call paged")
    prompt = (f"{asker['name']} writes in chat: \"There's an open incident on {service['name']}. Please page whoever is on call.\" "
              "Handle it under the policy and answer with submit_answer.")
    # the service's incident list shows the severity as the incident's own page does (so would every open incident's list)
    steps = [optional_call("list_incidents", service_id=service["service_id"], status="open"), optional_call("get_incident", incident_id=iid)]
    read = seen("read the incident's severity", "incidents", iid, "severity")
    page = call("page_oncall", incident_id=iid)
    if which in ("sev1", "sev2"):
        # Paging hands the incident to the on-call engineer: an escalation (policy section 5), declared as one.
        shift = current_shift(world, rotation_of(service["team_id"]), stamp(NOW))
        return TaskDraft(prompt=prompt, oracle=[*steps, page, escalation("major_incident", f"{iid} is {which}: I paged the on-call engineer.")],
                         outcome=escalated("major_incident"),
                         rubric=[read, state("SELECT count(*) FROM pages_sent WHERE incident_id = ? AND user_id = ?", iid, shift["user_id"], expect=1, weight=3,
                                             name="on-call engineer paged")],
                         negatives=[negative("refuses_major", "refuses a major incident", *steps, refusal("severity_too_low", "Too low."))],
                         metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("severity_too_low", f"{iid} is {which}: only sev1 and sev2 page on-call.")],
                     outcome=refused("severity_too_low"), rubric=[read, never("page_oncall", "nobody paged")],
                     negatives=[negative("pages_anyway", "tries to page", *steps, page, answer("Paged."))], metadata={"case": which})


def oncall_lookup(world: World, rng: random.Random) -> TaskDraft:
    """Find who is on call for a service now and message them."""
    service = pick(rng, rows(world, "SELECT * FROM services ORDER BY service_id"), "service")
    rotation = rotation_of(service["team_id"])
    shift = current_shift(world, rotation, stamp(NOW))
    mates = present_people(world, "AND u.team_id = ?", service["team_id"])
    engineer = pick(rng, mates, "engineer")
    world.execute("UPDATE oncall_shifts SET user_id = ? WHERE shift_id = ?", (engineer["user_id"], shift["shift_id"]))
    asker = pick(rng, [p for p in present_people(world) if p["team_id"] != service["team_id"]], "asker")
    topic = rng.choice(("a failing export", "a stuck deploy", "a customer escalation", "a spike in errors", "a config question"))
    in_chat(world, asker, "the on-call engineer told")
    prompt = (f"{asker['name']} writes in chat: \"Who's on call for {service['name']} right now? Please DM them that I need them for {topic}.\" "
              "Answer with submit_answer, giving their user id as `oncall`.")
    uid = engineer["user_id"]
    steps = [optional_call("list_services"), optional_call("get_service", service_id=service["service_id"]), call("get_oncall", rotation=rotation),
             call("send_direct_message", user_id=uid, body=f"{asker['name']} needs you for {topic}.")]
    return TaskDraft(prompt=prompt, oracle=[*steps, answer(f"{engineer['name']} is on call; I messaged them.", oncall=uid)], outcome=completed(),
                     rubric=[seen("read who is on call now", "oncall_shifts", shift["shift_id"], "user_id"),
                             state("SELECT count(*) FROM channels c JOIN messages m USING (channel_id) WHERE c.kind = 'dm' AND c.name = ?",
                                   f"dm-{AGENT}-{uid}".lower(), expect=1, weight=3, name="on-call engineer messaged"),
                             text_is("oncall", uid)],
                     negatives=[negative("messages_lead", "messages someone else", call("get_oncall", rotation=rotation),
                                         call("send_direct_message", user_id=asker["user_id"], body="Found them."), answer("Done.", oncall=uid))],
                     metadata={"rotation": rotation})


TEMPLATES = [
    TaskTemplate(oncall_handover, difficulty="medium", category="oncall", tags=["leave", "colleague"],
                 tools=["ask_colleague", "get_oncall", "search_people", "get_person", "hand_over_shift", "submit_answer"]),
    TaskTemplate(outage_report, difficulty="hard", category="incidents", tags=["escalation"],
                 tools=["read_channel", "list_services", "get_service", "create_issue", "open_incident", "page_oncall", "reply_in_thread", "submit_answer"]),
    TaskTemplate(page_open_incident, split="test", difficulty="easy", category="incidents", tags=["escalation"],
                 tools=["list_incidents", "get_incident", "page_oncall", "submit_answer"]),
    TaskTemplate(oncall_lookup, difficulty="easy", category="oncall", tags=["lookup", "cross_app"],
                 tools=["list_services", "get_service", "get_oncall", "send_direct_message", "submit_answer"],
                 one_sided="a look-up and a message the policy always allows: the world decides who is on call, never whether to tell them"),
]


def assign_to_oncall(world: World, rng: random.Random) -> TaskDraft:
    """Assign an issue to whoever is on call for the project's rotation, unless they are on leave today."""
    which = case(rng, {"ok": 6, "on_leave": 4})
    team = pick(rng, [t for t in rows(world, "SELECT * FROM teams WHERE team_id IN ('TM-01', 'TM-02', 'TM-05', 'TM-07') ORDER BY team_id")], "team")
    rotation = rotation_of(team["team_id"])
    project = one(world, "SELECT * FROM projects WHERE team_id = ?", team["team_id"])
    shift = current_shift(world, rotation, stamp(NOW))
    engineer = pick(rng, present_people(world, "AND u.team_id = ?", team["team_id"]), "engineer")
    world.execute("UPDATE oncall_shifts SET user_id = ? WHERE shift_id = ?", (engineer["user_id"], shift["shift_id"]))
    if which == "on_leave":
        plant_leave(world, engineer["user_id"], TODAY - timedelta(days=rng.randint(0, 2)), TODAY + timedelta(days=rng.randint(0, 4)), "sick")
    asker = pick(rng, [p for p in present_people(world, "AND u.team_id = ?", team["team_id"]) if p["user_id"] != engineer["user_id"]], "asker")
    from envs.workspace.tasks._common import plant_issue, subject

    title = subject(rng)
    iid = plant_issue(world, project["project_id"], title, reporter=asker["user_id"], state="todo", days_ago=rng.randint(0, 5))
    in_chat(world, asker, "an issue given to on-call", which_issue=title)
    prompt = (f"{asker['name']} writes in chat: \"Please assign one of my new issues to whoever is on call for {rotation} right now.\" "
              "Handle it under the policy and answer with submit_answer.")
    uid = engineer["user_id"]
    steps = [ask("which_issue"), optional_call("search_issues", query=title), call("get_oncall", rotation=rotation), call("get_person", user_id=uid)]
    read = profile("read the on-call engineer's leave", uid, "on_leave_today")
    rota = seen("read who is on call now", "oncall_shifts", shift["shift_id"], "user_id")
    assign = call("assign_issue", issue_id=iid, user_id=uid)
    if which == "ok":
        return TaskDraft(prompt=prompt, oracle=[*steps, assign, answer(f"Assigned {iid} to {engineer['name']}.")], outcome=completed(),
                         rubric=[asked("which_issue"), rota, read, state("SELECT assignee_id FROM issues WHERE issue_id = ?", iid, expect=uid, weight=3,
                                                                         name="issue assigned to the on-call engineer")],
                         negatives=[negative("refuses_present", "refuses although they are here", *steps, refusal("assignee_on_leave", "Away."))],
                         metadata={"case": which})
    return TaskDraft(prompt=prompt, oracle=[*steps, refusal("assignee_on_leave", f"{engineer['name']} is on call but on leave today.")],
                     outcome=refused("assignee_on_leave"), rubric=[asked("which_issue"), rota, read, never("assign_issue", "issue not assigned")],
                     negatives=[negative("assigns_anyway", "tries to assign", *steps, assign, answer("Done."))], metadata={"case": which})


TEMPLATES += [
    TaskTemplate(assign_to_oncall, difficulty="medium", category="oncall", tags=["leave", "change_control", "colleague"],
                 tools=["ask_colleague", "search_issues", "get_oncall", "get_person", "assign_issue", "submit_answer"]),
]
