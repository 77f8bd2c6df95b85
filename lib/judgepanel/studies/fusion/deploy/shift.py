"""Do the new images look like the training images? A check per feature.

A combiner fitted on one kind of image extrapolates on another; gradient-boosted trees
in particular are flat outside the range they were trained on. For every feature this
module compares the new images with the training images: the share of new values below
the training minimum or above its maximum, and a two-sample Kolmogorov-Smirnov test.
The p-values of the features form one family, so they get Benjamini-Hochberg q-values;
a feature "differs" at q < 0.05.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy.stats import ks_2samp

from judgepanel.stats import bh

ALPHA = 0.05
"""The q-value below which a feature counts as shifted."""


SHIFT_COLUMNS: tuple[str, ...] = (
    "feature", "n_new", "train_min", "train_max", "new_mean", "train_mean", "share_below",
    "share_above", "ks_statistic", "p", "share_outside", "q", "differs",
)  # fmt: skip


def shift_table(train: NDArray, new: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """One row per feature: shares outside the training range, KS statistic, p and q.

    Args:
        train: the training features (n_train, n_features), in ``columns`` order.
        new: the new images' features (NaN where missing; those are left out).
        columns: the feature names.
    """
    train = np.asarray(train, float)
    rows = []
    for j, col in enumerate(columns):
        t = train[:, j]
        v = new[col].to_numpy(float)
        v = v[np.isfinite(v)]
        if v.size == 0:
            rows.append({"feature": col, "n_new": 0})
            continue
        test = ks_2samp(v, t)
        rows.append(
            {
                "feature": col,
                "n_new": int(v.size),
                "train_min": float(t.min()),
                "train_max": float(t.max()),
                "new_mean": float(v.mean()),
                "train_mean": float(t.mean()),
                "share_below": float(np.mean(v < t.min())),
                "share_above": float(np.mean(v > t.max())),
                "ks_statistic": float(test.statistic),
                "p": float(test.pvalue),
            }
        )
    out = pd.DataFrame(rows).reindex(columns=SHIFT_COLUMNS[:-3])
    out["share_outside"] = out["share_below"] + out["share_above"]
    tested = out["p"].notna()
    out["q"] = np.nan
    if tested.any():
        out.loc[tested, "q"] = bh(out.loc[tested, "p"].to_numpy())
    out["differs"] = out["q"] < ALPHA
    return out.sort_values(["differs", "ks_statistic"], ascending=False).reset_index(drop=True)


def describe_shift(table: pd.DataFrame, top: int = 3) -> str | None:
    """A plain warning naming the features that differ most, or None when none differs."""
    shifted = table[table["differs"]]
    if shifted.empty:
        return None
    named = "; ".join(
        f"{r.feature} (KS D = {r.ks_statistic:.2f}, q = {r.q:.2g}, {r.share_outside:.0%} of "
        f"the new values outside the training range)"
        for r in shifted.head(top).itertuples()
    )
    return (
        f"warning: the new images differ from the training images in {len(shifted)} of "
        f"{len(table)} features (two-sample KS test, Benjamini-Hochberg q < {ALPHA} over the "
        f"features); the scores may not be as accurate as the out-of-fold estimate. Most "
        f"different: {named}."
    )
