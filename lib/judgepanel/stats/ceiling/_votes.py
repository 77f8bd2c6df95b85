"""The vote split-half: each image's anonymous votes split at random into two halves.

Votes without rater ids are exchangeable, so splitting an image's n votes at random into
floor(n/2) and the rest is what the per-rater split does with rater ids: the counts per
level in the first half follow a multivariate hypergeometric law. Then as there: correlate
the half-means across images, average over splits, Spearman-Brown, square root.

The draws are vectorised over images and the half-means ranked a block of splits at a
time: AVA's size (255,000 images of about 200 votes on 10 levels) takes under a second a
split on one core, a few minutes for 200 splits.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgepanel.stats.ceiling._common import (
    VOTES,
    Columns,
    NoiseCeiling,
    from_split_rs,
    numeric,
    split_rs,
    stacked,
    whole_counts,
)


def estimate(
    votes: pd.DataFrame, cols: Columns, *, n_splits: int, seed: int, metric: str, **_: Any
) -> NoiseCeiling:
    """The vote split-half ceiling of a long vote table: one row per image and level, the
    level's value (``score``) and its votes (``count``; repeated rows of a level add up)."""
    counts, levels = _usable(*_matrix(votes, cols), stacklevel=5)
    n = counts.sum(axis=1)
    return from_split_rs(
        split_rs(_halves(counts, levels, n_splits, seed), n.size, n_splits, metric),
        metric,
        VOTES,
        n_images=n.size,
        n_ratings=int(n.sum()),
        median_raters=float(np.median(n)),
    )


def halves(
    votes: pd.DataFrame, cols: Columns, items: pd.Index, *, n_splits: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The vote splits' half-means (the estimate's splits on the same images and seed), one
    column per image of ``items`` in their order; an image with fewer than two votes is
    named in the error."""
    counts, levels = _matrix(votes, cols)
    ids = np.sort(items.unique().to_numpy())  # _matrix's row order: sorted ids
    counts = counts[pd.Index(ids).get_indexer(items)]
    short = items[counts.sum(axis=1) < 2]
    if len(short):
        raise ValueError(
            f"{len(short)} image(s) have fewer than two votes and cannot be split in halves, "
            f"e.g. {list(short[:3])}"
        )
    return stacked(_halves(counts, levels, n_splits, seed))


def interval_halves(
    votes: pd.DataFrame, cols: Columns, found: NoiseCeiling, *, n_splits: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Fixed splits' half-means of every image with two or more votes, for the interval."""
    counts, levels = _usable(*_matrix(votes, cols))
    return stacked(_halves(counts, levels, n_splits, seed))


def _matrix(votes: pd.DataFrame, cols: Columns) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """A long vote table as an (images in sorted id order, levels) count matrix and levels."""
    item, value, count = cols.item, cols.score, cols.count
    missing = [c for c in (item, value, count) if c not in votes.columns]
    if missing:
        raise ValueError(f"votes has no column(s) {missing}; columns are {list(votes.columns)}")
    if votes[item].isna().any():
        raise ValueError(f"column {item!r} must not contain missing ids")
    levels_raw = numeric(votes[value], value, votes[item], item)
    counts_raw = whole_counts(votes[count].to_numpy(), count, votes[item].to_numpy(), item)
    item_codes, _ = pd.factorize(votes[item], sort=True)
    level_codes, levels = pd.factorize(levels_raw, sort=True)
    matrix = np.zeros((int(item_codes.max()) + 1, len(levels)), dtype=np.int64)
    np.add.at(matrix, (item_codes, level_codes), counts_raw)
    return matrix, np.asarray(levels, dtype=np.float64)


def _usable(
    counts: NDArray[np.int64], levels: NDArray[np.float64], stacklevel: int = 3
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The images with two or more votes (the others warned about) and the levels voted."""
    nonempty = counts.sum(axis=0) > 0  # a level without votes draws nothing
    counts, levels = counts[:, nonempty], levels[nonempty]
    n = counts.sum(axis=1)
    if (n < 2).any():
        warnings.warn(
            f"{int((n < 2).sum())} image(s) with fewer than two votes left out of the noise "
            "ceiling",
            RuntimeWarning,
            stacklevel=stacklevel,
        )
    if (n >= 2).sum() < 3:
        raise ValueError(f"need at least three images with two or more votes, got {(n >= 2).sum()}")
    return counts[n >= 2], levels


def _halves(
    counts: NDArray[np.int64], levels: NDArray[np.float64], n_splits: int, seed: int
) -> Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """The two half-means of every image in each random split of its votes, split by split.

    Half A takes floor(n/2) of an image's n votes without replacement: a multivariate
    hypergeometric draw of its count vector. numpy's ``multivariate_hypergeometric`` takes
    one count vector a call, so the draw is made here for all images at once by its own
    'marginals' method: level by level, the votes half A takes from level j, given what it
    has taken so far, are a univariate hypergeometric draw (the level's votes among the
    votes not yet considered, with the places still open), and the last level fills the
    rest. Each split is drawn in full before the next, so the splits depend only on the
    seed.
    """
    n = counts.sum(axis=1)
    half = n // 2
    totals = counts @ levels
    rng = np.random.default_rng(seed)
    for _ in range(n_splits):
        remaining = n.copy()
        left = half.copy()
        sum_a = np.zeros(n.size)
        for j in range(levels.size - 1):
            taken = rng.hypergeometric(counts[:, j], remaining - counts[:, j], left)
            sum_a += taken * levels[j]
            left -= taken
            remaining -= counts[:, j]
        sum_a += left * levels[-1]
        yield sum_a / half, (totals - sum_a) / (n - half)
