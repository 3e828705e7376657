"""The grade of one episode: a score in [0, 1], whether it passed, and every criterion's result with evidence.

Rules, in order:

1. A *gate* criterion that was graded and failed zeroes the score (``gated=True``, names in ``failed_gates``).
2. Otherwise the score is the weighted mean of the *graded*, *credited* criteria with weight > 0 (a rubric
   of pure gates scores 1.0 when they all pass). A criterion the untouched start world already satisfies is
   not credited (``graders/baseline.py``): it counts only when it fails, so inaction earns no reward while
   breaking such a criterion still costs score.
3. A criterion that could not be graded (e.g. the LLM judge with no endpoint configured) is listed in
   ``ungraded`` and makes the grade ``complete=False``; an incomplete grade never passes — an unchecked
   criterion must not pass silently — but its score over the graded criteria is still reported.
4. ``passed = complete and not gated and score >= threshold``.

Grades are deterministic: the same record and end world give byte-identical JSON (no timings inside).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from graders.criteria.base import CriterionResult

__all__ = ["Grade", "combine"]

_EPSILON = 1e-9


class Grade(BaseModel):
    """The verdict on one episode."""

    model_config = ConfigDict(frozen=True)

    env: str
    template_id: str
    seed: int
    episode_id: str | None = None
    score: float = Field(ge=0.0, le=1.0)
    passed: bool
    complete: bool
    """False when some criterion could not be graded; the grade then does not pass."""
    threshold: float
    gated: bool
    """True when a failed gate zeroed the score."""
    failed_gates: list[str] = Field(default_factory=list)
    ungraded: list[str] = Field(default_factory=list)
    criteria: list[CriterionResult]
    tool_calls: int = 0
    agent_errors: int = 0
    """Calls that failed because of the agent (invalid arguments, refusals, unknown tools)."""
    internal_errors: int = 0
    """Calls that failed because of the kit; a runner should retry such an episode rather than score it."""
    end_hash: str | None = None

    @property
    def graded_pass(self) -> bool:
        """Whether the graded criteria alone reach the threshold with no failed gate (ignores ungraded ones)."""
        return not self.gated and self.score + _EPSILON >= self.threshold

    @property
    def failures(self) -> list[CriterionResult]:
        """Graded criteria that failed."""
        return [r for r in self.criteria if r.graded and not r.passed]

    def summary(self) -> str:
        """One line: score, verdict, and the first failing criterion's evidence."""
        verdict = "PASS" if self.passed else "FAIL"
        head = f"{self.template_id}#{self.seed}: {verdict} score={self.score:.3f}"
        if self.gated:
            head += f" (gate failed: {', '.join(self.failed_gates)})"
        if self.ungraded:
            head += f" (incomplete: {', '.join(self.ungraded)} not graded)"
        failures = self.failures
        if failures:
            head += f" — {failures[0].name}: {failures[0].evidence}"
        return head

    def to_json(self) -> str:
        """Canonical JSON (stable field order; byte-identical for identical grades)."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> Grade:
        """Parse a grade written by :meth:`to_json`."""
        return cls.model_validate_json(text)


def combine(
    results: list[CriterionResult],
    *,
    env: str,
    template_id: str,
    seed: int,
    threshold: float,
    episode_id: str | None = None,
    tool_calls: int = 0,
    agent_errors: int = 0,
    internal_errors: int = 0,
    end_hash: str | None = None,
) -> Grade:
    """Combine criterion results into a grade by the rules in this module's docstring."""
    failed_gates = [r.name for r in results if r.gate and r.graded and not r.passed]
    ungraded = [r.name for r in results if not r.graded]
    # an uncredited criterion (the no-op satisfies it) is neutral while it passes and a penalty when it fails
    weighted = [r for r in results if r.graded and r.weight > 0 and (r.credited or not r.passed)]
    if failed_gates:
        score = 0.0
    elif weighted:
        total = sum(r.weight for r in weighted)
        score = sum(r.weight * r.score for r in weighted) / total
    else:
        score = 1.0 if any(r.graded for r in results) else 0.0
    score = round(min(1.0, max(0.0, score)), 6)
    complete = not ungraded
    passed = complete and not failed_gates and score + _EPSILON >= threshold
    return Grade(
        env=env,
        template_id=template_id,
        seed=seed,
        episode_id=episode_id,
        score=score,
        passed=passed,
        complete=complete,
        threshold=threshold,
        gated=bool(failed_gates),
        failed_gates=failed_gates,
        ungraded=ungraded,
        criteria=results,
        tool_calls=tool_calls,
        agent_errors=agent_errors,
        internal_errors=internal_errors,
        end_hash=end_hash,
    )
