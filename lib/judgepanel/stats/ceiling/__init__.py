"""The human noise ceiling: how well any score could agree with a noisy human mean.

A judge is compared with the mean of k human ratings per image, and that mean is itself
noisy; its reliability bounds every correlation a judge can reach. The studies report a
judge's accuracy as a fraction of this ceiling.

Releases keep different parts of their raters, and :func:`noise_ceiling` takes the best
method the data supports, in this order (or the one it is asked for):

1. per-rater ratings with rater ids: the per-rater split-half (``per_rater_split_half``);
2. an anonymous vote histogram: the exchangeable-vote split-half (``vote_split_half``);
3. each image's mean, SD and n: classical test theory (``summary_ctt``);
4. a mean alone: no ceiling (``none``), and the reason why.

Each estimates the same quantity, the reliability of the full-count human mean and its
square root, so the ceilings of differently released datasets stay comparable. The
methods live in this package's private modules; this module holds the one choice among
them. :func:`split_halves` gives the fixed splits' half-means of chosen images, for
analyses that recompute the ceiling on resampled images (the headroom interval of 04).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgepanel.stats.ceiling import _raters, _summary, _votes
from judgepanel.stats.ceiling._common import (
    MEAN_ONLY_REASON,
    NO_INTERVAL,
    NONE,
    PER_RATER,
    SUMMARY,
    VOTES,
    Columns,
    NoiseCeiling,
    check_args,
    only,
    present,
    spearman_brown,
)
from judgepanel.stats.ceiling._interval import (
    percentile_interval,
    resampled_ceilings,
    resampled_summary_pearson,
)

__all__ = [
    "MEAN_ONLY_REASON",
    "METHODS",
    "CeilingSource",
    "NoiseCeiling",
    "noise_ceiling",
    "spearman_brown",
    "split_halves",
]

AUTO = "auto"
_ESTIMATORS = {PER_RATER: _raters, VOTES: _votes, SUMMARY: _summary}
METHODS = (AUTO, *_ESTIMATORS)
"""The methods :func:`noise_ceiling` may be asked for (``auto``: the best the data holds)."""


class CeilingSource(Protocol):
    """A loaded dataset's three tables of human labels (see `judgepanel.datasets.Dataset`)."""

    @property
    def ratings(self) -> pd.DataFrame: ...

    @property
    def votes(self) -> pd.DataFrame | None: ...

    @property
    def summary(self) -> pd.DataFrame | None: ...


Data = CeilingSource | pd.DataFrame


