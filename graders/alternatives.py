"""Alternative paths: correct work done another reasonable way must pass, proved on every instance.

The oracle is one way to do a task. A careful agent that never saw it reads with whichever tool shows the
fact, verifies before it shares, looks around, asks again before it acts. If any of that fails a gate, the
reward teaches imitation of the oracle's choice of tool — label noise in training, a perfect agent read as
imperfect in evaluation. So ``toolgym check`` derives, with no per-task code, should-pass variants of every
instance's oracle and requires each to pass:

| class | variant |
|---|---|
| ``other_read`` | an oracle read replaced by another read call whose result shows the same deciding facts (the rows and fields the rubric's ``seen`` gates name): found by calling the environment's read tools with arguments drawn from the instance — ids and names from the oracle's calls and from the deciding rows themselves (their own key, their parent's id, their name) |
| ``extra_reads`` | harmless reads of the instance's records added before the answer |
| ``repeated_step`` | a successful step that changes nothing that matters done twice: a read, a question to the counterpart, a proposal, a passed identity check (tools marked ``process``) |
| ``reordered_reads`` | two adjacent reads of records swapped |

A variant that fails is a violation naming the criterion that refused it: a gate bound to a tool rather than to
what was seen, bookkeeping counted as collateral, an order the policy does not ask for.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from graders.criteria.seen import Seen
from graders.effects import effects
from graders.grading import grade_episode
from graders.tasks import ToolCall
from graders.play import play_new
from servers.dispatch import call_tool
from servers.episodes import EpisodeManager
from servers.provenance import Shown

if TYPE_CHECKING:
    from graders.grade import Grade
    from graders.tasks import TaskInstance
    from servers.environment import Environment
    from servers.tools import ToolSpec

__all__ = ["ALTERNATIVE_CLASSES", "Variant", "AlternativeStats", "derive_variants", "play_variant", "seen_gates", "equivalent_read"]

ALTERNATIVE_CLASSES = ("other_read", "extra_reads", "repeated_step", "reordered_reads")
_PER_READ = 3
"""Alternatives tried per oracle read (one per other tool first): enough to prove a gate is not bound to a tool."""
_CANDIDATES_PER_TOOL = 12
_NAME_FIELDS = ("name", "title", "email", "handle", "subject", "first_name", "last_name", "merchant", "payee_name",
                "tracking_number", "code", "symbol", "topic", "label", "brand")
"""Fields whose values a person (or a search box) uses to find a record."""


@dataclass(frozen=True)
class Variant:
    """One should-pass trajectory derived from an instance's oracle."""

    kind: str
    description: str
    calls: tuple[ToolCall, ...]


@dataclass
class AlternativeStats:
    """Variants tried and passed (per template, or summed over an environment)."""

    tried: int = 0
    passed: int = 0

    def add(self, other: AlternativeStats) -> None:
        """Fold ``other`` into these totals."""
        self.tried += other.tried
        self.passed += other.passed


def _is_read(spec: ToolSpec | None) -> bool:
    return spec is not None and not spec.mark.mutates and not spec.mark.answer


def _shows_rows(spec: ToolSpec | None) -> bool:
    plan = spec.result_plan if spec is not None else None
    return plan is not None and (plan.view is not None or bool(plan.children) or plan.items is not None)


def seen_gates(instance: TaskInstance) -> list[Seen]:
    """The rubric's ``seen`` gates: the facts that decide the task."""
    return [c for c in instance.rubric if isinstance(c, Seen)]


def _alone(gate: Seen, shown: Shown) -> bool:
    return any(not alternative.missing(shown) for alternative in gate.any_of)


def equivalent_read(gates: Sequence[Seen], original: Shown, other: Shown) -> bool:
    """Whether a read that showed ``other`` does what one that showed ``original`` did for the rubric: the original
    alone satisfies some ``seen`` gate, and the other alone satisfies every gate the original satisfies."""
    decided = [g for g in gates if _alone(g, original)]
    return bool(decided) and all(_alone(g, other) for g in decided)


