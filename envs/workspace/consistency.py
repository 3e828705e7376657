"""Domain checks that a workspace task's prompt and colleague agree with the world its setup planted.

``toolgym check`` runs them on every instance (``Environment.consistency``, beside the kit's timeline and counterpart
lints in ``graders/consistency.py``). A prompt that names a channel the world lacks, a date whose weekday is wrong, a
page or issue that does not exist, or a colleague who says "one of my issues" about someone else's issue cannot be
played correctly: a careful agent trips on it, and its grade is noise.

What is checked, generically over every template:

* the prompt opens with the colleague in chat (``<name> writes in chat``) when one is planted;
* every ``#channel`` the prompt names exists;
* every day the prompt names (``Thursday 19 March``) has that weekday in 2026 and is not before today;
* every quoted title (``'Capacity plan 12'``) is the title of a page, an issue, a meeting or an incident — except the
  words the request asks to write (``comment 'Shipped in Cycle 4'``);
* what the colleague answers names something that exists: the issue (theirs, when the prompt says "my"), the page, the
  person who takes over or is invited.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from envs.workspace.catalog import TODAY
from fixtures.persona import load_persona

if TYPE_CHECKING:
    from fixtures.world import World
    from graders.tasks import TaskInstance

__all__ = ["prompt_problems"]

_CHANNEL = re.compile(r"(?<![\w#])#([a-z0-9][a-z0-9-]*[a-z0-9])")
_DAY = re.compile(r"\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday) (\d{1,2}) (January|February|March|April|May|June|July|"
                  r"August|September|October|November|December)\b")
_QUOTED = re.compile(r"(?<![\w])'([^']{3,120})'(?![\w])")
_WORDS_TO_WRITE = re.compile(r"\b(comment|write|say|post)\s*$", re.IGNORECASE)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December")
_TITLED = ("pages", "issues", "events", "incidents")
_YEAR = TODAY.year


def _exists(world: World, table: str, column: str, value: str) -> bool:
    return bool(world.query(f'SELECT 1 FROM "{table}" WHERE "{column}" = ? LIMIT 1', (value,)))


def _days(prompt: str) -> list[str]:
    problems = []
    for weekday, day, month in _DAY.findall(prompt):
        try:
            when = date(_YEAR, _MONTHS.index(month) + 1, int(day))
        except ValueError:
            problems.append(f"the prompt names {weekday} {day} {month}, which is no date")
            continue
        if f"{when:%A}" != weekday:
            problems.append(f"the prompt names {weekday} {day} {month}, but {when.isoformat()} is a {when:%A}")
        elif when < TODAY:
            problems.append(f"the prompt names {weekday} {day} {month}, which is before today ({TODAY.isoformat()})")
    return problems


def _titles(world: World, prompt: str) -> list[str]:
    problems = []
    for match in _QUOTED.finditer(prompt):
        text = match.group(1)
        if _WORDS_TO_WRITE.search(prompt[: match.start()]):
            continue
        if not any(_exists(world, table, "title", text) for table in _TITLED):
            problems.append(f"the prompt quotes {text!r}, which is the title of no page, issue, meeting or incident")
    return problems


def _colleague(world: World, prompt: str) -> list[str]:
    persona = load_persona(world)
    if persona is None:
        return []
    problems = []
    if not prompt.startswith(f"{persona.name} writes in chat"):
        problems.append(f"the colleague in chat is {persona.name!r}, but the prompt does not open with them")
    facts = persona.facts
    issue = facts.get("which_issue")
    if issue is not None:
        found = world.query("SELECT i.issue_id FROM issues i WHERE i.title = ? AND (i.reporter_id IN (SELECT user_id FROM users WHERE name = ?) "
                            "OR i.assignee_id IN (SELECT user_id FROM users WHERE name = ?))", (issue, persona.name, persona.name))
        if not _exists(world, "issues", "title", issue):
            problems.append(f"the colleague names the issue {issue!r}, which does not exist")
        elif "my " in prompt.lower() and not found:
            problems.append(f"the colleague calls {issue!r} theirs, but they neither reported it nor are assigned to it")
    page = facts.get("which_page")
    if page is not None and not _exists(world, "pages", "title", page):
        problems.append(f"the colleague names the page {page!r}, which does not exist")
    for topic in ("who_takes_over", "who_to_invite"):
        name = facts.get(topic)
        if name is not None and not _exists(world, "users", "name", name):
            problems.append(f"the colleague answers {topic} with {name!r}, who is not in the directory")
    return problems


def prompt_problems(world: World, instance: TaskInstance) -> Sequence[str]:
    """Every way the instance's prompt or colleague contradicts its world (see the module docstring); empty when coherent."""
    prompt = instance.prompt
    problems = [f"the prompt names #{name}, which is no channel" for name in _CHANNEL.findall(prompt) if not _exists(world, "channels", "name", name)]
    return problems + _days(prompt) + _titles(world, prompt) + _colleague(world, prompt)
