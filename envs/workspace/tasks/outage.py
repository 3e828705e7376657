"""A customer-reported outage worked end to end under the incident policy (10–13 calls):

* ``customer_outage_full``: "customers report <service> <symptom> (my post in #support-escalations): get the right people
  on it, tell the owning project's lead, reply in my thread" — the service's tier and its incidents decide: tier 1/2
  with no open incident → an incident at the tier's severity, the on-call engineer paged, #incidents told, escalated
  ``major_incident``; tier 1/2 with an incident already open → that incident paged (no second one), escalated; tier 3 →
  a high-priority bug in the owning project, the runbook linked and the issue assigned to the on-call engineer,
  completed. The lead is messaged and the thread answered in every case (read on the service).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.rules import TIER_SEVERITY
from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    answer,
    call,
    case,
    channel_id,
    escalation,
    fresh_minutes,
    in_chat,
    never,
    next_id,
    one,
    optional_call,
    pick,
    plant_message,
    present_people,
    rows,
    seen,
    stamp,
    state,
)
from envs.workspace.tools.oncall import current_shift, rotation_of
from fixtures.world import World
from graders.criteria import ToolNotCalled, one_of
from graders.outcome import completed, escalated
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]

_SYMPTOMS = ("is down", "is not responding", "keeps failing", "returns errors for everyone", "times out on every request")


def customer_outage_full(world: World, rng: random.Random) -> TaskDraft:
    """A customer-reported outage: the tier and the open incidents decide between paging and a tracked, assigned bug."""
    which = case(rng, {"major": 3, "already_open": 3, "minor": 4})
    if which == "minor":
        services = rows(world, "SELECT s.* FROM services s WHERE s.tier = 3 AND s.runbook_page_id IS NOT NULL AND EXISTS (SELECT 1 FROM project_members m "
                               "JOIN projects p USING (project_id) WHERE p.team_id = s.team_id AND m.user_id = ?) ORDER BY s.service_id", AGENT)
    else:
        services = rows(world, "SELECT s.* FROM services s WHERE s.tier IN (1, 2) AND NOT EXISTS (SELECT 1 FROM incidents i WHERE i.service_id = s.service_id "
                               "AND i.status = 'open') ORDER BY s.service_id")
    service = pick(rng, [s for s in services if rotation_of(s["team_id"])], "service")
    sid, rotation = service["service_id"], rotation_of(service["team_id"])
    project = one(world, "SELECT * FROM projects WHERE team_id = ?", service["team_id"])
    engineer = pick(rng, present_people(world, "AND u.team_id = ? AND EXISTS (SELECT 1 FROM project_members m WHERE m.user_id = u.user_id AND "
                                               "m.project_id = ?)", service["team_id"], project["project_id"]), "on-call engineer")
    shift = current_shift(world, rotation, stamp(NOW))
    world.execute("UPDATE oncall_shifts SET user_id = ? WHERE shift_id = ?", (engineer["user_id"], shift["shift_id"]))
    severity = TIER_SEVERITY[service["tier"]]
    incident = next_id(world, "incidents")
    if which == "already_open":
        world.execute("INSERT INTO incidents (incident_id, service_id, title, severity, status, commander_id, opened_at, resolved_at) "
                      "VALUES (?, ?, ?, ?, 'open', NULL, ?, NULL)", (incident, sid, f"{service['name']} {rng.choice(('errors', 'degraded'))}", severity,
                                                                     stamp(NOW - timedelta(minutes=rng.randint(5, 90)))))
    asker = pick(rng, present_people(world, "AND u.team_id = 'TM-09'"), "customer success colleague")
    symptom = rng.choice(_SYMPTOMS)
    escalations = channel_id(world, "support-escalations")
    post = plant_message(world, escalations, asker["user_id"], f"Customers report {service['name']} {symptom} (batch {rng.randint(100, 999)}).",
                         minutes_ago=fresh_minutes(world, rng, escalations))
    in_chat(world, asker, "an outage handled end to end")
    prompt = (f"{asker['name']} writes in chat: \"Customers report {service['name']} {symptom} — details in my post in #support-escalations. "
              "Please handle it end to end under the incident policy: get the right people on it (post in #incidents if anyone is paged; if it "
              "isn't a paging case, file it, link the service's runbook to the issue and assign it to whoever is on call), tell the owning "
              "project's lead by DM, and reply in my thread with what you did.\" Answer with submit_answer.")
    lead = project["lead_id"]
    incidents = channel_id(world, "incidents")
    look = [optional_call("read_channel", channel_id=escalations), optional_call("list_services"), optional_call("get_service", service_id=sid)]
    # a service with no open incident shows open_incident_id null, which is no fact: the tier decides, and the open incident
    # (when there is one) must have been seen too
    read = seen("read the service's tier and open incident", "services", sid, "tier", *(("open_incident_id",) if which == "already_open" else ()))
    tell = [optional_call("list_projects"), call("send_direct_message", user_id=lead, body=f"Heads-up: customers report {service['name']} {symptom}."),
            call("reply_in_thread", message_id=post, body=f"Handled {service['name']} under the incident policy.")]
    told = [state("SELECT count(*) FROM channels c JOIN messages m USING (channel_id) WHERE c.kind = 'dm' AND c.name = ? AND m.user_id = ? AND m.at >= ?",
                  f"dm-{AGENT}-{lead}".lower(), AGENT, stamp(NOW), expect=1, name="project lead messaged"),
            state("SELECT count(*) FROM messages WHERE thread_of = ? AND user_id = ?", post, AGENT, expect=1, name="replied in the asker's thread")]
    if which == "minor":
        iid = next_id(world, "issues")
        runbook = service["runbook_page_id"]
        work = [*look, call("create_issue", project_id=project["project_id"], title=f"{service['name']} {symptom}", description="Reported by customers.",
                            priority="high", labels=["bug"]),
                optional_call("get_page", page_id=runbook), call("link_page_to_issue", page_id=runbook, issue_id=iid),
                call("get_oncall", rotation=rotation), call("assign_issue", issue_id=iid, user_id=engineer["user_id"]), *tell]
        return TaskDraft(prompt=prompt, oracle=[*work, answer(f"Filed {iid}, linked the runbook and assigned it to on-call.")], outcome=completed(),
                         rubric=[read, seen("read who is on call now", "oncall_shifts", shift["shift_id"], "user_id", before="assign_issue"),
                                 state("SELECT count(*) FROM issues i WHERE i.project_id = ? AND i.reporter_id = ? AND i.priority = 'high' AND i.assignee_id = ? "
                                       "AND EXISTS (SELECT 1 FROM issue_labels l WHERE l.issue_id = i.issue_id AND l.label = 'bug') AND EXISTS "
                                       "(SELECT 1 FROM page_links k WHERE k.issue_id = i.issue_id AND k.page_id = ?)", project["project_id"], AGENT,
                                       engineer["user_id"], runbook, expect=1, weight=3, name="high-priority bug filed, runbook linked, assigned to on-call"),
                                 *told, never("open_incident", "no incident for a tier-3 service"), never("page_oncall", "nobody paged")],
                         negatives=[negative("pages_minor", "opens an incident anyway", *look, call("open_incident", service_id=sid, severity="sev3",
                                                                                                    title="Outage"), *tell, escalation("major_incident", "Escalated."))],
                         metadata={"case": which})
    opened = [] if which == "already_open" else [call("open_incident", service_id=sid, severity=severity, title=f"{service['name']} outage")]
    work = [*look, optional_call("get_incident", incident_id=incident) if which == "already_open" else optional_call("get_oncall", rotation=rotation),
            *opened, call("page_oncall", incident_id=incident),
            call("post_message", channel_id=incidents, body=f"{incident} ({severity}) on {service['name']}: on-call paged."), *tell]
    others = [s for s in ("sev1", "sev2", "sev3", "sev4") if s != severity]
    rubric = [read,
              state("SELECT count(*) FROM incidents WHERE service_id = ? AND status = 'open' AND severity = ?", sid, severity, expect=1, weight=1,
                    name="one open incident at the tier's severity"),
              state("SELECT count(*) FROM pages_sent WHERE incident_id = ? AND user_id = ?", incident, engineer["user_id"], expect=1, weight=3,
                    name="on-call engineer paged for the incident"),
              state("SELECT count(*) FROM messages WHERE channel_id = ? AND user_id = ? AND body LIKE ?", incidents, AGENT, f"%{incident}%", expect=1,
                    name="#incidents told"),
              *told, ToolNotCalled(name="no incident at another severity", tool="open_incident", args={"severity": one_of(*others)})]
    if which == "already_open":
        rubric.append(never("open_incident", "no second incident opened"))
    return TaskDraft(prompt=prompt, oracle=[*work, escalation("major_incident", f"{incident} ({severity}): on-call paged, lead told.")],
                     outcome=escalated("major_incident"), rubric=rubric,
                     negatives=[negative("files_issue", "files an issue instead", *look,
                                         call("create_issue", project_id=project["project_id"], title="Outage", description="Down", priority="high", labels=["bug"]),
                                         *tell, answer("Filed."))],
                     metadata={"case": which})


TEMPLATES = [
    TaskTemplate(customer_outage_full, difficulty="hard", category="cross_app", tags=["long_horizon", "incidents", "escalation"],
                 tools=["read_channel", "list_services", "get_service", "get_incident", "get_oncall", "create_issue", "get_page", "link_page_to_issue",
                        "assign_issue", "open_incident", "page_oncall", "post_message", "list_projects", "send_direct_message", "reply_in_thread",
                        "submit_answer"]),
]
