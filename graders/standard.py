"""The criteria every rubric gets, whether or not its template lists them.

An RL policy finds the one check a template author forgot, so the checks that make gaming impossible are
not left to each author: the grader adds them to every task instance's rubric (a template that lists one
itself keeps its own):

* ``declared outcome`` (gate) — when the task declares an :class:`~graders.outcome.ExpectedOutcome`;
* ``claims consistent with the world`` (gate) — when the environment has one answer tool;
* ``no collateral changes`` (gate) — every effect must be one the oracle makes or the task allows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graders.criteria import Criterion
from graders.criteria.claims import ClaimsConsistent
from graders.criteria.collateral import NoCollateral
from graders.criteria.outcome import DeclaredOutcome

if TYPE_CHECKING:
    from graders.tasks import TaskInstance
    from servers.environment import Environment

__all__ = ["full_rubric"]


def full_rubric(environment: Environment, instance: TaskInstance) -> list[Criterion]:
    """``instance.rubric`` plus the standard criteria it does not already hold (see the module docstring)."""
    rubric: list[Criterion] = list(instance.rubric)
    kinds = {criterion.kind for criterion in rubric}
    labels = {criterion.label for criterion in rubric}
    extra: list[Criterion] = []
    if instance.outcome is not None and "outcome" not in kinds:
        extra.append(DeclaredOutcome(outcome=instance.outcome.outcome, reason_codes=list(instance.outcome.reason_codes)))
    if "claims" not in kinds and len(environment.answer_tools) == 1:
        extra.append(ClaimsConsistent())
    if "no_collateral" not in kinds:
        extra.append(NoCollateral(name="no collateral changes"))
    return rubric + [c for c in extra if c.label not in labels]
