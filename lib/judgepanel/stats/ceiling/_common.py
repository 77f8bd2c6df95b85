"""What every ceiling method shares: the result, Spearman-Brown, the column names, checks.

The methods (:mod:`._raters`, :mod:`._votes`, :mod:`._summary`) and the interval
(:mod:`._interval`) import these; only the package's ``__init__`` chooses among them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from judgepanel.stats.bootstrap import chunk_threads, map_chunks

PER_RATER = "per_rater_split_half"
VOTES = "vote_split_half"
SUMMARY = "summary_ctt"
NONE = "none"

MEAN_ONLY_REASON = (
    "no ceiling can be computed from a mean alone: it needs per-rater ratings, a vote "
    "histogram or each image's SD and n"
)

NO_INTERVAL = (math.nan, math.nan)
"""The interval of a ceiling asked without one (one object, so equal results compare equal)."""

# Cells (splits x images) per block of half-means that are ranked and correlated at once.
BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class Columns:
    """The column names of a frame's roles (a loaded dataset's tables use the defaults).

    ``score`` is a rating (per-rater) or a vote's level (votes); ``count`` a level's votes;
    ``mean``, ``sd`` and ``n`` an image's summary.
    """

    item: str = "image_id"
    rater: str = "rater_id"
    score: str = "score"
    count: str = "count"
    mean: str = "mean"
    sd: str = "sd"
    n: str = "n"

    @classmethod
    def of(cls, columns: Mapping[str, str] | None) -> Columns:
        """From a mapping of roles to names; an unknown role is an error naming it."""
        columns = dict(columns or {})
        roles = {f.name for f in fields(cls)}
        unknown = sorted(set(columns) - roles)
        if unknown:
            raise ValueError(f"columns has unknown role(s) {unknown}; roles are {sorted(roles)}")
        return cls(**columns)


@dataclass(frozen=True)
class NoiseCeiling:
    """The noise ceiling of a human mean score, how it was found, and its interval.

    Attributes:
        metric: ``spearman`` or ``pearson``, the correlation of the half-means.
        ceiling: sqrt(SB(split_half_r)), SB(r) = 2r / (1 + r): the ceiling reported (NaN
            with method ``none``, or where the halves do not correlate positively).
        ceiling_sd: standard deviation over splits of each split's own sqrt(SB(r_s)),
            a measure of how much one split would vary (not a standard error); splits
            with r_s <= 0, where it is undefined, are left out.
        split_half_r: mean over splits of the split-half correlation r_s.
        split_half_r_sd: its standard deviation over splits.
        reliability: SB(split_half_r), the estimated reliability of the full-count mean.
        n_splits: random splits drawn.
        n_images: images used (those with at least two raters or votes).
        n_ratings: ratings (or votes) used.
        median_raters: median number of raters (or votes) per image used.
        method: ``per_rater_split_half`` (rater ids), ``vote_split_half`` (anonymous vote
            histograms), ``summary_ctt`` (mean, SD and n per image) or ``none``.
        attribute: the attribute the ceiling is of (``score``: the overall rating).
        interval: the percentile interval over images (NaNs when not asked for, or where
            there is no ceiling).
        confidence: the interval's level.
        reason: why there is no ceiling (method ``none``, or halves that do not correlate
            positively), else "".
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
    method: str = PER_RATER
    attribute: str = "score"
    interval: tuple[float, float] = NO_INTERVAL
    confidence: float = 0.95
    reason: str = ""

    @classmethod
    def none(cls, reason: str, n_images: int, metric: str = "spearman") -> NoiseCeiling:
        """The answer where the data cannot support a ceiling: a reason, and no number."""
        nan = math.nan
        return cls(metric, nan, nan, nan, nan, nan, 0, n_images, 0, nan, NONE, reason=reason)

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels``."""
        return {**labels, **asdict(self)}


def spearman_brown(r: Any) -> Any:
    """Reliability of a mean over twice the raters, from the split-half correlation r."""
    r = np.asarray(r, dtype=np.float64)
    return 2.0 * r / (1.0 + r)


# --- checks ----------------------------------------------------------------------------------


def check_args(metric: str, n_splits: int) -> None:
    """A known metric and at least one split."""
    if metric not in ("spearman", "pearson"):
        raise ValueError(f"metric must be 'spearman' or 'pearson', got {metric!r}")
    if n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}")


def present(data: pd.DataFrame, column: str) -> pd.Series | None:
    """Which rows have a value in ``column`` (empty strings count as none), or None."""
    if column not in data.columns:
        return None
    values = data[column]
    return values.notna() & (values.astype(str).str.strip() != "")


def numeric(values: pd.Series, column: str, ids: Any, item: str) -> NDArray[np.float64]:
    """A column as finite floats, or an error naming it and the first bad image."""
    out = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    first_bad(~np.isfinite(out), column, ids, item, "a missing or non-numeric value")
    return out


def whole_counts(values: NDArray[Any], column: str, ids: Any, item: str) -> NDArray[np.int64]:
    """Vote counts as integers, or an error naming the column and the first bad image."""
    out = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    first_bad(~np.isfinite(out), column, ids, item, "a missing or non-numeric count")
    first_bad(out < 0, column, ids, item, "a negative count")
    first_bad(out != np.round(out), column, ids, item, "a count that is not whole")
    return out.astype(np.int64)


def first_bad(bad: NDArray[np.bool_], column: str, ids: Any, item: str, what: str) -> None:
    """An error naming the column, what is wrong and the first image it is wrong for."""
    if bad.any():
        first = np.asarray(ids)[np.argmax(bad)]
        first = first.item() if isinstance(first, np.generic) else first
        raise ValueError(
            f"column {column!r} has {what} on {int(bad.sum())} row(s), first for {item} {first!r}"
        )


# --- from half-means to a ceiling ------------------------------------------------------------


def rowwise_pearson(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """The Pearson r of each row of ``a`` with the same row of ``b``."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    return np.clip(r, -1.0, 1.0)


