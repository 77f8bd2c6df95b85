"""The noise ceiling a dataset supports, chosen from what it carries, with its interval.

Releases differ in what they keep of their raters (see :mod:`ceiling_methods`). A loaded
dataset (`judgepanel.datasets.Dataset`, or anything with the same three tables) says it by
its tables, and :func:`data_ceiling` takes the best its data allows, in this order:

1. per-rater ratings with rater ids (``ratings``): the per-rater split-half;
2. an anonymous vote histogram (``votes``): the exchangeable-vote split-half;
3. each image's mean, SD and n (``summary``): classical test theory;
4. a mean alone: no ceiling, and the reason why.

The interval is a percentile bootstrap over images. Each resample redraws the images and
recomputes the ceiling on them from fixed splits' half-means (the per-rater or vote splits,
or the normal half-means the summary method simulates), as
:func:`judgepanel.studies.fusion.headroom.headroom_interval` does for headroom; the
summary method's Pearson ceiling, a closed form, is recomputed directly. The interval
describes the sampling of images, not the Monte Carlo error of the splits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from judgepanel.stats import ceiling_methods as cm
from judgepanel.stats.bootstrap import multiplicities, percentile_ci, resample_blocks
from judgepanel.stats.ceiling import NoiseCeiling, noise_ceiling, spearman_brown, split_half_means
from judgepanel.stats.correlation import RankedTarget, TieGroups

# Cells (images x resamples) of draw counts held at once.
_CHUNK_CELLS = 2_000_000
# Above this many images x resamples x splits, a resample's Spearman reuses the full
# sample's ranks (see _resampled_ceilings).
_EXACT_CELLS = 50_000_000


class CeilingSource(Protocol):
    """What :func:`data_ceiling` reads of a dataset (see `judgepanel.datasets.Dataset`)."""

    @property
    def ratings(self) -> pd.DataFrame: ...

    @property
    def votes(self) -> pd.DataFrame | None: ...

    @property
    def summary(self) -> pd.DataFrame | None: ...


@dataclass(frozen=True)
class CeilingEstimate:
    """A dataset's noise ceiling for one attribute, how it was found, and its interval.

    Attributes:
        attribute: the attribute's column (``score``: the overall rating).
        ceiling: the ceiling (NaN with method ``none``, or where the data has no signal).
        method: ``per_rater_split_half``, ``vote_split_half``, ``summary_ctt`` or ``none``.
        interval: the percentile interval over images (NaNs where there is no ceiling).
        confidence: the interval's level.
        n_images: images the ceiling describes.
        detail: the chosen method's full result.
        reason: why there is no ceiling (method ``none``, or halves that do not correlate
            positively), else "".
    """

    attribute: str
    ceiling: float
    method: str
    interval: tuple[float, float]
    confidence: float
    n_images: int
    detail: NoiseCeiling | cm.NoCeiling
    reason: str = ""


def data_ceiling(
    data: CeilingSource,
    attribute: str = "score",
    *,
    metric: str = "spearman",
    n_splits: int = 200,
    n_resamples: int = 500,
    interval_splits: int = 10,
    confidence: float = 0.95,
    seed: int = 0,
) -> CeilingEstimate:
    """The noise ceiling of ``attribute`` by the best method ``data`` supports.

    Args:
        data: a loaded dataset.
        attribute: a column of its tables (``score``, ``quality``...).
        metric: ``spearman`` or ``pearson``.
        n_splits: splits of the point estimate.
        n_resamples: bootstrap resamples of images for the interval.
        interval_splits: fixed splits whose half-means every resample reuses.
        confidence: the interval's level.
        seed: seed of the splits and the resamples.

    Raises:
        ValueError: on the chosen method's errors (too few images, a bad value).
    """
    ratings, votes, summary = _rows(data, attribute)
    args = {"n_splits": n_splits, "seed": seed, "metric": metric}
    if ratings is not None:
        detail = noise_ceiling(ratings, **args)
        items = ratings.groupby("image_id")["rater_id"].size()
        items = items[items >= 2].index
        a, b = split_half_means(ratings, items, interval_splits, seed)
    elif votes is not None:
        detail = cm.vote_ceiling(votes, value="value", **args)
        counts, levels = cm._usable_votes(*cm._vote_matrix(votes, "image_id", "value", "count"))
        a, b = _stacked(cm._vote_halves(counts, levels, interval_splits, seed))
    elif summary is not None and summary[["sd", "n"]].notna().all(axis=None):
        detail = cm.summary_ceiling(summary, **args)
        a = b = None
        if metric == "spearman" and detail.reliability > 0:
            variance = summary["sd"].to_numpy(float) ** 2
            n = summary["n"].to_numpy(float)
            halves = cm._normal_halves(
                summary["mean"].to_numpy(float),
                cm._smoothed_variances(variance, n),
                n.astype(np.int64),
                detail.reliability,
                interval_splits,
                seed,
            )
            a, b = _stacked(halves)
    else:
        reason = _no_summary_reason(summary, attribute)
        n_images = 0 if summary is None else int(summary["image_id"].nunique())
        none = cm.NoCeiling(reason=reason, n_images=n_images)
        nan = float("nan")
        return CeilingEstimate(
            attribute=attribute,
            ceiling=nan,
            method=none.method,
            interval=(nan, nan),
            confidence=confidence,
            n_images=n_images,
            detail=none,
            reason=reason,
        )
    if a is None:
        samples = _summary_pearson(summary, n_resamples, seed)
    else:
        samples = _resampled_ceilings(a, b, metric, n_resamples, seed)
    samples = samples[np.isfinite(samples)]
    interval = percentile_ci(samples, confidence) if samples.size else (np.nan, np.nan)
    reason = ""
    if not np.isfinite(detail.ceiling):
        reason = (
            f"the split halves do not correlate positively (mean r {detail.split_half_r:.3f}): "
            "the ratings share no signal to bound"
        )
    return CeilingEstimate(
        attribute=attribute,
        ceiling=detail.ceiling,
        method=detail.method,
        interval=interval,
        confidence=confidence,
        n_images=detail.n_images,
        detail=detail,
        reason=reason,
    )


def _no_summary_reason(summary: pd.DataFrame | None, attribute: str) -> str:
    """Why a summary (or its absence) supports no ceiling, in plain words."""
    if summary is None:
        return f"no rating of {attribute!r}"
    has_sd, has_n = (bool(summary[c].notna().any()) for c in ("sd", "n"))
    if has_sd and not has_n:
        return (
            "each image's SD is released but not how many ratings it has (n): classical "
            "test theory needs both, so no ceiling can be computed"
        )
    if has_n and not has_sd:
        return (
            "each image's number of ratings (n) is released but not their SD: classical "
            "test theory needs both, so no ceiling can be computed"
        )
    if has_sd and has_n:
        return "the SD or n is missing for some images: classical test theory needs both for all"
    return cm.MEAN_ONLY_REASON


def _rows(
    data: CeilingSource, attribute: str
) -> tuple[pd.DataFrame | None, pd.DataFrame | None, pd.DataFrame | None]:
    """The attribute's per-rater ratings (as ``score``), votes and summaries, if any."""
    ratings = data.ratings
    per_rater = None
    if attribute in ratings.columns and "rater_id" in ratings.columns:
        rows = ratings.dropna(subset=[attribute])
        if len(rows):
            per_rater = rows[["image_id", "rater_id", attribute]].rename(
                columns={attribute: "score"}
            )
    tables = []
    for table in (data.votes, data.summary):
        rows = None if table is None else table[table["attribute"] == attribute]
        tables.append(rows.reset_index(drop=True) if rows is not None and len(rows) else None)
    return per_rater, tables[0], tables[1]


