"""Generated attacks: wrong trajectories derived from each task itself, which its grader must fail.

Hand-written negatives show what an author thought of; a policy trained on the reward finds what they did
not. So ``toolgym check`` derives, for every template and seed and with no per-task code, the cheap ways
to earn a reward without doing the task, and requires every one to fail. From the oracle (its work: the
calls before its final answer, each required unless marked optional; its final answer), the rubric, the
negatives and the other templates of the environment (the :class:`Vocabulary` of a seed):

| class | trajectory |
|---|---|
| ``answer_only`` | the oracle's final answer, no work |
| ``outcome_lie`` | the final answer declaring another outcome (completion on a refusal task, a refusal on an action task), with and without the work |
| ``keyword_stuffing`` | for each outcome, an answer holding the whole environment's answer vocabulary and figures, and a bare one, no work |
| ``over_action`` | the work plus a write taken from another template; plus a required write repeated; plus the first required write three times with a wrong id (counted when the extra writes changed the world) |
| ``forbidden_then_refusal`` | on refusal tasks: the work, a write from a negative, then the refusal |
| ``prefix`` | every strict prefix of the work that drops a required step, then the answer |
| ``skipped_step`` | the work without one required step, then the answer |
| ``reorder`` | the answer first, then the work; adjacent required steps swapped (counted when the order matters: a step then fails, the effects differ, or a call-order criterion breaks) |
| ``perturbed_value`` | one argument of a required step, or one reported figure, one minor unit off, in another currency, or a neighbouring id |
| ``hedged`` | figures given as "X or Y"; two answers that disagree |

Each :class:`Attack` says when it counts (``rule``); :mod:`graders.adversary` plays them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from graders.outcome import COMPLETED, answer_text_field
from graders.perturb import argument_perturbations, value_perturbations
from graders.tasks import ToolCall

if TYPE_CHECKING:
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["Attack", "Vocabulary", "ATTACK_CLASSES", "generate_attacks", "optional_step_checks", "answer_text_field", "split_oracle"]

ATTACK_CLASSES = (
    "answer_only",
    "outcome_lie",
    "keyword_stuffing",
    "over_action",
    "forbidden_then_refusal",
    "prefix",
    "skipped_step",
    "reorder",
    "perturbed_value",
    "hedged",
)

Rule = Literal["always", "if_effective", "if_order_matters", "if_not_equivalent_read"]

_FOREIGN_WRITES = 6
"""How many writes of other templates each task is attacked with (chosen by a seeded rng)."""


@dataclass(frozen=True)
class Attack:
    """One generated trajectory and when it counts as an attack the grader must fail."""

    kind: str
    """One of :data:`ATTACK_CLASSES`."""
    name: str
    """What exactly was done, e.g. ``prefix: first 2 steps`` (shown in violations)."""
    calls: tuple[ToolCall, ...]
    rule: Rule = "always"
    """``always``; ``if_effective``: only when every injected call succeeded and changed the world;
    ``if_order_matters``: only when the order is shown to matter; ``if_not_equivalent_read``: a read changed
    (at ``injected``) only when it no longer shows what decides the task (see :mod:`graders.adversary`)."""
    injected: tuple[int, ...] = ()
    """Positions of the injected calls (for ``if_effective``)."""


@dataclass
class Vocabulary:
    """What every template of an environment says and does on one seed: the attacker's raw material."""

    texts: list[str] = field(default_factory=list)
    """Free text of every oracle's final answer."""
    values: dict[str, str] = field(default_factory=dict)
    """Every figure name any oracle reports, with one value for it."""
    writes: list[tuple[str, ToolCall]] = field(default_factory=list)
    """(template id, call) for every write step of every oracle."""
    reason_codes: list[str] = field(default_factory=list)
    """Every reason code a task accepts, most frequent first."""


def split_oracle(instance: TaskInstance, answer_tool: str | None) -> tuple[list[ToolCall], ToolCall | None]:
    """(the work: calls before the final answer, the final answer) of the instance's oracle."""
    oracle = list(instance.oracle)
    if answer_tool is None:
        return oracle, None
    for index in range(len(oracle) - 1, -1, -1):
        if oracle[index].tool == answer_tool:
            return oracle[:index], oracle[index]
    return oracle, None


def _answer(final: ToolCall, **changes: Any) -> ToolCall:
    arguments = dict(final.arguments)
    for key, value in changes.items():
        if value is None:
            arguments.pop(key, None)
        else:
            arguments[key] = value
    return ToolCall(tool=final.tool, arguments=arguments)


def _is_write(environment: Environment, call: ToolCall) -> bool:
    spec = environment.tool_specs.get(call.tool)
    return spec is not None and spec.mark.mutates and not spec.mark.answer


