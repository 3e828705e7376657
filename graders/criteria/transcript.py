"""Transcript rules: what the agent must and must not call, in which order, within which budget.

They read only the record's tool calls (arguments as the client sent them, status, error class), so any
MCP agent is judged the same way. A :class:`CallPattern` names a tool, optional argument matchers, optional
matchers on the call's structured result (what the tool answered: ``{"result": {"agreed": True}}`` counts
only the proposals a simulated customer accepted) and the status that counts (``ok``: succeeded, ``error``:
failed, ``any``). A plain tool name may be written wherever a pattern is expected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from graders.criteria.base import CriterionBase, CriterionResult, tool_argument_names
from graders.criteria.matchers import MISSING, MatcherField, lookup, short
from servers.record import ToolCallEvent

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment

__all__ = [
    "CallPattern",
    "ToolCalled",
    "AnyToolCalled",
    "ToolNotCalled",
    "CallOrder",
    "CallBudget",
    "render_call",
    "decision_index",
    "AGENT_ERROR_CLASSES",
]

Status = Literal["ok", "error", "any"]
AGENT_ERROR_CLASSES = ("invalid_arguments", "refused", "unknown_tool")
"""Error classes that are the agent's doing; ``internal`` (the kit's fault) never counts against it."""


def decision_index(environment: Environment, calls: list[ToolCallEvent]) -> int:
    """Where the agent decided: the first act on the world (a call of a tool that writes, whatever its outcome,
    a process step such as an identity check aside), else the final answer, else the end (``len(calls)``).

    Why this default: the facts that justify an act must be read, and the questions that decide it asked, before
    the act; what an act returns comes after it. For an agent that never acts, the answer is its decision.
    """
    specs = environment.tool_specs
    for i, event in enumerate(calls):
        spec = specs.get(event.tool)
        if spec is not None and spec.mark.mutates and not spec.mark.process and not spec.mark.answer:
            return i
    answers = set(environment.answer_tools)
    for i in range(len(calls) - 1, -1, -1):
        if calls[i].tool in answers:
            return i
    return len(calls)


def render_call(event: ToolCallEvent, limit: int = 100) -> str:
    """``#3 transfer(amount="25.00", to_account=4) → refused:insufficient_funds`` for evidence."""
    args = ", ".join(f"{k}={short(v, 40)}" for k, v in sorted(event.arguments.items()))
    if len(args) > limit:
        args = args[: limit - 1] + "…"
    status = "ok" if event.error is None else f"{event.error.error_class}:{event.error.code}"
    return f"#{event.seq} {event.tool}({args}) → {status}"


class CallPattern(BaseModel):
    """Which calls count: a tool name, argument matchers (dotted paths allowed), result matchers and a status."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    args: dict[str, MatcherField] = Field(default_factory=dict)
    result: dict[str, MatcherField] = Field(default_factory=dict)
    """Matchers on the call's structured result (dotted paths allowed); only a successful call has one."""
    status: Status = "ok"

    def describe(self) -> str:
        """``verify_identity(customer_id=3)`` (for evidence: it shows the expected argument values)."""
        args = ", ".join(f"{k}={m.describe()}" for k, m in self.args.items())
        status = "" if self.status == "ok" else f" [{self.status}]"
        answered = f" → {', '.join(f'{k}={m.describe()}' for k, m in self.result.items())}" if self.result else ""
        return f"{self.tool}({args}){answered}{status}"

    def signature(self) -> str:
        """``verify_identity(customer_id)``: the tool and the arguments it constrains, without their values.

        Why: criterion names appear wherever grades go; expected values belong in evidence only.
        """
        status = "" if self.status == "ok" else f" [{self.status}]"
        answered = f" → {', '.join(self.result)}" if self.result else ""
        return f"{self.tool}({', '.join(self.args)}){answered}{status}"

    def matches(self, event: ToolCallEvent) -> tuple[bool, str]:
        """Whether ``event`` is such a call, and if not (but it is the same tool), the first reason why."""
        if event.tool != self.tool:
            return False, f"{event.tool} is not {self.tool}"
        if self.status == "ok" and event.error is not None:
            return False, f"it failed ({event.error.code})"
        if self.status == "error" and event.error is None:
            return False, "it succeeded"
        for path, matcher in self.args.items():
            ok, why = matcher.check(lookup(event.arguments, path))
            if not ok:
                return False, f"{path}: {why}"
        for path, matcher in self.result.items():
            ok, why = matcher.check(lookup(event.result, path) if event.error is None else MISSING)
            if not ok:
                return False, f"result {path}: {why}"
        return True, "matches"

    def lint(self, environment: Environment, owner: str) -> list[str]:
        """The tool and the top-level argument names must exist in ``environment``."""
        names = tool_argument_names(environment, self.tool)
        if names is None:
            return [f"{owner} names tool {self.tool!r}, which environment {environment.name!r} does not have"]
        problems = [
            f"{owner}: tool {self.tool!r} has no argument {path.split('.')[0]!r}"
            for path in self.args
            if path.split(".")[0] not in names
        ]
        output = environment.tool_specs[self.tool].output_schema or {}
        fields = set(output.get("properties", {}))
        problems += [
            f"{owner}: the result of tool {self.tool!r} has no field {path.split('.')[0]!r}"
            for path in self.result
            if path.split(".")[0] not in fields
        ]
        return problems


