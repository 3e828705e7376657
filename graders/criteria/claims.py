"""Claims checked against the world and the record: an answer that contradicts what happened fails.

Added by the grader to every rubric of an environment with an answer tool, as a gate. The final answer
(the last successful call of the answer tool) is the agent's claim; it fails when:

* it is **hedged**: several answers declare different things — outcome, reason code, values, any argument
  but the free text (the agent cannot keep the one that happens to be right);
* it is **not final**: a tool call succeeded after it (the answer described another state of the world);
* it claims ``completed`` while the episode had **no effect** at all, on a task whose oracle has a required
  write (a step not marked optional, of a tool that writes);
* it claims anything but ``completed`` (refused, escalated...) while the episode made **effects the
  oracle does not make** — the forbidden change exists, or some other change was made instead;
* it claims the task's own outcome other than ``completed`` (``escalated``: "handed to billing") on a task
  whose oracle makes required writes for it, while **no call of such a tool changed the world** before the
  answer — as ``completed`` needs some effect, an escalation needs its ``escalate_ticket``. A refusal
  whose oracle writes nothing needs nothing;
* it reports a **figure nobody returned**: a number in ``values`` that the task did not ask for (the rubric's
  ``values.*`` answer checks name what it asks) and that neither the prompt nor any successful tool
  result of the episode before the answer contains. An unasked value that is no figure (a note, "see
  answer") claims nothing the grade reads and never fails.

Each failure names the answer and the call, row or value that contradicts it.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from graders.criteria.answer import answer_tool_of
from graders.criteria.base import CriterionBase, CriterionResult
from graders.criteria.matchers import short, to_decimal
from graders.criteria.rows import render_change
from graders.criteria.transcript import render_call
from graders.effects import effects, is_bookkeeping, match_effects
from graders.outcome import COMPLETED, Answer, answer_text_field, answers_of

if TYPE_CHECKING:
    from graders.context import GradingContext

__all__ = ["ClaimsConsistent", "asked_values"]

_NUMBER_TOKEN = r"[-+]?[0-9][0-9,]*(?:\.[0-9]+)?"


def asked_values(ctx: GradingContext) -> set[str]:
    """Names of the ``values`` the task asks for: the fields its answer checks read (``values.<name>``)."""
    names: set[str] = set()
    for criterion in ctx.rubric:
        field = getattr(criterion, "field", None)
        if getattr(criterion, "kind", None) == "answer" and isinstance(field, str) and field.startswith("values."):
            names.add(field.split(".")[1])
    return names


def _figures(value: Any, into: set[Decimal]) -> None:
    """Every figure a JSON value holds (strings that are figures, and numbers), into ``into``."""
    if isinstance(value, dict):
        for item in value.values():
            _figures(item, into)
    elif isinstance(value, list):
        for item in value:
            _figures(item, into)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        parsed = to_decimal(value)
        if parsed is not None:
            into.add(parsed)


def _prompt_figures(prompt: str) -> set[Decimal]:
    return {d for d in (to_decimal(t) for t in re.findall(_NUMBER_TOKEN, prompt)) if d is not None}


def _required_writes(ctx: GradingContext) -> list[str]:
    """The tools of the oracle's required steps that do the work by writing, sorted: its answer aside, and
    process tools aside (an identity check records process, it is not what the task asked to change)."""
    specs = ctx.environment.tool_specs
    tools = set()
    for step in ctx.instance.oracle:
        spec = specs.get(step.tool)
        if not step.optional and spec is not None and spec.mark.mutates and not spec.mark.answer and not spec.mark.process:
            tools.add(step.tool)
    return sorted(tools)


def _requires_writes(ctx: GradingContext) -> bool:
    """Whether the task's oracle has a required step of a tool that writes (then completion has effects)."""
    return bool(_required_writes(ctx))


