"""The noise ceiling the data supports: from ratings, vote histograms or summaries.

Datasets release their human ratings in different shapes: per-rater ratings with ids
(EVA, PARA, LAPIS), vote histograms without ids (AVA, KonIQ), each image's mean, SD and
vote count, or the mean alone (SPAQ, TAD66K). Each of the first three supports an estimate
of the same quantity, the reliability of the full-count human mean and its square root,
the ceiling; a mean alone supports none. :func:`ceiling_for` picks the method from the
columns a frame has, so that ceilings of differently released datasets stay comparable.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import stats

from judgepanel.stats.ceiling import NoiseCeiling, _rowwise_pearson, noise_ceiling, spearman_brown

PER_RATER = "per_rater_split_half"
VOTES = "vote_split_half"
SUMMARY = "summary_ctt"
NONE = "none"

# Cells (splits x images) per block of half-means that are ranked and correlated at once.
_BLOCK_CELLS = 2_000_000

MEAN_ONLY_REASON = (
    "no ceiling can be computed from a mean alone: it needs per-rater ratings, a vote "
    "histogram or each image's SD and n"
)


@dataclass(frozen=True)
class NoCeiling:
    """The answer where the data cannot support a noise ceiling: a reason, and no number.

    Attributes:
        reason: why, in plain words.
        n_images: images the data describes.
        method: always ``none``.
    """

    reason: str
    n_images: int
    method: str = NONE

    def __str__(self) -> str:
        return self.reason

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The answer as one table row: ceiling NaN, and the reason."""
        return {
            **labels,
            "method": self.method,
            "ceiling": float("nan"),
            "n_images": self.n_images,
            "reason": self.reason,
        }


# --- vote histograms -------------------------------------------------------------------------


def vote_ceiling(
    votes: pd.DataFrame,
    *,
    item: str = "image_id",
    value: str = "score",
    count: str = "count",
    n_splits: int = 200,
    seed: int = 0,
    metric: str = "spearman",
) -> NoiseCeiling:
    """Split-half noise ceiling from anonymous vote histograms (long format).

    ``votes`` has one row per image and score level: the level's ``value`` and its vote
    ``count`` (repeated rows of one level are added). Votes without rater ids are
    exchangeable, so splitting an image's n votes at random into floor(n/2) and the rest
    is what :func:`~judgepanel.stats.ceiling.noise_ceiling` does with rater ids: the
    counts per level in the first half follow a multivariate hypergeometric law. Then as
    there: correlate the half-means across images, average over splits, Spearman-Brown,
    square root. See :func:`vote_ceiling_wide` for a per-image count matrix.

    The draws are vectorised over images and the half-means ranked a block of splits at
    a time: AVA's size (255,000 images of about 200 votes on 10 levels) takes under a
    second a split on one core, a few minutes for 200 splits.

    Raises:
        ValueError: naming the column, on a missing column, a missing or non-numeric
            value, a negative or non-integer count, or fewer than three images with two
            or more votes.
    """
    _check_args(metric, n_splits)
    matrix, levels = _vote_matrix(votes, item, value, count)
    return _vote_ceiling(matrix, levels, n_splits, seed, metric)


