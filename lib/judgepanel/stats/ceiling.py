"""The human noise ceiling: how well any score could agree with a noisy human mean.

A judge is compared with the mean of k human ratings per image, and that mean is itself
noisy; its reliability bounds every correlation a judge can reach. The studies report a
judge's accuracy as a fraction of this ceiling.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

# Cells per block of (splits x ratings) random keys: ~16 MB of float64.
_BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class NoiseCeiling:
    """Split-half noise ceiling of a human mean score.

    Attributes:
        metric: ``spearman`` or ``pearson``, the correlation of the half-means.
        ceiling: sqrt(SB(split_half_r)), SB(r) = 2r / (1 + r): the ceiling reported.
        ceiling_sd: standard deviation over splits of each split's own sqrt(SB(r_s)),
            a measure of how much one split would vary (not a standard error); splits
            with r_s <= 0, where it is undefined, are left out.
        split_half_r: mean over splits of the split-half correlation r_s.
        split_half_r_sd: its standard deviation over splits.
        reliability: SB(split_half_r), the estimated reliability of the full-count mean.
        n_splits: random splits drawn.
        n_images: images used (those with at least two raters).
        n_ratings: ratings used.
        median_raters: median number of raters per image used.
        method: how the ceiling was estimated: ``per_rater_split_half`` (this module),
            or one of :mod:`judgepanel.stats.ceiling_methods`'s ``vote_split_half``
            (anonymous vote histograms) and ``summary_ctt`` (mean, SD and n per image).
    """

    metric: str
    ceiling: float
    ceiling_sd: float
    split_half_r: float
    split_half_r_sd: float
    reliability: float
    n_splits: int
    n_images: int
    n_ratings: int
    median_raters: float
    method: str = "per_rater_split_half"

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels``."""
        return {**labels, **asdict(self)}


def spearman_brown(r: Any) -> Any:
    """Reliability of a mean over twice the raters, from the split-half correlation r.

    Example:
        >>> round(float(spearman_brown(0.6)), 3)
        0.75
    """
    r = np.asarray(r, dtype=np.float64)
    return 2.0 * r / (1.0 + r)


def noise_ceiling(
    ratings: pd.DataFrame,
    *,
    n_splits: int = 200,
    seed: int = 0,
    item: str = "image_id",
    rater: str = "rater_id",
    score: str = "score",
    metric: str = "spearman",
) -> NoiseCeiling:
    """Split-half noise ceiling of the per-image mean rating.

    Definition. In split s every image's raters are shuffled at random and divided into
    two halves (floor(k/2) and the rest, for k raters). The two half-means are correlated
    across images (Spearman or Pearson), giving r_s. The split-half correlations are
    averaged first, r = mean_s r_s; Spearman-Brown then gives the reliability of the
    full-count mean, rel = 2r / (1 + r), and the ceiling is sqrt(rel): the highest
    correlation with the human mean a score can expect. Averaging r before the
    correction follows the protocol's order (split, average, correct, square root). With
    an odd count the halves differ by one rater, and SB's doubling is then approximate.

    A rater who rated an image twice is averaged to one rating; images with fewer than
    two raters cannot be split and are left out (with a warning).

    Args:
        ratings: long frame, one row per rating.
        n_splits: random splits to average over.
        seed: seed of the splits.
        item, rater, score: column names of the image id, rater id and rating.
        metric: ``spearman`` or ``pearson``.

    Returns:
        A :class:`NoiseCeiling`. ``ceiling`` is NaN if the mean split-half correlation
        is not positive (the ratings carry no shared signal).

    Raises:
        ValueError: on a missing column, a missing or non-numeric rating, or fewer than
            three usable images.

    Example:
        Eight images, four raters each, every rating the image's true score plus noise:

        >>> rng = np.random.default_rng(0)
        >>> truth = rng.normal(size=8)
        >>> ratings = pd.DataFrame({"image_id": np.repeat(np.arange(8), 4),
        ...                         "rater_id": np.tile(np.arange(4), 8),
        ...                         "score": np.repeat(truth, 4) + rng.normal(0, 0.5, 32)})
        >>> nc = noise_ceiling(ratings, n_splits=50, seed=0)
        >>> print(f"ceiling {nc.ceiling:.3f}, split-half r {nc.split_half_r:.3f}, "
        ...       f"{nc.n_images} images")
        ceiling 0.984, split-half r 0.937, 8 images
    """
    if metric not in ("spearman", "pearson"):
        raise ValueError(f"metric must be 'spearman' or 'pearson', got {metric!r}")
    if n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}")
    frame = _clean(ratings, item, rater, score)
    values, starts, counts = _grouped(frame, item)
    r = _split_half_rs(values, starts, counts, n_splits, seed, metric)
    mean_r = float(r.mean())
    reliability = float(spearman_brown(mean_r))
    ceiling = float(np.sqrt(reliability)) if mean_r > 0 else float("nan")
    per_split = np.sqrt(spearman_brown(r[r > 0]))
    sd = float(per_split.std(ddof=1)) if per_split.size > 1 else float("nan")
    return NoiseCeiling(
        metric=metric,
        ceiling=ceiling,
        ceiling_sd=sd,
        split_half_r=mean_r,
        split_half_r_sd=float(r.std(ddof=1)) if n_splits > 1 else float("nan"),
        reliability=reliability,
        n_splits=int(n_splits),
        n_images=int(counts.size),
        n_ratings=int(values.size),
        median_raters=float(np.median(counts)),
    )


