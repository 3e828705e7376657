"""A gate on what the agent saw: the facts that decide the task were shown to it before it decided.

An answer, a refusal or an action is only evidence of work when the agent read the data that justifies it.
Which tool showed the data is the agent's choice — a card's status on the customer's card list or on the card
itself, a channel's members on the channel list or the channel, a relation on either issue — so this gate
names rows and fields, never tools: it passes when some successful call before the decision returned a
result that showed every named field of the row (``servers/provenance.py`` says how a result shows rows).

The decision is the first call matching ``before`` when given; by default the first act on the world (a call
of a tool that writes, whatever its outcome: the facts must justify the act, and what an act returns comes
after it) or, when the agent never acts, the final answer. A fact may name several rows that must all have been
seen (every open issue of a person), and a criterion lists alternatives (``any_of``: the relation shown on
either issue's page).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from graders.criteria.base import CriterionBase, CriterionResult, schema_tables
from graders.criteria.transcript import CallPattern, PatternField, decision_index, render_call
from servers.provenance import Shown, row_key
from servers.record import ToolCallEvent

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment

__all__ = ["Fact", "Seen", "seen", "fact", "shown_before"]


def _keys(value: Any) -> Any:
    """A key, or several: each as the key string provenance records (ints and tuples normalised)."""
    values = value if isinstance(value, list) else [value]
    return [row_key(*v) if isinstance(v, tuple) else str(v) for v in values]


class Fact(BaseModel):
    """Fields of one or more rows of a table that must all have been shown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: str
    keys: Annotated[list[str], BeforeValidator(_keys)] = Field(min_length=1)
    """Every row that must have been seen (a composite key as ``row_key(a, b)`` or a tuple)."""
    fields: list[str] = Field(default_factory=list)
    """The fields of each row that must have been shown; empty: the row itself, any field."""

    def describe(self) -> str:
        """``customers.kyc_status`` (no key: names travel with grades, keys are for evidence)."""
        rows = f"{len(self.keys)} {self.table}" if len(self.keys) > 1 else self.table
        return f"{rows}.{'+'.join(self.fields)}" if self.fields else rows

    def render(self) -> str:
        """``customers/C-12: kyc_status`` (for evidence)."""
        keys = ", ".join(self.keys[:6]) + (f", +{len(self.keys) - 6}" if len(self.keys) > 6 else "")
        return f"{self.table}/{keys}" + (f": {', '.join(self.fields)}" if self.fields else "")

    def missing(self, seen: Shown) -> list[str]:
        """What of this fact ``seen`` lacks (``table/key field``), empty when everything was shown."""
        gaps = []
        for key in self.keys:
            fields = seen.get((self.table, key))
            if fields is None:
                gaps.append(f"{self.table}/{key} (never shown)")
                continue
            absent = [f for f in self.fields if f not in fields]
            if absent:
                gaps.append(f"{self.table}/{key} {', '.join(absent)}")
        return gaps


def fact(table: str, key: Any, *fields: str) -> Fact:
    """A :class:`Fact`: ``fact("accounts", acc, "status")``; ``key`` may be a list of keys that must all be seen."""
    return Fact(table=table, keys=key, fields=list(fields))


def shown_before(ctx: GradingContext, calls: list[ToolCallEvent]) -> tuple[Shown, dict[tuple[str, str, str], ToolCallEvent]]:
    """Everything ``calls`` showed (fields unioned per row), and the first call that showed each field of each row
    (under ``(table, key, "")``: the first that showed the row at all)."""
    merged: dict[tuple[str, str], frozenset[str]] = {}
    first: dict[tuple[str, str, str], ToolCallEvent] = {}
    specs = ctx.environment.tool_specs
    for event in calls:
        if event.error is not None:
            continue
        spec = specs.get(event.tool)
        if spec is None:
            continue
        shown = spec.shown(event.result)  # remembered per result object (ToolSpec.shown)
        for row, fields in shown.items():
            merged[row] = merged.get(row, frozenset()) | fields
            first.setdefault((*row, ""), event)
            for name in fields:
                first.setdefault((*row, name), event)
    return merged, first


