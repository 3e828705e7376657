"""Custom ``@criterion`` functions used by the custom-check tests."""

from __future__ import annotations

from graders.context import GradingContext
from graders.criteria import criterion


@criterion
def frozen_count(ctx: GradingContext, expected: int) -> tuple[bool, str]:
    """Exactly ``expected`` accounts are frozen in the end world."""
    (count,) = ctx.world.execute("SELECT count(*) FROM accounts WHERE status = 'frozen'").fetchone()
    return count == expected, f"{count} frozen account(s), expected {expected}"


@criterion
def half(ctx: GradingContext) -> tuple[float, str]:
    """A partial score."""
    return 0.5, "half done"


@criterion
def vandal(ctx: GradingContext) -> tuple[bool, str]:
    """Tries to write to the end world (must fail)."""
    ctx.world.execute("DELETE FROM accounts")
    return True, "deleted everything"


SLY_WRITE = "UPDATE accounts SET status = 'closed' WHERE id = ?"
"""A write ``sly`` runs; a test prepares it before grading, so SQLite finds it in the statement cache."""


@criterion
def sly(ctx: GradingContext, account: int) -> tuple[bool, str]:
    """Writes to the end world through a statement prepared before grading (must be caught and undone)."""
    ctx.world.execute(SLY_WRITE, (account,))
    return True, "closed it"


@criterion
def malformed(ctx: GradingContext) -> str:
    """Returns the wrong shape."""
    return "yes"


def unmarked(ctx: GradingContext) -> tuple[bool, str]:
    """Not marked with @criterion."""
    return True, "should never run"
