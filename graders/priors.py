"""Trained-policy attacks: what a policy that memorised other instances of a template would do.

The generated attacks of :mod:`graders.attacks` derive wrong trajectories from one instance. A policy being
trained sees thousands of instances of each template, and it does not have to lie to be paid: it can learn
what the template usually wants and replay it. ``toolgym check`` plays such policies on every template and
seed, learning only from the *other* seeds of the same check (leave-one-out), with no per-task code:

| class | trajectory |
|---|---|
| ``template_prior`` | the final answer a prior would give: the declaration most often correct on the other seeds, every answer value that was the same on all of them |
| ``prior_after_reads`` | the same answer after the reads every other seed's oracle made alike (asking the customer the usual questions) and generic reads of everything the prompt names (each id with every read tool taking such an id; each name and e-mail with every search tool) |
| ``replay`` | the oracle of the nearest other seed (by prompt), replayed verbatim |
| ``replay_substituted`` | the same oracle with the prompt's ids, names and amounts substituted: the other prompt's tokens mapped onto this one's |

They are measured, not each required to fail: over all templates and seeds the priors must average a reward of
at most :data:`PRIOR_LIMIT`, and the replays pass at most :data:`REPLAY_LIMIT` of the instances. A template
whose world decides its outcome from facts the agent must read, and whose prompt does not hand over the ids
the deciding calls need, meets both (``graders/README.md``, "Tasks where the world decides").
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graders.tasks import ToolCall

if TYPE_CHECKING:
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = [
    "PRIOR_CLASSES",
    "REPLAY_CLASSES",
    "PRIOR_LIMIT",
    "REPLAY_LIMIT",
    "SeedInstance",
    "instance_key",
    "declaration",
    "distinct_required",
    "prior_answer",
    "generic_reads",
    "nearest_seed",
    "substitute",
    "constant_reads",
    "junk_arguments",
    "TrainedPolicy",
    "trained_policies",
]

PRIOR_CLASSES = ("template_prior", "prior_after_reads")
REPLAY_CLASSES = ("replay", "replay_substituted")
PRIOR_LIMIT = 0.05
"""Highest mean reward the prior policies may earn over every template and seed of an environment."""
REPLAY_LIMIT = 0.02
"""Highest share of instances another seed's replayed oracle may pass."""
_MAX_READS = 16
"""Generic reads per instance (enough for every id and name a prompt holds; bounds the check's cost)."""

_TOKEN = re.compile(r"[A-Za-z]{2,5}-[0-9]{3,}|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[0-9][0-9,]*(?:\.[0-9]+)?|[^\W\d_]+(?:['’][^\W\d_]+)?|\S")
_ID = re.compile(r"^[A-Za-z]{2,5}-[0-9]{3,}$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ '-][A-Z][a-z]+)+\b")
_ID_PATTERN = re.compile(r"^\^([A-Za-z]+)-\[0-9\]\{(\d+)\}\$$")


@dataclass(frozen=True)
class SeedInstance:
    """What the check knows of one seed's instance before playing it."""

    seed: int
    instance: TaskInstance
    final: ToolCall | None
    """The oracle's final answer (None when the environment has no single answer tool)."""


