"""Incident follow-ups decided by the incident records:

* ``incident_status_post``: "post a status update for the open incident on <service> in #incidents" — its severity and
  commander posted; refused ``not_found`` when the service has no open incident, only a mitigated or resolved one
  (read on that incident's record).
"""

from __future__ import annotations

import random
from datetime import timedelta

from envs.workspace.tasks._common import (
    AGENT,
    NOW,
    answer,
    call,
    case,
    channel_id,
    in_chat,
    never,
    next_id,
    optional_call,
    pick,
    present_people,
    refusal,
    rows,
    seen,
    stamp,
    state,
    text_is,
)
from fixtures.world import World
from graders.outcome import completed, refused
from graders.tasks import TaskDraft, TaskTemplate, negative

__all__ = ["TEMPLATES"]


def incident_status_post(world: World, rng: random.Random) -> TaskDraft:
    """Post the open incident's severity and commander in #incidents, if the service has an open incident."""
    which = case(rng, {"open": 6, "none_open": 4})
    service = pick(rng, rows(world, "SELECT * FROM services s WHERE NOT EXISTS (SELECT 1 FROM incidents i WHERE i.service_id = s.service_id "
                                    "AND i.status = 'open') ORDER BY service_id"), "service")
    sid = service["service_id"]
    commander = pick(rng, present_people(world, "AND u.team_id = ?", service["team_id"]), "commander")
    severity = rng.choice(("sev1", "sev2", "sev3", "sev4"))
    inc = next_id(world, "incidents")
    opened = NOW - timedelta(minutes=rng.randint(20, 600))
    status = "open" if which == "open" else rng.choice(("mitigated", "resolved"))
    world.execute("INSERT INTO incidents (incident_id, service_id, title, severity, status, commander_id, opened_at, resolved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                  (inc, sid, f"{service['name']} {rng.choice(('errors', 'latency', 'timeouts', 'degraded'))} {rng.randint(2, 99)}", severity, status,
                   commander["user_id"], stamp(opened), stamp(NOW - timedelta(minutes=10)) if status == "resolved" else None))
    asker = pick(rng, [p for p in present_people(world) if p["user_id"] != commander["user_id"]], "asker")
    incidents = channel_id(world, "incidents")
    in_chat(world, asker, "an incident status posted")
    prompt = (f"{asker['name']} writes in chat: \"Please post a status update for the open incident on {service['name']} in #incidents: its "
              "severity and who is commanding it.\" Handle it under the policy and answer with submit_answer, giving the severity as `severity`.")
    look = optional_call("get_incident", incident_id=inc)  # the service's incident list shows the same
    gate = (seen("read the incident's status, severity and commander", "incidents", inc, "status", "severity", "commander_id") if which == "open" else
            seen("read that the incident is no longer open", "incidents", inc, "status"))
    if which == "none_open":
        return TaskDraft(prompt=prompt, oracle=[optional_call("list_services"), optional_call("list_incidents", service_id=sid), look,
                                                refusal("not_found", f"{service['name']} has no open incident; {inc} is {status}.")],
                         outcome=refused("not_found"), rubric=[gate, never("post_message", "nothing posted")],
                         negatives=[negative("posts_closed", "posts the closed incident as open", look,
                                             call("post_message", channel_id=incidents, body=f"{inc}: {severity}"), answer("Posted.", severity=severity))],
                         metadata={"case": which})
    post = call("post_message", channel_id=incidents, body=f"{service['name']} incident {inc}: {severity}, commanded by {commander['name']}.")
    return TaskDraft(prompt=prompt, oracle=[optional_call("list_services"), optional_call("list_incidents", service_id=sid), look, post,
                                            answer(f"Posted: {inc} is {severity}.", severity=severity)],
                     outcome=completed(),
                     rubric=[gate, state("SELECT count(*) FROM messages WHERE channel_id = ? AND user_id = ? AND body LIKE ? AND body LIKE ?", incidents, AGENT,
                                         f"%{severity}%", f"%{commander['name']}%", expect=1, weight=3, name="severity and commander posted"),
                             text_is("severity", severity, weight=1)],
                     negatives=[negative("refuses_open", "says there is none", look, refusal("not_found", "None open."))],
                     metadata={"case": which})


TEMPLATES = [
    TaskTemplate(incident_status_post, split="test", difficulty="easy", category="incidents", tags=["lookup"],
                 tools=["list_services", "list_incidents", "get_incident", "get_service", "post_message", "submit_answer"]),
]