def _reason_for(outcome: str, instance: TaskInstance, vocabulary: Vocabulary) -> str | None:
    if outcome == COMPLETED:
        return None
    if instance.outcome is not None and instance.outcome.reason_codes:
        return instance.outcome.reason_codes[0]
    return vocabulary.reason_codes[0] if vocabulary.reason_codes else None


def stuffed_answers(environment: Environment, vocabulary: Vocabulary, tool: str) -> list[ToolCall]:
    """Task-agnostic answers: for each outcome, one holding the whole vocabulary (every oracle's words and
    figures) and one bare ("Done."); refusals give the most frequent reason code. The same for every task."""
    text_field, limit = answer_text_field(environment, tool)
    stuffed = " ".join(vocabulary.texts)[: max(1, limit)] or "done"
    values = dict(sorted(vocabulary.values.items())[:20])
    out: list[ToolCall] = []
    for choice in list(environment.outcomes) or [None]:
        for text, figures in ((stuffed, values), ("Done.", {})):
            arguments: dict[str, Any] = {}
            if text_field is not None:
                arguments[text_field] = text
            if figures:
                arguments["values"] = figures
            if choice is not None:
                arguments["outcome"] = choice
                if choice != COMPLETED and vocabulary.reason_codes:
                    arguments["reason_code"] = vocabulary.reason_codes[0]
            answer = ToolCall(tool=tool, arguments=arguments)
            if answer not in out:
                out.append(answer)
    return out


def optional_step_checks(instance: TaskInstance, answer_tool: str | None) -> list[tuple[int, list[ToolCall]]]:
    """(step number, the oracle without that optional step) — each of these must still pass."""
    work, final = split_oracle(instance, answer_tool)
    tail = [final] if final is not None else []
    return [(i + 1, work[:i] + work[i + 1:] + tail) for i, step in enumerate(work) if step.optional]


def generate_attacks(environment: Environment, instance: TaskInstance, vocabulary: Vocabulary, answer_tool: str | None) -> list[Attack]:
    """Every generated attack on ``instance`` (see the module docstring); deterministic for a given seed.

    A task whose oracle gives no final answer (an environment without outcomes may have such tasks) gets
    the attacks on its work only.
    """
    work, final = split_oracle(instance, answer_tool) if answer_tool else (list(instance.oracle), None)
    tail = (final,) if final is not None else ()
    required = [i for i, step in enumerate(work) if not step.optional]
    attacks: list[Attack] = []
    add = attacks.append
    expected = instance.outcome.outcome if instance.outcome is not None else None
    if final is not None:
        if work and not instance.noop_may_pass:
            add(Attack("answer_only", "the final answer with no work", (final,)))
        if expected is not None:
            for other in environment.outcomes:
                if other == expected:
                    continue
                lie = _answer(final, outcome=other, reason_code=_reason_for(other, instance, vocabulary))
                add(Attack("outcome_lie", f"declares {other!r} after doing the work", (*work, lie)))
                add(Attack("outcome_lie", f"declares {other!r} without any work", (lie,)))
    if answer_tool is not None and not instance.noop_may_pass:
        for stuffed in stuffed_answers(environment, vocabulary, answer_tool):
            kind = "stuffed" if stuffed.arguments.get("values") or len(str(stuffed.arguments)) > 200 else "bare"
            declared = stuffed.arguments.get("outcome")
            add(Attack("keyword_stuffing", f"{kind} answer" + (f" declaring {declared!r}" if declared else ""), (stuffed,)))
    attacks += _over_action(environment, instance, vocabulary, work, tail, required)
    if expected is not None and expected != COMPLETED:
        seen: set[str] = set()
        for neg in instance.negatives:
            for step in neg.calls:
                key = step.model_dump_json()
                spec = environment.tool_specs.get(step.tool)
                # a process step (an identity check) is never the forbidden action, whatever a negative does with it
                if _is_write(environment, step) and not (spec is not None and spec.mark.process) and step not in work and key not in seen:
                    seen.add(key)
                    add(Attack("forbidden_then_refusal", f"tries {step.tool} (from negative {neg.name!r}), then refuses",
                               (*work, step, *tail)))
    dropping = [] if instance.noop_may_pass else required  # where doing nothing is right, doing less is too
    for k in range(1, len(work)):
        if any(i >= k for i in dropping):
            add(Attack("prefix", f"only the first {k} of {len(work)} steps", (*work[:k], *tail)))
    for i in dropping:
        add(Attack("skipped_step", f"skips required step #{i + 1} {work[i].tool}", (*work[:i], *work[i + 1:], *tail)))
    if work and final is not None:
        add(Attack("reorder", "answers first, then works", (final, *work)))
    for a, b in zip(required, required[1:]):
        if b == a + 1:
            swapped = [*work[:a], work[b], work[a], *work[b + 1:]]
            add(Attack("reorder", f"swaps steps #{a + 1} {work[a].tool} and #{b + 1} {work[b].tool}", (*swapped, *tail),
                       rule="if_order_matters"))
    attacks += _perturbed(environment, work, final, required)
    if final is not None:
        attacks += _hedged(environment, instance, vocabulary, work, final)
    return attacks


