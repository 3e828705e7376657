"""No collateral damage: every row the episode changed is one the task needs changed.

What a task needs is what its oracle does: each effect of the oracle (``graders/effects.py``) allows one
identical effect of the episode — same rows, same values, volatile columns aside — so an extra wire, a
second dispute, a note or a failed identity check the task did not need are collateral, by construction
and without per-task code. A task may allow more with ``allowed_changes`` (and a criterion with
``also_allowed``): each allowance names the rows and values it covers and, with ``max_rows``, how many.
Inserts into the environment's bookkeeping tables (an audit log) are never collateral. Each violation is
reported row by row, so a reader sees at once which account was frozen that should not have been.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from fixtures.changes import RowChange
from graders.criteria.base import CriterionBase, CriterionResult, schema_tables
from graders.criteria.matchers import MISSING, MatcherField
from graders.criteria.rows import render_change
from graders.effects import effects, match_effects

if TYPE_CHECKING:
    from graders.context import GradingContext
    from servers.environment import Environment

__all__ = ["AllowedChange", "NoCollateral", "allow"]

Op = Literal["insert", "update", "delete"]
ALL_OPS: tuple[Op, ...] = ("insert", "update", "delete")
_LISTED = 8


class AllowedChange(BaseModel):
    """A kind of row change a task may make: which table, which operations, which rows, which columns."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: str
    ops: list[Op] = Field(default_factory=lambda: list(ALL_OPS))
    keys: list[list[Any]] | None = None
    """Primary keys of the rows that may change (None: any row of the table)."""
    columns: list[str] | None = None
    """For updates: the columns that may change (None: any)."""
    match: dict[str, MatcherField] = Field(default_factory=dict)
    """Column matchers on the row (after-image for inserts/updates, before-image for deletes), e.g. to allow
    inserts into ``transfers`` only ``from_account`` = 7 when the new row's id is generated."""
    max_rows: int | None = Field(default=None, ge=1)
    """How many changed rows this allowance may cover (None: any number)."""

    def permits(self, change: RowChange) -> bool:
        """Whether ``change`` falls inside this allowance."""
        if change.table != self.table or change.op not in self.ops:
            return False
        if self.keys is not None and list(change.key) not in [list(k) for k in self.keys]:
            return False
        if change.op == "update" and self.columns is not None and not set(change.columns) <= set(self.columns):
            return False
        row = change.before if change.op == "delete" else change.after
        for column, matcher in self.match.items():
            ok, _ = matcher.check((row or {}).get(column, MISSING))
            if not ok:
                return False
        return True


def allow(
    table: str, *keys: Any, ops: list[Op] | None = None, columns: list[str] | None = None, max_rows: int | None = None, **match: Any
) -> AllowedChange:
    """Shorthand: ``allow("accounts", 3, 4, ops=["update"], columns=["balance_minor"])``.

    Single-column keys may be given as plain values; composite keys as lists. Keyword arguments other than
    ``ops``/``columns``/``max_rows`` are column matchers: ``allow("notes", ops=["insert"], customer_id=3, max_rows=1)``.
    """
    return AllowedChange(
        table=table,
        ops=ops or list(ALL_OPS),
        keys=[list(k) if isinstance(k, list | tuple) else [k] for k in keys] or None,
        columns=columns,
        match=match,
        max_rows=max_rows,
    )


def _uncovered(changes: list[RowChange], allowances: list[AllowedChange]) -> list[RowChange]:
    """The changes no allowance covers, each allowance covering at most ``max_rows`` of them.

    Why not first fit: with overlapping allowances ("any one account", "the victim's account") the first fit
    can spend the broad one on a row the narrow one covers and then reject a row only the broad one covers;
    an augmenting path (Kuhn's matching) moves earlier rows to other allowances to make room.
    """
    fits = [[n for n, allowance in enumerate(allowances) if allowance.permits(change)] for change in changes]
    held: list[list[int]] = [[] for _ in allowances]

    def place(row: int, visited: set[int]) -> bool:
        for n in fits[row]:
            if n in visited:
                continue
            visited.add(n)
            limit = allowances[n].max_rows
            if limit is None:
                return True
            if len(held[n]) < limit:
                held[n].append(row)
                return True
            for slot, other in enumerate(held[n]):
                if place(other, visited):
                    held[n][slot] = row
                    return True
        return False

    return [change for row, change in enumerate(changes) if not place(row, set())]


class NoCollateral(CriterionBase):
    """Every effect of the episode is one the oracle makes, or is covered by the task's allowances."""

    kind: Literal["no_collateral"] = "no_collateral"
    needs_expected: ClassVar[bool] = True
    also_allowed: list[AllowedChange] = Field(default_factory=list)
    """Allowances on top of the task instance's ``allowed_changes``."""
    from_oracle: bool = True
    """Each effect of the oracle allows one identical effect (False: only the explicit allowances count)."""
    gate: bool = True

    def describe(self) -> str:
        """``no collateral changes``."""
        return "no collateral changes"

    def lint(self, environment: Environment) -> list[str]:
        """Allowances must name tables that exist."""
        known = schema_tables(environment)
        return [f"allows changes to table {a.table!r}, which the fixture's schema does not define" for a in self.also_allowed if a.table not in known]

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Match each effect of the episode against the oracle's effects, then against the allowances."""
        allowances = [*ctx.instance.allowed_changes, *self.also_allowed]
        diff = effects(ctx.diff, ctx.environment)
        if self.from_oracle:
            leftover = match_effects(ctx.expected_changes, diff, ctx.environment).unexpected
        else:
            leftover = diff
        violations = _uncovered(leftover, allowances)
        if not violations:
            return self.result(True, f"all {len(diff)} changed rows are allowed" if diff else "no rows changed")
        listed = "; ".join(render_change(c) for c in violations[:_LISTED])
        more = f"; +{len(violations) - _LISTED} more" if len(violations) > _LISTED else ""
        return self.result(False, f"{len(violations)} of {len(diff)} changed rows were not allowed: {listed}{more}")
