"""Wilson intervals, percentile intervals and the bootstrap over clusters."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from judgepanel.stats import cluster_bootstrap, percentile_ci, resample_indices, wilson


def test_wilson_equals_statsmodels():
    successes = np.array([0, 1, 7, 50, 99, 100])
    n = np.array([10, 10, 20, 100, 100, 100])
    for confidence in (0.95, 0.9, 0.99):
        low, high = wilson(successes, n, confidence)
        ref_low, ref_high = proportion_confint(successes, n, alpha=1 - confidence, method="wilson")
        np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-14)
        np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-14)
    low, high = wilson(3, 12)
    assert isinstance(low, float) and 0 < low < 3 / 12 < high < 1


def test_wilson_rejects_impossible_counts():
    with pytest.raises(ValueError, match="between 0 and n"):
        wilson(5, 4)
    with pytest.raises(ValueError, match="at least 1"):
        wilson(0, 0)
    with pytest.raises(ValueError, match="confidence"):
        wilson(1, 2, confidence=95)


def test_percentile_ci_is_the_linear_quantile_pair():
    samples = np.random.default_rng(0).normal(size=1001)
    lo, hi = percentile_ci(samples, 0.9)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(samples, [0.05, 0.95])), abs=1e-15)
    assert percentile_ci(np.arange(101.0), 0.9) == pytest.approx((5.0, 95.0))


def _papers(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Correctness of questions grouped in papers of unequal size and difficulty."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, 25)
    skill = rng.uniform(0.2, 0.9, 25)
    clusters = np.repeat([f"paper{j:02d}" for j in range(25)], sizes)
    values = (rng.uniform(size=sizes.sum()) < np.repeat(skill, sizes)).astype(float)
    return values, clusters


def test_cluster_bootstrap_equals_naive_loop():
    values, clusters = _papers(1)
    res = cluster_bootstrap(values, clusters, n_resamples=400, seed=3)
    labels = np.unique(clusters)
    draws = resample_indices(labels.size, 400, 3)
    naive = [np.concatenate([values[clusters == labels[c]] for c in row]).mean() for row in draws]
    lo, hi = np.percentile(naive, [2.5, 97.5])
    assert res.ci_low == pytest.approx(lo, abs=1e-12)
    assert res.ci_high == pytest.approx(hi, abs=1e-12)
    assert res.estimate == pytest.approx(values.mean())
    assert res.n_clusters == 25 and res.n == values.size


def test_cluster_bootstrap_generic_statistic_matches_the_mean_path():
    values, clusters = _papers(2)

    def weighted_mean(v, w):
        return float(np.sum(v * w) / np.sum(w))

    fast = cluster_bootstrap(values, clusters, n_resamples=300, seed=4)
    slow = cluster_bootstrap(values, clusters, weighted_mean, n_resamples=300, seed=4)
    assert (slow.ci_low, slow.ci_high) == pytest.approx((fast.ci_low, fast.ci_high), abs=1e-12)
    same = cluster_bootstrap(values, clusters, np.mean, n_resamples=300, seed=4)
    assert same == fast


def test_cluster_bootstrap_known_answers():
    one = cluster_bootstrap([1.0, 0.0, 1.0, 1.0], ["p"] * 4, n_resamples=200)
    assert one.ci_low == one.ci_high == pytest.approx(0.75)
    two = cluster_bootstrap([1, 1, 1, 0, 0], ["a", "a", "a", "b", "b"], n_resamples=500)
    assert 0.0 <= two.ci_low < two.estimate < two.ci_high <= 1.0
    # Only three resampled values exist: both b (0), one each (0.6), both a (1).
    assert {two.ci_low, two.ci_high} <= {0.0, 0.6, 1.0}
    assert two.n_clusters == 2


def test_cluster_bootstrap_wider_than_treating_questions_as_independent():
    values, clusters = _papers(5)
    res = cluster_bootstrap(values, clusters, n_resamples=2000, seed=0)
    low, high = wilson(values.sum(), values.size)
    assert res.ci_high - res.ci_low > 0.8 * (high - low)
    assert res.ci_low < values.mean() < res.ci_high


def test_cluster_bootstrap_rejects_bad_input():
    with pytest.raises(ValueError, match="values has 3, clusters has 2"):
        cluster_bootstrap([1, 0, 1], ["a", "b"])
    with pytest.raises(ValueError, match="values contains 1 NaN"):
        cluster_bootstrap([1, np.nan], ["a", "b"])
    with pytest.raises(ValueError, match="missing labels"):
        cluster_bootstrap([1.0, 0.0], ["a", None])