def _pattern(value: Any) -> Any:
    return {"tool": value} if isinstance(value, str) else value


if TYPE_CHECKING:
    PatternField = CallPattern | str | dict[str, Any]  # what authors may write; validated into a CallPattern
else:
    PatternField = Annotated[CallPattern, BeforeValidator(_pattern)]


def _near_misses(pattern: CallPattern, calls: list[ToolCallEvent], limit: int = 3) -> str:
    reasons = []
    for event in calls:
        if event.tool == pattern.tool:
            _, why = pattern.matches(event)
            reasons.append(f"{render_call(event)}: {why}")
    if not reasons:
        return f"{pattern.tool} was never called"
    more = f"; +{len(reasons) - limit} more" if len(reasons) > limit else ""
    return "closest: " + "; ".join(reasons[:limit]) + more


class ToolCalled(CriterionBase):
    """At least ``min_count`` (and at most ``max_count``) calls match the pattern; with ``before_acting``, only
    calls before the agent's decision (:func:`decision_index`) count — a question asked after acting is no
    consent and no information the act used."""

    kind: Literal["tool_called"] = "tool_called"
    tool: str
    args: dict[str, MatcherField] = Field(default_factory=dict)
    status: Status = "ok"
    min_count: int = Field(default=1, ge=0)
    max_count: int | None = Field(default=None, ge=0)
    before_acting: bool = False

    @property
    def pattern(self) -> CallPattern:
        """The calls that count."""
        return CallPattern(tool=self.tool, args=self.args, status=self.status)

    def describe(self) -> str:
        """``calls get_account(account_id)``."""
        return f"calls {self.pattern.signature()}" + (" before acting" if self.before_acting else "")

    def lint(self, environment: Environment) -> list[str]:
        """See :meth:`CallPattern.lint`."""
        return self.pattern.lint(environment, "tool_called")

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Count matching calls (before the decision, with ``before_acting``)."""
        pattern = self.pattern
        calls = ctx.calls
        window = calls[: decision_index(ctx.environment, calls)] if self.before_acting else calls
        hits = [e for e in window if pattern.matches(e)[0]]
        bounds = f"needed ≥ {self.min_count}" + (f" and ≤ {self.max_count}" if self.max_count is not None else "")
        if len(hits) < self.min_count:
            late = [e for e in calls[len(window):] if pattern.matches(e)[0]] if self.before_acting else []
            if late:
                decided = render_call(calls[len(window)])
                return self.result(False, f"{render_call(late[0])} came after the decision {decided} ({bounds} before it)")
            return self.result(False, f"{len(hits)} matching call(s) of {pattern.describe()} ({bounds}); {_near_misses(pattern, calls)}")
        if self.max_count is not None and len(hits) > self.max_count:
            listed = "; ".join(render_call(e) for e in hits[:5])
            return self.result(False, f"{len(hits)} matching calls of {pattern.describe()} ({bounds}): {listed}")
        first = f": {render_call(hits[0])}" if hits else ""
        return self.result(True, f"{len(hits)} matching call(s) of {pattern.describe()} ({bounds}){first}")


class AnyToolCalled(CriterionBase):
    """Some call matches one of ``patterns`` — for work that several tools can do (a balance read through
    ``list_accounts`` or ``get_account``), where requiring one tool would fail correct agents."""

    kind: Literal["any_tool_called"] = "any_tool_called"
    patterns: list[PatternField] = Field(min_length=1)

    @property
    def alternatives(self) -> list[CallPattern]:
        """The patterns, validated."""
        return cast(list[CallPattern], self.patterns)

    def describe(self) -> str:
        """``calls get_account(...) or list_accounts(...)``."""
        return "calls " + " or ".join(p.signature() for p in self.alternatives)

    def lint(self, environment: Environment) -> list[str]:
        """See :meth:`CallPattern.lint`."""
        return [problem for p in self.alternatives for problem in p.lint(environment, "any_tool_called")]

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Find the first call matching any pattern."""
        for event in ctx.calls:
            for pattern in self.alternatives:
                if pattern.matches(event)[0]:
                    return self.result(True, f"{render_call(event)} matches {pattern.describe()}")
        misses = "; ".join(_near_misses(p, ctx.calls) for p in self.alternatives)
        wanted = " or ".join(p.describe() for p in self.alternatives)
        return self.result(False, f"no call of {wanted}; {misses}")


