"""Reliability of a set of raters: Krippendorff's alpha and the ICC family.

Both take a tidy frame (``image_id``, ``rater``, ``score``) or a raters x items matrix with
NaN for missing (:func:`judgepanel.stats.ratings.rating_matrix`).

* :func:`krippendorff_alpha` and :func:`alpha_interval`: alpha at the nominal, ordinal,
  interval or ratio level, missing ratings allowed, with a percentile bootstrap over items.
  Hand-written, for speed in the bootstrap and because ``krippendorff`` is only a test
  reference here: alpha is a ratio of two sums over units, so each unit's contribution is
  computed once and a resample of units is a multiplicity vector; 10,000 resamples of 500
  items cost a few matrix products (well under a second).
* :func:`icc_table`: ICC(1,1), ICC(2,1), ICC(3,1) and their k-rater forms with F tests and
  F-based intervals, on the items every rater rated (complete cases, counted in the table).
  Hand-written from the two-way ANOVA mean squares, so that the library does not depend on
  ``pingouin`` (a test-only reference, with its own pandas pins and 2-decimal CIs).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.stats import f as f_dist

from judgepanel.stats.bootstrap import (
    check_confidence,
    count_blocks,
    multiplicities,
    percentile_ci,
)
from judgepanel.stats.correlation import as_counts
from judgepanel.stats.ratings import RatingMatrix, rating_matrix

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    return level


class AlphaParts:
    """Each unit's share of Krippendorff's alpha, for alpha on any multiset of units.

    With o the coincidence matrix, n_c its margins, n = sum n_c (pairable values) and
    delta the level's squared distance, alpha = 1 - (n - 1) sum o delta / sum n_c n_k delta.
    A unit u with m_u >= 2 ratings adds (n_u n_u' - diag n_u) / (m_u - 1) to o, n_u its value
    counts; units with fewer ratings add nothing. A resample given as draw counts w therefore
    has o = sum_u w_u o_u and n_c = sum_u w_u n_uc:

    * nominal, ratio: delta is fixed, so the numerator is w . d (d_u = unit u's disagreement)
      and the denominator a quadratic form in n(w);
    * interval: both sums are moments, sum over pairs (v_i - v_j)^2 = 2 m sum (v - mean)^2,
      so no value domain is needed (continuous scores are fine);
    * ordinal: delta_ck = (M_c - M_k)^2 with M the categories' mid-ranks under n(w)
      (cumsum n - n / 2), so it changes with the resample; o(w) is one matrix product.

    The values equal ``krippendorff.alpha`` (value domain = the observed values) on the
    materialised resample.
    """

    def __init__(self, values: NDArray[np.float64], level: str) -> None:
        self.level = check_level(level)
        rated = np.isfinite(values)
        m = rated.sum(axis=0)
        pairable = m >= 2
        use = rated & pairable[None, :]
        self.m = np.where(pairable, m, 0).astype(np.float64)
        self.n_units = values.shape[1]
        denom = np.where(pairable, self.m - 1.0, 1.0)
        if level == "interval":
            pooled = values[use]
            centre = pooled.mean() if pooled.size else 0.0
            v = np.where(use, values - centre, 0.0)
            self.s1 = v.sum(axis=0)
            self.s2 = (v * v).sum(axis=0)
            unit_mean = self.s1 / np.maximum(self.m, 1.0)
            dev = np.where(use, v - unit_mean[None, :], 0.0)
            self.d = 2.0 * self.m * (dev * dev).sum(axis=0) / denom
            return
        domain = np.unique(values[use])
        self.domain = domain
        codes = np.searchsorted(domain, np.where(use, values, domain[0] if domain.size else 0))
        units = np.broadcast_to(np.arange(self.n_units), values.shape)
        flat = units[use] * domain.size + codes[use]
        self.counts = np.bincount(flat, minlength=self.n_units * domain.size).reshape(
            self.n_units, domain.size
        )
        self.counts = self.counts.astype(np.float64)
        if level == "nominal":
            self.d = (self.m**2 - (self.counts**2).sum(axis=1)) / denom
        elif level == "ratio":
            total = domain[:, None] + domain[None, :]
            diff = domain[:, None] - domain[None, :]
            ratio = np.divide(diff, total, out=np.zeros_like(total), where=total != 0)
            self.delta = ratio**2
            self.d = np.einsum("uc,ck,uk->u", self.counts, self.delta, self.counts) / denom
        else:
            k = domain.size
            outer = self.counts[:, :, None] * self.counts[:, None, :]
            outer[:, np.arange(k), np.arange(k)] -= self.counts
            self.coincidences = (outer / denom[:, None, None]).reshape(self.n_units, k * k)

    def alpha(self, counts: NDArray[np.float64]) -> NDArray[np.float64]:
        """Alpha per resample, from draw counts laid out units x resamples; NaN where the
        resample's pairable values are all equal (no expected disagreement)."""
        n = self.m @ counts
        if self.level == "interval":
            s1, s2 = self.s1 @ counts, self.s2 @ counts
            num = self.d @ counts
            den = 2.0 * (n * s2 - s1 * s1)
        elif self.level in ("nominal", "ratio"):
            num = self.d @ counts
            nc = self.counts.T @ counts
            if self.level == "nominal":
                den = n * n - (nc * nc).sum(axis=0)
            else:
                den = np.einsum("cb,ck,kb->b", nc, self.delta, nc)
        else:
            k = self.domain.size
            nc = self.counts.T @ counts
            o = (self.coincidences.T @ counts).reshape(k, k, -1)
            mid = np.cumsum(nc, axis=0) - nc / 2.0
            dist = (mid[:, None, :] - mid[None, :, :]) ** 2
            num = np.einsum("ckb,ckb->b", o, dist)
            den = np.einsum("cb,ckb,kb->b", nc, dist, nc)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = 1.0 - (n - 1.0) * num / den
        out[~(den > 0)] = np.nan
        return out


def krippendorff_alpha(
    data: pd.DataFrame | RatingMatrix | ArrayLike,
    level: str = "interval",
    *,
    dimension: str | None = None,
) -> float:
    """Krippendorff's alpha with missing ratings, as ``krippendorff.alpha`` computes it.

    Args:
        data: tidy frame or raters x items matrix (:func:`rating_matrix`).
        level: ``nominal``, ``ordinal``, ``interval`` or ``ratio``.
        dimension: which dimension of a multi-dimension frame.

    Raises:
        ValueError: if no item has two ratings or all pairable ratings are equal.

    Example:
        Three raters (rows) on ten items (columns), NaN where a rater skipped an item:

        >>> import krippendorff
        >>> ratings = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan],
        ...            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5],
        ...            [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5]]
        >>> round(krippendorff_alpha(ratings, "interval"), 3)
        0.862
        >>> theirs = krippendorff.alpha(reliability_data=ratings, level_of_measurement="interval")
        >>> round(krippendorff_alpha(ratings, "interval"), 6) == round(float(theirs), 6)
        True
    """
    values = rating_matrix(data, dimension=dimension).values
    parts = AlphaParts(values, level)
    if not parts.m.any():
        raise ValueError("alpha needs at least one item rated by two raters")
    value = float(parts.alpha(np.ones((parts.n_units, 1)))[0])
    if np.isnan(value):
        raise ValueError("alpha is undefined: every pairable rating has the same value")
    return value


def resampled_alpha(
    data: pd.DataFrame | RatingMatrix | ArrayLike,
    level: str = "interval",
    *,
    indices: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    dimension: str | None = None,
) -> NDArray[np.float64]:
    """Alpha on each resample of the items (the matrix's columns).

    Args:
        data: tidy frame or raters x items matrix.
        level: level of measurement.
        indices: (n_resamples, size) drawn item positions; or
        weights: (n_resamples, n_items) draw counts.
        dimension: which dimension of a multi-dimension frame.

    Returns:
        (n_resamples,) alphas equal to ``krippendorff.alpha`` on ``values[:, idx]``; NaN
        where a resample leaves no expected disagreement.
    """
    values = rating_matrix(data, dimension=dimension).values
    n = values.shape[1]
    if (indices is None) == (weights is None):
        raise ValueError("give exactly one of indices= or weights=")
    counts = multiplicities(indices, n).T if indices is not None else as_counts(weights, n)
    return AlphaParts(values, level).alpha(counts)


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha with a percentile bootstrap interval over items.

    Attributes:
        level: level of measurement.
        estimate: alpha on all items.
        ci_low, ci_high: percentile interval of alpha over resampled items.
        n_items: items with at least two ratings (the units resampled).
        n_raters: raters with at least one rating on those items.
        n_values: pairable ratings.
        n_resamples: resamples kept (those with alpha defined).
        confidence: the interval's level.
        seed: resampling seed.
    """

    level: str
    estimate: float
    ci_low: float
    ci_high: float
    n_items: int
    n_raters: int
    n_values: int
    n_resamples: int
    confidence: float
    seed: int

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels``."""
        return {**labels, **asdict(self)}


# Cells of draw counts plus coincidence columns held per chunk of resamples.
_ALPHA_CHUNK_CELLS = 2_000_000


def alpha_interval(
    data: pd.DataFrame | RatingMatrix | ArrayLike,
    level: str = "interval",
    *,
    dimension: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AlphaResult:
    """Krippendorff's alpha and its percentile bootstrap interval over items.

    Items with fewer than two ratings carry no information on agreement and are left out
    first; the rest are resampled with replacement (resample b is row b of
    ``resample_indices(n_items, n_resamples, seed)``), keeping each item's raters together.
    This is the bootstrap over images of the studies, not Hayes and Krippendorff's
    bootstrap of pairable values.

    Args:
        data: tidy frame or raters x items matrix.
        level: ``nominal``, ``ordinal``, ``interval`` or ``ratio``.
        dimension: which dimension of a multi-dimension frame.
        n_resamples: B.
        seed: resampling seed.
        confidence: level of the percentile interval.

    Example:
        >>> ratings = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan],
        ...            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5],
        ...            [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5]]
        >>> res = alpha_interval(ratings, "interval", n_resamples=200, seed=0)
        >>> print(f"alpha {res.estimate:.3f} [{res.ci_low:.3f}, {res.ci_high:.3f}], "
        ...       f"{res.n_items} items")
        alpha 0.862 [0.539, 1.000], 10 items
    """
    check_confidence(confidence)
    values = rating_matrix(data, dimension=dimension).values
    rated = np.isfinite(values)
    keep = rated.sum(axis=0) >= 2
    values = values[:, keep]
    estimate = krippendorff_alpha(values, level)
    parts = AlphaParts(values, level)
    n = values.shape[1]
    width = n + (parts.coincidences.shape[1] if level == "ordinal" else 0)
    rows = max(1, _ALPHA_CHUNK_CELLS // width)
    resampled = np.concatenate([parts.alpha(c) for c in count_blocks(n, n_resamples, seed, rows)])
    kept = resampled[np.isfinite(resampled)]
    low, high = percentile_ci(kept, confidence) if kept.size else (np.nan, np.nan)
    return AlphaResult(
        level=level,
        estimate=estimate,
        ci_low=low,
        ci_high=high,
        n_items=int(n),
        n_raters=int(rated[:, keep].any(axis=1).sum()),
        n_values=int(parts.m.sum()),
        n_resamples=int(kept.size),
        confidence=float(confidence),
        seed=int(seed),
    )


# --- intraclass correlations ----------------------------------------------------------------

ICC_FORMS: tuple[tuple[str, str, str], ...] = (
    ("ICC(1,1)", "ICC(1,1)", "one-way random effects, single rater"),
    ("ICC(2,1)", "ICC(A,1)", "two-way random effects, absolute agreement, single rater"),
    ("ICC(3,1)", "ICC(C,1)", "two-way mixed effects, consistency, single rater"),
    ("ICC(1,k)", "ICC(1,k)", "one-way random effects, mean of k raters"),
    ("ICC(2,k)", "ICC(A,k)", "two-way random effects, absolute agreement, mean of k raters"),
    ("ICC(3,k)", "ICC(C,k)", "two-way mixed effects, consistency, mean of k raters"),
)
"""(Shrout and Fleiss name, McGraw and Wong name as pingouin prints it, description)."""


def icc_table(
    data: pd.DataFrame | RatingMatrix | ArrayLike,
    *,
    dimension: str | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The six ICC forms with F tests and F-based intervals, on complete cases.

    From the two-way ANOVA of items x raters (n items, k raters): MSB between items, MSJ
    between raters, MSE residual, MSW = (SS_raters + SS_residual) / (n (k - 1)) within
    items. ICC(1,1) = (MSB - MSW) / (MSB + (k-1) MSW); ICC(2,1) = (MSB - MSE) / (MSB +
    (k-1) MSE + k (MSJ - MSE) / n); ICC(3,1) = (MSB - MSE) / (MSB + (k-1) MSE); the k forms
    divide by MSB (plus (MSJ - MSE) / n for ICC(2,k)). F = MSB / MSW on (n-1, n(k-1)) df
    for form 1, MSB / MSE on (n-1, (n-1)(k-1)) for forms 2 and 3. Intervals as McGraw and
    Wong (1996), ICC(2,*) with Satterthwaite's df; the same numbers as
    ``pingouin.intraclass_corr`` (which rounds its CI95 to 2 decimals).

    The ANOVA needs balanced data, so only items rated by every rater are used (raters
    with no rating at all are not counted); ``n_items`` and ``n_items_incomplete`` say how
    many items were used and left out.

    Args:
        data: tidy frame or raters x items matrix.
        dimension: which dimension of a multi-dimension frame.
        confidence: level of the intervals.

    Returns:
        One row per form: ``type`` (Shrout-Fleiss), ``mcgraw_wong``, ``description``,
        ``estimate``, ``ci_low``, ``ci_high``, ``F``, ``df1``, ``df2``, ``p``,
        ``n_items``, ``n_raters``, ``n_items_incomplete``, ``confidence``.

    Example:
        Three raters (rows) on ten items (columns); two items lack a rating and are left out:

        >>> ratings = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan],
        ...            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5],
        ...            [np.nan, 3, 3, 3, 2, 3, 4, 2, 2, 5]]
        >>> row = icc_table(ratings).set_index("type").loc["ICC(2,1)"]
        >>> print(f"ICC(2,1) {row.estimate:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}], "
        ...       f"{row.n_items} items, {row.n_items_incomplete} incomplete")
        ICC(2,1) 0.755 [0.407, 0.939], 8 items, 2 incomplete
    """
    alpha = 1.0 - check_confidence(confidence)
    x = rating_matrix(data, dimension=dimension).values.T  # items x raters
    x = x[:, np.isfinite(x).any(axis=0)]
    complete = np.isfinite(x).all(axis=1)
    y = x[complete]
    n, k = y.shape
    if n < 2 or k < 2:
        raise ValueError(
            f"the ICC needs at least 2 items rated by all of at least 2 raters; "
            f"{n} complete item(s) of {x.shape[0]}, {k} rater(s)"
        )
    grand = y.mean()
    ss_items = k * ((y.mean(axis=1) - grand) ** 2).sum()
    ss_raters = n * ((y.mean(axis=0) - grand) ** 2).sum()
    ss_resid = ((y - y.mean(axis=1, keepdims=True) - y.mean(axis=0) + grand) ** 2).sum()
    df1, df_w, df_e = n - 1, n * (k - 1), (n - 1) * (k - 1)
    msb, msj, mse = ss_items / df1, ss_raters / (k - 1), ss_resid / df_e
    msw = (ss_raters + ss_resid) / df_w
    with np.errstate(divide="ignore", invalid="ignore"):
        icc1 = (msb - msw) / (msb + (k - 1) * msw)
        icc2 = (msb - mse) / (msb + (k - 1) * mse + k * (msj - mse) / n)
        icc3 = (msb - mse) / (msb + (k - 1) * mse)
        icc1k = (msb - msw) / msb
        icc2k = (msb - mse) / (msb + (msj - mse) / n)
        icc3k = (msb - mse) / msb
        f1, f3 = msb / msw, msb / mse
        p1, p3 = f_dist.sf(f1, df1, df_w), f_dist.sf(f3, df1, df_e)
        q = 1.0 - alpha / 2.0
        f1l, f1u = f1 / f_dist.ppf(q, df1, df_w), f1 * f_dist.ppf(q, df_w, df1)
        f3l, f3u = f3 / f_dist.ppf(q, df1, df_e), f3 * f_dist.ppf(q, df_e, df1)
        fj = msj / mse
        spread = n * (1 + (k - 1) * icc2) - k * icc2
        v = df_e * (k * icc2 * fj + spread) ** 2 / (df1 * k**2 * icc2**2 * fj**2 + spread**2)
        f2u, f2l = f_dist.ppf(q, n - 1, v), f_dist.ppf(q, v, n - 1)
        pooled = k * msj + (k * n - k - n) * mse
        l2 = n * (msb - f2u * mse) / (f2u * pooled + n * msb)
        u2 = n * (f2l * msb - mse) / (pooled + n * f2l * msb)
        intervals = [
            ((f1l - 1) / (f1l + k - 1), (f1u - 1) / (f1u + k - 1)),
            (l2, u2),
            ((f3l - 1) / (f3l + k - 1), (f3u - 1) / (f3u + k - 1)),
            (1 - 1 / f1l, 1 - 1 / f1u),
            (l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))),
            (1 - 1 / f3l, 1 - 1 / f3u),
        ]
    estimates = [icc1, icc2, icc3, icc1k, icc2k, icc3k]
    rows = []
    for j, ((name, mw, text), est, (low, high)) in enumerate(
        zip(ICC_FORMS, estimates, intervals, strict=True)
    ):
        one_way = j % 3 == 0
        rows.append(
            {
                "type": name,
                "mcgraw_wong": mw,
                "description": text,
                "estimate": float(est),
                "ci_low": float(low),
                "ci_high": float(high),
                "F": float(f1 if one_way else f3),
                "df1": int(df1),
                "df2": int(df_w if one_way else df_e),
                "p": float(p1 if one_way else p3),
                "n_items": int(n),
                "n_raters": int(k),
                "n_items_incomplete": int(x.shape[0] - n),
                "confidence": float(confidence),
            }
        )
    return pd.DataFrame(rows)
