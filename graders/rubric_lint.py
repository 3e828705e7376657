"""Rubric lints ``toolgym check`` enforces on every task instance: rubrics that can be gamed by design.

* **A declared outcome**: when the environment's answer tool declares outcomes, every task must say which
  one its answer must give — otherwise the answer's claim cannot be graded exactly.
* **The oracle ends with its answer** (when answers declare outcomes), so the attacks know which call is the
  claim and which are the work.
* **Credit needs work**: some credited criterion (weight > 0, not already satisfied by the untouched
  world) must read the world or the record. A rubric whose only credited criteria read the answer pays
  for a claim, and an RL policy learns to make the claim without the work.
* **Gates name the deciding record**: a look-up gate (``tool_called``, ``any_tool_called``, the ``first`` of
  ``call_order`` / ``before_writes``) that a call with junk arguments would satisfy (``search_customers("zz")``,
  ``get_customer("CUS-00000")``) pays for touching a tool, not for reading the record that justifies the
  decision; it must pin the record's id. Tools that take no required argument are exempt (nothing to name).
* **Read gates name what was seen**: a gate that requires a call of a read tool whose results show rows
  (``tool_called``, ``any_tool_called``, the ``first`` of ``call_order``), with no ``result`` matcher, pays for the
  oracle's choice of tool: another tool that shows the same rows fails it. Such a gate must be a ``seen`` gate
  naming the rows and fields (``graders/criteria/seen.py``). A call of a tool that shows no rows (a question to
  the counterpart) and a pattern on what the call returned (a search that found nothing) stay call gates.
* **The outcome rule every policy states**: an oracle that escalates (a required call of a tool marked
  ``escalation``) declares ``escalated``, and an oracle that declares ``escalated`` escalates — so an agent
  that escalated and also did the rest of the work is never asked to guess between two honest labels.
* **Names hold no secrets**: a criterion's name travels with every grade (results files, reports); a figure
  or an id the agent has to find or compute must only appear in evidence. Values the prompt itself states,
  and words that only say what is checked ("frozen"), are fine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graders.baseline import noop_satisfied
from graders.priors import junk_arguments
from graders.criteria.matchers import Eq, Facts, Number, OneOf, Range, Text, normalize_text
from graders.standard import full_rubric

if TYPE_CHECKING:
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["rubric_problems", "ANSWER_KINDS", "secret_values", "junk_satisfied_gates", "outcome_rule_problems", "tool_bound_read_gates"]

ANSWER_KINDS = frozenset({"answer", "answer_omits", "outcome", "claims", "judge"})
"""Criterion kinds that read what the agent said rather than what it did."""


def _matcher_values(matcher: Any) -> list[str]:
    if isinstance(matcher, Eq):
        value = matcher.value
        return [] if isinstance(value, bool) or value is None or isinstance(value, list | dict) else [str(value)]
    if isinstance(matcher, Number):
        return [matcher.value]
    if isinstance(matcher, Text):
        return [matcher.value]
    if isinstance(matcher, OneOf):
        return [str(v) for v in matcher.values if not isinstance(v, bool)]
    if isinstance(matcher, Range):
        return [v for v in (matcher.min, matcher.max) if v is not None]
    if isinstance(matcher, Facts):
        return [*matcher.all_of, *matcher.any_of]
    return []


def secret_values(criterion: Any) -> list[str]:
    """The literal values ``criterion`` expects (answers, end-state values, call arguments)."""
    found: list[str] = []
    expect = getattr(criterion, "expect", None)
    if expect is not None:
        found += _matcher_values(expect)
    patterns = [getattr(criterion, "pattern", None)] if getattr(criterion, "kind", "") in ("tool_called", "tool_not_called") else []
    patterns += list(getattr(criterion, "alternatives", []) or [])
    if getattr(criterion, "kind", "") == "call_order":
        patterns += [criterion.before, criterion.after]
    if getattr(criterion, "kind", "") == "seen":
        found += [key for f in criterion.any_of for key in f.keys]
    for pattern in patterns:
        if pattern is not None:
            for matcher in [*pattern.args.values(), *pattern.result.values()]:
                found += _matcher_values(matcher)
    return found


def _gate_patterns(criterion: Any) -> list[Any]:
    kind = getattr(criterion, "kind", "")
    if not getattr(criterion, "gate", False):
        return []
    if kind == "tool_called" and getattr(criterion, "min_count", 1) >= 1:
        return [criterion.pattern]
    if kind == "any_tool_called":
        return list(criterion.alternatives)
    if kind in ("call_order", "before_writes"):
        return [criterion.before]
    return []


def junk_satisfied_gates(environment: Environment, rubric: list[Any]) -> list[str]:
    """Look-up gates of ``rubric`` that a call with junk arguments would satisfy (see the module docstring)."""
    from servers.record import ToolCallEvent

    problems: list[str] = []
    for criterion in rubric:
        junk = next((call for pattern in _gate_patterns(criterion) for call in _junk_matches(environment, pattern, ToolCallEvent)), None)
        if junk is not None:
            problems.append(f"gate {criterion.label!r} is satisfied by {junk}: bind it to the record that justifies the decision "
                            "(args={...: <its id>})")
    return problems


def _junk_matches(environment: Environment, pattern: Any, event_type: Any) -> list[str]:
    """Junk calls (rendered) that satisfy ``pattern``; none for tools with no required argument."""
    spec = environment.tool_specs.get(pattern.tool)
    if spec is None or pattern.status == "error" or not spec.input_schema.get("required"):
        return []
    found = []
    for arguments in junk_arguments(environment, pattern.tool):
        event = event_type(seq=0, tool=pattern.tool, arguments=arguments, result=None, started_ms=0.0, duration_ms=0.0)
        if pattern.matches(event)[0]:
            found.append(f"{pattern.tool}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})")
    return found


def tool_bound_read_gates(environment: Environment, rubric: list[Any]) -> list[str]:
    """Gates of ``rubric`` that require a call of a row-showing read tool rather than the rows it shows."""
    problems = []
    for criterion in rubric:
        for pattern in _gate_patterns(criterion):
            spec = environment.tool_specs.get(pattern.tool)
            if spec is None or spec.mark.mutates or spec.mark.answer or pattern.result or pattern.status == "error":
                continue
            plan = spec.result_plan
            if plan.view is not None or plan.children or plan.items is not None:
                problems.append(f"gate {criterion.label!r} requires a call of {pattern.tool}, a read: another tool that shows the same "
                                "rows would fail it; name the rows and fields it must have seen (graders.criteria.seen)")
                break
    return problems


def outcome_rule_problems(environment: Environment, instance: TaskInstance) -> list[str]:
    """The instance's declared outcome against the written rule: escalated if and only if the oracle escalates."""
    if "escalated" not in environment.outcomes or instance.outcome is None:
        return []
    specs = environment.tool_specs
    escalations = sorted({s.tool for s in instance.oracle if not s.optional and s.tool in specs and specs[s.tool].mark.escalation})
    declared = instance.outcome.outcome
    if escalations and declared != "escalated":
        return [f"the oracle escalates ({', '.join(escalations)}) but declares {declared!r}: the policy's rule is that an "
                "episode that escalates declares 'escalated'"]
    if declared == "escalated" and not escalations and any(s.mark.escalation for s in specs.values()):
        return ["the oracle declares 'escalated' but makes no escalation call: the policy's rule is that 'escalated' means "
                "the case was handed on with an escalation tool"]
    return []