def _scalars(value: Any, out: dict[str, set[Any]], depth: int = 0) -> None:
    """Every ``field -> scalar`` pair of a JSON value (the vocabulary arguments are drawn from)."""
    if depth > 8:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str | int) and not isinstance(item, bool) and item != "" and len(str(item)) <= 120:
                out.setdefault(str(key), set()).add(item)
            else:
                _scalars(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value[:50]:
            _scalars(item, out, depth + 1)


def _values_for(param: str, vocabulary: Mapping[str, set[Any]], first: frozenset[str] = frozenset()) -> list[Any]:
    """Candidate values of an argument named ``param``: same-named fields, id suffixes, names for a query; values in
    ``first`` (the keys of the rows the gates need) ahead of the others, so a busy record's many ids never crowd
    out the deciding one."""
    found: list[Any] = []
    if param in vocabulary:
        found += sorted(vocabulary[param], key=str)
    if param.endswith("_id"):
        tail = param.split("_", 1)[1] if "_" in param[:-3] else ""
        for key in sorted(vocabulary):
            if key != param and key.endswith("_id") and (key.endswith(tail) if tail else False):
                found += sorted(vocabulary[key], key=str)
    if param in ("query", "q", "text", "search", "name"):
        for key in _NAME_FIELDS:
            found += sorted((v for v in vocabulary.get(key, ()) if isinstance(v, str)), key=str)
    unique: list[Any] = []
    for value in sorted(found, key=lambda v: str(v) not in first):  # stable: the order above within each group
        if value not in unique:
            unique.append(value)
    return unique[:6]


def _candidate_arguments(spec: ToolSpec, vocabulary: Mapping[str, set[Any]], first: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Argument sets for ``spec`` drawn from ``vocabulary``: required ones filled, then each optional one alone."""
    schema = spec.input_schema
    properties = list(schema.get("properties", {}))
    required = [p for p in schema.get("required", []) if p in properties]
    optional = [p for p in properties if p not in required and p not in ("limit", "offset")]
    choices = [_values_for(p, vocabulary, first) for p in required]
    if any(not c for c in choices):
        return []
    bases = [dict(zip(required, combo)) for combo in itertools.islice(itertools.product(*choices), 8)]
    sets: list[dict[str, Any]] = list(bases)
    for base in bases[:2]:
        for param in optional:
            sets += [{**base, param: value} for value in _values_for(param, vocabulary, first)[:3]]
    valid: list[dict[str, Any]] = []
    for arguments in sets:
        try:
            spec.arguments.model_validate(arguments)
        except ValidationError:
            continue
        if arguments not in valid:
            valid.append(arguments)
    return valid[:_CANDIDATES_PER_TOOL]


def _key(call: ToolCall) -> str:
    return json.dumps([call.tool, call.arguments], sort_keys=True, default=str)


async def derive_variants(manager: EpisodeManager, instance: TaskInstance, answer_tool: str | None) -> list[Variant]:
    """The should-pass variants of ``instance``'s oracle (see the module docstring).

    Plays the oracle once on a scratch episode of ``manager``'s environment, trying candidate reads at each read
    step (reads change nothing, so they do not disturb the oracle's own steps).
    """
    environment = manager.environment
    specs = environment.tool_specs
    oracle = list(instance.oracle)
    gates = seen_gates(instance)
    vocabulary: dict[str, set[Any]] = {}
    for step in oracle:
        _scalars(step.arguments, vocabulary)
    variants: list[Variant] = []
    extra: list[ToolCall] = []
    harmless: set[int] = set()
    """Oracle steps that succeeded and changed nothing but bookkeeping: harmless to repeat."""
    episode = manager.create(task=instance.template_id, seed=instance.seed)
    try:
        for index, step in enumerate(oracle):
            spec = specs.get(step.tool)
            if _is_read(spec) and _shows_rows(spec) and step.tool != answer_tool:
                probe = await call_tool(episode, step.tool, step.arguments)
                if probe.error is None:
                    shown = spec.shown(probe.result)  # type: ignore[union-attr]
                    local = {k: set(v) for k, v in vocabulary.items()}
                    _scalars(probe.result, local)
                    if any(_alone(g, shown) for g in gates):
                        found = await _alternatives(episode, environment, step, gates, shown, local)
                        for alternative in found:
                            calls = (*oracle[:index], alternative, *oracle[index + 1:])
                            variants.append(Variant("other_read", f"#{index + 1} {_render(step)} replaced by {_render(alternative)}, "
                                                                  "which shows the same deciding facts", calls))
                        if not extra:
                            extra = [c for c in found[:1]]
                    _scalars(probe.result, vocabulary)
            event = await call_tool(episode, step.tool, step.arguments)
            if event.error is None and not effects(event.changes, environment):
                harmless.add(index)
    finally:
        manager.close(episode.id)
        manager.release(episode.id)
    variants += _generic_variants(environment, oracle, answer_tool, extra, harmless)
    return variants


async def _alternatives(episode: Any, environment: Environment, step: ToolCall, gates: Sequence[Seen], shown: Shown,
                        vocabulary: Mapping[str, set[Any]]) -> list[ToolCall]:
    """Other read calls equivalent to ``step`` for the rubric's ``seen`` gates (other tools first)."""
    found: list[ToolCall] = []
    own = _key(step)
    first = frozenset(key for gate in gates for alternative in gate.any_of for key in alternative.keys)
    for name in sorted(environment.tool_specs, key=lambda n: (n == step.tool, n)):
        spec = environment.tool_specs[name]
        if not _is_read(spec) or not _shows_rows(spec):
            continue
        for arguments in _candidate_arguments(spec, vocabulary, first):
            candidate = ToolCall(tool=name, arguments=arguments)
            if _key(candidate) == own:
                continue
            event = await call_tool(episode, name, arguments)
            if event.error is None and equivalent_read(gates, shown, spec.shown(event.result)):
                found.append(candidate)
                break  # one per tool: the point is that another tool (or another way of asking) counts
        if len(found) >= _PER_READ:
            break
    return found


def _render(call: ToolCall) -> str:
    args = ", ".join(f"{k}={json.dumps(v, default=str)[:40]}" for k, v in sorted(call.arguments.items()))
    return f"{call.tool}({args})"


def _generic_variants(environment: Environment, oracle: Sequence[ToolCall], answer_tool: str | None,
                      extra: Sequence[ToolCall], harmless: set[int]) -> list[Variant]:
    specs = environment.tool_specs
    final = len(oracle) - 1 if oracle and oracle[-1].tool == answer_tool else len(oracle)
    variants: list[Variant] = []
    if extra and final > 0:
        calls = (*oracle[:final], *extra, *oracle[final:])
        variants.append(Variant("extra_reads", f"{_render(extra[0])} read again before the answer", calls))
    repeats: dict[str, tuple[int, ToolCall]] = {}
    for index, step in enumerate(oracle[:final]):
        spec = specs.get(step.tool)
        if spec is None or step.optional or index not in harmless:
            continue
        # a passed identity check, a question or proposal to the counterpart, a read: each harmless twice
        kind = "process" if spec.mark.process else "counterpart" if _is_read(spec) and not _shows_rows(spec) else "read" if _is_read(spec) else None
        if kind is not None and kind not in repeats:
            repeats[kind] = (index, step)
    for kind in ("process", "counterpart", "read"):
        if kind in repeats and (kind != "read" or len(repeats) == 1):
            index, step = repeats[kind]
            calls = (*oracle[: index + 1], step, *oracle[index + 1:])
            variants.append(Variant("repeated_step", f"#{index + 1} {_render(step)} done twice", calls))
    for index in range(final - 1):
        first, second = oracle[index], oracle[index + 1]
        if all(_is_read(specs.get(c.tool)) and _shows_rows(specs.get(c.tool)) for c in (first, second)) and _key(first) != _key(second):
            calls = (*oracle[:index], second, first, *oracle[index + 2:])
            variants.append(Variant("reordered_reads", f"#{index + 1} {_render(first)} and #{index + 2} {_render(second)} swapped", calls))
            break  # one swap per instance: enough to catch an order the policy does not ask for, and cheap
    return variants


@dataclass
class VariantOutcome:
    """A played variant and its grade."""

    variant: Variant
    grade: Grade
    failures: list[str] = field(default_factory=list)


async def play_variant(manager: EpisodeManager, instance: TaskInstance, variant: Variant) -> VariantOutcome:
    """Play ``variant`` through dispatch on a fresh episode of the instance, grade it, release it."""
    episode = await play_new(manager, instance.template_id, instance.seed, variant.calls)
    try:
        manager.close(episode.id)
        grade = await grade_episode(episode, judge_from_env=False)
    finally:
        manager.release(episode.id)
    failures = [f"{r.name}: {r.evidence}" for r in grade.failures]
    return VariantOutcome(variant=variant, grade=grade, failures=failures)
