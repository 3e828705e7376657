"""Hostile-value fuzz: no value an agent can send may make playing or grading an episode raise.

A grader that raises on what an agent sent is worse than a lax one: the episode drops out of the scores
(an agent that crashes the grader on the seeds it would fail is reported as passing the rest), and a
policy learns to do exactly that. So ``toolgym check`` plays, for every template, at least
:data:`PER_TEMPLATE` variants of its oracle (spread over the seeds it checks) with one value replaced by a
hostile one (:data:`HOSTILE_VALUES`: huge exponents, NaN, infinities, hex, signs, misplaced grouping,
digits of other scripts, lone surrogates, megabyte strings, wrong JSON types):

* each figure of the final answer's ``values``, ``values`` itself, the answer text, ``outcome`` and
  ``reason_code``;
* each argument of each required step of the work.

Each variant is played over the check's real in-memory MCP client, closed, graded and released like any
episode (:func:`graders.adversary.play_calls`). A violation is any exception while playing, grading or
recording it, a grade that does not serialise, or a tool call the kit answered with an ``internal`` error.
Whether the variant passes is not the fuzz's business: ``"1,234,567.89"`` may well be right.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graders.adversary import play_calls
from graders.attacks import split_oracle
from graders.tasks import ToolCall

if TYPE_CHECKING:
    from graders.tasks import TaskInstance
    from servers.episodes import EpisodeManager

__all__ = ["HOSTILE_VALUES", "PER_TEMPLATE", "Variant", "FuzzResult", "hostile_variants", "fuzz_seed"]

PER_TEMPLATE = 50
"""Variants played per template, over all the seeds a check covers."""



def _nested(depth: int) -> Any:
    """``{"value": [{"value": [... "1.00" ...]}]}``, ``depth`` containers deep."""
    value: Any = "1.00"
    for level in range(depth):
        value = [value] if level % 2 else {"value": value}
    return value


HOSTILE_VALUES: tuple[tuple[str, Any], ...] = (
    ("huge exponent", "1e999999999"),
    ("tiny exponent", "-1E-999999999"),
    ("exponent", "1.25E+3"),
    ("NaN", "NaN"),
    ("signalling NaN", "sNaN"),
    ("Infinity", "Infinity"),
    ("-inf", "-inf"),
    ("hex", "0x1F"),
    ("two signs", "+-12.50"),
    ("leading plus", "+12.50"),
    ("misplaced grouping", "6,2481.02"),
    ("grouping", "1,234,567.89"),
    ("another currency", "12.00 JPY"),
    ("symbol and code disagree", "€12.00 USD"),
    ("Arabic-Indic digits", "١٢٣٫٤٥"),
    ("fullwidth digits", "１２３.００"),
    ("Devanagari digits", "१२३"),
    ("superscript digits", "¹²³"),
    ("lone surrogate", "12\ud800.00"),
    ("lone surrogate alone", "\udfff"),
    ("right-to-left override", "\u202e00.21"),
    ("NUL", "12\x00.00"),
    ("blank", "   \u00a0\u2003 "),
    ("empty", ""),
    ("upper-case status", "PENDING_APPROVAL"),
    ("200 digits", "9" * 200),
    ("4000 characters", "x" * 4000),
    ("megabyte", "7" * 1_000_000),
    ("null", None),
    ("true", True),
    ("zero int", 0),
    ("huge int", 10**400),
    ("float", 12.5),
    ("float NaN", math.nan),
    ("float infinity", -math.inf),
    ("list", ["12.50", "12.51"]),
    ("object", {"value": "12.50", "currency": "USD"}),
    ("nested junk", _nested(8)),
    ("deeply nested junk", _nested(200)),  # about as deep as the MCP SDK client will send
)
"""(label, value): what :func:`hostile_variants` puts in place of an answer's value or a step's argument."""


@dataclass(frozen=True)
class Variant:
    """One oracle variant: which value was replaced, by what, and the calls to play."""

    target: str
    """``values.total``, ``outcome``, ``step 2 send_wire.amount`` ..."""
    label: str
    """The hostile value's label (:data:`HOSTILE_VALUES`)."""
    calls: tuple[ToolCall, ...]