def noise_ceiling(
    data: Data,
    method: str = AUTO,
    *,
    attribute: str = "score",
    items: Sequence[Any] | pd.Index | None = None,
    columns: Mapping[str, str] | None = None,
    metric: str = "spearman",
    n_splits: int = 200,
    seed: int = 0,
    sd_ddof: int = 1,
    n_resamples: int = 0,
    interval_splits: int = 10,
    confidence: float = 0.95,
) -> NoiseCeiling:
    """The noise ceiling of the human mean, by the best method ``data`` supports.

    Definition (the split-half methods). In split s every image's raters (or votes) are
    divided at random into two halves (floor(k/2) and the rest, for k). The two
    half-means are correlated across images (Spearman or Pearson), giving r_s. The
    split-half correlations are averaged first, r = mean_s r_s; Spearman-Brown then gives
    the reliability of the full-count mean, rel = 2r / (1 + r), and the ceiling is
    sqrt(rel): the highest correlation with the human mean a score can expect. Averaging r
    before the correction follows the protocol's order (split, average, correct, square
    root). With an odd count the halves differ by one rater, and SB's doubling is then
    approximate. A mean, SD and n per image give the same quantity by classical test
    theory; a mean alone gives none (method ``none``, with the reason).

    Args:
        data: a loaded dataset (its ``ratings``, ``votes`` and ``summary`` tables), or one
            attribute's long frame: a rating a row with rater ids; a vote level a row with
            its ``count`` (or one vote a row, no rater ids); or an image a row with its
            ``mean``, ``sd`` and ``n``.
        method: ``auto`` (the best the data holds), ``per_rater_split_half``,
            ``vote_split_half`` or ``summary_ctt``.
        attribute: the dataset's attribute (``score``: the overall rating).
        items: only these images (each must have a rating, else an error names it).
        columns: a frame's column names by role, where they differ from the defaults
            (``item`` image_id, ``rater`` rater_id, ``score``, ``count``, ``mean``, ``sd``,
            ``n``).
        metric: ``spearman`` or ``pearson``.
        n_splits: random splits to average over (or simulate, for Spearman on summaries).
        seed: seed of the splits and the resamples.
        sd_ddof: 0 reads a summary's ``sd`` as a population SD.
        n_resamples: bootstrap resamples of images for the interval (0: no interval).
        interval_splits: fixed splits whose half-means every resample reuses.
        confidence: the interval's level.

    Returns:
        A :class:`NoiseCeiling`. Its ``ceiling`` is NaN, with a ``reason``, if the data
        supports no ceiling or the split halves do not correlate positively.

    Raises:
        ValueError: naming the column or image, on a missing column, a missing or
            non-numeric rating, rater ids or SDs given for some rows only, a bad count, an
            image of ``items`` without ratings, or fewer than three usable images.

    Example:
        Eight images, four raters each, every rating the image's true score plus noise:

        >>> rng = np.random.default_rng(0)
        >>> truth = rng.normal(size=8)
        >>> ratings = pd.DataFrame({"image_id": np.repeat(np.arange(8), 4),
        ...                         "rater_id": np.tile(np.arange(4), 8),
        ...                         "score": np.repeat(truth, 4) + rng.normal(0, 0.5, 32)})
        >>> nc = noise_ceiling(ratings, n_splits=50, seed=0)
        >>> print(f"{nc.method}: ceiling {nc.ceiling:.3f}, split-half r "
        ...       f"{nc.split_half_r:.3f}, {nc.n_images} images")
        per_rater_split_half: ceiling 0.984, split-half r 0.937, 8 images
    """
    check_args(metric, n_splits)
    form = _form(data, method, attribute, columns)
    if form.method == NONE:
        none = NoiseCeiling.none(form.reason, form.n_images, metric)
        return replace(none, attribute=attribute, confidence=confidence)
    table = form.table if items is None else only(form.table, items, form.cols.item)
    estimator = _ESTIMATORS[form.method]
    found = estimator.estimate(
        table, form.cols, n_splits=n_splits, seed=seed, metric=metric, sd_ddof=sd_ddof
    )
    interval = NO_INTERVAL
    if n_resamples > 0:
        halves = estimator.interval_halves(
            table, form.cols, found, n_splits=interval_splits, seed=seed
        )
        if halves is None:  # the summary's Pearson ceiling: a closed form
            samples = resampled_summary_pearson(table, form.cols, n_resamples, seed)
        else:
            samples = resampled_ceilings(*halves, metric, n_resamples, seed)
        interval = percentile_interval(samples, confidence)
    reason = ""
    if not np.isfinite(found.ceiling):
        reason = (
            f"the split halves do not correlate positively (mean r {found.split_half_r:.3f}): "
            "the ratings share no signal to bound"
        )
    return replace(
        found, attribute=attribute, interval=interval, confidence=confidence, reason=reason
    )


