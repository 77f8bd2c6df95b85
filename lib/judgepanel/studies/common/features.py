"""Per-image features read from a score table: holistic means and dimension means.

The fusion study's feature blocks (:mod:`judgepanel.studies.fusion.blocks`) and VAB's fused
score-then-rank judge (:mod:`judgepanel.studies.vab.rankers`) read the same means.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgepanel.core.prompts import DIMENSIONS


def holistic_runs(scores: pd.DataFrame, families: Sequence[str]) -> pd.DataFrame:
    """Holistic answers as a wide table: index item, columns (family, repetition)."""
    h = scores[scores["kind"] == "holistic"]
    wide = h.pivot_table(index="item", columns=["family", "repetition"], values="value")
    return wide.reindex(columns=list(families), level=0)


def holistic_means(
    scores: pd.DataFrame, families: Sequence[str], k: int | None = None
) -> pd.DataFrame:
    """H: each family's holistic mean over its first ``k`` repetitions (all if None)."""
    runs = holistic_runs(scores, families)
    out = {}
    for fam in families:
        block = runs[fam]
        if k is not None:
            block = block[[c for c in block.columns if c < k]]
        out[fam] = block.mean(axis=1)
    return pd.DataFrame(out)


def dimension_means(
    scores: pd.DataFrame, families: Sequence[str], dimensions: Sequence[str] = DIMENSIONS
) -> pd.DataFrame:
    """P: each family x dimension mean over its R repetitions; columns ``family:dimension``."""
    d = scores[(scores["kind"] == "dimension") & scores["dimension"].isin(list(dimensions))]
    wide = d.pivot_table(index="item", columns=["family", "dimension"], values="value")
    cols = [(f, dim) for f in families for dim in dimensions]
    missing = [c for c in cols if c not in wide.columns]
    if missing:
        raise ValueError(f"no dimension scores for {missing[:5]}")
    wide = wide[cols]
    wide.columns = [f"{f}:{dim}" for f, dim in cols]
    return wide
