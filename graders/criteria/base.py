"""What every criterion shares: its name, weight and gate flag, and the result it returns.

A criterion is a frozen pydantic model (so rubrics serialise with their task instance) with one method,
``evaluate(ctx) -> CriterionResult`` (or an awaitable of one, for criteria that do I/O such as the LLM
judge). ``ctx`` is a :class:`graders.context.GradingContext`: the record, the end world, the task instance
and, on demand, the oracle's expected change set. Results always carry human-readable evidence — on
success too — so a grade explains itself without re-running anything.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from graders.criteria.matchers import safe_text

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment

__all__ = ["CriterionBase", "CriterionResult", "tool_argument_names", "schema_tables", "EVIDENCE_LIMIT"]

EVIDENCE_LIMIT = 4000
"""Longest evidence text kept: a grade travels with every result line, whatever an agent made a criterion quote."""

_CREATE_TABLE = re.compile(r'CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?["`\[]?(\w+)', re.IGNORECASE)


class CriterionResult(BaseModel):
    """The outcome of one criterion on one episode."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The criterion's name (unique within its rubric)."""
    kind: str
    """The criterion kind, e.g. ``state``, ``change_set``, ``tool_called``."""
    weight: float
    gate: bool
    """A failed gate zeroes the whole grade."""
    graded: bool = True
    """False when the criterion could not be evaluated (e.g. no judge endpoint); it then never passes."""
    passed: bool
    score: float = Field(ge=0.0, le=1.0)
    evidence: str
    """Why it passed or failed, for a human reading the grade."""
    credited: bool = True
    """False when the untouched start world (the no-op) already satisfies this criterion: it can then only
    gate the grade, never add to its score (see ``graders/baseline.py``)."""


class CriterionBase(BaseModel):
    """Fields and helpers common to every criterion kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    needs_expected: ClassVar[bool] = False
    """True for kinds that read the oracle's expected change set (it is then computed before evaluation)."""

    name: str = ""
    """A short unique name within the rubric; defaults to :meth:`describe`."""
    weight: float = Field(default=1.0, ge=0.0)
    """Relative weight in the score (0 makes a pure gate)."""
    gate: bool = False
    """If this criterion fails, the score is 0 whatever the others say."""

    @property
    def label(self) -> str:
        """The name shown in grades: ``name`` or, when empty, the generated description."""
        return self.name or self.describe()

    def describe(self) -> str:
        """A short generated name saying what the criterion checks."""
        return str(getattr(self, "kind", type(self).__name__))

    def lint(self, environment: Environment) -> list[str]:
        """Problems that would make this criterion meaningless in ``environment`` (e.g. an unknown tool)."""
        return []

    def evaluate(self, ctx: GradingContext) -> CriterionResult | Awaitable[CriterionResult]:
        """Grade one episode; subclasses implement this."""
        raise NotImplementedError

    def result(self, passed: bool, evidence: str, score: float | None = None, *, graded: bool = True) -> CriterionResult:
        """Build this criterion's result; ``score`` defaults to 1.0 when passed, else 0.0."""
        value = (1.0 if passed else 0.0) if score is None else round(min(1.0, max(0.0, score)), 6)
        if len(evidence) > EVIDENCE_LIMIT:
            evidence = evidence[: EVIDENCE_LIMIT - 1] + "…"
        return CriterionResult(
            name=self.label,
            kind=str(getattr(self, "kind", type(self).__name__)),
            weight=self.weight,
            gate=self.gate,
            graded=graded,
            passed=passed and graded,
            score=value if graded else 0.0,
            evidence=safe_text(evidence),
        )


def tool_argument_names(environment: Environment, tool: str) -> set[str] | None:
    """The top-level argument names of ``tool`` in ``environment`` (None when there is no such tool)."""
    spec = environment.tool_specs.get(tool)
    if spec is None:
        return None
    return set(spec.input_schema.get("properties", {}))



def schema_tables(environment: Environment) -> frozenset[str]:
    """The table names the environment's fixture schema creates (read from its DDL, no database built)."""
    return _tables_in(environment.fixture.schema)


@lru_cache(maxsize=64)
def _tables_in(schema: str) -> frozenset[str]:
    return frozenset(_CREATE_TABLE.findall(schema))
