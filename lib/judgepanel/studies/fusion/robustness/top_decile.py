"""Precision at the top 10%: what a shortlist built from an arm recovers."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from judgepanel.stats import (
    bootstrap_p,
    percentile_ci,
    resample_indices,
)


def top_weights(values: np.ndarray, m: int) -> np.ndarray:
    """Membership of each item in the top ``m`` of each row, ties shared fractionally.

    Items strictly above the m-th largest value are in (weight 1); the items tied with it
    share the remaining places equally. This is the expected membership under a random
    tie-break, so a coarse score is neither favoured nor penalised by an arbitrary order.
    """
    v = np.atleast_2d(np.asarray(values, float))
    n = v.shape[1]
    if not 1 <= m <= n:
        raise ValueError(f"top size must lie in [1, {n}], got {m}")
    thr = np.partition(v, n - m, axis=1)[:, n - m][:, None]
    above = v > thr
    tied = v == thr
    share = (m - above.sum(axis=1)) / tied.sum(axis=1)
    return above + tied * share[:, None]


def precision_at_top(y: np.ndarray, score: np.ndarray, frac: float = 0.1) -> float:
    """Share of the true top ``frac`` (by ``y``) that ``score``'s top ``frac`` recovers.

    Ties at either cut-off are shared fractionally (:func:`top_weights`). A perfect
    predictor scores 1 when ``y`` has no tie at the cut-off; a random one about ``frac``.
    """
    y, score = np.asarray(y, float), np.asarray(score, float)
    m = top_size(y.size, frac)
    return float((top_weights(y, m) * top_weights(score, m)).sum() / m)


def top_size(n: int, frac: float) -> int:
    """How many images the top ``frac`` of ``n`` holds (at least one, halves rounded up)."""
    if not 0 < frac <= 1:
        raise ValueError(f"frac must lie in (0, 1], got {frac}")
    return max(1, int(np.floor(frac * n + 0.5)))


def _resampled_precision(y, score, idx, m) -> np.ndarray:
    return (top_weights(y[idx], m) * top_weights(score[idx], m)).sum(axis=1) / m


def compare_top_decile(
    y: np.ndarray,
    arms: Mapping[str, np.ndarray],
    *,
    comparator: str = "best single",
    frac: float = 0.1,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Precision at the top ``frac`` of every arm, with bootstrap CIs, against a comparator.

    Resamples are the shared ``resample_indices(n, B, seed)``; on each, both the true top
    and each arm's top are recomputed (duplicated images count as ties). The difference
    from the comparator is paired; p is one-sided (the arm is better).

    Returns:
        arm, precision with ``precision_ci_low``/``precision_ci_high``, top_size, chance,
        and against the comparator delta with ``delta_ci_low``/``delta_ci_high`` and p.
    """
    y = np.asarray(y, float)
    m = top_size(y.size, frac)
    idx = resample_indices(y.size, n_resamples, seed)
    boot = {k: _resampled_precision(y, np.asarray(v, float), idx, m) for k, v in arms.items()}
    full = {k: precision_at_top(y, v, frac) for k, v in arms.items()}
    rows = []
    for k in arms:
        lo, hi = percentile_ci(boot[k])
        row = {
            "arm": k,
            "precision": full[k],
            "precision_ci_low": lo,
            "precision_ci_high": hi,
            "top_size": m,
            "chance": m / y.size,
        }
        if comparator in arms and k != comparator:
            d = boot[k] - boot[comparator]
            dlo, dhi = percentile_ci(d)
            row.update(
                delta=full[k] - full[comparator],
                delta_ci_low=dlo,
                delta_ci_high=dhi,
                p=bootstrap_p(d, "greater"),
            )
        rows.append(row)
    return pd.DataFrame(rows)
