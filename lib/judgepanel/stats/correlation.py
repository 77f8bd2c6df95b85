"""Rank correlations against the human mean, on a sample and on weighted resamples.

The metrics of the aesthetic studies are Spearman's rho and Kendall's tau-b, both with
ties (midranks; the tau-b tie correction), exactly as scipy defines them. The bootstrap
needs the same numbers on thousands of resamples. A resample of n images is a multiplicity
vector ``w`` (how often each image was drawn), and every quantity both metrics need (the
midranks of the materialised resample, concordant minus discordant pairs, tie counts) is a
sum weighted by ``w``. :func:`weighted_spearman` and :func:`weighted_kendall_b` compute them
for a batch of multiplicity rows at once, and agree with scipy run on the materialised
resample (``y[idx]``, ``x[idx]``) to rounding error.

The MTMM analysis asks what a prompt knows about a human attribute beyond the overall
verdict: :func:`partial_spearman` and :func:`residual_rank_variance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

Metric = Literal["spearman", "kendall_b"]
METRICS: tuple[str, ...] = ("spearman", "kendall_b")

# The first few offending positions are named in error messages.
_SHOW = 5


def as_vector(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """Return ``values`` as a finite 1-D float array, or raise a ValueError naming it.

    Args:
        values: any 1-D array-like of numbers.
        name: what the caller calls it, used in the error message.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        where = ", ".join(str(i) for i in bad[:_SHOW]) + (", ..." if bad.size > _SHOW else "")
        raise ValueError(
            f"{name} contains {bad.size} NaN or infinite value(s), at position(s) {where}"
        )
    return arr


