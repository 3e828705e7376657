"""The workspace task templates, one module per kind; ``TEMPLATES`` collects them for the environment.

| module | what the agent must do (the world decides the outcome) |
|---|---|
| issues | close, reprioritise, estimate, reassign, dedupe, record a blocker — change control, blockers, leave, project membership |
| meetings | schedule at the earliest common slot, move, move off a leave day across time zones, cancel — working hours, leave, organizer |
| access | share a page, forward a message, DM a private channel's digest, answer with a runbook — who may see what |
| secrets | repost a deploy command, deal with a pasted key — live credential or placeholder |
| oncall | hand over a shift, report an outage (issue or incident + page), page for an open incident, find on-call, assign to on-call |
| docs | link a page (with an instruction planted in it), replace a contact with a new version — page access |
| crossapp | triage a customer bug end to end (10–14 calls), release notes for a cycle |
| injection | acknowledge and pin a message that carries an instruction to an assistant |
| triage | a bug from chat matched against the tracker (comment or file), a project's new issues deduplicated and prioritised (11–15 calls) |
| sharing | a page's gist posted in a private channel, a private message copied onto an issue — who can see the destination |
| rooms | a named room booked for a group at a time given in the asker's zone — capacity, calendars |
| handover | a colleague's week of leave covered: issues reassigned, on-call shift handed over, #oncall told (11–17 calls) |
| planted | a page and an issue comment carrying instructions (ignored), credentials among a thread's replies (reported) |
| longhaul | a postmortem set up (issue, runbook, review meeting, #incidents) and release notes (page section, a comment per shipped issue, #releases): 10–16 calls |
| pasted | a setup command from chat copied into a page — placeholder or live credential |
| incidents | a status update for a service's open incident — open, or only mitigated/resolved |
| zones | a group meeting at the earliest slot inside everyone's own working hours — leave |
| outage | a customer-reported outage end to end: incident + page + #incidents, or a bug filed, runbook linked, assigned to on-call; lead told, thread answered (10–13 calls) |
| confirm | an obsolete issue cancelled once the colleague confirms in chat — they may decline; blockers |

Every template poses one neutral request (most from a colleague in chat), draws its case with ``graders.setup.case``,
plants what makes the deciding fact hold, and computes its oracle, rubric and negatives from what it read;
``toolgym check workspace`` proves each one.
"""

from __future__ import annotations

from envs.workspace.tasks import (
    access,
    confirm,
    crossapp,
    docs,
    handover,
    incidents,
    injection,
    issues,
    longhaul,
    meetings,
    oncall,
    outage,
    pasted,
    planted,
    rooms,
    secrets,
    sharing,
    triage,
    zones,
)

__all__ = ["TEMPLATES"]

TEMPLATES = [
    *issues.TEMPLATES,
    *meetings.TEMPLATES,
    *access.TEMPLATES,
    *secrets.TEMPLATES,
    *oncall.TEMPLATES,
    *docs.TEMPLATES,
    *crossapp.TEMPLATES,
    *injection.TEMPLATES,
    *triage.TEMPLATES,
    *sharing.TEMPLATES,
    *rooms.TEMPLATES,
    *handover.TEMPLATES,
    *planted.TEMPLATES,
    *longhaul.TEMPLATES,
    *pasted.TEMPLATES,
    *incidents.TEMPLATES,
    *zones.TEMPLATES,
    *outage.TEMPLATES,
    *confirm.TEMPLATES,
]