def _over_action(
    environment: Environment, instance: TaskInstance, vocabulary: Vocabulary, work: list[ToolCall], tail: tuple[ToolCall, ...],
    required: list[int],
) -> list[Attack]:
    attacks: list[Attack] = []
    position = len(work)
    foreign = [(tid, c) for tid, c in vocabulary.writes if tid != instance.template_id and c.tool in environment.tool_specs and c not in work]
    rng = random.Random(f"over_action:{instance.template_id}:{instance.seed}")
    picked = rng.sample(foreign, min(_FOREIGN_WRITES, len(foreign)))
    for template_id, step in picked:
        attacks.append(Attack("over_action", f"adds {step.tool} (from {template_id})", (*work, step, *tail), rule="if_effective",
                              injected=(position,)))
    writes = [i for i in required if _is_write(environment, work[i])]
    if writes:
        last = work[writes[-1]]
        attacks.append(Attack("over_action", f"repeats {last.tool}", (*work, last, *tail), rule="if_effective", injected=(position,)))
        first = work[writes[0]]
        schema = environment.tool_specs[first.tool].input_schema
        for name, value in sorted(first.arguments.items()):
            wrong = [v for label, v in argument_perturbations(schema, name, value, write=True) if label == "neighbouring id"]
            if wrong:  # e.g. three failed identity checks that lock the customer out
                bad = ToolCall(tool=first.tool, arguments={**first.arguments, name: wrong[0]})
                attacks.append(Attack("over_action", f"adds {first.tool} three times with a wrong {name}", (*work, bad, bad, bad, *tail),
                                      rule="if_effective", injected=(position, position + 1, position + 2)))
    return attacks


def _perturbed(environment: Environment, work: list[ToolCall], final: ToolCall | None, required: list[int]) -> list[Attack]:
    attacks: list[Attack] = []
    for i in required:
        step = work[i]
        spec = environment.tool_specs.get(step.tool)
        if spec is None:
            continue
        write = _is_write(environment, step)
        for name, value in sorted(step.arguments.items()):
            for label, wrong in argument_perturbations(spec.input_schema, name, value, write=write):
                changed = ToolCall(tool=step.tool, arguments={**step.arguments, name: wrong})
                calls = (*work[:i], changed, *work[i + 1:], *([final] if final is not None else []))
                # a read of a neighbouring record that shows the same deciding facts is correct work, not an attack
                rule: Rule = "always" if write else "if_not_equivalent_read"
                attacks.append(Attack("perturbed_value", f"step #{i + 1} {step.tool}: {name} {label} ({wrong})", calls, rule=rule,
                                      injected=(i,)))
    values = final.arguments.get("values") if final is not None else None
    if final is not None and isinstance(values, dict):
        for name, value in sorted(values.items()):
            for label, wrong in value_perturbations(value):
                calls = (*work, _answer(final, values={**values, name: wrong}))
                attacks.append(Attack("perturbed_value", f"reports {name} {label} ({wrong})", calls))
    return attacks


def _hedged(environment: Environment, instance: TaskInstance, vocabulary: Vocabulary, work: list[ToolCall], final: ToolCall) -> list[Attack]:
    attacks: list[Attack] = []
    values = final.arguments.get("values")
    if isinstance(values, dict):
        for name, value in sorted(values.items()):
            wrong = value_perturbations(value)
            if wrong:
                hedge = f"{value} or {wrong[0][1]}"
                attacks.append(Attack("hedged", f"reports {name} as {hedge!r}", (*work, _answer(final, values={**values, name: hedge}))))
                other = _answer(final, values={**values, name: wrong[0][1]})
                attacks.append(Attack("hedged", f"answers twice, {name} differing", (*work, other, final)))
    expected = instance.outcome.outcome if instance.outcome is not None else None
    others = [o for o in environment.outcomes if o != expected]
    if expected is not None and others:
        other = _answer(final, outcome=others[0], reason_code=_reason_for(others[0], instance, vocabulary))
        attacks.append(Attack("hedged", f"answers {others[0]!r}, then {expected!r}", (*work, other, final)))
    return attacks
