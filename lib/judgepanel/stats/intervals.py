"""Confidence intervals for accuracies: Wilson score, and the bootstrap over clusters.

VisionQ reports accuracy per taxonomy axis with a CI from a bootstrap over papers: the
questions of one paper share figures and authors, so they are not independent, and the
paper is the unit that is resampled (:func:`cluster_bootstrap`). The Wilson interval is
the per-question alternative when independence is a fair assumption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from statsmodels.stats.proportion import proportion_confint

from judgepanel.stats.bootstrap import (
    check_confidence,
    multiplicities,
    percentile_ci,
    resample_indices,
)
from judgepanel.stats.correlation import as_vector

Statistic = Callable[[NDArray[np.float64], NDArray[np.float64]], float]


def wilson(successes: ArrayLike, n: ArrayLike, confidence: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval for a binomial proportion: ``(ci_low, ci_high)``.

    Works elementwise on arrays through statsmodels'
    ``proportion_confint(successes, n, alpha=1 - confidence, method="wilson")``, after
    checks that name a bad input.

    Raises:
        ValueError: if ``n`` < 1 or ``successes`` lies outside [0, n].

    Example:
        >>> low, high = wilson(42, 50)  # 42 of 50 questions right
        >>> print(f"[{low:.3f}, {high:.3f}]")
        [0.715, 0.917]
        >>> lows, highs = wilson([42, 5], [50, 10])
        >>> [f"{x:.3f}" for x in lows], [f"{x:.3f}" for x in highs]
        (['0.715', '0.237'], ['0.917', '0.763'])
    """
    alpha = 1.0 - check_confidence(confidence)
    k = np.asarray(successes, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    if np.any(m < 1):
        raise ValueError("n must be at least 1")
    if np.any((k < 0) | (k > m)):
        raise ValueError("successes must lie between 0 and n")
    low, high = proportion_confint(k, m, alpha=alpha, method="wilson")
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


@dataclass(frozen=True)
class ClusterBootstrapResult:
    """A statistic with a percentile CI from resampling clusters with replacement.

    Attributes:
        estimate: the statistic on the full sample.
        ci_low, ci_high: percentile interval over the resamples.
        n: number of observations.
        n_clusters: number of distinct clusters.
        n_resamples: bootstrap resamples drawn.
        confidence: the interval's level.
    """

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    n_clusters: int
    n_resamples: int
    confidence: float

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels``."""
        return {**labels, **asdict(self)}


def cluster_numbers(labels: np.ndarray, n_resamples: int) -> tuple[np.ndarray, int]:
    """Each observation's cluster, numbered in sorted order of the labels, and the number
    of clusters; refuses missing labels and fewer than one resample."""
    if pd.isna(labels).any():
        raise ValueError("clusters contains missing labels")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    _, cluster_of = np.unique(labels, return_inverse=True)
    return cluster_of.astype(np.intp), int(cluster_of.max()) + 1


def cluster_bootstrap(
    values: ArrayLike,
    clusters: ArrayLike,
    statistic: Statistic | None = None,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ClusterBootstrapResult:
    """Percentile CI of a statistic, resampling whole clusters with replacement.

    Clusters are numbered in sorted order of their labels, and resample b draws them as
    row b of ``np.random.default_rng(seed).integers(0, K, size=(n_resamples, K))`` (K
    clusters). Each observation then carries its cluster's draw count as a weight.

    For the mean (``statistic`` None or ``np.mean``; e.g. accuracy over questions with
    papers as clusters) the resampled value is sum_c d_c S_c / sum_c d_c n_c, with d_c the
    draws of cluster c, S_c its sum and n_c its size: one matrix product for all
    resamples. Any other statistic is called once per resample as
    ``statistic(values, weights)``, weights being each observation's draw count, and
    must treat an observation of weight 2 as two copies of it.

    Args:
        values: one number per observation (e.g. 1.0 correct, 0.0 wrong).
        clusters: the cluster label of each observation (e.g. the paper id).
        statistic: None for the mean, or a function of (values, weights).
        n_resamples: resamples to draw.
        seed: seed of the resampling generator.
        confidence: level of the percentile interval.
    """
    v = as_vector(values, "values")
    labels = np.asarray(clusters)
    if labels.shape != v.shape:
        raise ValueError(
            f"values and clusters differ in length: values has {v.size}, clusters has {labels.size}"
        )
    if v.size == 0:
        raise ValueError("values is empty")
    cluster_of, n_clusters = cluster_numbers(labels, n_resamples)
    counts = multiplicities(resample_indices(n_clusters, n_resamples, seed), n_clusters)
    if statistic is None or statistic is np.mean:
        sums = np.bincount(cluster_of, weights=v, minlength=n_clusters)
        sizes = np.bincount(cluster_of, minlength=n_clusters).astype(np.float64)
        resampled = (counts @ sums) / (counts @ sizes)
        estimate = float(v.mean())
    else:
        estimate = float(statistic(v, np.ones_like(v)))
        resampled = np.array([statistic(v, row[cluster_of]) for row in counts], dtype=float)
    low, high = percentile_ci(resampled, confidence)
    return ClusterBootstrapResult(
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        n=int(v.size),
        n_clusters=n_clusters,
        n_resamples=int(n_resamples),
        confidence=float(confidence),
    )
