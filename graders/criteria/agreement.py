"""Agreements with a simulated counterpart, and questions that must come before acting.

A task with a person on the other end (``fixtures/persona.py``) asks the agent to get the customer's consent
before it acts. Consent is only evidence when it binds what was done: a policy that offers ten times the
refund (the customer happily accepts) and then refunds the right amount, that offers without naming the
amount, or that offers every resolution in turn until the customer has "agreed" to incompatible ones, has
not obtained the agreement the task needs. So:

* :class:`Agreements` — every proposal the counterpart *accepted* is one the task's oracle makes (same
  resolution, same amount as an exact Decimal, an amount exactly when the oracle names one). Proposals the
  counterpart declined cost nothing here (asking is not acting).
* :class:`BeforeWrites` — no write happens before a call matching ``first`` (e.g. asking the customer which
  order they mean): a question asked after the agent already acted on a guess is not the question the
  policy requires.

Both read only the record, like every transcript rule, so any MCP agent is judged the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field

from graders.criteria.base import CriterionBase, CriterionResult
from graders.criteria.matchers import MISSING, MatcherField, absent, lookup, number
from graders.criteria.transcript import CallPattern, PatternField, render_call

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment
    from servers.record import ToolCallEvent

__all__ = ["Agreements", "BeforeWrites", "agreement_terms"]


def agreement_terms(arguments: dict[str, Any], *, amount_field: str = "amount") -> dict[str, Any]:
    """The matchers one expected agreement is made of, from an oracle's proposal arguments: every argument
    exactly, the amount as an exact Decimal, and no amount when the oracle names none."""
    terms: dict[str, Any] = {}
    for key, value in arguments.items():
        if key == amount_field:
            continue
        terms[key] = value
    amount = arguments.get(amount_field)
    terms[amount_field] = number(str(amount)) if amount is not None else absent()
    return terms


def _given(arguments: dict[str, Any], path: str) -> Any:
    """The argument at ``path``; an explicit null is the same as leaving it out."""
    value = lookup(arguments, path)
    return MISSING if value is None else value


class Agreements(CriterionBase):
    """Every proposal the counterpart accepted matches one of ``expected`` (a gate by default)."""

    kind: Literal["agreements"] = "agreements"
    tool: str
    """The proposal tool, e.g. ``propose_resolution``."""
    expected: list[dict[str, MatcherField]] = Field(default_factory=list)
    """One entry per agreement the task allows: argument path → matcher (see :func:`agreement_terms`)."""
    accepted: dict[str, MatcherField] = Field(default_factory=lambda: {"agreed": True}, validate_default=True)
    """Matchers on the proposal's result that say the counterpart accepted it."""
    gate: bool = True

    def describe(self) -> str:
        """``agreements bind propose_resolution``."""
        return f"agreements bind {self.tool}"

    def lint(self, environment: Environment) -> list[str]:
        """The tool, its arguments and the result fields must exist."""
        return CallPattern(tool=self.tool, result=self.accepted).lint(environment, "agreements")

    def _accepted(self, event: ToolCallEvent) -> bool:
        if event.tool != self.tool or event.error is not None or event.result is None:
            return False
        return all(m.check(lookup(event.result, path))[0] for path, m in self.accepted.items())

    def _allowed(self, event: ToolCallEvent) -> bool:
        arguments = event.arguments if isinstance(event.arguments, dict) else {}
        for terms in self.expected:
            if all(m.check(_given(arguments, path))[0] for path, m in terms.items()):
                return True
        return False

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Check each accepted proposal against the expected agreements."""
        accepted = [e for e in ctx.calls if self._accepted(e)]
        stray = [e for e in accepted if not self._allowed(e)]
        if stray:
            listed = "; ".join(render_call(e) for e in stray[:4])
            return self.result(False, f"the counterpart agreed to {len(stray)} proposal(s) the task does not make "
                                      f"(another resolution, another amount, or no amount): {listed}")
        if not accepted:
            return self.result(True, "no proposal was accepted")
        return self.result(True, f"{len(accepted)} accepted proposal(s), each one the task makes: "
                                 + "; ".join(render_call(e) for e in accepted[:3]))


class BeforeWrites(CriterionBase):
    """Every call of a mutating tool comes after some call matching ``first`` (a gate by default).

    Why not :class:`~graders.criteria.transcript.CallOrder`: the writes a policy might try first are any of
    the environment's mutating tools, not one named in advance.
    """

    kind: Literal["before_writes"] = "before_writes"
    first: PatternField
    gate: bool = True

    @property
    def before(self) -> CallPattern:
        """``first``, validated."""
        return cast(CallPattern, self.first)

    def describe(self) -> str:
        """``ask_customer(topic) before any write``."""
        return f"{self.before.signature()} before any write"

    def lint(self, environment: Environment) -> list[str]:
        """See :meth:`CallPattern.lint`."""
        return self.before.lint(environment, "before_writes.first")

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Walk the calls in order until ``first`` is seen; any write before it fails."""
        specs = ctx.environment.tool_specs
        for event in ctx.calls:
            if self.before.matches(event)[0]:
                return self.result(True, f"{render_call(event)} came before any write")
            spec = specs.get(event.tool)
            if spec is not None and spec.mark.mutates and not spec.mark.answer and not spec.mark.process:
                return self.result(False, f"{render_call(event)} came before any {self.before.describe()}")
        return self.result(True, f"no write, and {self.before.describe()} was not needed before one")