def instance_key(instance: TaskInstance) -> str:
    """A digest of what makes an instance a distinct problem: its prompt, its oracle and its expected values
    (the rubric). Two seeds with the same key are one problem counted twice."""
    payload = json.dumps([instance.prompt, [c.model_dump() for c in instance.oracle], [c.model_dump() for c in instance.rubric]],
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def declaration(final: ToolCall | None) -> tuple[str | None, str | None]:
    """(outcome, reason code) an oracle's final answer declares."""
    if final is None:
        return None, None
    outcome, code = final.arguments.get("outcome"), final.arguments.get("reason_code")
    return (outcome if isinstance(outcome, str) else None), (code if isinstance(code, str) else None)


def distinct_required(seeds: int) -> int:
    """Distinct instances a template must give over ``seeds`` seeds: 18 of 20, 9 of 10, every one below 10."""
    return seeds - seeds // 10


def prior_answer(answer_tool: str, others: Sequence[SeedInstance]) -> ToolCall:
    """The final answer a policy trained on ``others`` would give without looking: the declaration most often
    correct there (ties: the alphabetically first, for determinism) and each value the same on all of them."""
    declared = Counter(declaration(o.final) for o in others if o.final is not None)
    (outcome, code), _ = sorted(declared.items(), key=lambda kv: (-kv[1], str(kv[0])))[0] if declared else ((None, None), 0)
    arguments: dict[str, Any] = {"answer": "Done as the policy requires."}
    if outcome is not None:
        arguments["outcome"] = outcome
    if code is not None:
        arguments["reason_code"] = code
    value_sets = [o.final.arguments.get("values") if o.final is not None else None for o in others]
    dicts = [v for v in value_sets if isinstance(v, dict)]
    if dicts and len(dicts) == len(value_sets):
        constant = {k: v for k, v in dicts[0].items() if all(d.get(k) == v for d in dicts[1:])}
        if constant:
            arguments["values"] = constant
    return ToolCall(tool=answer_tool, arguments=arguments)


def _effective(schema: Mapping[str, Any], prop: Mapping[str, Any]) -> Mapping[str, Any]:
    for option in [prop, *prop.get("anyOf", [])]:
        ref = option.get("$ref", "")
        if ref.startswith("#/$defs/"):
            option = schema.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
        if option.get("type") not in (None, "null") or "enum" in option:
            return option
    return prop


def _prompt_facts(prompt: str) -> tuple[list[str], list[str]]:
    """(ids, names and e-mails) a prompt mentions, in order, without repeats."""
    ids = list(dict.fromkeys(t for t in _TOKEN.findall(prompt) if _ID.match(t)))
    texts = list(dict.fromkeys([*(t for t in _TOKEN.findall(prompt) if _EMAIL.match(t)), *_NAME.findall(prompt)]))
    return ids, texts


def generic_reads(environment: Environment, prompt: str) -> list[ToolCall]:
    """The reads any agent would make from what the prompt names, with no understanding of the task: every
    read-only tool whose one required argument takes an id the prompt holds (by the argument's schema
    pattern), and every search tool (a required ``query``) with each name and e-mail of the prompt."""
    ids, texts = _prompt_facts(prompt)
    reads: list[ToolCall] = []
    for name, spec in sorted(environment.tool_specs.items()):
        if spec.mark.mutates or spec.mark.answer:
            continue
        schema = spec.input_schema
        required = list(schema.get("required", []))
        if len(required) != 1:
            continue
        param = required[0]
        prop = _effective(schema, schema.get("properties", {}).get(param, {}))
        pattern = prop.get("pattern")
        if param == "query":
            reads += [ToolCall(tool=name, arguments={param: text}) for text in texts]
        elif isinstance(pattern, str) and pattern.startswith("^"):
            reads += [ToolCall(tool=name, arguments={param: i}) for i in ids if re.fullmatch(pattern, i)]
    return reads[:_MAX_READS]


def constant_reads(environment: Environment, others: Sequence[SeedInstance]) -> list[ToolCall]:
    """The read calls every other seed's oracle makes with the same arguments (``ask_customer(topic=
    "order_number")``, ``list_pending_approvals()``): a trained policy makes them out of habit."""
    def reads(instance: TaskInstance) -> list[ToolCall]:
        found = []
        for step in instance.oracle:
            spec = environment.tool_specs.get(step.tool)
            if spec is not None and not spec.mark.mutates and not spec.mark.answer:
                found.append(ToolCall(tool=step.tool, arguments=step.arguments))
        return found

    def key(call: ToolCall) -> str:
        return json.dumps([call.tool, call.arguments], sort_keys=True, default=str)

    if not others:
        return []
    first = {key(c): c for c in reads(others[0].instance)}
    rest = [{key(c) for c in reads(o.instance)} for o in others[1:]]
    return [c for k, c in first.items() if all(k in r for r in rest)][:_MAX_READS]


def _tokens(prompt: str) -> list[str]:
    return _TOKEN.findall(prompt)


def nearest_seed(prompt: str, others: Sequence[SeedInstance]) -> SeedInstance | None:
    """The other seed whose prompt is most like ``prompt`` (what a policy replaying its memory would pick)."""
    mine = _tokens(prompt)
    best: tuple[float, int] | None = None
    chosen: SeedInstance | None = None
    for other in others:
        ratio = difflib.SequenceMatcher(a=_tokens(other.instance.prompt), b=mine, autojunk=False).ratio()
        key = (ratio, -other.seed)
        if best is None or key > best:
            best, chosen = key, other
    return chosen


def _mapping(source: str, target: str) -> dict[str, str]:
    """Each fact of ``source`` (ids, numbers, names, e-mails: tokens the two prompts do not share) mapped onto
    the token in the same place of ``target``; runs of replaced tokens map as joined phrases too."""
    a, b = _tokens(source), _tokens(target)
    mapping: dict[str, str] = {}
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "replace":
            continue
        if i2 - i1 == j2 - j1:
            for old, new in zip(a[i1:i2], b[j1:j2]):
                mapping.setdefault(old, new)
        mapping.setdefault(" ".join(a[i1:i2]), " ".join(b[j1:j2]))
    for old, new in list(mapping.items()):  # amounts as tools take them: "8,400.00" → "8400.00"
        if re.fullmatch(r"[0-9][0-9,]*(?:\.[0-9]+)?", old) and re.fullmatch(r"[0-9][0-9,]*(?:\.[0-9]+)?", new):
            mapping.setdefault(old.replace(",", ""), new.replace(",", ""))
    return {old: new for old, new in mapping.items() if old and old != new and not re.fullmatch(r"\W", old)}


def _swap(value: Any, mapping: Mapping[str, str], pattern: re.Pattern[str] | None) -> Any:
    if isinstance(value, str):
        if value in mapping:
            return mapping[value]
        return pattern.sub(lambda m: mapping[m.group(0)], value) if pattern is not None else value
    if isinstance(value, list):
        return [_swap(v, mapping, pattern) for v in value]
    if isinstance(value, dict):
        return {k: _swap(v, mapping, pattern) for k, v in value.items()}
    return value


def substitute(calls: Sequence[ToolCall], source_prompt: str, target_prompt: str) -> list[ToolCall]:
    """``calls`` (another seed's oracle) with every fact of ``source_prompt`` replaced by the fact in the same
    place of ``target_prompt``: whole argument values first, then inside longer text (longest facts first)."""
    mapping = _mapping(source_prompt, target_prompt)
    words = sorted((k for k in mapping if len(k) >= 3), key=len, reverse=True)
    pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(w)}(?![\w-])" for w in words)) if words else None
    return [ToolCall(tool=c.tool, arguments=_swap(c.arguments, mapping, pattern), optional=c.optional) for c in calls]


