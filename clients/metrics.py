"""Run metrics: unbiased pass@k and pass^k estimators and a deterministic bootstrap confidence interval.

With ``n`` graded trials of one problem of which ``c`` passed (Chen et al. 2021; tau-bench):

- pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k trials drawn without replacement passes.
- pass^k = C(c, k) / C(n, k): the chance that all k of them pass (reliability, not luck).

Both need ``n >= k``. The bootstrap resamples with a seeded rng so the same results always print the same
interval.

A pass *rate* is a proportion, and the bootstrap of a proportion collapses at 0 and 1 (9 of 9 passed
resamples to 9 of 9 every time: a zero-width interval that claims certainty). Proportions therefore get
Wilson's score interval, and a difference of two proportions Newcombe's hybrid score interval built from
two Wilson intervals: both stay inside [0, 1] (resp. [-1, 1]) and keep a width at 0/n and n/n.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ["pass_at_k", "pass_hat_k", "mean", "bootstrap_ci", "wilson_interval", "newcombe_interval", "Z95"]

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


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


def wilson_interval(passed: int, n: int, *, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion ``passed / n`` (95% by default); None for ``n == 0``.

    Unlike the normal approximation or a bootstrap it never leaves [0, 1] and has a width at 0/n and n/n
    (9/9 → 0.70–1.00).
    """
    if n <= 0:
        return None
    if not 0 <= passed <= n:
        raise ValueError(f"passed must be in [0, {n}], got {passed}")
    p = passed / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe_interval(passed_a: int, n_a: int, passed_b: int, n_b: int, *, z: float = Z95) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval (method 10, 1998) of the difference ``passed_b / n_b - passed_a / n_a``.

    Built from each side's Wilson interval, so it behaves at 0 and 1: 0/9 against 9/9 gives about
    (0.59, 1.00) for the difference, never a zero-width interval. None when either side has no trials.
    """
    a = wilson_interval(passed_a, n_a, z=z)
    b = wilson_interval(passed_b, n_b, z=z)
    if a is None or b is None:
        return None
    pa, pb = passed_a / n_a, passed_b / n_b
    delta = pb - pa
    lower = delta - math.sqrt((pb - b[0]) ** 2 + (a[1] - pa) ** 2)
    upper = delta + math.sqrt((b[1] - pb) ** 2 + (pa - a[0]) ** 2)
    return (max(-1.0, lower), min(1.0, upper))