def _vote_matrix(
    votes: pd.DataFrame, item: str, value: str, count: str
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """A long vote table as an (images in sorted id order, levels) count matrix and levels."""
    missing = [c for c in (item, value, count) if c not in votes.columns]
    if missing:
        raise ValueError(f"votes has no column(s) {missing}; columns are {list(votes.columns)}")
    if votes[item].isna().any():
        raise ValueError(f"column {item!r} must not contain missing ids")
    levels_raw = _numeric(votes[value], value, votes[item], item)
    counts_raw = _counts(votes[count].to_numpy(), count, votes[item].to_numpy(), item)
    item_codes, _ = pd.factorize(votes[item], sort=True)
    level_codes, levels = pd.factorize(levels_raw, sort=True)
    matrix = np.zeros((int(item_codes.max()) + 1, len(levels)), dtype=np.int64)
    np.add.at(matrix, (item_codes, level_codes), counts_raw)
    return matrix, np.asarray(levels, dtype=np.float64)


def vote_ceiling_wide(
    counts: pd.DataFrame,
    levels: Sequence[float] | None = None,
    *,
    n_splits: int = 200,
    seed: int = 0,
    metric: str = "spearman",
) -> NoiseCeiling:
    """Split-half noise ceiling from a per-image vote-count matrix (one row an image).

    The columns are the score levels, in the order of ``levels`` (default: the column
    names read as numbers, as in AVA's counts for scores 1..10). Same method and errors as
    :func:`vote_ceiling`; a count error names the level's column.
    """
    _check_args(metric, n_splits)
    if levels is None:
        try:
            levels = [float(c) for c in counts.columns]
        except (TypeError, ValueError):
            raise ValueError(
                f"the count columns {list(counts.columns)} are not score levels: name each "
                "column by its score or pass levels"
            ) from None
    level_values = np.asarray(levels, dtype=np.float64)
    if level_values.shape != (counts.shape[1],) or not np.isfinite(level_values).all():
        raise ValueError(
            f"levels must give one finite score per column ({counts.shape[1]}), got {levels}"
        )
    matrix = np.zeros(counts.shape, dtype=np.int64)
    for j, col in enumerate(counts.columns):
        matrix[:, j] = _counts(counts[col].to_numpy(), str(col), counts.index.to_numpy(), "image")
    return _vote_ceiling(matrix, level_values, n_splits, seed, metric)


def _vote_ceiling(
    counts: NDArray[np.int64], levels: NDArray[np.float64], n_splits: int, seed: int, metric: str
) -> NoiseCeiling:
    """The vote method on a validated (images, levels) count matrix."""
    counts, levels = _usable_votes(counts, levels, stacklevel=4)
    n = counts.sum(axis=1)
    return _from_split_rs(
        _split_rs(_vote_halves(counts, levels, n_splits, seed), n.size, n_splits, metric),
        metric,
        VOTES,
        n_images=n.size,
        n_ratings=int(n.sum()),
        median_raters=float(np.median(n)),
    )


def _usable_votes(
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


def _vote_halves(
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


# --- mean, SD and n --------------------------------------------------------------------------


def summary_ceiling(
    summary: pd.DataFrame,
    *,
    item: str = "image_id",
    mean: str = "mean",
    sd: str = "sd",
    n: str = "n",
    sd_ddof: int = 1,
    n_splits: int = 200,
    seed: int = 0,
    metric: str = "spearman",
) -> NoiseCeiling:
    """Noise ceiling from each image's mean, SD and rating count (classical test theory).

    The error variance of image i's mean is e_i = s_i^2 / n_i, s_i^2 the sample variance
    of its ratings (``sd_ddof=0`` reads ``sd`` as a population SD and rescales it). The
    means' variance across images is the true scores' variance plus the mean error
    variance, so the reliability of the full-count mean is
    rel = (Var(mean) - mean_i e_i) / Var(mean), Var with ddof 1.

    Pearson: ceiling = sqrt(rel), the correlation of the mean with its true score, which
    the split-half method estimates as sqrt(SB(r)). No splits are drawn (``n_splits`` 0,
    SDs NaN) and ``split_half_r`` is the r with SB(r) = rel, i.e. rel / (2 - rel).

    Spearman: a rank ceiling depends on the shape of the scores, not only on rel, so it is
    simulated. The estimand is the split-half method's own: sqrt(SB(E[rho_S(A, B)])),
    A and B the two half-means. True scores are the observed means shrunk to the estimated
    true variance, t_i = m + sqrt(rel) (m_i - m) (same order, variance rel * Var(mean));
    each of ``n_splits`` simulated splits draws A_i = t_i + N(0, v_i / floor(n_i/2)) and
    B_i = t_i + N(0, v_i / (n_i - floor(n_i/2))), the half-means the raters' split would
    give if each image's errors were normal with variance v_i, its s_i^2 shrunk toward
    the mean s^2 by the share of their spread that is not sampling noise. Under
    normality this is within 0.005 of the Spearman correlation of the full-count mean with
    its true score for rel in [0.6, 1] (0.764 vs 0.760 at rel 0.6, 0.887 vs 0.886 at 0.8),
    as it is for the split-half method on per-rater ratings.

    Returns:
        A :class:`NoiseCeiling` with ``method`` ``summary_ctt``; the ceiling is NaN when
        rel is not positive (no true variance left).

    Raises:
        ValueError: naming the column, on a missing column or value, a negative SD, an n
            below 2 or not whole, a repeated image, or fewer than three images.
    """
    _check_args(metric, n_splits)
    missing = [c for c in (item, mean, sd, n) if c not in summary.columns]
    if missing:
        raise ValueError(f"summary has no column(s) {missing}; columns are {list(summary.columns)}")
    ids = summary[item]
    if ids.isna().any() or ids.duplicated().any():
        raise ValueError(f"column {item!r} must hold one row per image, without missing ids")
    means = _numeric(summary[mean], mean, ids, item)
    sds = _numeric(summary[sd], sd, ids, item)
    counts = _numeric(summary[n], n, ids, item)
    _first_bad(sds < 0, sd, ids, item, "a negative SD")
    _first_bad((counts < 2) | (counts != np.round(counts)), n, ids, item, "n below 2 or not whole")
    if means.size < 3:
        raise ValueError(f"need at least three images, got {means.size}")
    if sd_ddof not in (0, 1):
        raise ValueError(f"sd_ddof must be 0 or 1, got {sd_ddof}")
    variance = sds**2 * (counts - sd_ddof) / (counts - 1)
    var_means = float(means.var(ddof=1))
    error = float((variance / counts).mean())
    rel = (var_means - error) / var_means if var_means > 0 else float("nan")
    shape = {
        "n_images": means.size,
        "n_ratings": int(counts.sum()),
        "median_raters": float(np.median(counts)),
    }
    if metric == "pearson" or not rel > 0:
        return NoiseCeiling(
            metric=metric,
            ceiling=float(np.sqrt(rel)) if rel > 0 else float("nan"),
            ceiling_sd=float("nan"),
            split_half_r=rel / (2.0 - rel),
            split_half_r_sd=float("nan"),
            reliability=rel,
            n_splits=0,
            method=SUMMARY,
            **shape,
        )
    smoothed = _smoothed_variances(variance, counts)
    halves = _normal_halves(means, smoothed, counts.astype(np.int64), rel, n_splits, seed)
    return _from_split_rs(_split_rs(halves, means.size, n_splits, metric), metric, SUMMARY, **shape)


def _smoothed_variances(
    variance: NDArray[np.float64], counts: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Each image's rating variance shrunk toward the mean variance (empirical Bayes).

    s_i^2 estimates sigma_i^2 with sampling variance about 2 sigma^4 / (n_i - 1) (normal
    ratings); used raw, that noise would spread the simulated error variances more than
    the images' own, a scale mixture that rank correlations tolerate better, and read the
    Spearman ceiling high. The weight is the share of the observed spread of s_i^2 that
    is not sampling noise (2 s_i^4 / (n_i + 1) estimates it without bias).
    """
    pooled = float(variance.mean())
    noise = 2.0 * variance**2 / (counts + 1.0)
    spread = max(float(variance.var(ddof=1)) - float(noise.mean()), 0.0)
    sampling = 2.0 * pooled**2 / (counts - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(spread + sampling > 0, spread / (spread + sampling), 0.0)
    return pooled + weight * (variance - pooled)


def _normal_halves(
    means: NDArray[np.float64],
    variance: NDArray[np.float64],
    counts: NDArray[np.int64],
    rel: float,
    n_splits: int,
    seed: int,
) -> Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Simulated half-means around the shrunk true scores, split by split (see above)."""
    centre = means.mean()
    truth = centre + np.sqrt(rel) * (means - centre)
    half = counts // 2
    sd_a = np.sqrt(variance / half)
    sd_b = np.sqrt(variance / (counts - half))
    rng = np.random.default_rng(seed)
    for _ in range(n_splits):
        yield (
            truth + sd_a * rng.standard_normal(truth.size),
            truth + sd_b * rng.standard_normal(truth.size),
        )


# --- mean only and the dispatcher ------------------------------------------------------------


def mean_only_ceiling(summary: pd.DataFrame | None = None, *, item: str = "image_id") -> NoCeiling:
    """The plain answer for data with a mean per image and nothing else: no ceiling.

    A mean alone says nothing about how much the raters disagreed, so no reliability and
    no ceiling follow from it without a model of the votes.
    """
    if summary is None or item not in summary.columns:
        n_images = 0 if summary is None else len(summary)
    else:
        n_images = int(summary[item].nunique())
    return NoCeiling(reason=MEAN_ONLY_REASON, n_images=n_images)


def ceiling_for(
    data: pd.DataFrame,
    *,
    item: str = "image_id",
    score: str = "score",
    rater: str = "rater_id",
    count: str = "count",
    mean: str = "mean",
    sd: str = "sd",
    n: str = "n",
    n_splits: int = 200,
    seed: int = 0,
    metric: str = "spearman",
) -> NoiseCeiling | NoCeiling:
    """The noise ceiling by what ``data`` holds (one attribute's rows), method chosen for it.

    - ``score`` and ``rater`` ids: per-rater split-half
      (:func:`~judgepanel.stats.ceiling.noise_ceiling`); a ``count`` column must then be
      1 on every row.
    - ``score`` without rater ids (the column absent or empty), with ``count`` (an empty
      count is 1) or one vote a row: exchangeable votes (:func:`vote_ceiling`).
    - ``mean`` with ``sd`` and ``n`` on every row: classical test theory
      (:func:`summary_ceiling`).
    - ``mean`` alone (``sd`` and ``n`` absent or empty): :func:`mean_only_ceiling`.

    Raises:
        ValueError: naming the column, when ``item`` is missing, rater ids or SDs and
            counts are given for some rows only, a rated row counts more than one vote,
            no column of the above is present, or on the chosen method's errors.
    """
    if item not in data.columns:
        raise ValueError(f"data has no column {item!r}; columns are {list(data.columns)}")
    if count in data.columns:  # an empty count is one vote, as in the ratings.csv contract
        filled = data[count].where(_present(data, count), 1)
        data = data.assign(**{count: filled})
    args = {"n_splits": n_splits, "seed": seed, "metric": metric}
    if score in data.columns:
        ids = _present(data, rater)
        if ids is not None and ids.any():
            if not ids.all():
                raise ValueError(
                    f"column {rater!r} is empty on {int((~ids).sum())} of {len(ids)} rows: give "
                    "every rating its rater id, or none (anonymous votes)"
                )
            if count in data.columns:
                ones = pd.to_numeric(data[count], errors="coerce") == 1
                if not ones.all():
                    raise ValueError(
                        f"column {count!r} must be 1 on rows with a rater id; "
                        f"{int((~ones).sum())} row(s) are not"
                    )
            return noise_ceiling(data, item=item, rater=rater, score=score, **args)
        if count in data.columns:
            return vote_ceiling(data, item=item, value=score, count=count, **args)
        one_each = data[[item, score]].assign(_votes=1)
        return vote_ceiling(one_each, item=item, value=score, count="_votes", **args)
    if mean in data.columns:
        given = {c: _present(data, c) for c in (sd, n)}
        if all(g is None or not g.any() for g in given.values()):
            return mean_only_ceiling(data, item=item)
        for c, g in given.items():
            if g is None or not g.all():
                empty = len(data) if g is None else int((~g).sum())
                raise ValueError(
                    f"column {c!r} is missing or empty on {empty} of {len(data)} rows: a "
                    f"ceiling from summaries needs {sd!r} and {n!r} for every image"
                )
        return summary_ceiling(data, item=item, mean=mean, sd=sd, n=n, **args)
    raise ValueError(
        f"data has neither {score!r} (ratings or votes) nor {mean!r} (summaries); columns "
        f"are {list(data.columns)}"
    )


# --- shared ----------------------------------------------------------------------------------


def _check_args(metric: str, n_splits: int) -> None:
    if metric not in ("spearman", "pearson"):
        raise ValueError(f"metric must be 'spearman' or 'pearson', got {metric!r}")
    if n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}")


def _present(data: pd.DataFrame, column: str) -> pd.Series | None:
    """Which rows have a value in ``column`` (empty strings count as none), or None."""
    if column not in data.columns:
        return None
    values = data[column]
    return values.notna() & (values.astype(str).str.strip() != "")


def _numeric(values: pd.Series, column: str, ids: Any, item: str) -> NDArray[np.float64]:
    """A column as finite floats, or an error naming it and the first bad image."""
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    _first_bad(~np.isfinite(numeric), column, ids, item, "a missing or non-numeric value")
    return numeric


def _counts(values: NDArray[Any], column: str, ids: Any, item: str) -> NDArray[np.int64]:
    """Vote counts as integers, or an error naming the column and the first bad image."""
    numeric = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    _first_bad(~np.isfinite(numeric), column, ids, item, "a missing or non-numeric count")
    _first_bad(numeric < 0, column, ids, item, "a negative count")
    _first_bad(numeric != np.round(numeric), column, ids, item, "a count that is not whole")
    return numeric.astype(np.int64)


def _first_bad(bad: NDArray[np.bool_], column: str, ids: Any, item: str, what: str) -> None:
    if bad.any():
        first = np.asarray(ids)[np.argmax(bad)]
        first = first.item() if isinstance(first, np.generic) else first
        raise ValueError(
            f"column {column!r} has {what} on {int(bad.sum())} row(s), first for {item} {first!r}"
        )


def _split_rs(
    halves: Iterator[tuple[NDArray[np.float64], NDArray[np.float64]]],
    n_images: int,
    n_splits: int,
    metric: str,
) -> NDArray[np.float64]:
    """The correlation of each split's half-means, ranked and correlated a block at a time."""
    block = max(1, min(n_splits, _BLOCK_CELLS // n_images))
    out: list[NDArray[np.float64]] = []
    rows_a: list[NDArray[np.float64]] = []
    rows_b: list[NDArray[np.float64]] = []
    for a, b in halves:
        rows_a.append(a)
        rows_b.append(b)
        if len(rows_a) == block:
            out.append(_correlate(np.vstack(rows_a), np.vstack(rows_b), metric))
            rows_a, rows_b = [], []
    if rows_a:
        out.append(_correlate(np.vstack(rows_a), np.vstack(rows_b), metric))
    return np.concatenate(out)


def _correlate(a: NDArray[np.float64], b: NDArray[np.float64], metric: str) -> NDArray[np.float64]:
    if metric == "spearman":
        a, b = stats.rankdata(a, axis=1), stats.rankdata(b, axis=1)
    return _rowwise_pearson(a, b)


def _from_split_rs(
    r: NDArray[np.float64],
    metric: str,
    method: str,
    *,
    n_images: int,
    n_ratings: int,
    median_raters: float,
) -> NoiseCeiling:
    """Average the splits' r, Spearman-Brown, square root: as ``noise_ceiling`` does."""
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
