"""End-state assertions: a read query over the end world and the value it must return.

The query is the rubric author's (parameters bound, never interpolated) and should select by key, so its
cost does not grow with the fixture. Criteria run with the end world read-only (``World.read_only``), so a
query that tries to write fails (a rubric bug, raised as :class:`GradingError`) and changes nothing.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from fixtures.errors import GradingError
from graders.criteria.base import CriterionBase, CriterionResult
from graders.criteria.matchers import MISSING, MatcherField, short

if TYPE_CHECKING:
    from graders.context import GradingContext

__all__ = ["StateCheck", "state"]


class StateCheck(CriterionBase):
    """The end world answers ``sql`` with a value matching ``expect``.

    With ``rows="one"`` (default) the query must return at most one row and its first column is matched
    (no row at all is ``<missing>``, which only :func:`~graders.criteria.matchers.absent` accepts). With
    ``rows="all"`` the list of all rows (each a list of column values) is matched, e.g. against ``[]``.
    """

    kind: Literal["state"] = "state"
    sql: str
    params: list[Any] | dict[str, Any] = Field(default_factory=list)
    """Bound parameters (``?`` positional or ``:name`` named)."""
    expect: MatcherField
    rows: Literal["one", "all"] = "one"

    @field_validator("sql")
    @classmethod
    def _read_only(cls, value: str) -> str:
        head = value.lstrip().split(None, 1)[0].lower() if value.strip() else ""
        if head not in ("select", "with", "values"):
            raise ValueError("a state check must be a single SELECT (or WITH ... SELECT) query")
        return value

    def describe(self) -> str:
        """``state: <query>`` (the expected value stays in the evidence, never in the name)."""
        query = " ".join(self.sql.split())
        return f"state: {query[:60]}{'…' if len(query) > 60 else ''}"

    def evaluate(self, ctx: GradingContext) -> CriterionResult:
        """Run the query on the end world and match its value."""
        try:
            cursor = ctx.world.conn.execute(self.sql, self.params)
            fetched = cursor.fetchall() if self.rows == "all" else cursor.fetchmany(2)
        except sqlite3.Error as exc:  # includes a write attempt: criteria run in the world's read-only block
            raise GradingError(f"criterion {self.label!r}: the query failed on the end world: {exc}") from exc
        where = f"{' '.join(self.sql.split())}" + (f" with {short(self.params, 60)}" if self.params else "")
        if self.rows == "all":
            actual: Any = [list(row) for row in fetched]
        elif len(fetched) > 1:
            return self.result(False, f"{where} returned more than one row; expected one")
        else:
            actual = fetched[0][0] if fetched else MISSING
        ok, why = self.expect.check(actual)
        shown = "no row" if actual is MISSING else short(actual)
        return self.result(ok, f"{where} → {shown}: {why}")


def state(sql: str, *params: Any, expect: Any, **options: Any) -> StateCheck:
    """Shorthand: ``state("SELECT status FROM accounts WHERE id = ?", 7, expect="frozen", gate=True)``."""
    return StateCheck(sql=sql, params=list(params), expect=expect, **options)