@dataclass
class FuzzResult:
    """What one seed's fuzz played and found."""

    played: int = 0
    violations: list[str] = field(default_factory=list)


def _targets(instance: TaskInstance, answer_tool: str | None) -> list[tuple[str, int, tuple[str, ...]]]:
    """(name, oracle step index, argument path) of every value a variant may replace; answer figures first."""
    work, final = split_oracle(instance, answer_tool)
    answer: list[tuple[str, int, tuple[str, ...]]] = []
    if final is not None:
        at = len(work)
        values = final.arguments.get("values")
        figures = [(f"values.{name}", at, ("values", name)) for name in sorted(values)] if isinstance(values, dict) else []
        # the kit's answer protocol declares outcome, reason_code and values even where this oracle omits some
        protocol = {"values", "outcome", "reason_code"} if "outcome" in final.arguments else set()
        names = sorted(set(final.arguments) | protocol)
        # the answer's figures are where graders parse what an agent wrote: they come first, and twice
        answer = figures + figures + [(name, at, (name,)) for name in names]
    steps = [
        (f"step {index + 1} {step.tool}.{name}", index, (name,))
        for index, step in enumerate(work)
        if not step.optional
        for name in sorted(step.arguments)
    ]
    return answer + steps


def _replace(instance: TaskInstance, index: int, path: tuple[str, ...], value: Any) -> tuple[ToolCall, ...]:
    """The oracle with the argument at ``path`` of step ``index`` set to ``value`` (the rest played as is)."""
    calls = list(instance.oracle)
    step = calls[index]
    arguments = dict(step.arguments)
    if len(path) == 2:
        inner = arguments.get(path[0])
        arguments[path[0]] = {**(inner if isinstance(inner, dict) else {}), path[1]: value}
    else:
        arguments[path[0]] = value
    calls[index] = ToolCall(tool=step.tool, arguments=arguments, optional=step.optional)
    return tuple(calls)


def hostile_variants(instance: TaskInstance, answer_tool: str | None, seeds: Sequence[int], seed: int) -> list[Variant]:
    """This seed's share of the template's :data:`PER_TEMPLATE` variants (at least one per seed).

    Variant k is target ``k mod T`` with hostile value ``(k div T + 7 (k mod T)) mod V``: consecutive variants
    move to the next target, each target walks the hostile values from its own starting point (the answer's
    figures from the first, the huge exponent), and the seeds of a check take consecutive slices.
    """
    targets = _targets(instance, answer_tool)
    if not targets:
        return []
    share = max(1, math.ceil(PER_TEMPLATE / max(1, len(seeds))))
    position = list(seeds).index(seed) if seed in seeds else 0
    variants = []
    for k in range(position * share, (position + 1) * share):
        name, index, path = targets[k % len(targets)]
        label, value = HOSTILE_VALUES[(k // len(targets) + 7 * (k % len(targets))) % len(HOSTILE_VALUES)]
        variants.append(Variant(target=name, label=label, calls=_replace(instance, index, path, value)))
    return variants


async def fuzz_seed(
    manager: EpisodeManager,
    instance: TaskInstance,
    answer_tool: str | None,
    seeds: Sequence[int],
) -> FuzzResult:
    """Play and grade this seed's hostile variants of ``instance``'s oracle; collect what broke."""
    result = FuzzResult()
    for variant in hostile_variants(instance, answer_tool, seeds, instance.seed):
        where = f"hostile value ({variant.label}) in {variant.target}"
        result.played += 1
        try:
            played = await play_calls(manager, instance.template_id, instance.seed, variant.calls)
            played.grade.to_json()
        except Exception as exc:  # the whole point: anything raised here is a kit bug an agent can trigger
            result.violations.append(f"{where}: playing or grading raised {type(exc).__name__}: {str(exc)[:300]}")
            continue
        internal = [e for e in played.events if e.error is not None and e.error.error_class == "internal"]
        if internal:
            event = internal[0]
            message = event.error.message[:300] if event.error is not None else ""
            result.violations.append(f"{where}: tool call #{event.seq} {event.tool} answered with an internal error: {message}")
    return result
