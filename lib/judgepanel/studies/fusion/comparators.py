"""Off-the-shelf image-aesthetics models against the VLM judges (the fusion paper, section 5.0).

Each imported model is compared with the best single VLM judge on the same images: the
difference in rho is a paired bootstrap with a one-sided p (the VLM is better). The VLM is
the best of several families, picked on these images, so the test that decides is the
max-statistic p over all the families (``p_max``), and q is Benjamini-Hochberg of ``p_max``
over the imported models: one best-of ledger row per model and metric.
"""

from __future__ import annotations

import pandas as pd

from judgepanel.claims.rows import SYMBOLS, Claim, Family, slug
from judgepanel.stats import add_q, max_statistic_p
from judgepanel.studies.fusion.blocks import Blocks, best_single
from judgepanel.studies.fusion.compare import compare_arms


def compare_with_vlms(
    blocks: Blocks,
    imported: pd.DataFrame,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """The best single VLM against every imported model, on the images all of them scored.

    Args:
        blocks: the dataset's blocks (H holds each family's holistic mean).
        imported: one column per imported model, indexed by image id (NaN: not scored).

    Returns:
        One row per imported model and metric: ``arm`` (the best VLM), ``comparator`` (the
        model), value, comparator_value, delta, ci_low, ci_high, p (the plain one-sided p,
        which does not pay for the selection), n, p_max (max-statistic p over the
        families), q (BH of ``p_max`` over the models, per metric) and n_images.
    """
    common = blocks.items.intersection(imported.dropna().index)
    if len(common) < 10:
        raise ValueError(
            f"only {len(common)} images carry every imported score and every VLM feature"
        )
    y = blocks.y.loc[common]
    H = blocks.H.loc[common]
    best, _ = best_single(H, y)
    models = {m: imported.loc[common, m].to_numpy(float) for m in imported.columns}
    res = compare_arms(
        y.to_numpy(float),
        {best: H[best].to_numpy(float)},
        models,
        n_resamples=n_resamples,
        seed=seed,
    )
    res["p_max"] = [
        max_statistic_p(
            y.to_numpy(float),
            {f: H[f].to_numpy(float) for f in H.columns},
            models[row.comparator],
            row.metric,
            n_resamples=n_resamples,
            seed=seed,
        ).p
        for row in res.itertuples()
    ]
    res = add_q(res, by="metric", p="p_max")
    res["n_images"] = len(common)
    return res


def family_name(metric: str) -> str:
    """The correction family of the imported models under one metric."""
    return f"comparators:{metric}"


def correction_families(metrics: tuple[str, ...] = ("spearman", "kendall_b"),
                        alpha: float = 0.05) -> list[Family]:  # fmt: skip
    """The comparators' families, declared before the comparison: BH of the max-statistic
    p over the imported models, under one metric."""
    return [
        Family(
            family_name(m),
            f"02 off-the-shelf comparators: the best single VLM against each imported model "
            f"({m}), max-statistic p over the families",
            alpha=alpha,
        )
        for m in metrics
    ]


def comparator_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """The rows of :func:`compare_with_vlms` as best-of ledger rows: the best single VLM
    against each model, decided by the max-statistic p corrected over the models."""
    return [
        Claim(
            id=f"comparator:{slug(str(r['comparator']))}:{r['metric']}",
            a=f"{r['arm']} (the best single VLM)",
            b=str(r["comparator"]),
            dataset=dataset,
            metric=str(r["metric"]),
            unit="images",
            estimate=float(r["delta"]),
            ci_low=float(r["ci_low"]),
            ci_high=float(r["ci_high"]),
            p=float(r["p_max"]),
            q=float(r["q"]),
            alternative="greater",
            kind="best-of",
            family=family_name(str(r["metric"])),
            alpha=alpha,
            symbol=SYMBOLS.get(str(r["metric"]), "Δ"),
            note="max-statistic p over the families",
        )
        for _, r in table.iterrows()
    ]
