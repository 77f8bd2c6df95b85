"""Agreement with people: Cohen's and Fleiss' kappa, bias, and a judge against the human mean.

* :func:`cohen_kappa` (unweighted, linear, quadratic) calls scikit-learn;
  :func:`resampled_kappa` gives the same numbers on many resamples at once.
* :func:`fleiss_kappa` calls statsmodels on the items with the modal number of ratings.
* :func:`mean_bias`: judge minus human mean, with a t interval.
* :func:`judge_agreement`: one judge against the human mean, the field's standard set
  (Spearman, Kendall tau-b, quadratic-weighted kappa, interval alpha, bias), each row with
  its interval and the name of the scale mapping used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import sparse, stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judgepanel.stats.bootstrap import (
    bootstrap_arms,
    check_confidence,
    count_blocks,
    multiplicities,
    percentile_ci,
)
from judgepanel.stats.correlation import as_pair, kendall_b, spearman
from judgepanel.stats.ratings import RatingMatrix, human_means, judge_scores, rating_matrix
from judgepanel.stats.reliability import AlphaParts
from judgepanel.stats.scale_map import (
    IDENTITY,
    ScaleMap,
    grid_note,
    map_scores,
    to_grid,
)

Weights = Literal["linear", "quadratic"] | None


def check_categories(values: NDArray[np.float64], name: str) -> NDArray[np.int64]:
    """Whole-number ratings as integers, or a ValueError naming the input."""
    if not np.all(values == np.round(values)):
        raise ValueError(
            f"{name} must hold whole-number categories; round mapped scores onto the "
            "scale's grid first (scale_map.to_grid)"
        )
    return values.astype(np.int64)


def kappa_inputs(
    a: ArrayLike, b: ArrayLike, labels: ArrayLike | None
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Paired categories with missing pairs dropped, and the label grid."""
    av, bv = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if av.ndim != 1 or av.shape != bv.shape:
        raise ValueError(f"a and b must be 1-D of equal length, got {av.shape} and {bv.shape}")
    both = np.isfinite(av) & np.isfinite(bv)
    if both.sum() < 2:
        raise ValueError(f"kappa needs at least 2 items rated by both, got {int(both.sum())}")
    ai, bi = check_categories(av[both], "a"), check_categories(bv[both], "b")
    if labels is None:
        grid = np.arange(min(ai.min(), bi.min()), max(ai.max(), bi.max()) + 1)
    else:
        grid = np.asarray(labels, dtype=np.int64)
        if not (np.isin(ai, grid).all() and np.isin(bi, grid).all()):
            raise ValueError("a or b holds a category outside labels")
    return ai, bi, grid


def cohen_kappa(
    a: ArrayLike, b: ArrayLike, *, weights: Weights = None, labels: ArrayLike | None = None
) -> float:
    """Cohen's kappa of two raters: unweighted, linear or quadratic (QWK).

    Calls ``sklearn.metrics.cohen_kappa_score``. Its weights are distances between label
    positions, so the labels default to every integer from the smallest to the largest
    category seen: a scale's unused middle category still counts as one step.

    Args:
        a, b: whole-number categories per item; items where either is NaN are dropped.
        weights: None, ``"linear"`` or ``"quadratic"``.
        labels: the category grid, e.g. ``range(1, 6)`` for a 1-5 scale.

    Example:
        Quadratic-weighted kappa (QWK) of two raters on a 1-5 scale:

        >>> a, b = [1, 2, 3, 4, 5, 3, 2, 4], [1, 2, 4, 4, 5, 2, 2, 3]
        >>> round(cohen_kappa(a, b, weights="quadratic"), 3)
        0.88
        >>> theirs = cohen_kappa_score(a, b, weights="quadratic")
        >>> round(cohen_kappa(a, b, weights="quadratic"), 6) == round(float(theirs), 6)
        True
    """
    ai, bi, grid = kappa_inputs(a, b, labels)
    return float(cohen_kappa_score(ai, bi, labels=grid, weights=weights))


