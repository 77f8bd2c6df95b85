"""The per-rater split-half: each image's raters split at random into two halves.

In split s every image's raters are shuffled at random and divided into two halves
(floor(k/2) and the rest, for k raters). The two half-means are correlated across images
(Spearman or Pearson), giving r_s. A rater who rated an image twice is averaged to one
rating; images with fewer than two raters cannot be split and are left out (with a warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgepanel.stats.ceiling._common import (
    PER_RATER,
    Columns,
    NoiseCeiling,
    from_split_rs,
    split_rs,
    stacked,
)

# Cells per block of (splits x ratings) random keys: ~16 MB of float64.
BLOCK_CELLS = 2_000_000


def estimate(
    ratings: pd.DataFrame, cols: Columns, *, n_splits: int, seed: int, metric: str, **_: Any
) -> NoiseCeiling:
    """The per-rater split-half ceiling of ``ratings`` (one row a rating)."""
    frame = _clean(ratings, cols.item, cols.rater, cols.score)
    values, starts, counts = _grouped(frame, cols.item)
    splits = (
        (a[row], b[row])
        for a, b in _half_means(values, starts, counts, n_splits, seed)
        for row in range(a.shape[0])
    )
    r = split_rs(splits, counts.size, n_splits, metric)
    return from_split_rs(
        r,
        metric,
        PER_RATER,
        n_images=counts.size,
        n_ratings=values.size,
        median_raters=float(np.median(counts)),
    )


def halves(
    ratings: pd.DataFrame, cols: Columns, items: pd.Index, *, n_splits: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The half-means of :func:`estimate`'s splits (same seed), one column per image of
    ``items`` in their order; an image with fewer than two ratings is named in the error."""
    # Only the ratings of ``items``; a missing column is left for _clean to name.
    frame = ratings[ratings[cols.item].isin(set(items))] if cols.item in ratings else ratings
    frame = _clean(frame, cols.item, cols.rater, cols.score)
    short = items.difference(frame[cols.item].unique())
    if len(short):
        raise ValueError(
            f"{len(short)} image(s) have fewer than two ratings and cannot be split in "
            f"halves, e.g. {list(short[:3])}"
        )
    values, starts, counts = _grouped(frame, cols.item, items)
    return stacked(_half_means(values, starts, counts, n_splits, seed))


def interval_halves(
    ratings: pd.DataFrame, cols: Columns, found: NoiseCeiling, *, n_splits: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Fixed splits' half-means of every image with two or more ratings, for the interval."""
    sizes = ratings.groupby(cols.item)[cols.rater].size()
    return halves(ratings, cols, sizes[sizes >= 2].index, n_splits=n_splits, seed=seed)


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
            stacklevel=4,
        )
        frame = frame.groupby([item, rater], sort=False, as_index=False)[score].mean()
    sizes = frame.groupby(item, sort=False)[rater].transform("size")
    if (sizes < 2).any():
        n_single = int(frame.loc[sizes < 2, item].nunique())
        warnings.warn(
            f"{n_single} image(s) with fewer than two raters left out of the noise ceiling",
            RuntimeWarning,
            stacklevel=4,
        )
        frame = frame.loc[sizes >= 2]
    n_images = frame[item].nunique()
    if n_images < 3:
        raise ValueError(f"need at least three images with two or more raters, got {n_images}")
    return frame.rename(columns={score: "_score"})


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
    block = max(1, BLOCK_CELLS // n_ratings)
    for first in range(0, n_splits, block):
        rows = min(block, n_splits - first)
        keys = rng.random((rows, n_ratings)) + group
        shuffled = values[np.argsort(keys, axis=1)]
        sum_a = np.add.reduceat(np.where(in_a, shuffled, 0.0), starts, axis=1)
        yield sum_a / half, (total - sum_a) / (counts - half)
