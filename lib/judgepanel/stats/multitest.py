"""Benjamini-Hochberg q-values for families of related comparisons.

The studies correct within a family (e.g. the 30 MTMM cells, or the ten trios against
their best member) and report each comparison's q next to its p.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from statsmodels.stats.multitest import multipletests


def bh(pvalues: ArrayLike) -> NDArray[np.float64]:
    """Benjamini-Hochberg q-values, in the input order.

    q_(i) = min over j >= i of p_(j) m / j, capped at 1, with p sorted ascending, computed
    by statsmodels' ``multipletests(p, method="fdr_bh")``; this adds the checks that name
    a bad input, which statsmodels would pass through as NaN.

    Args:
        pvalues: a 1-D sequence of p-values in [0, 1].

    Raises:
        ValueError: on NaN, values outside [0, 1], or more than one dimension.

    Example:
        >>> p = [0.01, 0.04, 0.03, 0.20]
        >>> bh(p).round(3).tolist()
        [0.04, 0.053, 0.053, 0.2]
        >>> bool(np.allclose(bh(p), multipletests(p, method="fdr_bh")[1]))
        True
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {p.shape}")
    if p.size == 0:
        return p.copy()
    bad = np.flatnonzero(np.isnan(p))
    if bad.size:
        raise ValueError(f"pvalues contain NaN at position(s) {bad[:5].tolist()}")
    if np.any((p < 0) | (p > 1)):
        raise ValueError("pvalues must lie in [0, 1]")
    return multipletests(p, method="fdr_bh")[1]


def add_q(
    frame: pd.DataFrame, *, by: str | Sequence[str] | None = None, p: str = "p", q: str = "q"
) -> pd.DataFrame:
    """A copy of ``frame`` with a ``q`` column: BH over all rows, or within each ``by`` group.

    Args:
        frame: one row per comparison, with a p-value column.
        by: column(s) naming the families corrected separately (e.g. ``"dataset"``).
        p: name of the p-value column.
        q: name of the column to write.

    Example:
        >>> frame = pd.DataFrame({"dataset": ["eva", "eva", "para", "para"],
        ...                       "p": [0.01, 0.04, 0.03, 0.20]})
        >>> add_q(frame, by="dataset")["q"].round(3).tolist()
        [0.02, 0.04, 0.06, 0.2]
    """
    if p not in frame.columns:
        raise ValueError(f"frame has no column {p!r}; columns are {list(frame.columns)}")
    out = frame.copy()
    if by is None:
        out[q] = bh(out[p].to_numpy())
        return out
    out[q] = np.nan
    for _, index in out.groupby(by, sort=False).groups.items():
        out.loc[index, q] = bh(out.loc[index, p].to_numpy())
    return out