class ToolNotCalled(CriterionBase):
    """No call matches the pattern (by default even a failed attempt counts: trying is the violation)."""

    kind: Literal["tool_not_called"] = "tool_not_called"
    tool: str
    args: dict[str, MatcherField] = Field(default_factory=dict)
    status: Status = "any"
    gate: bool = True
    """A forbidden action zeroes the score by default: a forbidden attempt followed by the right answer
    must earn nothing, or a policy learns that trying is cheap."""

    @property
    def pattern(self) -> CallPattern:
        """The forbidden calls."""
        return CallPattern(tool=self.tool, args=self.args, status=self.status)

    def describe(self) -> str:
        """``never calls transfer(...)``."""
        return f"never calls {self.pattern.signature()}"

    def lint(self, environment: Environment) -> list[str]:
        """See :meth:`CallPattern.lint`."""
        return self.pattern.lint(environment, "tool_not_called")

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Look for a forbidden call."""
        hits = [e for e in ctx.calls if self.pattern.matches(e)[0]]
        if hits:
            listed = "; ".join(render_call(e) for e in hits[:5])
            return self.result(False, f"forbidden call(s) made ({len(hits)}): {listed}")
        return self.result(True, f"no call of {self.pattern.describe()} among {len(ctx.calls)} calls")


class CallOrder(CriterionBase):
    """Every call matching ``then`` comes after some call matching ``first`` (e.g. verify before a wire).

    With ``require_then=False`` (default) an episode with no ``then`` call passes: whether the action had
    to happen is another criterion's job (a change-set match or ``tool_called``).
    """

    kind: Literal["call_order"] = "call_order"
    first: PatternField
    then: PatternField
    require_then: bool = False
    gate: bool = True
    """An order the policy requires is a gate by default: doing the steps in the wrong order is not a
    partial success."""

    @property
    def before(self) -> CallPattern:
        """``first``, validated (the field accepts a tool name or a dict when written)."""
        return cast(CallPattern, self.first)

    @property
    def after(self) -> CallPattern:
        """``then``, validated."""
        return cast(CallPattern, self.then)

    def describe(self) -> str:
        """``verify_identity(...) before transfer(...)``."""
        return f"{self.before.signature()} before {self.after.signature()}"

    def lint(self, environment: Environment) -> list[str]:
        """See :meth:`CallPattern.lint`."""
        return self.before.lint(environment, "call_order.first") + self.after.lint(environment, "call_order.then")

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Walk the calls in order."""
        seen_first: ToolCallEvent | None = None
        thens: list[ToolCallEvent] = []
        for event in ctx.calls:
            if self.after.matches(event)[0]:
                if seen_first is None:
                    return self.result(
                        False, f"{render_call(event)} came before any {self.before.describe()}; {_near_misses(self.before, ctx.calls)}"
                    )
                thens.append(event)
            if seen_first is None and self.before.matches(event)[0]:
                seen_first = event
        if not thens:
            if self.require_then:
                return self.result(False, f"no call of {self.after.describe()}; {_near_misses(self.after, ctx.calls)}")
            return self.result(True, f"no call of {self.after.describe()}, so nothing to order")
        return self.result(True, f"{render_call(seen_first)} precedes {render_call(thens[0])}" if seen_first else "ordered")


class CallBudget(CriterionBase):
    """At most ``max_calls`` tool calls and at most ``max_errors`` agent errors (kit errors never count)."""

    kind: Literal["call_budget"] = "call_budget"
    max_calls: int | None = Field(default=None, ge=0)
    max_errors: int | None = Field(default=None, ge=0)
    error_classes: list[str] = Field(default_factory=lambda: list(AGENT_ERROR_CLASSES))

    def describe(self) -> str:
        """``budget: ≤ 10 calls, ≤ 2 errors``."""
        parts = []
        if self.max_calls is not None:
            parts.append(f"≤ {self.max_calls} calls")
        if self.max_errors is not None:
            parts.append(f"≤ {self.max_errors} errors")
        return "budget: " + (", ".join(parts) or "unbounded")

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Count calls and agent errors."""
        calls = ctx.calls
        errors = [e for e in calls if e.error is not None and e.error.error_class in self.error_classes]
        problems = []
        if self.max_calls is not None and len(calls) > self.max_calls:
            problems.append(f"{len(calls)} calls (max {self.max_calls})")
        if self.max_errors is not None and len(errors) > self.max_errors:
            listed = "; ".join(render_call(e) for e in errors[:3])
            problems.append(f"{len(errors)} agent errors (max {self.max_errors}): {listed}")
        summary = f"{len(calls)} calls, {len(errors)} agent errors"
        if problems:
            return self.result(False, "over budget: " + "; ".join(problems))
        return self.result(True, f"{summary} ({self.describe().removeprefix('budget: ')})")