def resampled_kappa(
    a: ArrayLike,
    b: ArrayLike,
    *,
    weights: Weights = None,
    labels: ArrayLike | None = None,
    indices: ArrayLike | None = None,
    counts: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Cohen's kappa on each resample of the items, vectorised.

    Kappa = 1 - sum w O / sum w E, with O the confusion counts and E the product of their
    margins over the total; a resample's O is a sum of its items' one-hot cells weighted by
    their draw counts, one sparse product for all resamples.

    Args:
        a, b: categories per item, with no missing values.
        weights, labels: as :func:`cohen_kappa`.
        indices: (n_resamples, n) drawn item positions; or
        counts: draw counts laid out items x resamples.

    Returns:
        (n_resamples,) kappas equal to scikit-learn's on ``a[idx], b[idx]``.
    """
    ai, bi, grid = kappa_inputs(a, b, labels)
    if ai.size != np.asarray(a).size:
        raise ValueError("resampled_kappa needs a and b without missing values")
    if (indices is None) == (counts is None):
        raise ValueError("give exactly one of indices= or counts=")
    if counts is None:
        counts = multiplicities(indices, ai.size).T
    size = grid.size
    pos_a, pos_b = np.searchsorted(grid, ai), np.searchsorted(grid, bi)
    cells = sparse.csr_matrix(
        (np.ones(ai.size), (pos_a * size + pos_b, np.arange(ai.size))), shape=(size * size, ai.size)
    )
    observed = np.asarray(cells @ counts).reshape(size, size, -1)
    steps = np.abs(np.arange(size)[:, None] - np.arange(size)[None, :]).astype(np.float64)
    w = {None: (steps > 0).astype(np.float64), "linear": steps, "quadratic": steps**2}[weights]
    rows, cols = observed.sum(axis=1), observed.sum(axis=0)
    total = rows.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.einsum("ib,ij,jb->b", rows, w, cols) / total
        return 1.0 - np.einsum("ijb,ij->b", observed, w) / expected


@dataclass(frozen=True)
class FleissKappa:
    """Fleiss' kappa and the items it was computed on.

    Attributes:
        estimate: Fleiss' kappa (statsmodels, ``method="fleiss"``).
        n_items: items used (those with exactly ``n_ratings`` ratings).
        n_ratings: ratings per item used.
        n_categories: categories seen on those items.
        n_items_dropped: items with another number of ratings.
    """

    estimate: float
    n_items: int
    n_ratings: int
    n_categories: int
    n_items_dropped: int

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels``."""
        return {**labels, **asdict(self)}


def fleiss_kappa(
    data: pd.DataFrame | RatingMatrix | ArrayLike,
    *,
    dimension: str | None = None,
    n_ratings: int | None = None,
) -> FleissKappa:
    """Fleiss' kappa over items with the same number of ratings (any raters).

    Fleiss' kappa needs an equal number of ratings per item, not the same raters, so with
    missing ratings it uses the items with exactly ``n_ratings`` ratings: by default the
    most common count of at least 2 (the larger on a tie). Calls statsmodels'
    ``fleiss_kappa`` on the items x categories count table.

    Args:
        data: tidy frame or raters x items matrix of whole-number categories.
        dimension: which dimension of a multi-dimension frame.
        n_ratings: ratings per item to use.
    """
    values = rating_matrix(data, dimension=dimension).values
    per_item = np.isfinite(values).sum(axis=0)
    if n_ratings is None:
        sizes, freq = np.unique(per_item[per_item >= 2], return_counts=True)
        if sizes.size == 0:
            raise ValueError("Fleiss' kappa needs items with at least 2 ratings")
        n_ratings = int(sizes[np.flatnonzero(freq == freq.max())[-1]])
    if n_ratings < 2:
        raise ValueError(f"n_ratings must be at least 2, got {n_ratings}")
    used = values[:, per_item == n_ratings]
    if used.shape[1] == 0:
        raise ValueError(f"no item has exactly {n_ratings} ratings")
    rated = np.isfinite(used)
    cats = np.unique(check_categories(used[rated], "ratings"))
    if cats.size < 2:
        raise ValueError("Fleiss' kappa needs at least 2 categories in use")
    codes = np.searchsorted(cats, np.where(rated, used, cats[0]))
    table = np.stack([((codes == c) & rated).sum(axis=0) for c in range(cats.size)], axis=1)
    return FleissKappa(
        estimate=float(sm_fleiss_kappa(table, method="fleiss")),
        n_items=int(used.shape[1]),
        n_ratings=int(n_ratings),
        n_categories=int(cats.size),
        n_items_dropped=int(values.shape[1] - used.shape[1]),
    )


# --- a judge against the human mean ----------------------------------------------------------


AGREEMENT_METRICS: tuple[str, ...] = ("spearman", "kendall_b", "qwk", "alpha_interval", "bias")
"""The rows of :func:`judge_agreement`, in order."""


@dataclass(frozen=True)
class AgreementEstimate:
    """One agreement metric of a judge against the human mean.

    Attributes:
        metric: ``spearman``, ``kendall_b``, ``qwk``, ``alpha_interval`` or ``bias``.
        estimate: the metric on all images.
        ci_low, ci_high: its interval.
        p: p-value where the metric has a test (bias: two-sided, no bias), else NaN.
        n: images.
        mapping: the scale mapping the judge's scores went through.
        interval: how the interval was found.
        note: what else a reader must know (rounding, raw scores...).
    """

    metric: str
    estimate: float
    ci_low: float
    ci_high: float
    p: float
    n: int
    mapping: str
    interval: str
    note: str

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels``."""
        return {**labels, **asdict(self)}


def mean_bias(
    judge: ArrayLike,
    human_mean: ArrayLike,
    *,
    confidence: float = 0.95,
    mapping: str = IDENTITY,
) -> AgreementEstimate:
    """Mean of judge minus human mean, with a one-sample t interval and two-sided p.

    Args:
        judge: the judge's scores on the people's scale (after ``mapping``).
        human_mean: the human mean per image, same order.
        confidence: level of the t interval.
        mapping: the name of the map the judge's scores went through.
    """
    jv, hv = as_pair(judge, human_mean, ("judge", "human_mean"))
    diff = jv - hv
    test = stats.ttest_1samp(diff, 0.0)
    ci = test.confidence_interval(check_confidence(confidence))
    return AgreementEstimate(
        metric="bias",
        estimate=float(diff.mean()),
        ci_low=float(ci.low),
        ci_high=float(ci.high),
        p=float(test.pvalue),
        n=int(diff.size),
        mapping=mapping,
        interval=f"t, {confidence:g}",
        note="judge minus human mean; p two-sided against no bias",
    )


def _finite_ci(samples: NDArray[np.float64], confidence: float) -> tuple[float, float]:
    """Percentile interval of the resamples on which the metric is defined."""
    kept = samples[np.isfinite(samples)]
    return percentile_ci(kept, confidence) if kept.size else (np.nan, np.nan)


def judge_agreement(
    judge: pd.DataFrame | pd.Series,
    humans: pd.DataFrame,
    *,
    scale: tuple[int, int],
    mapping: ScaleMap = None,
    dimension: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    metrics: Sequence[str] = AGREEMENT_METRICS,
) -> pd.DataFrame:
    """One judge against the human mean: Spearman, Kendall tau-b, QWK, alpha and bias.

    On the images both the judge and at least one person scored (sorted by ``image_id``):

    * ``spearman``, ``kendall_b``: of the raw judge scores (a monotone map cannot change
      them; an out-of-fold isotonic map would only add ties);
    * ``qwk``: quadratic-weighted kappa of the mapped judge score and the human mean, both
      rounded half up to the integer grid of ``scale``;
    * ``alpha_interval``: Krippendorff's alpha, interval level, of the mapped judge score and
      the human mean as two raters;
    * ``bias``: :func:`mean_bias` of the mapped scores (t interval).

    The first four intervals are percentiles over the same resamples of images (row b of
    ``resample_indices(n, n_resamples, seed)``), so they are paired with every other
    bootstrap of the studies; the map is fitted once, not per resample.

    Args:
        judge: the judge's scores (:func:`judgepanel.stats.ratings.judge_scores`).
        humans: people's ratings, a tidy frame.
        scale: the people's scale, e.g. (1, 5): the grid for kappa.
        mapping: a :class:`~judgepanel.stats.scale_map.LinearMap`, an
            :class:`~judgepanel.stats.scale_map.IsotonicMap` or None (same scale).
        dimension: which dimension of frames with a ``dimension`` column.
        n_resamples, seed, confidence: the bootstrap.
        metrics: the rows wanted, of :data:`AGREEMENT_METRICS` (a rank metric left out is
            not bootstrapped; the others' numbers do not depend on which are asked).

    Returns:
        One row per metric asked, in the order above: ``metric``, ``estimate``,
        ``ci_low``, ``ci_high``, ``p``, ``n``, ``mapping``, ``interval``, ``note``.
    """
    check_confidence(confidence)
    unknown = sorted(set(metrics) - set(AGREEMENT_METRICS))
    if unknown:
        raise ValueError(f"metrics must be among {AGREEMENT_METRICS}, got {unknown}")
    scores = judge_scores(judge, dimension=dimension)
    means = human_means(humans, dimension=dimension)["human_mean"]
    images = scores.index.intersection(means.index).sort_values()
    if images.size < 3:
        raise ValueError(
            f"need at least 3 images scored by the judge and people, got {images.size}"
        )
    raw = scores.loc[images].to_numpy()
    y = means.loc[images].to_numpy()
    n = int(images.size)
    mapped = map_scores(raw, mapping, y)
    boot = f"percentile bootstrap over images, B={n_resamples}, seed {seed}, {confidence:g}"
    rows = []
    for metric, func in (("spearman", spearman), ("kendall_b", kendall_b)):
        if metric not in metrics:
            continue
        samples = bootstrap_arms(y, raw[None, :], metric, n_resamples=n_resamples, seed=seed)
        low, high = _finite_ci(samples[:, 0], confidence)
        note = "raw judge scores: ranks do not depend on a monotone map"
        rows.append(
            AgreementEstimate(metric, func(y, raw), low, high, np.nan, n, IDENTITY, boot, note)
        )
    labels = np.arange(scale[0], scale[1] + 1)
    judge_grid, human_grid = to_grid(mapped.values, scale), to_grid(y, scale)
    parts = AlphaParts(np.vstack([mapped.values, y]), "interval")
    kappas, alphas = [], []
    for counts in count_blocks(n, n_resamples, seed):
        kappas.append(
            resampled_kappa(
                judge_grid, human_grid, weights="quadratic", labels=labels, counts=counts
            )
        )
        alphas.append(parts.alpha(counts))
    qwk = cohen_kappa(judge_grid, human_grid, weights="quadratic", labels=labels)
    low, high = _finite_ci(np.concatenate(kappas), confidence)
    note = f"judge and human mean {grid_note(scale)}"
    rows.append(AgreementEstimate("qwk", qwk, low, high, np.nan, n, mapped.mapping, boot, note))
    estimate = float(parts.alpha(np.ones((n, 1)))[0])
    low, high = _finite_ci(np.concatenate(alphas), confidence)
    note = "judge and human mean as two raters"
    rows.append(
        AgreementEstimate(
            "alpha_interval", estimate, low, high, np.nan, n, mapped.mapping, boot, note
        )
    )
    rows.append(mean_bias(mapped.values, y, confidence=confidence, mapping=mapped.mapping))
    return pd.DataFrame([row.as_row() for row in rows if row.metric in metrics])
