"""Custom rubric checks for the finance tasks (``CustomCheck(function="envs.finance.tasks.checks:...")``).

Only rules the built-in criterion kinds cannot say live here: "any one of several look-ups was made" — an
analyst may read a balance through ``list_accounts`` or ``get_account``, and both are the work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graders.criteria import criterion
from graders.criteria.transcript import CallPattern, render_call

if TYPE_CHECKING:
    from graders.context import GradingContext

__all__ = ["any_call"]


@criterion
def any_call(ctx: GradingContext, patterns: list[dict[str, Any]]) -> tuple[bool, str]:
    """Pass when some successful call matches one of ``patterns`` (each ``{"tool": ..., "args": {...}}``).

    Why: a look-up can be done with several tools; requiring one of them would fail correct agents.
    """
    compiled = [CallPattern.model_validate({**p, "status": "ok"}) for p in patterns]
    for event in ctx.calls:
        for pattern in compiled:
            if pattern.matches(event)[0]:
                return True, f"{render_call(event)} matches {pattern.describe()}"
    wanted = " or ".join(p.describe() for p in compiled)
    return False, f"no successful call of {wanted} among {len(ctx.calls)} calls"
