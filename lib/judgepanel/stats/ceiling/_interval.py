"""The ceiling's percentile interval from a bootstrap over images.

Each resample redraws the images and recomputes the ceiling on them from fixed splits'
half-means (the per-rater or vote splits, or the normal half-means the summary method
simulates), as :func:`judgepanel.studies.fusion.headroom.headroom_interval` does for
headroom; the summary method's Pearson ceiling, a closed form, is recomputed directly. The
interval describes the sampling of images, not the Monte Carlo error of the splits.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from judgepanel.stats.bootstrap import draw_counts, percentile_ci, resample_blocks
from judgepanel.stats.ceiling._common import Columns, spearman_brown
from judgepanel.stats.correlation import RankedTarget, TieGroups

# Cells (images x resamples) of draw counts held at once.
CHUNK_CELLS = 2_000_000
# Above this many images x resamples x splits, a resample's Spearman reuses the full
# sample's ranks (see resampled_ceilings).
EXACT_CELLS = 50_000_000


def percentile_interval(samples: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """The interval of the finite resampled ceilings (NaNs if there are none)."""
    samples = samples[np.isfinite(samples)]
    return percentile_ci(samples, confidence) if samples.size else (np.nan, np.nan)


def resampled_ceilings(
    a: NDArray[np.float64], b: NDArray[np.float64], metric: str, n_resamples: int, seed: int
) -> NDArray[np.float64]:
    """sqrt(SB(mean split-half r)) on each resample of the images (columns of a and b).

    Spearman re-ranks each resample exactly while images x resamples x splits stays under
    ``EXACT_CELLS``; above (AVA's 255,000 images), each resample weights the full sample's
    ranks instead, a Pearson of ranks that differs from the re-ranked Spearman by O(1/n).
    """
    n_splits, n = a.shape
    exact = metric == "spearman" and n * n_resamples * n_splits <= EXACT_CELLS
    if metric == "spearman" and not exact:
        a, b = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
    ties = [(TieGroups(a[s]), TieGroups(b[s])) for s in range(n_splits)] if exact else []
    moments = None if exact else np.concatenate([a, b, a * a, b * b, a * b])
    out = []
    for counts in _chunks(n, n_resamples, seed):
        if exact:
            r = sum(RankedTarget(ta, counts).spearman(tb, counts) for ta, tb in ties) / n_splits
        else:
            r = _weighted_pearson(moments, counts).mean(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(r > 0, np.sqrt(spearman_brown(r)), np.nan))
    return np.concatenate(out)


def resampled_summary_pearson(
    summary: pd.DataFrame, cols: Columns, n_resamples: int, seed: int
) -> NDArray[np.float64]:
    """The classical-test-theory Pearson ceiling, sqrt(rel), on each resample of images."""
    means = summary[cols.mean].to_numpy(float)
    error = summary[cols.sd].to_numpy(float) ** 2 / summary[cols.n].to_numpy(float)
    n = means.size
    out = []
    for counts in _chunks(n, n_resamples, seed):
        m = means @ counts / n
        var = (means**2 @ counts - n * m**2) / (n - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = (var - error @ counts / n) / var
            out.append(np.where(rel > 0, np.sqrt(rel), np.nan))
    return np.concatenate(out)


def _chunks(n: int, n_resamples: int, seed: int) -> Iterator[NDArray[np.float64]]:
    """Draw counts of the bootstrap resamples, items x resamples, a bounded chunk at a time
    (counted straight into that layout: one copy of the counts, not two)."""
    for block in resample_blocks(n, n_resamples, seed, max(1, CHUNK_CELLS // n)):
        yield draw_counts(block, n)


def _weighted_pearson(
    moments: NDArray[np.float64], counts: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Pearson r of each split's half-means on each resample: (splits, resamples).

    ``moments`` stacks, split by split, a, b, a^2, b^2 and ab over the images (5 x splits
    rows); ``counts`` are the resamples' draw counts, images x resamples."""
    mean = (moments @ counts / counts.sum(axis=0)).reshape(5, -1, counts.shape[1])
    ma, mb, saa, sbb, sab = mean
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (sab - ma * mb) / np.sqrt((saa - ma**2) * (sbb - mb**2))
    return np.clip(r, -1.0, 1.0)
