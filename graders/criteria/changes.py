"""Change-set match: the episode changed the same rows, the same way, as the oracle would have.

The expected change set comes from replaying the task's oracle in a fresh world of the same (template,
seed) — computed once per instance and cached (see :mod:`graders.expected`). Rows are matched by content
(a multiset of signatures), so generated ids and timestamps named in ``ignore_columns`` do not matter.
Score: matched / (expected + unexpected); it passes only when nothing is missing and nothing is extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from fixtures.changes import RowChange
from graders.criteria.base import CriterionBase, CriterionResult, schema_tables
from graders.criteria.rows import render_change, signature
from graders.effects import match_by

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment

__all__ = ["ChangeSetMatch", "compare_change_sets", "ChangeSetComparison"]

_LISTED = 5


class ChangeSetComparison:
    """The outcome of comparing two change sets: the rows matched, missing and unexpected."""

    def __init__(self, matched: list[RowChange], missing: list[RowChange], unexpected: list[RowChange]) -> None:
        self.matched = matched
        self.missing = missing
        self.unexpected = unexpected

    @property
    def score(self) -> float:
        """Matched over the union of both sides (1.0 when both are empty)."""
        total = len(self.matched) + len(self.missing) + len(self.unexpected)
        return 1.0 if total == 0 else len(self.matched) / total


def _in_scope(change: RowChange, tables: list[str] | None, ignore_tables: list[str]) -> bool:
    return change.table not in ignore_tables and (tables is None or change.table in tables)


def compare_change_sets(
    expected: list[RowChange],
    actual: list[RowChange],
    ignore_columns: dict[str, list[str]],
    tables: list[str] | None = None,
    ignore_tables: list[str] | tuple[str, ...] = (),
) -> ChangeSetComparison:
    """Match ``actual`` against ``expected`` by content signature (multiset), in the tables in scope."""
    ignored = list(ignore_tables)

    def key(change: RowChange) -> str | None:
        return signature(change, ignore_columns) if _in_scope(change, tables, ignored) else None

    outcome = match_by(expected, actual, key)
    return ChangeSetComparison(outcome.matched, outcome.missing, outcome.unexpected)


class ChangeSetMatch(CriterionBase):
    """The episode's net row changes equal the oracle's, up to ``ignore_columns``.

    Each change is compared as (table, operation, row before, row after) without the ignored columns, so
    ignore generated ids and timestamps of inserted rows. Ignoring an updated table's key column makes
    its updates match by their remaining content alone; an update that touched only ignored columns does
    not count as a change at all. The oracle's optional steps are part of the expected set too: for a task
    whose oracle has optional writes, check the required end state with state criteria instead (collateral
    is already measured against the oracle's effects by the standard ``no collateral changes``).
    """

    kind: Literal["change_set"] = "change_set"
    needs_expected: ClassVar[bool] = True
    ignore_columns: dict[str, list[str]] = Field(default_factory=dict)
    """Table (or ``"*"``) → columns whose values may differ, e.g. ``{"transfers": ["id", "created_at"]}``."""
    tables: list[str] | None = None
    """Only compare these tables (default: all)."""
    ignore_tables: list[str] = Field(default_factory=list)
    """Never compare these tables (e.g. an audit log)."""

    def describe(self) -> str:
        """``change set matches the oracle``."""
        scope = f" in {', '.join(self.tables)}" if self.tables else ""
        return f"change set matches the oracle{scope}"

    def lint(self, environment: Environment) -> list[str]:
        """Tables named here must exist in the fixture's schema."""
        known = schema_tables(environment)
        named = (set(self.ignore_columns) - {"*"}) | set(self.tables or ()) | set(self.ignore_tables)
        return [f"names table {t!r}, which the fixture's schema does not define" for t in sorted(named - known)]

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Compare the episode's diff with the expected change set."""
        outcome = compare_change_sets(ctx.expected_changes, ctx.diff, self.ignore_columns, self.tables, self.ignore_tables)
        expected_count = len(outcome.matched) + len(outcome.missing)
        if not outcome.missing and not outcome.unexpected:
            if not outcome.matched:
                return self.result(True, "no change expected and none made")
            lines = "; ".join(render_change(c, self.ignore_columns) for c in outcome.matched[:_LISTED])
            more = f"; +{len(outcome.matched) - _LISTED} more" if len(outcome.matched) > _LISTED else ""
            return self.result(True, f"all {expected_count} expected changes made: {lines}{more}")
        parts = [f"{len(outcome.matched)} of {expected_count} expected changes made"]
        for label, rows in (("missing", outcome.missing), ("unexpected", outcome.unexpected)):
            if rows:
                listed = "; ".join(render_change(c, self.ignore_columns) for c in rows[:_LISTED])
                more = f"; +{len(rows) - _LISTED} more" if len(rows) > _LISTED else ""
                parts.append(f"{label} ({len(rows)}): {listed}{more}")
        return self.result(False, " | ".join(parts), outcome.score)