def _stacked(
    halves: Iterable[tuple[NDArray[np.float64], NDArray[np.float64]]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    pairs = list(halves)
    return np.vstack([a for a, _ in pairs]), np.vstack([b for _, b in pairs])


def _chunks(n: int, n_resamples: int, seed: int) -> Iterator[NDArray[np.float64]]:
    """Draw counts of the bootstrap resamples, items x resamples, a bounded chunk at a time."""
    for block in resample_blocks(n, n_resamples, seed, max(1, _CHUNK_CELLS // n)):
        yield np.ascontiguousarray(multiplicities(block, n).T)


def _resampled_ceilings(
    a: NDArray[np.float64], b: NDArray[np.float64], metric: str, n_resamples: int, seed: int
) -> NDArray[np.float64]:
    """sqrt(SB(mean split-half r)) on each resample of the images (columns of a and b).

    Spearman re-ranks each resample exactly while images x resamples x splits stays under
    ``_EXACT_CELLS``; above (AVA's 255,000 images), each resample weights the full sample's
    ranks instead, a Pearson of ranks that differs from the re-ranked Spearman by O(1/n).
    """
    n_splits, n = a.shape
    exact = metric == "spearman" and n * n_resamples * n_splits <= _EXACT_CELLS
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


def _summary_pearson(summary: pd.DataFrame, n_resamples: int, seed: int) -> NDArray[np.float64]:
    """The classical-test-theory Pearson ceiling, sqrt(rel), on each resample of images."""
    means = summary["mean"].to_numpy(float)
    error = summary["sd"].to_numpy(float) ** 2 / summary["n"].to_numpy(float)
    n = means.size
    out = []
    for counts in _chunks(n, n_resamples, seed):
        m = means @ counts / n
        var = (means**2 @ counts - n * m**2) / (n - 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = (var - error @ counts / n) / var
            out.append(np.where(rel > 0, np.sqrt(rel), np.nan))
    return np.concatenate(out)
