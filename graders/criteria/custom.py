"""Custom checks: a Python function, named by import path, for rules no built-in kind expresses.

The rubric stays serialisable because it stores the function's dotted path and JSON parameters, never the
function. The function must be marked with :func:`criterion` (so a typo'd path cannot run arbitrary
code by accident) and returns ``(passed: bool, evidence: str)`` or ``(score: float, evidence: str)``::

    @criterion
    def ledger_balances(ctx: GradingContext, account_id: int) -> tuple[bool, str]:
        (total,) = ctx.world.execute("SELECT sum(amount_minor) FROM ledger WHERE account_id = ?", (account_id,)).fetchone()
        return total == 0, f"ledger of account {account_id} sums to {total}"

    CustomCheck(function="envs.finance.checks:ledger_balances", params={"account_id": 7})
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import Field, field_validator

from fixtures.errors import GradingError
from graders.criteria.base import CriterionBase, CriterionResult

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment

__all__ = ["CustomCheck", "criterion", "resolve_check"]

F = TypeVar("F", bound=Callable[..., Any])


def criterion(fn: F) -> F:
    """Mark ``fn(ctx, **params)`` as usable by :class:`CustomCheck` (the mark is all this does)."""
    fn.__toolgym_criterion__ = True  # type: ignore[attr-defined]
    return fn


def resolve_check(path: str) -> Callable[..., Any]:
    """Import ``module:function`` and make sure it is marked with ``@criterion``.

    Raises:
        GradingError: the module or attribute does not exist, or the function is not marked.
    """
    module_name, _, attr = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise GradingError(f"custom check {path!r} cannot be imported: {exc}") from exc
    if not getattr(target, "__toolgym_criterion__", False):
        raise GradingError(f"custom check {path!r} is not marked with @criterion (graders.criteria.custom.criterion)")
    return target


class CustomCheck(CriterionBase):
    """Runs a ``@criterion`` function with ``params``."""

    kind: Literal["custom"] = "custom"
    function: str
    """``module:function``."""
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("function")
    @classmethod
    def _path(cls, value: str) -> str:
        module, sep, attr = value.partition(":")
        if not sep or not module or not attr:
            raise ValueError(f"function must be 'module:function', got {value!r}")
        return value

    def describe(self) -> str:
        """``custom: ledger_balances``."""
        return f"custom: {self.function.partition(':')[2]}"

    def lint(self, environment: Environment) -> list[str]:
        """The function must import and be marked."""
        try:
            resolve_check(self.function)
        except GradingError as exc:
            return [str(exc)]
        return []

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Call the function and turn its return value into a result."""
        fn = resolve_check(self.function)
        try:
            outcome = fn(ctx, **self.params)
        except GradingError:
            raise
        except Exception as exc:
            raise GradingError(f"custom check {self.function!r} crashed: {type(exc).__name__}: {exc}") from exc
        if not (isinstance(outcome, tuple) and len(outcome) == 2 and isinstance(outcome[1], str)):
            raise GradingError(f"custom check {self.function!r} must return (passed_or_score, evidence), got {outcome!r}")
        verdict, evidence = outcome
        if isinstance(verdict, bool):
            return self.result(verdict, evidence)
        if isinstance(verdict, int | float) and 0 <= verdict <= 1:
            return self.result(verdict >= 1.0, evidence, float(verdict))
        raise GradingError(f"custom check {self.function!r} returned {verdict!r}; expected a bool or a score in [0, 1]")
