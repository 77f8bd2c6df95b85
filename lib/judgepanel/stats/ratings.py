"""Ratings as they come: a tidy long frame, or a raters x items matrix with NaN for missing.

The agreement functions take the same tidy frame everywhere: one row per rating, with
columns ``image_id``, ``rater``, ``score`` and, optionally, ``dimension`` (of which one is
picked, unless a function pools them). A rater rating an image twice is an error: repeated
asks are averaged (or kept apart as raters) by the caller, who knows which they are.
Raters and images are put in sorted order, so that the same ratings give the same numbers
whatever the row order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

ITEM, RATER, SCORE, DIMENSION = "image_id", "rater", "score", "dimension"


@dataclass(frozen=True)
class RatingMatrix:
    """Ratings laid out raters x items, NaN where a rater did not rate an item.

    Attributes:
        values: (raters, items) float array.
        raters: rater labels, in row order (sorted, for a frame).
        items: item labels, in column order (sorted, for a frame).
    """

    values: NDArray[np.float64]
    raters: tuple[Any, ...]
    items: tuple[Any, ...]


def select_dimension(frame: pd.DataFrame, dimension: str | None) -> pd.DataFrame:
    """The rows of one dimension; a frame of several dimensions needs ``dimension``."""
    has = DIMENSION in frame.columns
    if dimension is not None:
        if not has:
            raise ValueError(f"dimension={dimension!r} given but the frame has no {DIMENSION!r}")
        picked = frame[frame[DIMENSION] == dimension]
        if picked.empty:
            found = sorted(frame[DIMENSION].dropna().unique().tolist())
            raise ValueError(f"no rows of dimension {dimension!r}; the frame holds {found}")
        return picked
    if has and frame[DIMENSION].nunique(dropna=False) > 1:
        found = sorted(frame[DIMENSION].dropna().unique().tolist())
        raise ValueError(f"the frame holds dimensions {found}: pass dimension= to pick one")
    return frame


def check_columns(frame: pd.DataFrame, columns: tuple[str, ...], name: str = "data") -> None:
    """Raise a ValueError naming the columns ``frame`` lacks."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it has {list(frame.columns)}")


def rating_matrix(
    data: pd.DataFrame | RatingMatrix | ArrayLike, *, dimension: str | None = None
) -> RatingMatrix:
    """The raters x items matrix of a tidy frame (``image_id``, ``rater``, ``score``).

    Rows with a missing score are missing ratings. Raters and items are sorted, so the
    same ratings give the same matrix whatever their row order.

    Args:
        data: a tidy frame, a :class:`RatingMatrix`, or a raters x items array (NaN =
            missing).
        dimension: which dimension of a frame with a ``dimension`` column.

    Raises:
        ValueError: on missing columns, several dimensions and no ``dimension``, a rater
            rating one item twice (average repeated asks first), or an infinite score.
    """
    if isinstance(data, RatingMatrix):
        return data
    if isinstance(data, pd.DataFrame):
        check_columns(data, (ITEM, RATER, SCORE))
        frame = select_dimension(data, dimension).dropna(subset=[SCORE])
        repeated = frame.duplicated([RATER, ITEM], keep=False)
        if repeated.any():
            first = frame.loc[repeated, [RATER, ITEM]].iloc[0].tolist()
            raise ValueError(
                f"{int(repeated.sum())} rows repeat a (rater, image_id) pair, e.g. {first}; "
                "average repeated asks before measuring agreement"
            )
        wide = frame.pivot(index=RATER, columns=ITEM, values=SCORE).sort_index().sort_index(axis=1)
        values = wide.to_numpy(dtype=np.float64)
        raters, items = tuple(wide.index), tuple(wide.columns)
    else:
        if dimension is not None:
            raise ValueError("dimension= applies to a tidy frame, not to a matrix")
        values = np.array(data, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(f"a rating matrix must be raters x items, got shape {values.shape}")
        raters, items = tuple(range(values.shape[0])), tuple(range(values.shape[1]))
    if np.isinf(values).any():
        raise ValueError("ratings contain infinite values")
    return RatingMatrix(values, raters, items)


def judge_scores(judge: pd.DataFrame | pd.Series, *, dimension: str | None = None) -> pd.Series:
    """One judge's score per image, as a float Series indexed by sorted ``image_id``.

    Args:
        judge: a Series indexed by ``image_id``, or a frame with ``image_id`` and
            ``score`` (and ``dimension``; a ``rater`` column must name one judge).
        dimension: which dimension of a frame with a ``dimension`` column.

    Raises:
        ValueError: on a repeated image, several judges, or missing columns.
    """
    if isinstance(judge, pd.DataFrame):
        check_columns(judge, (ITEM, SCORE), "judge")
        frame = select_dimension(judge, dimension)
        if RATER in frame.columns and frame[RATER].nunique() > 1:
            raise ValueError(
                f"judge holds {frame[RATER].nunique()} raters; pass one judge's scores"
            )
        series = frame.set_index(ITEM)[SCORE]
    elif isinstance(judge, pd.Series):
        if dimension is not None:
            raise ValueError("dimension= applies to a frame, not to a Series")
        series = judge
    else:
        raise TypeError(f"judge must be a DataFrame or a Series, got {type(judge).__name__}")
    series = series.astype(np.float64).dropna()
    if series.index.has_duplicates:
        first = series.index[series.index.duplicated()][0]
        raise ValueError(f"the judge scores image {first!r} more than once; average first")
    series.index.name = ITEM
    return series.sort_index()


def human_means(humans: pd.DataFrame, *, dimension: str | None = None) -> pd.DataFrame:
    """The mean human score of each image and how many people rated it.

    Returns:
        A frame indexed by sorted ``image_id`` with ``human_mean`` and ``n_raters``;
        images nobody rated are absent.
    """
    matrix = rating_matrix(humans, dimension=dimension)
    rated = np.isfinite(matrix.values)
    count = rated.sum(axis=0)
    total = np.where(rated, matrix.values, 0.0).sum(axis=0)
    out = pd.DataFrame(
        {"human_mean": total / np.maximum(count, 1), "n_raters": count},
        index=pd.Index(matrix.items, name=ITEM),
    )
    return out[count > 0]
