"""Rank correlations: scipy's semantics, the weighted resample path, partial correlations."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from judgepanel.stats import (
    kendall_b,
    multiplicities,
    partial_spearman,
    resample_indices,
    residual_rank_variance,
    spearman,
    weighted_kendall_b,
    weighted_spearman,
)
from judgepanel.stats.correlation import PairSigns, TieGroups


def _tied_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer scores with many ties, x related to y."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 7, n).astype(float)
    x = np.round(0.6 * y + rng.normal(0, 1.5, n))
    return y, x


def _scipy_rho(y: np.ndarray, x: np.ndarray) -> float:
    return float(stats.spearmanr(y, x).statistic)


def _scipy_tau(y: np.ndarray, x: np.ndarray) -> float:
    return float(stats.kendalltau(y, x).statistic)


def test_point_metrics_equal_scipy_with_ties():
    y, x = _tied_sample(80, 1)
    assert len(np.unique(y)) < 10
    assert spearman(y, x) == pytest.approx(_scipy_rho(y, x), abs=1e-15)
    assert kendall_b(y, x) == pytest.approx(_scipy_tau(y, x), abs=1e-15)


@pytest.mark.parametrize("metric", [spearman, kendall_b])
def test_nan_input_is_rejected_by_name(metric):
    y, x = _tied_sample(10, 2)
    x[3] = np.nan
    with pytest.raises(ValueError, match=r"x contains 1 NaN.*position\(s\) 3"):
        metric(y, x)


@pytest.mark.parametrize("metric", [spearman, kendall_b])
def test_length_mismatch_names_both_lengths(metric):
    with pytest.raises(ValueError, match="y has 4, x has 3"):
        metric([1, 2, 3, 4], [1, 2, 3])


@pytest.mark.parametrize(
    ("weighted", "reference"),
    [(weighted_spearman, _scipy_rho), (weighted_kendall_b, _scipy_tau)],
)
@pytest.mark.parametrize("seed", [3, 4])
def test_weighted_metrics_equal_scipy_on_materialised_resamples(weighted, reference, seed):
    """Duplicated images create extra ties; the weighted path must handle them as scipy."""
    y, x = _tied_sample(60, seed)
    idx = resample_indices(60, 150, seed)
    fast = weighted(y, x, multiplicities(idx, 60))
    slow = np.array([reference(y[i], x[i]) for i in idx])
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    ("weighted", "reference"),
    [(weighted_spearman, _scipy_rho), (weighted_kendall_b, _scipy_tau)],
)
def test_weighted_metrics_without_ties_and_with_many_groups(weighted, reference):
    """The other code paths: no ties at all, several hundred tie groups, and a large joint
    (y, x) sign matrix."""
    rng = np.random.default_rng(5)
    y = rng.normal(size=400)
    x = np.round(y * 150 + rng.normal(0, 100, 400))
    assert TieGroups(x).n_groups > 256 and TieGroups(y).n_groups == 400
    assert PairSigns(y, x).signs.shape[0] > 128
    idx = resample_indices(400, 40, 9)
    fast = weighted(y, x, multiplicities(idx, 400))
    slow = np.array([reference(y[i], x[i]) for i in idx])
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-9)


def test_weighted_metrics_with_unequal_draw_counts():
    """Rows need not sum to n: any draw counts are a materialised multiset."""
    y, x = _tied_sample(30, 6)
    rng = np.random.default_rng(6)
    w = rng.integers(0, 4, size=(20, 30)).astype(float)
    rhos, taus = weighted_spearman(y, x, w), weighted_kendall_b(y, x, w)
    for row, rho, tau in zip(w, rhos, taus, strict=True):
        idx = np.repeat(np.arange(30), row.astype(int))
        assert rho == pytest.approx(_scipy_rho(y[idx], x[idx]), abs=1e-9)
        assert tau == pytest.approx(_scipy_tau(y[idx], x[idx]), abs=1e-9)


def test_constant_resample_is_nan_like_scipy():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    x = np.array([5.0, 5.0, 6.0, 7.0])
    w = np.array([[2.0, 2.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])  # row 0: x constant
    rho = weighted_spearman(y, x, w)
    tau = weighted_kendall_b(y, x, w)
    assert np.isnan(rho[0]) and np.isnan(tau[0])
    assert rho[1] == pytest.approx(_scipy_rho(y, x), abs=1e-12)
    assert tau[1] == pytest.approx(_scipy_tau(y, x), abs=1e-12)


def test_weights_must_be_whole_counts():
    y, x = _tied_sample(5, 7)
    with pytest.raises(ValueError, match="whole numbers"):
        weighted_spearman(y, x, np.full((1, 5), 0.5))
    with pytest.raises(ValueError, match=r"shape \(n_resamples, 5\)"):
        weighted_kendall_b(y, x, np.ones((2, 4)))


def _ols_residuals(target: np.ndarray, design: np.ndarray) -> np.ndarray:
    return sm.OLS(target, sm.add_constant(design)).fit().resid


def _partial_sample(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    overall = rng.normal(size=n)
    other = rng.normal(size=n)
    attribute = np.round(2 * (overall + 0.5 * rng.normal(size=n)))
    prompt = np.round(overall + 0.6 * attribute + rng.normal(size=n) + 0.3 * other)
    return prompt, attribute, overall, other


def test_partial_spearman_equals_ols_on_ranks():
    x, y, c1, c2 = _partial_sample(200, 10)
    for covar in (c1, np.column_stack([c1, c2])):
        rc = stats.rankdata(np.asarray(covar).reshape(200, -1), axis=0)
        ex = _ols_residuals(stats.rankdata(x), rc)
        ey = _ols_residuals(stats.rankdata(y), rc)
        expected = float(np.corrcoef(ex, ey)[0, 1])
        assert partial_spearman(x, y, covar) == pytest.approx(expected, abs=1e-12)


def test_partial_spearman_equals_first_order_formula():
    x, y, z, _ = _partial_sample(150, 11)
    rxy, rxz, ryz = spearman(x, y), spearman(x, z), spearman(y, z)
    expected = (rxy - rxz * ryz) / np.sqrt((1 - rxz**2) * (1 - ryz**2))
    got = partial_spearman(x, y, z)
    assert got == pytest.approx(expected, abs=1e-12)
    assert abs(got) < abs(rxy)  # the covariate explains part of the raw association


def test_partial_spearman_rejects_bad_covariates():
    x, y, z, _ = _partial_sample(20, 12)
    with pytest.raises(ValueError, match="covar must have 20 rows"):
        partial_spearman(x, y, z[:19])
    z = z.copy()
    z[4] = np.nan
    with pytest.raises(ValueError, match="covar column 0 contains 1 NaN"):
        partial_spearman(x, y, z)


@pytest.mark.parametrize("seed", range(4))
def test_partial_spearman_rejects_a_covariate_that_explains_x(seed):
    """Least squares leaves residuals of about 1e-15, not 0, when a covariate explains x
    exactly; their correlation with y would be an arbitrary number, so it is refused."""
    rng = np.random.default_rng(seed)
    x, y, other = rng.normal(size=(3, 40))
    explains_x = [x, np.exp(x), np.column_stack([other, x]), np.column_stack([x, -x])]
    for covar in explains_x:
        with pytest.raises(ValueError, match="fully explained by covar"):
            partial_spearman(x, y, covar)
        with pytest.raises(ValueError, match="fully explained by covar"):
            partial_spearman(y, x, covar)
    # A duplicated covariate is collinear but explains nothing more: the value is kept.
    both = np.column_stack([other, other])
    assert partial_spearman(x, y, both) == pytest.approx(partial_spearman(x, y, other), abs=1e-12)


def test_residual_rank_variance():
    x, _, z, other = _partial_sample(300, 13)
    assert residual_rank_variance(x, z) == pytest.approx(1 - spearman(x, z) ** 2, abs=1e-12)
    both = np.column_stack([z, other])
    rc = stats.rankdata(both, axis=0)
    fit = sm.OLS(stats.rankdata(x), sm.add_constant(rc)).fit()
    assert residual_rank_variance(x, both) == pytest.approx(1 - fit.rsquared, abs=1e-12)
    assert residual_rank_variance(x, x) == pytest.approx(0.0, abs=1e-12)


def test_spearman_of_a_constant_side_is_nan_without_a_warning():
    import warnings

    from judgepanel.stats.correlation import spearman

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(spearman([1.0, 2.0, 3.0], [4.0, 4.0, 4.0]))
        assert np.isnan(spearman([2.0, 2.0, 2.0], [1.0, 5.0, 3.0]))
    assert spearman([1.0, 2.0, 3.0], [1.0, 3.0, 2.0]) == 0.5