def _clean(ratings: pd.DataFrame, item: str, rater: str, score: str) -> pd.DataFrame:
    """The three columns, validated, one rating per (image, rater)."""
    missing = [c for c in (item, rater, score) if c not in ratings.columns]
    if missing:
        raise ValueError(f"ratings has no column(s) {missing}; columns are {list(ratings.columns)}")
    frame = ratings[[item, rater, score]].copy()
    numeric = pd.to_numeric(frame[score], errors="coerce")
    bad = numeric.isna() | ~np.isfinite(numeric.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        first = frame.loc[bad, item].iloc[0]
        raise ValueError(
            f"column {score!r} has {int(bad.sum())} missing or non-numeric rating(s), "
            f"first for {item} {first!r}"
        )
    if frame[item].isna().any() or frame[rater].isna().any():
        raise ValueError(f"columns {item!r} and {rater!r} must not contain missing ids")
    frame[score] = numeric.astype(float)
    if frame.duplicated([item, rater]).any():
        n_dup = int(frame.duplicated([item, rater]).sum())
        warnings.warn(
            f"{n_dup} repeated ({item}, {rater}) rating(s) averaged to one rating each",
            RuntimeWarning,
            stacklevel=3,
        )
        frame = frame.groupby([item, rater], sort=False, as_index=False)[score].mean()
    sizes = frame.groupby(item, sort=False)[rater].transform("size")
    if (sizes < 2).any():
        n_single = int(frame.loc[sizes < 2, item].nunique())
        warnings.warn(
            f"{n_single} image(s) with fewer than two raters left out of the noise ceiling",
            RuntimeWarning,
            stacklevel=3,
        )
        frame = frame.loc[sizes >= 2]
    n_images = frame[item].nunique()
    if n_images < 3:
        raise ValueError(f"need at least three images with two or more raters, got {n_images}")
    return frame.rename(columns={score: "_score"})


def split_half_means(
    ratings: pd.DataFrame,
    items: Sequence[Any] | pd.Index,
    n_splits: int,
    seed: int,
    *,
    item: str = "image_id",
    rater: str = "rater_id",
    score: str = "score",
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The half-means of :func:`noise_ceiling`'s random splits, one column per image.

    The same splits as :func:`noise_ceiling` with the same seed, on the ratings of
    ``items`` (cleaned alike): for analyses that recompute the split-half correlation on
    resampled images.

    Returns:
        Two (n_splits, len(items)) arrays, columns in the order of ``items``.

    Raises:
        ValueError: if an image of ``items`` has fewer than two ratings (naming it), or on
            the errors of :func:`noise_ceiling`.
    """
    if n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}")
    order = pd.Index(list(items))
    # Only the ratings of ``items``; a missing column is left for _clean to name.
    frame = ratings[ratings[item].isin(set(order))] if item in ratings.columns else ratings
    frame = _clean(frame, item, rater, score)
    short = order.difference(frame[item].unique())
    if len(short):
        raise ValueError(
            f"{len(short)} image(s) have fewer than two ratings and cannot be split in "
            f"halves, e.g. {list(short[:3])}"
        )
    values, starts, counts = _grouped(frame, item, order)
    blocks = list(_half_means(values, starts, counts, n_splits, seed))
    return np.vstack([a for a, _ in blocks]), np.vstack([b for _, b in blocks])


def _grouped(
    frame: pd.DataFrame, item: str, order: pd.Index | None = None
) -> tuple[NDArray, NDArray, NDArray]:
    """Scores sorted by image, with each image's first position and rating count.

    Images follow ``order`` when given (every image of the frame must be in it), else
    their sorted ids.
    """
    if order is None:
        codes, _ = pd.factorize(frame[item], sort=True)
        n_images = int(codes.max()) + 1
    else:
        codes = order.get_indexer(frame[item])
        n_images = len(order)
    sort = np.argsort(codes, kind="stable")
    values = frame["_score"].to_numpy(dtype=np.float64)[sort]
    counts = np.bincount(codes, minlength=n_images)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    return values, starts, counts


def _half_means(
    values: NDArray[np.float64],
    starts: NDArray[np.intp],
    counts: NDArray[np.intp],
    n_splits: int,
    seed: int,
) -> Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """The two half-means of every split, a block of splits at a time: (rows, images) each.

    Ratings are stored image by image. Adding a uniform key in [0, 1) to each rating's
    image number and sorting shuffles the ratings within every image and keeps the images
    in place, so position p always belongs to the same image; the first floor(k/2)
    positions of an image form half A. The keys of consecutive blocks are consecutive
    draws of one generator, so the splits do not depend on the block size.
    """
    n_ratings = values.size
    group = np.repeat(np.arange(counts.size), counts)
    half = counts // 2
    in_a = (np.arange(n_ratings) - starts[group]) < half[group]
    total = np.add.reduceat(values, starts)
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_CELLS // n_ratings)
    for first in range(0, n_splits, block):
        rows = min(block, n_splits - first)
        keys = rng.random((rows, n_ratings)) + group
        shuffled = values[np.argsort(keys, axis=1)]
        sum_a = np.add.reduceat(np.where(in_a, shuffled, 0.0), starts, axis=1)
        yield sum_a / half, (total - sum_a) / (counts - half)


def _split_half_rs(
    values: NDArray[np.float64],
    starts: NDArray[np.intp],
    counts: NDArray[np.intp],
    n_splits: int,
    seed: int,
    metric: str,
) -> NDArray[np.float64]:
    """The split-half correlation of every split (Pearson, or Spearman on midranks)."""
    out = []
    for mean_a, mean_b in _half_means(values, starts, counts, n_splits, seed):
        if metric == "spearman":
            mean_a = stats.rankdata(mean_a, axis=1)
            mean_b = stats.rankdata(mean_b, axis=1)
        out.append(_rowwise_pearson(mean_a, mean_b))
    return np.concatenate(out)


def _rowwise_pearson(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    return np.clip(r, -1.0, 1.0)
