"""VAB accuracy tables from per-task scores: ap@1 and pass^3, by set size, between judges.

Confidence intervals are percentile bootstraps over TASKS (the unit the benchmark samples).
An accuracy's interval comes from :func:`judgepanel.stats.grouped_ratios`, seeded by its
group's key, so a judge's interval does not move when another judge joins the table.
Differences between judges are paired (both judges on the same resampled tasks) and
p-values are two-sided (:func:`judgepanel.stats.bootstrap_p`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.stats import bh, grouped_ratios
from judgepanel.stats.grouped import snap_zero
from judgepanel.stats.means import finite_ci, mean_difference, resampled_means
from judgepanel.studies.vab.columns import STATS


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _total(values: np.ndarray) -> int:
    return int(np.sum(values))


def tested_q(p: pd.Series | np.ndarray, excluded: pd.Series | np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q over the rows not ``excluded`` (a non-empty reason); NaN on the
    excluded rows, which stay out of the family so they cannot loosen its correction."""
    p = np.asarray(p, dtype=float)
    keep = np.asarray(excluded, dtype=str) == ""
    q = np.full(p.shape, np.nan)
    if keep.any():
        q[keep] = bh(p[keep])
    return q


def accuracy_table(
    scores: pd.DataFrame,
    by: Sequence[str] = (),
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """ap@1 and pass^3 per judge and metric (and ``by``, e.g. ``["domain"]`` or ``["k"]``).

    Returns:
        Long table: judge, metric, *by, stat (``ap1`` | ``pass3``), n_tasks, value,
        ci_low, ci_high (bootstrap over tasks; both stats of a group on the same
        resamples), chance (averaged over the tasks), n_failed, n_missing (answers, over
        all orders).
    """
    keys = ["judge", "metric", *by]
    parts = []
    for stat in STATS:
        table = grouped_ratios(
            scores,
            keys,
            "task_id",
            stat,
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
            extra={
                "chance": (f"chance_{stat}", _mean),
                "n_failed": ("n_failed", _total),
                "n_missing": ("n_missing", _total),
            },
        )
        parts.append(table.assign(stat=stat, group=np.arange(len(table))))
    out = pd.concat(parts, ignore_index=True).sort_values(["group"], kind="stable")
    out = out.rename(columns={"n": "n_tasks", "estimate": "value"})
    cols = [*keys, "stat", "n_tasks", "value", "ci_low", "ci_high", "chance"]
    return out.loc[:, [*cols, "n_failed", "n_missing"]].reset_index(drop=True)


DEGRADATION_COLUMNS: tuple[str, ...] = (
    "judge", "metric", "stat", "n_small", "n_large", "small", "large", "delta",
    "ci_low", "ci_high", "chance_small", "chance_large",
)  # fmt: skip
"""The columns of :func:`size_degradation`, kept when it has no row."""


def size_degradation(
    scores: pd.DataFrame, *, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """How accuracy falls from two images to four or more, per judge, metric and stat.

    Returns:
        judge, metric, stat, n_small, n_large, small (k=2), large (k>=4), delta
        (large - small; a difference, never a ratio, which is infinite when no large set is
        right), ci_low, ci_high (for
        delta; the two groups resampled independently, as they hold different tasks),
        chance_small, chance_large.
    """
    rows = []  # none when the tasks lack pairs or sets of four or more: the columns remain
    for (judge, metric), sub in scores.groupby(["judge", "metric"], sort=True):
        small = sub.loc[sub["k"] == 2]
        large = sub.loc[sub["k"] >= 4]
        for stat in STATS:
            a, b = small[stat].to_numpy(float), large[stat].to_numpy(float)
            if a.size == 0 or b.size == 0:
                continue
            # Different tasks in the two groups: independent resamples (seeds seed, seed+1).
            da = resampled_means(a, n_resamples, seed)
            db = resampled_means(b, n_resamples, seed + 1)
            lo, hi = finite_ci(db - da, confidence)
            ma, mb = float(a.mean()), float(b.mean())
            rows.append(
                {
                    "judge": judge,
                    "metric": metric,
                    "stat": stat,
                    "n_small": a.size,
                    "n_large": b.size,
                    "small": ma,
                    "large": mb,
                    "delta": mb - ma,
                    "ci_low": lo,
                    "ci_high": hi,
                    "chance_small": float(small[f"chance_{stat}"].mean()),
                    "chance_large": float(large[f"chance_{stat}"].mean()),
                }
            )
    return pd.DataFrame(rows, columns=list(DEGRADATION_COLUMNS))


def compare_judges(
    scores: pd.DataFrame,
    *,
    metric: str = "tb1",
    stat: str = "pass3",
    pairs: Sequence[tuple[str, str]] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Paired differences between judges on the same tasks (bootstrap over tasks).

    Every pair is drawn with the same ``seed``: on the tasks both judges answered, all
    pairs see the same resamples. An interval end within 1e-12 of zero is zero: a mean of
    differences in thirds that is exactly zero may be summed to 1.8e-17, which would put
    the interval on one side of zero by rounding alone.

    Args:
        scores: ``task_scores`` output (direct judges and score-then-rank rankers alike).
        metric, stat: what to compare (``top1``/``bot1``/``tb1``; ``ap1``/``pass3``).
        pairs: (a, b) judge pairs; default every pair in name order.

    Returns:
        a, b, metric, stat, n_tasks, value_a, value_b, delta (a - b), ci_low, ci_high,
        p (two-sided, bootstrap), q (Benjamini-Hochberg over the pairs in the table).
    """
    sub = scores.loc[scores["metric"] == metric]
    wide = sub.pivot_table(index="task_id", columns="judge", values=stat, aggfunc="first")
    judges = sorted(wide.columns)
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(judges) for b in judges[i + 1 :]]
    rows = []
    for a, b in pairs:
        if a not in wide.columns or b not in wide.columns:
            raise ValueError(f"no {metric} scores for judge {a if a not in wide else b!r}")
        both = wide[[a, b]].dropna()
        va, vb = both[a].to_numpy(float), both[b].to_numpy(float)
        diff = mean_difference(va - vb, n_resamples=n_resamples, seed=seed, confidence=confidence)
        diff["ci_low"], diff["ci_high"] = (
            float(x) for x in snap_zero([diff["ci_low"], diff["ci_high"]])
        )
        rows.append(
            {
                "a": a,
                "b": b,
                "metric": metric,
                "stat": stat,
                "n_tasks": int(va.size),
                "value_a": float(va.mean()),
                "value_b": float(vb.mean()),
                **diff,
            }
        )
    out = pd.DataFrame(rows)
    if len(out):
        out["q"] = bh(out["p"].to_numpy())
    return out