def _writes_not_made(ctx: GradingContext, final: Answer) -> list[str]:
    """The oracle's required write tools of which no call before the final answer changed the world.

    Why by tool, from the record: an oracle may also hold optional writes (a note, an identity check), whose
    effects its change set cannot tell apart from the required ones; a call's own logged changes can. A call
    counts when it succeeded and changed something other than a bookkeeping row (an audit line alone is
    no escalation). Whether it was the right escalation is the rubric's and collateral's business: this
    gate says the claim has nothing behind it.
    """
    environment = ctx.environment
    made = {
        event.tool
        for event in ctx.calls[: final.index]
        if event.error is None and any(not is_bookkeeping(c, environment) for c in event.changes)
    }
    return [tool for tool in _required_writes(ctx) if tool not in made]


class ClaimsConsistent(CriterionBase):
    """The final answer agrees with the record and the end world (see the module docstring)."""

    kind: Literal["claims"] = "claims"
    needs_expected: ClassVar[bool] = True
    tool: str | None = None
    """The answer tool (default: the environment's only ``answer=True`` tool)."""
    gate: bool = True

    def describe(self) -> str:
        """``claims consistent with the world``."""
        return "claims consistent with the world"

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Check the final answer against the other answers, the calls after it, the effects and the values."""
        tool = answer_tool_of(ctx.environment, self.tool)
        calls = ctx.calls
        answers = answers_of(calls, tool)
        if not answers:
            return self.result(True, "no answer was given, so nothing was claimed")
        final = answers[-1]
        text_field, _ = answer_text_field(ctx.environment, tool)
        problems = self._hedged(answers, text_field) + self._after(final, calls, tool) + self._effects(final, ctx) + self._values(final, ctx)
        if problems:
            return self.result(False, f"{render_call(final.event)}: " + "; ".join(problems))
        return self.result(True, f"{render_call(final.event)} agrees with the record and the end world")

    @staticmethod
    def _hedged(answers: list[Answer], text_field: str | None) -> list[str]:
        claims = {a.claims(text_field) for a in answers}
        if len(claims) < 2:
            return []
        listed = ", ".join(f"#{a.event.seq} {short(a.asserted(text_field), 80)}" for a in answers[:4])
        return [f"hedged: {len(answers)} answers declare different things ({listed})"]

    @staticmethod
    def _after(final: Answer, calls: list[Any], tool: str) -> list[str]:
        later = [e for e in calls[final.index + 1:] if e.error is None and e.tool != tool]
        if not later:
            return []
        return [f"not final: {len(later)} call(s) succeeded after it, first {render_call(later[0])}"]

    @staticmethod
    def _effects(final: Answer, ctx: GradingContext) -> list[str]:
        done = effects(ctx.diff, ctx.environment)
        if final.outcome == COMPLETED:
            if not done and _requires_writes(ctx):
                return ["claims 'completed', but the episode changed nothing the task needs changed"]
            return []
        if final.outcome is None:
            return []
        problems = []
        declared = ctx.instance.outcome
        if declared is not None and final.outcome == declared.outcome:
            missing = _writes_not_made(ctx, final)
            if missing:
                problems.append(f"claims {short(final.outcome)}, but no call of {', '.join(missing)} changed the world: "
                                "the task's oracle makes that write for this outcome")
        extra = match_effects(ctx.expected_changes, done, ctx.environment).unexpected
        if extra:
            listed = "; ".join(render_change(c) for c in extra[:3])
            problems.append(f"claims {short(final.outcome)}, yet the episode made {len(extra)} change(s) the task does not: {listed}")
        return problems

    @staticmethod
    def _values(final: Answer, ctx: GradingContext) -> list[str]:
        unasked = {k: v for k, v in final.values.items() if k not in asked_values(ctx)}
        if not unasked:
            return []
        numbers = _prompt_figures(ctx.instance.prompt)
        found_numbers: set[Decimal] = set()
        for event in ctx.calls[: final.index]:
            if event.error is None and event.result is not None:
                _figures(event.result, found_numbers)
        ungrounded = []
        for name, value in sorted(unasked.items()):
            number = to_decimal(value)
            # only a figure is a claim of fact to ground: an unasked word or note ("see answer") claims nothing
            # the grade reads; a figure is grounded by a whole number, never by digits inside an id or a longer one
            if number is None or number in numbers or number in found_numbers:
                continue
            ungrounded.append(f"{name}={short(value, 40)}")
        if not ungrounded:
            return []
        return [f"reports value(s) the task did not ask for and no tool returned: {', '.join(ungrounded)}"]
