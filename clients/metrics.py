"""Run metrics: unbiased pass@k and pass^k estimators and a deterministic bootstrap confidence interval.

With ``n`` graded trials of one problem of which ``c`` passed (Chen et al. 2021; tau-bench):

- pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k trials drawn without replacement passes.
- pass^k = C(c, k) / C(n, k): the chance that all k of them pass (reliability, not luck).

Both need ``n >= k``. The bootstrap resamples with a seeded rng so the same results always print the same
interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ["pass_at_k", "pass_hat_k", "mean", "bootstrap_ci"]


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"passed count c={c} must be between 0 and n={n}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if n < k:
        raise ValueError(f"need at least k={k} trials, got n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem: probability that some of k of the n trials passes.

    Raises:
        ValueError: ``n < k``, ``k < 1`` or ``c`` outside ``[0, n]``.
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one problem: probability that all of k of the n trials pass.

    Raises:
        ValueError: ``n < k``, ``k < 1`` or ``c`` outside ``[0, n]``.
    """
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean, or None for no values (a table shows "-" rather than a made-up 0)."""
    return sum(values) / len(values) if values else None


def bootstrap_ci(
    values: Sequence[float], *, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values``, deterministic for a given ``seed``.

    Returns None for no values; a single value (or all equal) gives a zero-width interval.
    """
    if not values:
        return None
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = len(values)
    data = list(values)
    if min(data) == max(data):
        return (data[0], data[0])
    rng = random.Random(seed)
    draw = rng.random
    means = sorted(sum(data[int(draw() * n)] for _ in range(n)) / n for _ in range(resamples))
    alpha = (1 - confidence) / 2
    lo = means[max(0, math.floor(alpha * resamples))]
    hi = means[min(resamples - 1, math.ceil((1 - alpha) * resamples) - 1)]
    return (lo, hi)
