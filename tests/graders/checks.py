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


@criterion
def malformed(ctx: GradingContext) -> str:
    """Returns the wrong shape."""
    return "yes"


def unmarked(ctx: GradingContext) -> tuple[bool, str]:
    """Not marked with @criterion."""
    return True, "should never run"
