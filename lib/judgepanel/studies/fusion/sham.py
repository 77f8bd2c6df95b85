"""The sham rubric (the fusion paper, section 6): is it the rubric's content or the decomposition?

Each dimension prompt keeps its role and title but carries another dimension's criteria
(``rubric/sham.yaml``). If fusion gains only because it sees five numbers instead of one,
the sham does as well as the real rubric; if the criteria matter, it costs accuracy. Seed
000 finds a cost (-0.055 rho) while the sham still beats the best single model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from judgepanel.claims.rows import Claim, Family
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.stats import add_q
from judgepanel.studies.common.combiners import gb_combiner, oof_predict
from judgepanel.studies.fusion.blocks import Blocks, best_single, canonical, hp_design
from judgepanel.studies.fusion.compare import compare_pairs

ARMS: tuple[str, ...] = ("P_sham_gb", "H+P_sham_gb")


def sham_means(sham_scores: pd.DataFrame, families: Sequence[str], items: pd.Index) -> pd.DataFrame:
    """The sham block: each family's mean per dimension prompt, columns ``family:dimension``.

    Raises:
        ValueError: a family or an image of ``items`` lacks a sham score (score it first).
    """
    wide = sham_scores.pivot_table(
        index="item", columns=["family", "dimension"], values="value", aggfunc="mean"
    )
    cols = [(f, d) for f in families for d in DIMENSIONS]
    missing = [c for c in cols if c not in wide.columns]
    if missing:
        raise ValueError(f"no sham scores for {missing[:5]}; score the sham rubric first")
    out = wide[cols].reindex(items)
    out.columns = [f"{f}:{d}" for f, d in cols]
    absent = out.index[out.isna().any(axis=1)]
    if len(absent):
        raise ValueError(f"{len(absent)} image(s) lack a sham score, e.g. {list(absent[:3])}")
    return out


def compare_sham(
    blocks: Blocks,
    sham: pd.DataFrame,
    families: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """The sham arms against H+P_gb (the real rubric) and against the best single model.

    ``P_sham_gb`` is the sham block alone, ``H+P_sham_gb`` the holistic means with it, both
    by the study's combiner on the same folds. Rows: each sham arm against ``H+P_gb``
    (two-sided p: the cost of the sham, either way) and against the best single model
    (one-sided: the sham arm is better), with BH q within comparator and metric.
    """
    y = blocks.y
    H = blocks.H_of(families)
    best, _ = best_single(H, y)
    arms = {
        "H+P_gb": oof_predict(gb_combiner(), hp_design(blocks, families), y, n_jobs=n_jobs),
        "P_sham_gb": oof_predict(gb_combiner(), sham, y, n_jobs=n_jobs),
        "H+P_sham_gb": oof_predict(gb_combiner(), pd.concat([H, sham], axis=1), y, n_jobs=n_jobs),
        "best single": H[best].to_numpy(float),
    }
    arms = {k: np.asarray(v, float) for k, v in arms.items()}
    yv = y.to_numpy(float)
    parts = [
        compare_pairs(
            yv,
            arms,
            [(a, "H+P_gb") for a in ARMS],
            n_resamples=n_resamples,
            seed=seed,
            alternative="two-sided",
        ),
        compare_pairs(
            yv, arms, [(a, "best single") for a in ARMS], n_resamples=n_resamples, seed=seed
        ),
    ]
    out = pd.concat(parts, ignore_index=True)
    out.insert(0, "best_family", best)
    out.insert(0, "families", ", ".join(families))
    return add_q(out, by=["comparator", "metric"])


SHAM_COMPARATORS: dict[str, str] = {"H+P_gb": "two-sided", "best single": "greater"}
"""Each comparator of the sham arms and the direction its test looks in."""


def correction_families(alpha: float = 0.05) -> list[Family]:
    """The sham table's families, declared before its results: BH over the two sham arms
    against one comparator under one metric (as :func:`compare_sham` corrects them)."""
    return [
        Family(
            f"sham:{comp.lower().replace(' ', '_')}:{metric}",
            f"the sham arms against {comp} ({metric}; {alt} test)",
            alpha=alpha,
        )
        for comp, alt in SHAM_COMPARATORS.items()
        for metric in ("spearman", "kendall_b")
    ]


def sham_claim(
    table: pd.DataFrame,
    arm: str,
    comparator: str,
    *,
    dataset: str,
    metric: str = "spearman",
    role: str = "",
    alpha: float = 0.05,
) -> Claim:
    """One row of :func:`compare_sham`'s table as a claim of the ledger."""
    sel = table[
        (table["arm"] == arm) & (table["comparator"] == comparator) & (table["metric"] == metric)
    ]
    if len(sel) != 1:
        raise KeyError(f"the sham table has {len(sel)} rows for {arm!r} against {comparator!r}")
    r = sel.iloc[0]
    comp = comparator.lower().replace(" ", "_")
    return Claim.of_row(
        r,
        id=f"sham:{arm.lower()}-vs-{comp}:{metric}",
        a=arm,
        b=comparator,
        dataset=dataset,
        scope=f"pre-declared: {', '.join(canonical(str(r['families']).split(', ')))}",
        metric=metric,
        unit="images",
        alternative=SHAM_COMPARATORS[comparator],
        family=f"sham:{comp}:{metric}",
        alpha=alpha,
        role=role,
        note="fold partition seed 42",
    )


def sham_claims(
    table: pd.DataFrame, *, dataset: str, headline: Sequence[str] = (), alpha: float = 0.05
) -> list[Claim]:
    """Every row of :func:`compare_sham`'s table as a ledger row, in its order, so each
    family holds both sham arms it was corrected over; ``headline`` names the ids a page
    leads with."""
    out = []
    for _, r in table.iterrows():
        claim = sham_claim(table, str(r["arm"]), str(r["comparator"]), dataset=dataset,
                           metric=str(r["metric"]), alpha=alpha)  # fmt: skip
        out.append(replace(claim, role="headline") if claim.id in headline else claim)
    return out