def junk_arguments(environment: Environment, tool: str) -> list[dict[str, Any]]:
    """Argument sets of ``tool`` that name no record in particular: junk text, and well-formed ids of no row
    (``CUS-00000``) — what a call that merely satisfies a "some call of this tool" gate would send."""
    spec = environment.tool_specs.get(tool)
    if spec is None:
        return []
    schema = spec.input_schema
    plain: dict[str, Any] = {}
    formed: dict[str, Any] = {}
    required = set(schema.get("required", []))
    for param, raw in schema.get("properties", {}).items():
        if param not in required:
            continue
        prop = _effective(schema, raw)
        kind = prop.get("type")
        if "enum" in prop:
            continue  # a choice is a real constraint, not a record
        if kind == "string":
            plain[param] = "zz"
            found = _ID_PATTERN.match(str(prop.get("pattern", "")))
            formed[param] = f"{found.group(1)}-{'0' * int(found.group(2))}" if found else "zz"
        elif kind in ("integer", "number"):
            plain[param] = formed[param] = 0
    return [plain, formed]


@dataclass(frozen=True)
class TrainedPolicy:
    """One trained-policy trajectory for one instance."""

    kind: str
    """One of :data:`PRIOR_CLASSES` or :data:`REPLAY_CLASSES`."""
    calls: tuple[ToolCall, ...]
    source_seed: int | None = None
    """The seed a replay was taken from."""


def trained_policies(environment: Environment, answer_tool: str | None, target: SeedInstance,
                     others: Sequence[SeedInstance]) -> list[TrainedPolicy]:
    """The trained-policy trajectories for ``target``, learnt from ``others`` (see the module docstring)."""
    if not others:
        return []
    policies: list[TrainedPolicy] = []
    if answer_tool is not None:
        prior = prior_answer(answer_tool, others)
        policies.append(TrainedPolicy("template_prior", (prior,)))
        reads = [*constant_reads(environment, others), *generic_reads(environment, target.instance.prompt)]
        policies.append(TrainedPolicy("prior_after_reads", (*reads, prior)))
    source = nearest_seed(target.instance.prompt, others)
    if source is not None:
        oracle = [c for c in source.instance.oracle]
        policies.append(TrainedPolicy("replay", tuple(oracle), source.seed))
        swapped = substitute(oracle, source.instance.prompt, target.instance.prompt)
        policies.append(TrainedPolicy("replay_substituted", tuple(swapped), source.seed))
    return policies
