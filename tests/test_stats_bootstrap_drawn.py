"""The rank metrics count each tie group's draws from the drawn indices; no number moves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from judgepanel.stats import bootstrap as bs
from judgepanel.stats.ceiling import _interval
from judgepanel.stats.correlation import RankedTarget, TieGroups, count_draws


def _variables(n: int, seed: int) -> dict[str, np.ndarray]:
    """Variables with no ties, a few tie groups, many tie groups, and a constant."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    return {
        "distinct": latent + rng.normal(0, 0.5, n),
        "few": np.clip(np.round(5 + 2 * latent + rng.normal(0, 1, n)), 1, 10),
        "many": np.round(5 + latent + rng.normal(0, 0.3, n), 2),
        "constant": np.full(n, 3.0),
    }


def _obvious_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """Draw counts items x resamples, one bincount per resample."""
    return np.column_stack([np.bincount(row, minlength=n) for row in idx]).astype(float)


@pytest.mark.parametrize(("n", "rows"), [(1, 1), (5, 3), (64, 9), (300, 17)])
def test_count_draws_is_one_bincount_per_resample(n, rows):
    idx = np.random.default_rng(n).integers(0, n, size=(rows, n))
    counts = count_draws(idx, n)
    assert counts.flags.c_contiguous and counts.dtype == np.float64
    np.testing.assert_array_equal(counts, _obvious_counts(idx, n))
    np.testing.assert_array_equal(bs.multiplicities(idx, n), _obvious_counts(idx, n).T)


@pytest.mark.parametrize("name", ["distinct", "few", "many", "constant"])
def test_groups_counted_from_draws_equal_the_sort_order_pass(name):
    values = _variables(400, 1)[name]
    idx = np.random.default_rng(2).integers(0, 400, size=(11, 400))
    counts = count_draws(idx, 400)
    ties = TieGroups(values)
    for got, want in zip(ties.below_within(counts, idx), ties.below_within(counts), strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(ties.centred_ranks(counts, idx), ties.centred_ranks(counts), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("y_name", "x_name"), [("many", "few"), ("few", "distinct")])
def test_spearman_from_draws_matches_scipy_on_materialised_resamples(y_name, x_name):
    v = _variables(120, 3)
    y, x = v[y_name], v[x_name]
    idx = np.random.default_rng(4).integers(0, 120, size=(25, 120))
    counts = count_draws(idx, 120)
    ty, tx = TieGroups(y), TieGroups(x)
    fast = RankedTarget(ty, counts, idx).spearman(tx, counts, idx)
    np.testing.assert_array_equal(fast, RankedTarget(ty, counts).spearman(tx, counts))
    scipy_rho = [stats.spearmanr(y[row], x[row]).statistic for row in idx]
    np.testing.assert_allclose(fast, scipy_rho, rtol=0, atol=1e-12)


def test_bootstraps_equal_the_counts_only_path_bit_for_bit():
    """Arms from draws (indices known) against the same resamples given as weights."""
    v = _variables(150, 5)
    y, arms = v["many"], np.vstack([v["few"], v["distinct"]])
    idx = bs.resample_indices(150, 60, seed=7)
    by_draws = bs._resampled_arms(y, arms, "spearman", draws=(60, 7))
    by_weights = bs._resampled_arms(y, arms, "spearman", weights=bs.multiplicities(idx, 150))
    np.testing.assert_array_equal(by_draws, by_weights)
    covar = v["distinct"][:, None]
    partial_draws = bs._resampled_partials(y, arms[:1], covar, draws=(60, 7))
    partial_weights = bs._resampled_partials(
        y, arms[:1], covar, weights=bs.multiplicities(idx, 150)
    )
    np.testing.assert_array_equal(partial_draws, partial_weights)


def test_exact_ceiling_resamples_match_scipy():
    """The ceiling interval's exact path re-ranks each resample as scipy would."""
    rng = np.random.default_rng(8)
    latent = rng.normal(size=80)
    a = np.round(latent[None, :] + rng.normal(0, 0.5, (3, 80)), 1)
    b = np.round(latent[None, :] + rng.normal(0, 0.5, (3, 80)), 1)
    got = _interval.resampled_ceilings(a, b, "spearman", 40, 9)
    idx = bs.resample_indices(80, 40, 9)
    rho = [[stats.spearmanr(a[s, row], b[s, row]).statistic for s in range(3)] for row in idx]
    r = np.mean(rho, axis=1)
    want = np.where(r > 0, np.sqrt(2 * r / (1 + r)), np.nan)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_chunks_scored_on_threads_equal_the_sequential_loop(monkeypatch):
    """Several chunks (small chunk size), scored on one thread and on three."""
    monkeypatch.setattr(bs, "_CHUNK_CELLS", 600)
    v = _variables(200, 6)
    y, arms = v["many"], np.vstack([v["few"], v["distinct"]])
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert bs.chunk_workers() == 1
    one = bs._resampled_arms(y, arms, "spearman", draws=(70, 3))
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert bs.chunk_workers() == 3
    three = bs._resampled_arms(y, arms, "spearman", draws=(70, 3))
    np.testing.assert_array_equal(one, three)
    rows = [stats.spearmanr(y[r], arms[1][r]).statistic for r in bs.resample_indices(200, 70, 3)]
    np.testing.assert_allclose(three[:, 1], rows, rtol=0, atol=1e-12)


def test_in_order_keeps_the_order_and_holds_few_items():
    taken: list[int] = []

    def items():
        for i in range(50):
            taken.append(i)
            yield i

    seen = []
    for i, value in enumerate(bs.in_order(lambda k: np.array([k * k]), items(), 2)):
        seen.append(int(value[0]))
        assert len(taken) - i <= 3  # the workers' items and one waiting, no more
    assert seen == [k * k for k in range(50)]