async def rubric_problems(environment: Environment, instance: TaskInstance) -> list[str]:
    """Every lint problem of ``instance`` (see the module docstring); empty when the rubric is sound."""
    problems: list[str] = []
    answer_tools = environment.answer_tools
    if environment.outcomes and instance.outcome is None:
        problems.append(
            f"the answer tool declares outcomes ({', '.join(environment.outcomes)}) but the task declares none: "
            "set outcome=completed() / refused(code) / ... on the draft"
        )
    if environment.outcomes and len(answer_tools) == 1 and (not instance.oracle or instance.oracle[-1].tool != answer_tools[0]):
        problems.append(f"the oracle must end with its final answer ({answer_tools[0]}), which declares the outcome")
    rubric = full_rubric(environment, instance)
    uncredited = await noop_satisfied(environment, instance)
    credited = [c for c in rubric if c.weight > 0 and c.label not in uncredited]
    if not instance.noop_may_pass and not credited:
        problems.append("no criterion earns credit: the untouched world satisfies every one, so the rubric cannot tell work from "
                        "inaction; add an end-state check or the look-up the task needs")
    elif not instance.noop_may_pass and not any(c.kind not in ANSWER_KINDS for c in credited):
        names = ", ".join(repr(c.label) for c in credited)
        problems.append(
            f"only criteria that read the answer earn credit ({names}): add one that checks the work in the world or "
            "the record (an end-state check, or the look-up that justifies the answer), or the rubric pays for a claim"
        )
    problems += junk_satisfied_gates(environment, rubric)
    problems += tool_bound_read_gates(environment, rubric)
    problems += outcome_rule_problems(environment, instance)
    prompt = normalize_text(instance.prompt)
    for criterion in rubric:
        label = normalize_text(criterion.label)
        for value in secret_values(criterion):
            text = normalize_text(value)
            # figures and ids are what an agent must find; words such as "frozen" only say what is checked
            if len(text) >= 3 and any(ch.isdigit() for ch in text) and text in label and text not in prompt:
                problems.append(f"criterion name {criterion.label!r} contains the expected value {value!r}: "
                                "name what is checked, keep the value in evidence")
    return problems
