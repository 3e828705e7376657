"""pass@k, pass^k and the bootstrap interval against values computed by hand."""

from __future__ import annotations

import pytest

from clients.metrics import bootstrap_ci, mean, pass_at_k, pass_hat_k


def test_pass_at_k_hand_computed() -> None:
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # n=4, c=1, k=1: 1 - C(3,1)/C(4,1) = 1/4 (pass@1 is the pass rate)
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    # n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    # fewer failures than k: some drawn trial must pass
    assert pass_at_k(5, 4, 2) == 1.0
    assert pass_at_k(3, 0, 3) == 0.0


def test_pass_hat_k_hand_computed() -> None:
    # n=5, c=3, k=2: C(3,2)/C(5,2) = 3/10
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)
    # n=4, c=4, k=3: every trial passed
    assert pass_hat_k(4, 4, 3) == 1.0
    # n=4, c=2, k=3: cannot draw 3 passes out of 2
    assert pass_hat_k(4, 2, 3) == 0.0
    # k=1 is the pass rate
    assert pass_hat_k(8, 6, 1) == pytest.approx(0.75)


@pytest.mark.parametrize(("n", "c", "k"), [(2, 1, 3), (3, 4, 1), (3, -1, 1), (3, 1, 0)])
def test_estimators_refuse_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_bootstrap_matches_the_exact_resampling_distribution() -> None:
    # Mean of 4 draws from [0,0,0,1] is Binomial(4, 1/4)/4: P(<=0.5) = 0.949 < 0.975 <= P(<=0.75) = 0.996,
    # and P(0) = 0.316 > 0.025, so the 95% percentile interval is exactly (0, 0.75).
    assert bootstrap_ci([0.0, 0.0, 0.0, 1.0]) == (0.0, 0.75)
    # Two values: resampled means 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4 -> (0, 1).
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_bootstrap_is_deterministic_and_degenerate_cases_are_exact() -> None:
    values = [0.1, 0.4, 0.9, 0.3, 1.0, 0.0, 0.55]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(list(values), seed=3)
    lo, hi = bootstrap_ci(values)  # type: ignore[misc]
    assert lo < sum(values) / len(values) < hi
    assert bootstrap_ci([0.5]) == (0.5, 0.5)
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert bootstrap_ci([]) is None
    with pytest.raises(ValueError):
        bootstrap_ci(values, confidence=1.5)


def test_mean() -> None:
    assert mean([1.0, 2.0, 4.5]) == pytest.approx(2.5)
    assert mean([]) is None
