"""The ceiling interval counts its resamples' draws straight into items x resamples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from judgepanel.stats import bootstrap as bs
from judgepanel.stats.ceiling import _interval


def _obvious_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """Draw counts items x resamples, one bincount per resample."""
    return np.column_stack([np.bincount(row, minlength=n) for row in idx]).astype(float)


@pytest.mark.parametrize(("n", "rows"), [(1, 1), (5, 3), (64, 9), (300, 17)])
def test_draw_counts_is_one_bincount_per_resample(n, rows):
    idx = np.random.default_rng(n).integers(0, n, size=(rows, n))
    counts = bs.draw_counts(idx, n)
    assert counts.flags.c_contiguous and counts.dtype == np.float64
    np.testing.assert_array_equal(counts, _obvious_counts(idx, n))
    np.testing.assert_array_equal(bs.multiplicities(idx, n), _obvious_counts(idx, n).T)


def test_interval_chunks_are_the_resamples_counts(monkeypatch):
    """Several chunks, stacked: the counts of ``resample_indices``, laid out items x B."""
    monkeypatch.setattr(_interval, "CHUNK_CELLS", 700)
    chunks = list(_interval._chunks(100, 45, 3))
    assert len(chunks) > 1 and all(c.flags.c_contiguous for c in chunks)
    want = _obvious_counts(bs.resample_indices(100, 45, 3), 100)
    np.testing.assert_array_equal(np.hstack(chunks), want)


def _halves(n: int, splits: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    a = np.round(latent[None, :] + rng.normal(0, 0.5, (splits, n)), 1)
    b = np.round(latent[None, :] + rng.normal(0, 0.5, (splits, n)), 1)
    return a, b


def _sqrt_sb(r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(r > 0, np.sqrt(2 * r / (1 + r)), np.nan)


def test_exact_ceiling_resamples_match_scipy():
    """The exact path re-ranks each resample as scipy would."""
    a, b = _halves(80, 3, 8)
    got = _interval.resampled_ceilings(a, b, "spearman", 40, 9)
    idx = bs.resample_indices(80, 40, 9)
    rho = [[stats.spearmanr(a[s, row], b[s, row]).statistic for s in range(3)] for row in idx]
    np.testing.assert_allclose(got, _sqrt_sb(np.mean(rho, axis=1)), rtol=0, atol=1e-12)


def test_large_ceiling_resamples_are_weighted_pearsons_of_full_ranks(monkeypatch):
    """Above EXACT_CELLS a resample weights the full sample's ranks: the Pearson r of the
    materialised resample of those ranks."""
    monkeypatch.setattr(_interval, "EXACT_CELLS", 0)
    a, b = _halves(60, 2, 10)
    got = _interval.resampled_ceilings(a, b, "spearman", 30, 11)
    ra, rb = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
    idx = bs.resample_indices(60, 30, 11)
    r = [[stats.pearsonr(ra[s, row], rb[s, row]).statistic for s in range(2)] for row in idx]
    np.testing.assert_allclose(got, _sqrt_sb(np.mean(r, axis=1)), rtol=0, atol=1e-12)
