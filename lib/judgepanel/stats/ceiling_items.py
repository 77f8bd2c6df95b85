"""The noise ceiling and split halves of a dataset on chosen images, by what the data holds.

Analyses that resample images (the headroom interval of 04) need the split-half means of
each image in a fixed order, so that every resample can reuse them. Per-rater ratings are
split by rater (:func:`judgepanel.stats.ceiling.split_half_means`); anonymous vote
histograms (AVA, KonIQ-10k) are split by votes, as
:func:`judgepanel.stats.ceiling_methods.vote_ceiling` splits them; a mean, SD and count
per image (SPAQ-like summaries) give the simulated halves of
:func:`judgepanel.stats.ceiling_methods.summary_ceiling`. A dataset with a mean alone has
no split and gets a plain error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgepanel.stats import ceiling_methods as cm
from judgepanel.stats.ceiling import NoiseCeiling, noise_ceiling, split_half_means
from judgepanel.stats.ceiling_choice import CeilingSource, _rows

ITEM = "image_id"


def _only(table: pd.DataFrame, items: Sequence[Any] | pd.Index) -> pd.DataFrame:
    """The rows of ``items``; an item without a row is named in the error."""
    keep = table[table[ITEM].isin(set(items))]
    missing = pd.Index(list(items)).difference(keep[ITEM].unique())
    if len(missing):
        raise ValueError(
            f"{len(missing)} scored image(s) have no human ratings, e.g. {sorted(missing)[:3]}"
        )
    return keep


Rows = tuple[pd.DataFrame | None, pd.DataFrame | None, pd.DataFrame | None]


def _source(data: CeilingSource | pd.DataFrame) -> Rows:
    """Per-rater ratings (``score``), votes or a full summary of the overall rating, the
    first the data holds; a bare frame is per-rater ratings."""
    if isinstance(data, pd.DataFrame):
        return data, None, None
    ratings, votes, summary = _rows(data, "score")
    if ratings is not None:
        return ratings, None, None
    if votes is not None:
        return None, votes, None
    full = summary is not None and {"sd", "n"} <= set(summary)
    if full and summary[["sd", "n"]].notna().all(axis=None):
        return None, None, summary
    raise ValueError(
        "no noise ceiling can be computed on resampled images from this dataset: it has "
        "neither per-rater ratings, vote histograms, nor a mean, SD and count per image of "
        "the overall score"
    )


def items_ceiling(
    data: CeilingSource | pd.DataFrame,
    items: Sequence[Any] | pd.Index,
    *,
    n_splits: int = 200,
    seed: int = 0,
) -> NoiseCeiling:
    """The split-half ceiling of the overall rating on ``items`` only.

    ``data`` is a loaded dataset, or its long per-rater ratings (``image_id``,
    ``rater_id``, ``score``). Per-rater data are split by rater, vote histograms by vote.
    """
    ratings, votes, summary = _source(data)
    if ratings is not None:
        return noise_ceiling(_only(ratings, items), n_splits=n_splits, seed=seed)
    if votes is not None:
        return cm.vote_ceiling(_only(votes, items), value="value", n_splits=n_splits, seed=seed)
    return cm.summary_ceiling(_only(summary, items), n_splits=n_splits, seed=seed)


def items_halves(
    data: CeilingSource | pd.DataFrame,
    items: Sequence[Any] | pd.Index,
    *,
    n_splits: int,
    seed: int,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two half-means of each of ``items`` in ``n_splits`` fixed random splits.

    Returns two (n_splits, len(items)) arrays, columns in the order of ``items``. Per-rater
    ratings give :func:`~judgepanel.stats.ceiling.split_half_means`'s splits; votes give
    the vote splits of :func:`~judgepanel.stats.ceiling_methods.vote_ceiling` on the same
    images with the same seed.

    Raises:
        ValueError: an image of ``items`` has no rating, or fewer than two, naming it.
    """
    ratings, votes, summary = _source(data)
    if ratings is not None:
        return split_half_means(ratings, items, n_splits, seed)
    order = pd.Index(list(items))
    if summary is not None:
        return _summary_halves(_only(summary, order).set_index(ITEM).loc[order], n_splits, seed)
    counts, levels = cm._vote_matrix(_only(votes, order), ITEM, "value", "count")
    ids = np.sort(order.unique().to_numpy())  # _vote_matrix's row order: sorted ids
    counts = counts[pd.Index(ids).get_indexer(order)]
    short = order[counts.sum(axis=1) < 2]
    if len(short):
        raise ValueError(
            f"{len(short)} image(s) have fewer than two votes and cannot be split in halves, "
            f"e.g. {list(short[:3])}"
        )
    halves = list(cm._vote_halves(counts, levels, n_splits, seed))
    return np.vstack([a for a, _ in halves]), np.vstack([b for _, b in halves])


def _summary_halves(
    summary: pd.DataFrame, n_splits: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Simulated half-means from each image's mean, SD and count, as the summary ceiling's
    Spearman estimate draws them, rows in the order of ``summary``."""
    n = summary["n"].to_numpy(float)
    rel = cm.summary_ceiling(summary.reset_index(), n_splits=1, seed=seed).reliability
    halves = list(
        cm._normal_halves(
            summary["mean"].to_numpy(float),
            cm._smoothed_variances(summary["sd"].to_numpy(float) ** 2, n),
            n.astype(np.int64),
            max(rel, 0.0),
            n_splits,
            seed,
        )
    )
    return np.vstack([a for a, _ in halves]), np.vstack([b for _, b in halves])
