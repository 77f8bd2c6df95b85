"""How many independent judges a panel is worth: the effective number from error correlation.

Averaging n judges helps only as far as their errors are independent. With e_j = judge_j -
human mean (judge_j on the people's scale, after the scale map) on the images every judge
scored, and r_bar the mean pairwise Pearson correlation of the errors across images, the
variance of the panel's mean error is that of n_eff independent judges of the same error
variance:

    n_eff = n / (1 + (n - 1) r_bar)

(the design effect of an exchangeable correlation; n_eff = n for independent errors, 1 for
identical ones). Beside it, the participation ratio of the error correlation matrix R,

    PR = (sum_k lambda_k)^2 / sum_k lambda_k^2 = n^2 / sum_jk R_jk^2,

counts the effective dimensions of the errors without assuming every pair correlates
alike (n for independent errors, 1 when all are one error). Both have percentile bootstrap
intervals over images (row b of ``resample_indices(n_images, B, seed)``): a resample's
correlation matrix comes from its weighted first and second moments, one matrix product for
a block of resamples. The scale map is fitted once, not per resample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from judgepanel.stats.bootstrap import (
    check_confidence,
    multiplicities,
    percentile_ci,
    resample_blocks,
)
from judgepanel.stats.correlation import as_counts
from judgepanel.stats.ratings import (
    ITEM,
    RATER,
    SCORE,
    check_columns,
    human_means,
    judge_scores,
    select_dimension,
)
from judgepanel.stats.scale_map import IDENTITY, ScaleMap, map_scores


def panel_measures(corr: NDArray[np.float64]) -> tuple[float, float, float]:
    """(r_bar, n_eff, participation ratio) of one n x n correlation matrix."""
    n = corr.shape[0]
    r_bar = (corr.sum() - np.trace(corr)) / (n * (n - 1))
    return float(r_bar), float(n / (1.0 + (n - 1) * r_bar)), float(n * n / (corr**2).sum())


def resampled_panel(
    errors: ArrayLike,
    *,
    indices: ArrayLike | None = None,
    weights: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """r_bar, n_eff and the participation ratio on each resample of the images.

    Args:
        errors: (judges, images) errors, no missing values.
        indices: (n_resamples, size) drawn image positions; or
        weights: (n_resamples, images) draw counts.

    Returns:
        (n_resamples, 3): columns r_bar, n_eff, participation ratio, equal to the direct
        computation on ``errors[:, idx]``; NaN where a resample leaves a judge's error
        constant.
    """
    e = _as_errors(errors)
    n = e.shape[1]
    if (indices is None) == (weights is None):
        raise ValueError("give exactly one of indices= or weights=")
    counts = multiplicities(indices, n) if indices is not None else as_counts(weights, n).T
    return _panel_rows(e, counts)


def _as_errors(errors: ArrayLike) -> NDArray[np.float64]:
    e = np.asarray(errors, dtype=np.float64)
    if e.ndim != 2 or e.shape[0] < 2 or e.shape[1] < 3:
        raise ValueError(f"errors must be (judges >= 2, images >= 3), got shape {e.shape}")
    if not np.isfinite(e).all():
        raise ValueError("errors contain NaN or infinite values; use complete cases")
    return e


def _panel_rows(e: NDArray[np.float64], counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """(resamples, 3) panel measures from draw counts laid out resamples x images."""
    j = e.shape[0]
    centred = e - e.mean(axis=1, keepdims=True)  # moments about the mean: less cancellation
    outer = (centred[:, None, :] * centred[None, :, :]).reshape(j * j, -1)
    total = counts.sum(axis=1, keepdims=True)
    mean = counts @ centred.T / total
    cov = counts @ outer.T / total - (mean[:, :, None] * mean[:, None, :]).reshape(-1, j * j)
    cov = cov.reshape(-1, j, j)
    sd = np.sqrt(np.einsum("bjj->bj", cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov / (sd[:, :, None] * sd[:, None, :])
        corr[:, np.arange(j), np.arange(j)] = 1.0
        r_bar = (corr.sum(axis=(1, 2)) - j) / (j * (j - 1))
        out = np.column_stack(
            [r_bar, j / (1.0 + (j - 1) * r_bar), j * j / (corr**2).sum(axis=(1, 2))]
        )
    out[~np.isfinite(out).all(axis=1) | (sd <= 0).any(axis=1)] = np.nan
    return out


@dataclass(frozen=True)
class PanelSize:
    """The effective number of independent judges in a panel, with bootstrap intervals.

    Attributes:
        n_judges: judges in the panel (n).
        n_items: images every judge and at least one person scored.
        mean_error_correlation: r_bar, the mean pairwise Pearson correlation of errors.
        n_eff: n / (1 + (n - 1) r_bar).
        ci_low, ci_high: percentile interval of n_eff over resampled images.
        participation_ratio: (sum lambda)^2 / sum lambda^2 of the error correlations.
        pr_ci_low, pr_ci_high: its percentile interval.
        mapping: the scale mapping the judges' scores went through.
        n_resamples: resamples kept (errors not constant).
        confidence: the intervals' level.
        seed: resampling seed.
        judges: the judges, in the order of ``error_correlation``.
        error_correlation: the n x n correlation matrix of the errors.
    """

    n_judges: int
    n_items: int
    mean_error_correlation: float
    n_eff: float
    ci_low: float
    ci_high: float
    participation_ratio: float
    pr_ci_low: float
    pr_ci_high: float
    mapping: str
    n_resamples: int
    confidence: float
    seed: int
    judges: tuple[Any, ...]
    error_correlation: pd.DataFrame = field(repr=False, compare=False)

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, without the judges and the matrix."""
        skip = ("judges", "error_correlation")
        return {**labels, **{k: v for k, v in self.__dict__.items() if k not in skip}}


