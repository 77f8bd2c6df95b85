"""McNemar's test between every pair of VisionQ judges, on the questions both were asked."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar

from judgepanel.stats import bh
from judgepanel.studies.visionq.predictions import check_predictions, judge_column, select_rotation

EXACT_BELOW = 25
"""McNemar uses the exact binomial test when fewer discordant pairs than this."""


def mcnemar_pairs(preds: pd.DataFrame, *, rotation: int | None = 0) -> pd.DataFrame:
    """McNemar's test for every pair of judges on the questions both were asked.

    Exact (binomial) when the discordant count is below ``EXACT_BELOW``, else the
    chi-square with continuity correction; BH q-values across all pairs.

    Returns:
        judge_a, judge_b, n, both_correct, a_only, b_only, neither, acc_a, acc_b,
        delta (acc_a - acc_b), exact, statistic, p, q.
    """
    frame = select_rotation(check_predictions(preds), rotation)
    judge = judge_column(frame)
    if judge is None:
        raise ValueError("McNemar needs a judge column")
    keys = ["id", "rotation"] if "rotation" in frame.columns else ["id"]
    dup = frame.duplicated([judge, *keys])
    if dup.any():
        raise ValueError(
            f"duplicate predictions for {frame.loc[dup, [judge, *keys]].iloc[0].to_dict()}"
        )
    wide = frame.pivot(index=keys, columns=judge, values="correct")
    rows = []
    for a, b in itertools.combinations(sorted(wide.columns), 2):
        pair = wide[[a, b]].dropna()
        ca = pair[a].astype(bool).to_numpy()
        cb = pair[b].astype(bool).to_numpy()
        table = np.array(
            [[np.sum(ca & cb), np.sum(ca & ~cb)], [np.sum(~ca & cb), np.sum(~ca & ~cb)]]
        )
        discordant = int(table[0, 1] + table[1, 0])
        exact = discordant < EXACT_BELOW
        if discordant == 0:
            statistic, p = 0.0, 1.0
        else:
            res = mcnemar(table, exact=exact, correction=True)
            statistic, p = float(res.statistic), float(res.pvalue)
        n = len(pair)
        rows.append(
            {
                "judge_a": a,
                "judge_b": b,
                "n": n,
                "both_correct": int(table[0, 0]),
                "a_only": int(table[0, 1]),
                "b_only": int(table[1, 0]),
                "neither": int(table[1, 1]),
                "acc_a": ca.mean() if n else float("nan"),
                "acc_b": cb.mean() if n else float("nan"),
                "delta": (ca.mean() - cb.mean()) if n else float("nan"),
                "exact": exact,
                "statistic": statistic,
                "p": p,
            }
        )
    out = pd.DataFrame(rows)
    if len(out):
        out["q"] = bh(out["p"].to_numpy())
    return out