def _pattern(value: Any) -> Any:
    return {"tool": value} if isinstance(value, str) else value


class Seen(CriterionBase):
    """Before the decision, some successful call showed every field of every row of one of ``any_of``."""

    kind: Literal["seen"] = "seen"
    any_of: list[Fact] = Field(min_length=1)
    before: PatternField | None = None
    """The decision the facts must precede (its first matching call); default: the final answer."""
    gate: bool = True
    """A decision taken without reading what decides it is a guess: a gate by default."""

    @property
    def decision(self) -> CallPattern | None:
        """``before``, validated."""
        return cast("CallPattern | None", self.before)

    def describe(self) -> str:
        """``saw customers.kyc_status or accounts.status``."""
        return "saw " + " or ".join(f.describe() for f in self.any_of)

    def lint(self, environment: Environment) -> list[str]:
        """Tables must exist and every field must be one some tool can show of that table."""
        problems = []
        tables = schema_tables(environment)
        facts = environment.facts
        for f in self.any_of:
            if f.table not in tables:
                problems.append(f"seen names table {f.table!r}, which environment {environment.name!r} does not have")
            elif f.table not in facts:
                problems.append(f"seen names table {f.table!r}, but no tool of {environment.name!r} shows its rows "
                                "(mark the result model with @row_view)")
            else:
                unknown = [name for name in f.fields if name not in facts[f.table]]
                if unknown:
                    problems.append(f"seen names {', '.join(map(repr, unknown))} of {f.table!r}, which no tool shows "
                                    f"(shown: {', '.join(sorted(facts[f.table]))})")
        if self.decision is not None:
            problems += self.decision.lint(environment, "seen.before")
        return problems

    def _window(self, ctx: GradingContext) -> tuple[list[ToolCallEvent], str]:
        """The calls before the decision: the first ``before`` call; by default the first act on the world (a
        call of a tool that writes, not a process step such as an identity check) or else the final answer."""
        calls = ctx.calls
        if self.decision is not None:
            for i, event in enumerate(calls):
                if self.decision.matches(event)[0]:
                    return calls[:i], render_call(event)
        index = decision_index(ctx.environment, calls)
        return calls[:index], render_call(calls[index]) if index < len(calls) else "the end of the episode"

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Union what the calls before the decision showed; pass when one alternative is wholly covered."""
        window, decision = self._window(ctx)
        seen, first = shown_before(ctx, window)
        gaps: list[str] = []
        for alternative in self.any_of:
            missing = alternative.missing(seen)
            if not missing:
                # the calls that showed what the fact needs (each field's first), not merely the first to show the row
                by = sorted({first[(alternative.table, k, name)].seq for k in alternative.keys for name in alternative.fields or [""]})
                shown_by = "; ".join(render_call(next(e for e in window if e.seq == s)) for s in by[:3])
                return self.result(True, f"{alternative.render()} shown before {decision} by {shown_by}")
            gaps.append("; ".join(missing[:4]) + (f"; +{len(missing) - 4} more" if len(missing) > 4 else ""))
        tables = {f.table for f in self.any_of}
        near = sorted({f"{t}/{k}" for (t, k) in seen if t in tables})
        closest = f"; rows of {', '.join(sorted(tables))} shown: {', '.join(near[:8])}" if near else ""
        return self.result(False, f"not shown before {decision}: {' | '.join(gaps)}{closest}")


def seen(name: str, table: str, key: Any, *fields: str, weight: float = 1.0, before: Any = None,
         also: list[Fact] | None = None) -> Seen:
    """A gate: the fields ``fields`` of row(s) ``key`` of ``table`` were shown before the decision.

    ``also`` lists alternative facts that count as well (the relation read on the other issue).
    """
    return Seen(name=name, any_of=[fact(table, key, *fields), *(also or [])], weight=weight, gate=True,
                before=_pattern(before) if before is not None else None)