def panel_size_from_errors(
    errors: ArrayLike,
    *,
    judges: tuple[Any, ...] | None = None,
    mapping: str = IDENTITY,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PanelSize:
    """:class:`PanelSize` of a (judges, images) matrix of errors on the people's scale.

    Args:
        errors: judge minus human mean, one row per judge, complete cases.
        judges: their names (default 0..n-1).
        mapping: the name of the scale map the errors were computed after.
        n_resamples, seed, confidence: the bootstrap over images.
    """
    check_confidence(confidence)
    e = _as_errors(errors)
    j, n = e.shape
    names = tuple(range(j)) if judges is None else tuple(judges)
    if len(names) != j:
        raise ValueError(f"{len(names)} judge names for {j} rows of errors")
    corr = np.corrcoef(e)
    if not np.isfinite(corr).all():
        raise ValueError("a judge's error is constant: its correlation is undefined")
    r_bar, n_eff, pr = panel_measures(corr)
    rows = max(1, 2_000_000 // (n + j * j))
    blocks = resample_blocks(n, n_resamples, seed, rows)
    samples = np.concatenate([_panel_rows(e, multiplicities(block, n)) for block in blocks])
    kept = samples[np.isfinite(samples).all(axis=1)]
    ci = percentile_ci(kept[:, 1], confidence) if kept.size else (np.nan, np.nan)
    pr_ci = percentile_ci(kept[:, 2], confidence) if kept.size else (np.nan, np.nan)
    return PanelSize(
        n_judges=j,
        n_items=n,
        mean_error_correlation=r_bar,
        n_eff=n_eff,
        ci_low=ci[0],
        ci_high=ci[1],
        participation_ratio=pr,
        pr_ci_low=pr_ci[0],
        pr_ci_high=pr_ci[1],
        mapping=mapping,
        n_resamples=int(kept.shape[0]),
        confidence=float(confidence),
        seed=int(seed),
        judges=names,
        error_correlation=pd.DataFrame(corr, index=list(names), columns=list(names)),
    )


def judge_errors(
    judges: pd.DataFrame,
    humans: pd.DataFrame,
    *,
    mapping: ScaleMap = None,
    dimension: str | None = None,
) -> tuple[pd.DataFrame, str]:
    """Each judge's error, mapped score minus human mean, on images all judges scored.

    Args:
        judges: a tidy frame of judge scores, ``rater`` naming the judge.
        humans: people's ratings, a tidy frame.
        mapping: the scale map, applied (an isotonic map fitted) per judge.
        dimension: which dimension of frames with a ``dimension`` column.

    Returns:
        (errors, mapping name): a judges x images frame (sorted both ways), and the name.
    """
    check_columns(judges, (ITEM, RATER, SCORE), "judges")
    own = select_dimension(judges, dimension)
    means = human_means(humans, dimension=dimension)["human_mean"]
    names = sorted(own[RATER].unique().tolist())
    if len(names) < 2:
        raise ValueError(f"a panel needs at least 2 judges, got {names}")
    scores = {name: judge_scores(own[own[RATER] == name]) for name in names}
    images = means.index
    for series in scores.values():
        images = images.intersection(series.index)
    images = images.sort_values()
    if images.size < 3:
        raise ValueError(f"only {images.size} images were scored by every judge and people")
    y = means.loc[images].to_numpy()
    rows, label = {}, IDENTITY
    for name in names:
        mapped = map_scores(scores[name].loc[images].to_numpy(), mapping, y)
        rows[name], label = mapped.values - y, mapped.mapping
    return pd.DataFrame(rows, index=images).T, label


def panel_size(
    judges: pd.DataFrame,
    humans: pd.DataFrame,
    *,
    mapping: ScaleMap = None,
    dimension: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PanelSize:
    """The effective number of independent judges of a panel, against the human mean.

    n_eff = n / (1 + (n - 1) r_bar), r_bar the mean pairwise Pearson correlation of the
    errors e_j = mapped judge_j - human mean over the images every judge scored; with the
    participation ratio (sum lambda)^2 / sum lambda^2 of the error correlation matrix and
    percentile bootstrap intervals over images for both (see the module docstring).

    Args:
        judges: a tidy frame of judge scores (``image_id``, ``rater`` = judge, ``score``).
        humans: people's ratings, a tidy frame.
        mapping: the scale map of the judges' scores (applied per judge).
        dimension: which dimension of frames with a ``dimension`` column.
        n_resamples, seed, confidence: the bootstrap.
    """
    errors, name = judge_errors(judges, humans, mapping=mapping, dimension=dimension)
    return panel_size_from_errors(
        errors.to_numpy(),
        judges=tuple(errors.index),
        mapping=name,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