def correlate(a: NDArray[np.float64], b: NDArray[np.float64], metric: str) -> NDArray[np.float64]:
    """Row by row: Pearson, or Spearman on midranks."""
    if metric == "spearman":
        a, b = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
    return rowwise_pearson(a, b)


def split_rs(
    halves: Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]],
    n_images: int,
    n_splits: int,
    metric: str,
) -> NDArray[np.float64]:
    """The correlation of each split's half-means, ranked and correlated a block at a time.

    The splits are drawn here, in order; from :data:`~judgepanel.stats.bootstrap.
    THREADED_ITEMS` images on, each block is ranked and correlated on a worker thread
    while the next is drawn (the same numbers: a block's r depends on its halves alone).
    """
    block = max(1, min(n_splits, BLOCK_CELLS // n_images))

    def blocks() -> Iterator[Callable[[], NDArray[np.float64]]]:
        rows_a: list[NDArray[np.float64]] = []
        rows_b: list[NDArray[np.float64]] = []
        for a, b in halves:
            rows_a.append(a)
            rows_b.append(b)
            if len(rows_a) == block:
                yield _block_rs(rows_a, rows_b, metric)
                rows_a, rows_b = [], []
        if rows_a:
            yield _block_rs(rows_a, rows_b, metric)

    scored = map_chunks(lambda r: r, blocks(), chunk_threads(n_images), in_flight=2)
    return np.concatenate(list(scored))


def _block_rs(
    rows_a: list[NDArray[np.float64]], rows_b: list[NDArray[np.float64]], metric: str
) -> Callable[[], NDArray[np.float64]]:
    """The r of one block of splits, deferred to whichever thread calls it."""
    return lambda: correlate(np.vstack(rows_a), np.vstack(rows_b), metric)


def from_split_rs(
    r: NDArray[np.float64],
    metric: str,
    method: str,
    *,
    n_images: int,
    n_ratings: int,
    median_raters: float,
) -> NoiseCeiling:
    """Average the splits' r, Spearman-Brown, square root: the protocol's order."""
    mean_r = float(r.mean())
    with np.errstate(divide="ignore"):  # r = -1 gives a reliability of -inf
        reliability = float(spearman_brown(mean_r))
    per_split = np.sqrt(spearman_brown(r[r > 0]))
    return NoiseCeiling(
        metric=metric,
        ceiling=float(np.sqrt(reliability)) if mean_r > 0 else float("nan"),
        ceiling_sd=float(per_split.std(ddof=1)) if per_split.size > 1 else float("nan"),
        split_half_r=mean_r,
        split_half_r_sd=float(r.std(ddof=1)) if r.size > 1 else float("nan"),
        reliability=reliability,
        n_splits=int(r.size),
        n_images=int(n_images),
        n_ratings=int(n_ratings),
        median_raters=float(median_raters),
        method=method,
    )


def stacked(
    halves: Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Split-by-split half-means as two (splits, images) arrays."""
    pairs = list(halves)
    return np.vstack([a for a, _ in pairs]), np.vstack([b for _, b in pairs])


def only(table: pd.DataFrame, items: Any, item: str) -> pd.DataFrame:
    """The rows of ``items``; an item without a row is named in the error."""
    keep = table[table[item].isin(set(items))]
    missing = pd.Index(list(items)).difference(keep[item].unique())
    if len(missing):
        raise ValueError(
            f"{len(missing)} scored image(s) have no human ratings, e.g. {sorted(missing)[:3]}"
        )
    return keep
