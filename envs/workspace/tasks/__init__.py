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

Every template poses one neutral request (most from a colleague in chat), draws its case with ``graders.setup.case``,
plants what makes the deciding fact hold, and computes its oracle, rubric and negatives from what it read;
``toolgym check workspace`` proves each one.
"""

from __future__ import annotations

from envs.workspace.tasks import access, crossapp, docs, injection, issues, meetings, oncall, secrets

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
]