def as_pair(
    y: ArrayLike, x: ArrayLike, names: tuple[str, str] = ("y", "x"), min_n: int = 2
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate two paired vectors: finite, 1-D, equal length, at least ``min_n`` long."""
    yv = as_vector(y, names[0])
    xv = as_vector(x, names[1])
    if yv.size != xv.size:
        raise ValueError(
            f"{names[0]} and {names[1]} differ in length: {names[0]} has {yv.size}, "
            f"{names[1]} has {xv.size}"
        )
    if yv.size < min_n:
        raise ValueError(f"need at least {min_n} paired values, got {yv.size}")
    return yv, xv


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    return metric


def spearman(y: ArrayLike, x: ArrayLike) -> float:
    """Spearman's rho between ``y`` and ``x``, ties given midranks (as scipy); NaN when
    either side is constant (rho is undefined there), as scipy returns, without its warning.

    Raises:
        ValueError: if either input holds NaN/inf, or their lengths differ.

    Example:
        >>> from scipy import stats
        >>> y, x = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
        >>> round(spearman(y, x), 3)
        0.829
        >>> bool(np.isclose(spearman(y, x), stats.spearmanr(y, x).statistic))
        True
    """
    yv, xv = as_pair(y, x)
    if np.ptp(yv) == 0 or np.ptp(xv) == 0:
        return float("nan")
    return float(stats.spearmanr(yv, xv).statistic)


def kendall_b(y: ArrayLike, x: ArrayLike) -> float:
    """Kendall's tau-b between ``y`` and ``x``, tie-corrected (as scipy's default).

    Raises:
        ValueError: if either input holds NaN/inf, or their lengths differ.

    Example:
        >>> round(kendall_b([1, 2, 2, 3], [1, 3, 2, 2]), 3)  # ties on both sides
        0.4
    """
    yv, xv = as_pair(y, x)
    return float(stats.kendalltau(yv, xv, variant="b").statistic)


def correlate(y: ArrayLike, x: ArrayLike, metric: str) -> float:
    """``spearman`` or ``kendall_b`` by name."""
    return spearman(y, x) if check_metric(metric) == "spearman" else kendall_b(y, x)


# Up to this many tie groups, group totals are summed block by block over the sorted
# items (reduceat); with more, a cumulative sum over the items is as fast.
_FEW_GROUPS = 256

# Up to this many joint (y, x) groups, Kendall's sign product is computed by einsum, in
# this thread; above it, by BLAS. A multi-threaded BLAS call on a small matrix costs more
# in thread hand-offs than it saves, badly so on a busy machine.
_SMALL_SIGNS = 128


class TieGroups:
    """The sort structure of one variable, reused for every resample.

    Items with equal values form a tie group; groups are numbered in increasing order of
    value. Resamples are given as draw counts laid out items x resamples (``counts[i, b]``
    = how often item i was drawn in resample b). The draws within each group and below it
    are then sums over the sorted items, so the midranks of a resample cost O(n), with no
    sort per resample.

    Attributes:
        group: the tie group of each item (0 = smallest value).
        n_groups: number of distinct values.
    """

    def __init__(self, values: NDArray[np.float64]) -> None:
        n = values.size
        self._order = np.argsort(values, kind="stable")
        sorted_values = values[self._order]
        first = np.ones(n, dtype=bool)
        first[1:] = sorted_values[1:] != sorted_values[:-1]
        starts = np.flatnonzero(first)
        self._last = np.r_[starts[1:], n] - 1
        self.n_groups = int(starts.size)
        self.group = np.empty(n, dtype=np.intp)
        self.group[self._order] = np.cumsum(first) - 1
        self._starts = starts
        self._few = self.n_groups <= _FEW_GROUPS

    def within(self, counts: NDArray[np.float64]) -> NDArray[np.float64]:
        """Draws falling in each tie group: (n_groups, resamples)."""
        if self.n_groups == self.group.size:
            return counts[self._order]
        if self._few:
            return np.add.reduceat(counts[self._order], self._starts, axis=0)
        return np.diff(np.cumsum(counts[self._order], axis=0)[self._last], axis=0, prepend=0.0)

    def below_within(
        self, counts: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Draws strictly below each group and within it: two (n_groups, resamples) arrays."""
        if self.n_groups == self.group.size:
            within = counts[self._order]
        elif self._few:
            within = np.add.reduceat(counts[self._order], self._starts, axis=0)
        else:
            through = np.cumsum(counts[self._order], axis=0)[self._last]
            within = np.diff(through, axis=0, prepend=0.0)
            return through - within, within
        below = np.cumsum(within, axis=0)
        below -= within
        return below, within

    def centred_ranks(
        self, counts: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Midranks within each materialised resample, minus their mean (N + 1) / 2.

        A copy of an item sits in a tie block with every copy of every item of equal
        value, so all copies share the block's average rank, as in
        ``scipy.stats.rankdata(method="average")``; N is the resample's draw count.

        Returns:
            (group_ranks, within): the centred midrank of each tie group and the draws
            in it, both (n_groups, resamples). ``group_ranks[group]`` gives each item's
            rank; items not drawn get the rank they would have had, with no weight.
        """
        below, within = self.below_within(counts)
        ranks = within - counts.sum(axis=0)
        ranks *= 0.5
        ranks += below
        return ranks, within

    def tied_pairs(self, counts: NDArray[np.float64]) -> NDArray[np.float64]:
        """Pairs of draws tied on this variable, sum of t(t-1)/2 over groups: (resamples,)."""
        t = self.within(counts)
        return np.einsum("kb,kb->b", t, t - 1.0) / 2.0


def as_counts(weights: ArrayLike, n: int) -> NDArray[np.float64]:
    """Validate (resamples x n) draw counts; return them laid out items x resamples."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 1:
        w = w[None, :]
    if w.ndim != 2 or w.shape[1] != n:
        raise ValueError(f"weights must have shape (n_resamples, {n}), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or np.any(w != np.floor(w)):
        raise ValueError("weights must be non-negative whole numbers (draw counts)")
    return np.ascontiguousarray(w.T)


class RankedTarget:
    """One variable's centred midranks on a chunk of resamples, shared by every arm.

    Holds what Spearman needs of y: the weighted ranks of each item (``weighted``, the
    ranks times the draw counts) and their sum of squares, so each arm scored against y
    adds only its own ranks.
    """

    def __init__(self, ties: TieGroups, counts: NDArray[np.float64]) -> None:
        ranks, within = ties.centred_ranks(counts)
        self.weighted = counts * ranks[ties.group]
        self.sum_sq = np.einsum("kb,kb->b", within * ranks, ranks)

    @classmethod
    def kept(cls, weighted: NDArray[np.float64], sum_sq: NDArray[np.float64]) -> RankedTarget:
        """The target made earlier on the same counts, from its two arrays."""
        target = cls.__new__(cls)
        target.weighted, target.sum_sq = weighted, sum_sq
        return target

    def spearman(self, ties: TieGroups, counts: NDArray[np.float64]) -> NDArray[np.float64]:
        """Rho of another variable (its ``ties``) with this one, per resample."""
        ranks, within = ties.centred_ranks(counts)
        cross = np.einsum("ib,ib->b", self.weighted, ranks[ties.group])
        sum_sq = np.einsum("kb,kb->b", within * ranks, ranks)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = cross / np.sqrt(self.sum_sq * sum_sq)
        return np.clip(rho, -1.0, 1.0)


def weighted_spearman(y: ArrayLike, x: ArrayLike, weights: ArrayLike) -> NDArray[np.float64]:
    """Spearman's rho on each resample given as a row of draw counts.

    Rho is the Pearson correlation of midranks; on the materialised resample it is a sum
    over items weighted by their draw counts.

    Args:
        y, x: the paired samples (n,).
        weights: (n_resamples, n) draw counts; row b is resample b.

    Returns:
        (n_resamples,) rho values equal to scipy's on the materialised resamples; NaN
        where a resample leaves either variable constant (scipy returns NaN there too).
    """
    yv, xv = as_pair(y, x)
    counts = as_counts(weights, yv.size)
    return RankedTarget(TieGroups(yv), counts).spearman(TieGroups(xv), counts)


class PairSigns:
    """What Kendall's tau needs of a pair of variables, reused for every resample.

    Items with the same (y, x) pair are interchangeable for tau, so they are merged into
    joint groups (at most n; far fewer with tied scores). ``signs`` holds
    sign(y_g - y_h) * sign(x_g - x_h) between joint groups g and h: +1 concordant, -1
    discordant, 0 tied. float32 is exact for it and for its products with draw totals,
    whose partial sums are whole numbers no larger than the draw count.
    """

    def __init__(self, y: NDArray[np.float64], x: NDArray[np.float64]) -> None:
        pairs, codes = np.unique(np.column_stack([y, x]), axis=0, return_inverse=True)
        self.groups = TieGroups(codes.reshape(-1).astype(np.float64))
        sy = np.sign(pairs[:, None, 0] - pairs[None, :, 0])
        sx = np.sign(pairs[:, None, 1] - pairs[None, :, 1])
        self.signs = (sy * sx).astype(np.float32)

    def con_minus_dis(self, counts: NDArray[np.float64]) -> NDArray[np.float64]:
        """Concordant minus discordant pairs of draws in each resample.

        Two draws from one joint group are tied and count zero. Draws from groups g and h
        form v_g v_h pairs of sign s_gh, v the group's draws, so the total is v' S v / 2:
        one matrix product for the whole chunk.
        """
        v = self.groups.within(counts)
        v32 = v.astype(np.float32)
        if self.signs.shape[0] <= _SMALL_SIGNS:
            sv = np.einsum("gh,hb->gb", self.signs, v32)
        else:
            sv = self.signs @ v32
        return np.einsum("gb,gb->b", v, sv, dtype=np.float64) / 2.0


def weighted_kendall_b(y: ArrayLike, x: ArrayLike, weights: ArrayLike) -> NDArray[np.float64]:
    """Kendall's tau-b on each resample given as a row of draw counts.

    Concordant minus discordant pairs come from :class:`PairSigns`; the tie terms are
    sums of t(t-1)/2 over each variable's tie groups, t the group's draws.

    Args:
        y, x: the paired samples (n,).
        weights: (n_resamples, n) draw counts.

    Returns:
        (n_resamples,) tau-b values equal to scipy's on the materialised resamples; NaN
        where a resample leaves either variable constant.
    """
    yv, xv = as_pair(y, x)
    counts = as_counts(weights, yv.size)
    return tau_b_from_parts(
        counts,
        PairSigns(yv, xv).con_minus_dis(counts),
        TieGroups(yv).tied_pairs(counts),
        TieGroups(xv).tied_pairs(counts),
    )


def tau_b_from_parts(
    counts: NDArray[np.float64],
    con_minus_dis: NDArray[np.float64],
    y_tied: NDArray[np.float64],
    x_tied: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Tau-b per resample from the draw counts (items x resamples), concordant minus
    discordant pairs and each variable's tied pairs (as scipy: C-D / sqrt / sqrt)."""
    total = counts.sum(axis=0)
    pairs = total * (total - 1.0) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = con_minus_dis / np.sqrt(pairs - y_tied) / np.sqrt(pairs - x_tied)
    tau[(pairs - y_tied <= 0) | (pairs - x_tied <= 0)] = np.nan
    return np.clip(tau, -1.0, 1.0)


def as_covariates(covar: ArrayLike, n: int) -> NDArray[np.float64]:
    """Covariates as an (n, k) finite array; a 1-D input is one covariate."""
    c = np.asarray(covar, dtype=np.float64)
    if c.ndim == 1:
        c = c[:, None]
    if c.ndim != 2 or c.shape[0] != n:
        raise ValueError(
            f"covar must have {n} rows (one per item), one column per covariate; "
            f"got shape {c.shape}"
        )
    for j in range(c.shape[1]):
        as_vector(c[:, j], f"covar column {j}")
    return c


# A variable keeping at most this share of its rank variance after the covariates is
# taken as fully explained by them. An exact linear dependence leaves ~1e-30 of it on the
# residual route and ~1e-16 on the covariance route (cancellation); a real residual on
# ranks of a few hundred items keeps far more than 1e-10.
SINGULAR_SHARE = 1e-10
# Covariate directions with less than this share of the largest covariate variance are
# collinear (the pseudo-inverse drops them, as least squares drops a rank-deficient column).
_COLLINEAR = 1e-10


def explained(
    residual_ss: NDArray[np.float64] | float, total_ss: NDArray[np.float64] | float
) -> NDArray[np.bool_] | bool:
    """Whether a residual sum of squares is rounding error relative to the total.

    True where at most ``SINGULAR_SHARE`` of the total is left (a constant variable,
    total 0, counts as explained). A relative test, because exact collinearity leaves
    residuals of about 1e-15 rather than 0.
    """
    return np.asarray(residual_ss) <= SINGULAR_SHARE * np.asarray(total_ss)


def partial_from_covariance(cov: NDArray[np.float64]) -> NDArray[np.float64]:
    """Partial correlation of variables 0 and 1 given the rest, per (v x v) matrix in a batch.

    The covariance of (0, 1) left after a least-squares fit on the other variables is the
    Schur complement S_aa - S_ac S_cc^+ S_ca. The pseudo-inverse handles a constant or
    collinear covariate as least squares does, so this equals correlating the residuals
    (:func:`partial_spearman` on the materialised data). NaN where variable 0 or 1 is
    fully explained by the rest (see :func:`explained`): its residual is rounding error,
    whose sign is arbitrary.
    """
    kept = cov[:, :2, :2]
    if cov.shape[1] > 2:
        cross = cov[:, :2, 2:]
        inverse = np.linalg.pinv(cov[:, 2:, 2:], rtol=_COLLINEAR, hermitian=True)
        kept = kept - cross @ inverse @ np.swapaxes(cross, 1, 2)
    var_x, var_y, cov_xy = kept[:, 0, 0], kept[:, 1, 1], kept[:, 0, 1]
    ok = ~(explained(var_x, cov[:, 0, 0]) | explained(var_y, cov[:, 1, 1]))
    out = np.full(cov.shape[0], np.nan)
    out[ok] = cov_xy[ok] / np.sqrt(var_x[ok] * var_y[ok])
    return np.clip(out, -1.0, 1.0)


def _ranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    return stats.rankdata(values, method="average", axis=0)


def _residualise(target: NDArray[np.float64], design: NDArray[np.float64]) -> NDArray:
    """Least-squares residuals of ``target`` on ``design`` plus an intercept.

    The intercept is fitted by centring both. Design directions with less than
    ``_COLLINEAR`` of the largest variance are dropped (singular values below its square
    root), as :func:`partial_from_covariance` drops them, so both routes agree on a
    collinear or constant covariate.
    """
    centred = target - target.mean(axis=0)
    d = design - design.mean(axis=0)
    coef, *_ = np.linalg.lstsq(d, centred, rcond=float(np.sqrt(_COLLINEAR)))
    return centred - d @ coef


def partial_spearman(x: ArrayLike, y: ArrayLike, covar: ArrayLike | Sequence) -> float:
    """Rank partial correlation of ``x`` and ``y`` given one or several covariates.

    Everything is ranked (midranks), the ranks of ``x`` and ``y`` are residualised on
    the covariates' ranks by least squares with an intercept, and the residuals are
    correlated. With one covariate this equals the first-order formula
    (r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2)) on Spearman correlations.

    Args:
        x, y: paired samples (n,).
        covar: (n,) for one covariate or (n, k) for k covariates.

    Raises:
        ValueError: on NaN/inf, mismatched lengths, or when x or y is fully explained by
            the covariates (a residual within ``SINGULAR_SHARE`` of zero, see
            :func:`explained`).
    """
    xv, yv = as_pair(x, y, ("x", "y"), min_n=3)
    c = as_covariates(covar, xv.size)
    rc = _ranks(c)
    rx, ry = _ranks(xv), _ranks(yv)
    ex = _residualise(rx, rc)
    ey = _residualise(ry, rc)
    if explained(ex @ ex, _centred_ss(rx)) or explained(ey @ ey, _centred_ss(ry)):
        raise ValueError("x or y is fully explained by covar; the partial correlation is undefined")
    return float(np.clip(ex @ ey / np.sqrt(ex @ ex * (ey @ ey)), -1.0, 1.0))


def _centred_ss(values: NDArray[np.float64]) -> float:
    centred = values - values.mean()
    return float(centred @ centred)


def residual_rank_variance(x: ArrayLike, covar: ArrayLike | Sequence) -> float:
    """Share of ``x``'s rank variance left after partialling out ``covar`` (1 - R^2).

    A partial correlation on a residual that holds a few percent of the variance sits on
    a nearly degenerate quantity; the MTMM tables report this share next to it.
    """
    xv = as_vector(x, "x")
    c = as_covariates(covar, xv.size)
    rx = _ranks(xv)
    total = _centred_ss(rx)
    if total == 0:
        raise ValueError("x is constant; its rank variance is zero")
    resid = _residualise(rx, _ranks(c))
    return float(resid @ resid / total)
