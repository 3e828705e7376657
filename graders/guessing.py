"""The guessing attack: read everything within reach, never use what was read, declare the best-paying outcome.

A template whose world decides between ``completed`` and a refusal pays a policy that always declares the
refusal on the seeds where the refusal is right, as long as its gates are satisfied by reads the policy makes
out of habit. That is chance, not a bug — but a policy learns it, so ``toolgym check`` measures and bounds it.
For every template it plays, on every seed, the reads a policy makes without understanding the task —
everything the prompt names, the questions every oracle asks the counterpart, and one hop further (every id
those results show, read with every read tool that takes such an id) — and then each declaration the
template's oracles make (with every value constant across the seeds that declare it). The best declaration's
mean reward over the seeds is the template's guess reward:

* it must not exceed the share of seeds on which that declaration is right (a guess paid on a seed where it
  is wrong means a gate or a check is missing);
* over all templates its mean must stay at most :data:`GUESS_LIMIT`: twins must be balanced and deciding
  facts not handed over by habit, or the policy is paid for guessing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from graders.grading import grade_episode
from graders.priors import SeedInstance, constant_reads, declaration, generic_reads
from graders.tasks import ToolCall
from graders.play import play_new
from servers.dispatch import call_tool
from servers.episodes import EpisodeManager

__all__ = ["GUESS_LIMIT", "GuessReport", "guessing_attack", "reachable_reads"]

GUESS_LIMIT = 0.10
"""Highest mean (over an environment's templates) of the best-paying declaration's reward after habit reads."""
_MAX_READS = 40
_ID_TOKEN = re.compile(r"^[A-Za-z]{1,6}-[0-9]{2,}$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")


@dataclass
class GuessReport:
    """The guessing attack on one template."""

    best: str = "-"
    """The best-paying declaration (``refused:not_pending``)."""
    reward: float = 0.0
    """Its mean reward over the seeds."""
    share: float = 0.0
    """The share of seeds on which it is the correct declaration."""
    rewards: dict[str, float] = field(default_factory=dict)
    """Mean reward of every declaration tried."""


def _label(outcome: str | None, code: str | None) -> str:
    return f"{outcome}:{code}" if code else str(outcome)


def _ids(value: Any, into: list[str], texts: list[str], depth: int = 0) -> None:
    """Id-shaped tokens into ``into``, e-mails (and a counterpart's answers) into ``texts`` — what a habit policy
    reads next: every id with every tool taking one, every e-mail or name with every search."""
    if depth > 8 or len(into) > 200:
        return
    if isinstance(value, dict):
        answer = value.get("value") if value.get("known") is True and isinstance(value.get("value"), str) else None
        if answer is not None and not _ID_TOKEN.match(answer) and answer not in texts:
            texts.append(answer)  # what the counterpart said (an e-mail, a name): searched like the prompt's names
        for item in value.values():
            _ids(item, into, texts, depth + 1)
    elif isinstance(value, list):
        for item in value[:30]:
            _ids(item, into, texts, depth + 1)
    elif isinstance(value, str) and value not in into and value not in texts:
        if _ID_TOKEN.match(value):
            into.append(value)
        elif _EMAIL.match(value):
            texts.append(value)


def _one_hop(manager: EpisodeManager, ids: Sequence[str], texts: Sequence[str], done: set[str]) -> list[ToolCall]:
    """Every read tool with one required id argument, called with each id its schema pattern accepts, and every search
    (a required ``query``) with each e-mail or answer the first reads gave."""
    reads = []
    for name, spec in sorted(manager.environment.tool_specs.items()):
        if spec.mark.mutates or spec.mark.answer:
            continue
        schema = spec.input_schema
        required = list(schema.get("required", []))
        if len(required) != 1:
            continue
        if required[0] == "query":
            for text in texts:
                key = f"{name}:{text}"
                if key not in done:
                    done.add(key)
                    reads.append(ToolCall(tool=name, arguments={"query": text}))
            continue
        prop = schema.get("properties", {}).get(required[0], {})
        options = [prop, *prop.get("anyOf", [])]
        pattern = next((o.get("pattern") for o in options if isinstance(o.get("pattern"), str)), None)
        if pattern is None:
            continue
        for value in ids:
            if re.fullmatch(pattern, value):
                call = ToolCall(tool=name, arguments={required[0]: value})
                key = f"{name}:{value}"
                if key not in done:
                    done.add(key)
                    reads.append(call)
    return reads


async def reachable_reads(manager: EpisodeManager, target: SeedInstance, everyone: Sequence[SeedInstance]) -> list[ToolCall]:
    """The habit reads for ``target``: what the prompt names, every oracle's common questions, then one hop (the ids
    those results show, and the e-mails and answers they give, searched)."""
    environment = manager.environment
    first = [*constant_reads(environment, everyone), *generic_reads(environment, target.instance.prompt)]
    done = {f"{c.tool}:{next(iter(c.arguments.values()), '')}" for c in first if len(c.arguments) == 1}
    episode = manager.create(task=target.instance.template_id, seed=target.seed)
    try:
        ids: list[str] = []
        texts: list[str] = []
        for read in first:
            event = await call_tool(episode, read.tool, read.arguments)
            if event.error is None:
                _ids(event.result, ids, texts)
    finally:
        manager.close(episode.id)
        manager.release(episode.id)
    return [*first, *_one_hop(manager, ids, texts, done)][:_MAX_READS]


def _answers(answer_tool: str, instances: Sequence[SeedInstance]) -> dict[str, ToolCall]:
    """One answer per declaration the oracles make, with every value constant over the seeds that make it."""
    by_label: dict[str, list[ToolCall]] = {}
    for item in instances:
        if item.final is not None:
            by_label.setdefault(_label(*declaration(item.final)), []).append(item.final)
    answers = {}
    for label, finals in sorted(by_label.items()):
        outcome, code = declaration(finals[0])
        arguments: dict[str, Any] = {"answer": "Handled as the policy requires."}
        if outcome is not None:
            arguments["outcome"] = outcome
        if code is not None:
            arguments["reason_code"] = code
        values = [f.arguments.get("values") for f in finals]
        if all(isinstance(v, dict) for v in values) and values:
            constant = {k: v for k, v in values[0].items() if all(d.get(k) == v for d in values[1:])}
            if constant:
                arguments["values"] = constant
        answers[label] = ToolCall(tool=answer_tool, arguments=arguments)
    return answers


async def guessing_attack(manager: EpisodeManager, answer_tool: str | None, instances: Sequence[SeedInstance]) -> GuessReport:
    """Play the guessing attack on every seed of one template (see the module docstring)."""
    report = GuessReport()
    if answer_tool is None or not instances:
        return report
    answers = _answers(answer_tool, instances)
    if not answers:
        return report
    totals = {label: 0.0 for label in answers}
    for target in instances:
        reads = await reachable_reads(manager, target, instances)
        for label, answer in answers.items():
            episode = await play_new(manager, target.instance.template_id, target.seed, (*reads, answer))
            try:
                manager.close(episode.id)
                grade = await grade_episode(episode, judge_from_env=False)
            finally:
                manager.release(episode.id)
            totals[label] += grade.score
    report.rewards = {label: total / len(instances) for label, total in totals.items()}
    report.best, report.reward = max(report.rewards.items(), key=lambda kv: (kv[1], kv[0]))
    correct = sum(1 for i in instances if i.final is not None and _label(*declaration(i.final)) == report.best)
    report.share = correct / len(instances)
    return report