def split_halves(
    data: Data,
    items: Sequence[Any] | pd.Index,
    *,
    n_splits: int,
    seed: int,
    method: str = AUTO,
    attribute: str = "score",
    columns: Mapping[str, str] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two half-means of each of ``items`` in ``n_splits`` fixed random splits.

    The splits of :func:`noise_ceiling` with the same data, method and seed, on ``items``
    only: for analyses that recompute the split-half correlation on resampled images.
    Summaries give the halves the Spearman estimate simulates.

    Returns:
        Two (n_splits, len(items)) arrays, columns in the order of ``items``.

    Raises:
        ValueError: an image of ``items`` has no rating, or fewer than two (naming it),
            or the data supports no split.

    Example:
        Every split's two halves average back to each image's mean:

        >>> ratings = pd.DataFrame({"image_id": np.repeat(["a", "b", "c"], 4),
        ...                         "rater_id": np.tile(np.arange(4), 3),
        ...                         "score": [1.0, 2, 3, 4, 2, 2, 3, 3, 5, 6, 6, 7]})
        >>> a, b = split_halves(ratings, ["c", "a", "b"], n_splits=3, seed=0)
        >>> a.shape, ((a + b) / 2)[0].tolist()
        ((3, 3), [6.0, 2.5, 2.5])
    """
    if n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}")
    form = _form(data, method, attribute, columns)
    if form.method == NONE:
        raise ValueError(f"no split halves of {attribute!r}: {form.reason}")
    order = pd.Index(list(items))
    table = only(form.table, order, form.cols.item)
    return _ESTIMATORS[form.method].halves(table, form.cols, order, n_splits=n_splits, seed=seed)


# --- the choice of method --------------------------------------------------------------------


@dataclass(frozen=True)
class _Form:
    """What the data holds for one method: its table and column names, or why nothing."""

    method: str
    table: pd.DataFrame | None
    cols: Columns
    reason: str = ""
    n_images: int = 0


def _form(data: Data, method: str, attribute: str, columns: Mapping[str, str] | None) -> _Form:
    """The method to use and its table: the one dispatcher of the noise ceiling."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    cols = Columns.of(columns)
    if not isinstance(data, pd.DataFrame):
        if columns:
            raise ValueError("columns names a frame's columns; a dataset's tables have theirs")
        return _dataset_form(data, method, attribute)
    named = [c for c in (columns or {}).values() if c not in data.columns]
    if named:
        raise ValueError(f"data has no column(s) {named}; columns are {list(data.columns)}")
    return _frame_form(data, method, cols)


def _frame_form(data: pd.DataFrame, method: str, cols: Columns) -> _Form:
    """The method one attribute's frame supports, from its columns (or the one asked)."""
    if cols.item not in data.columns:
        raise ValueError(f"data has no column {cols.item!r}; columns are {list(data.columns)}")
    if cols.count in data.columns:  # an empty count is one vote, as in the ratings.csv contract
        filled = data[cols.count].where(present(data, cols.count), 1)
        data = data.assign(**{cols.count: filled})
    if cols.score in data.columns and method in (AUTO, PER_RATER, VOTES):
        ids = present(data, cols.rater)
        if method == PER_RATER or (method == AUTO and ids is not None and ids.any()):
            _check_rater_ids(data, ids, cols)
            return _Form(PER_RATER, data, cols)
        if cols.count in data.columns:
            return _Form(VOTES, data, cols)
        one_each = data[[cols.item, cols.score]].assign(_votes=1)
        return _Form(VOTES, one_each, replace(cols, count="_votes"))
    if cols.mean in data.columns and method in (AUTO, SUMMARY):
        return _summary_form(data, cols)
    if method == AUTO:
        raise ValueError(
            f"data has neither {cols.score!r} (ratings or votes) nor {cols.mean!r} "
            f"(summaries); columns are {list(data.columns)}"
        )
    needed = cols.mean if method == SUMMARY else cols.score
    raise ValueError(f"method {method!r} needs column {needed!r}; columns are {list(data.columns)}")


def _check_rater_ids(data: pd.DataFrame, ids: pd.Series | None, cols: Columns) -> None:
    """Every rating has its rater id, and counts one vote."""
    if ids is None or not ids.any():
        raise ValueError(f"column {cols.rater!r} is missing or empty: the per-rater split-half "
                         "needs every rating's rater id")  # fmt: skip
    if not ids.all():
        raise ValueError(
            f"column {cols.rater!r} is empty on {int((~ids).sum())} of {len(ids)} rows: give "
            "every rating its rater id, or none (anonymous votes)"
        )
    if cols.count in data.columns:
        ones = pd.to_numeric(data[cols.count], errors="coerce") == 1
        if not ones.all():
            raise ValueError(
                f"column {cols.count!r} must be 1 on rows with a rater id; "
                f"{int((~ones).sum())} row(s) are not"
            )


def _summary_form(data: pd.DataFrame, cols: Columns) -> _Form:
    """A frame of summaries: classical test theory with SD and n everywhere, none without."""
    given = {c: present(data, c) for c in (cols.sd, cols.n)}
    if all(g is None or not g.any() for g in given.values()):
        return _Form(NONE, None, cols, MEAN_ONLY_REASON, int(data[cols.item].nunique()))
    for c, g in given.items():
        if g is None or not g.all():
            empty = len(data) if g is None else int((~g).sum())
            raise ValueError(
                f"column {c!r} is missing or empty on {empty} of {len(data)} rows: a "
                f"ceiling from summaries needs {cols.sd!r} and {cols.n!r} for every image"
            )
    return _Form(SUMMARY, data, cols)


def _dataset_form(data: CeilingSource, method: str, attribute: str) -> _Form:
    """The methods a dataset's tables support for ``attribute``: the first, or the one asked."""
    ratings, votes, summary = _tables(data, attribute)
    forms = {}
    if ratings is not None:
        forms[PER_RATER] = _Form(PER_RATER, ratings, Columns())
    if votes is not None:
        forms[VOTES] = _Form(VOTES, votes, Columns(score="value"))
    full = summary is not None and {"sd", "n"} <= set(summary.columns)
    if full and summary[["sd", "n"]].notna().all(axis=None):
        forms[SUMMARY] = _Form(SUMMARY, summary, Columns())
    if method == AUTO and forms:
        return next(iter(forms.values()))
    if method in forms:
        return forms[method]
    if method != AUTO:
        raise ValueError(
            f"the data cannot give a {method!r} ceiling of {attribute!r}; it supports "
            f"{list(forms) or 'none'}"
        )
    n_images = 0 if summary is None else int(summary["image_id"].nunique())
    return _Form(NONE, None, Columns(), _no_ceiling_reason(summary, attribute), n_images)


def _tables(
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


def _no_ceiling_reason(summary: pd.DataFrame | None, attribute: str) -> str:
    """Why a summary (or its absence) supports no ceiling, in plain words."""
    if summary is None:
        return f"no rating of {attribute!r}"
    has_sd, has_n = (c in summary.columns and bool(summary[c].notna().any()) for c in ("sd", "n"))
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
    return MEAN_ONLY_REASON
