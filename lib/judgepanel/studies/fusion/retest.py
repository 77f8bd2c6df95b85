"""The trio retest of notebook 04: which trios' fusion paid, and what the predictors say.

:func:`retest_table` joins each trio's probe predictors (:func:`headroom.trio_predictors`)
to its fused-against-best-member comparison from the trio sweep, and marks where fusion
paid by :func:`panel_pays`, the rule the deployment recipe learns its threshold from. The
``describe_*`` functions write the section's sentences from the tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim, Family, slug
from judgepanel.studies.fusion import headroom, trios
from judgepanel.studies.fusion.blocks import Blocks
from judgepanel.studies.fusion.compare import gain_claim

ALPHA = 0.05
"""The q below which a positive gain counts as fusion having paid."""

SCOPES_POOLED = ("pooled", "pooled, within dataset")


def panel_pays(gain: np.ndarray | pd.Series, q: np.ndarray | pd.Series, alpha: float = ALPHA):
    """Whether fusion paid: a gain above zero with q below ``alpha`` (strictly, both).

    A gain of exactly zero, a q equal to ``alpha`` and a missing q (NaN) all say "did not
    pay", so an untested comparison never counts for the panel.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie between 0 and 1, not {alpha}")
    with np.errstate(invalid="ignore"):
        return (gain > 0) & (q < alpha)


def retest_table(
    blocks: Blocks,
    probe_H: pd.DataFrame,
    ceiling: float,
    families: Sequence[str],
    *,
    fused: Mapping[tuple[str, ...], np.ndarray],
    n_resamples: int,
    seed: int,
    alpha: float = ALPHA,
    dataset: str = "",
) -> pd.DataFrame:
    """One row per trio of one dataset: its probe predictors, its gain and whether it paid.

    Args:
        blocks: the dataset's feature blocks.
        probe_H: every family's probe mean, indexed like ``blocks.y``.
        ceiling: the dataset's noise ceiling.
        families: the families whose trios are retested.
        fused: each trio's out-of-fold H+P_gb prediction (:func:`trios.fit_trios`).
        n_resamples, seed: the paired bootstrap of the trio sweep.
        alpha: the q below which a positive gain pays (:func:`panel_pays`).
        dataset: the label of the ``dataset`` column.

    Returns:
        ``dataset``, ``trio``, the predictors (``probe_best``, ``probe_best_rho``,
        ``headroom``, ``agreement``), ``best_member``, ``fused_rho``, ``best_member_rho``,
        ``gain`` (fused minus best member ρ) with ``ci_low``, ``ci_high``, ``p`` (one-sided),
        ``q`` (BH over the dataset's trios), and ``pays``.
    """
    all_trios = trios.trios_of(families)
    long = trios.sweep_trios(
        blocks, families, fused=fused, metrics=("spearman",), n_resamples=n_resamples, seed=seed
    )
    best_rows = long[long["comparator"] == "best member"].set_index("trio")
    pred = headroom.trio_predictors(probe_H, blocks.y, ceiling, all_trios).set_index("trio")
    cols = ["best_member", "value", "comparator_value", "delta", "ci_low", "ci_high", "p", "q"]
    frame = pred.join(best_rows[cols])
    names = {"value": "fused_rho", "comparator_value": "best_member_rho", "delta": "gain"}
    frame = frame.rename(columns=names).reset_index()
    frame.insert(0, "dataset", dataset)
    frame["pays"] = panel_pays(frame["gain"], frame["q"], alpha)
    return frame


def family_name(dataset: str) -> str:
    """The retest's correction family of one dataset (its trios against their best member)."""
    return f"retest:{slug(dataset)}"


def correction_families(datasets: Sequence[str], alpha: float = ALPHA) -> list[Family]:
    """One family per dataset, declared before the retest runs: BH over that dataset's
    trios, each H+P_gb against its best member (ρ, one-sided), as :func:`retest_table`
    corrects them; the pre-declared trio is one of them here (the retest classifies every
    trio), so these rows carry the scope ``retest`` apart from 02's and 03's."""
    return [
        Family(
            family_name(n),
            f"04 retest on {n}: H+P_gb against each trio's best member (spearman, one-sided), "
            "BH over the dataset's trios",
            alpha=alpha,
        )
        for n in datasets
    ]


def retest_claims(retest: pd.DataFrame, alpha: float = ALPHA) -> list[Claim]:
    """One ledger row per row of :func:`retest_table` (stacked over datasets), in its
    order: the comparison whose q decides whether fusion paid in that trio."""
    return [
        gain_claim(
            {**row, "metric": "spearman"},
            id=f"retest:{slug(str(row['dataset']))}:{slug(str(row['trio']))}",
            a="H+P_gb",
            b="the trio's best member",
            dataset=str(row["dataset"]),
            scope=f"retest, trio: {row['trio']}",
            family=family_name(str(row["dataset"])),
            alpha=alpha,
        )
        for row in retest.rename(columns={"gain": "delta"}).to_dict(orient="records")
    ]


def describe_scope(retest: pd.DataFrame, scope: str, predictor: str) -> str:
    """One scope's Spearman of ``predictor`` with the outcome, or why it is undefined."""
    row = retest.set_index(["scope", "predictor"]).loc[(scope, predictor)]
    if np.isnan(row["rho"]):
        return f"{scope}: undefined ({int(row['distinct'])} distinct value)"
    return (
        f"{scope}: ρ = {wording.number(row['rho'], 2, signed=True)} "
        f"({wording.p_value(row['p'])}, n = {int(row['n'])}, "
        f"{int(row['distinct'])} distinct values)"
    )


def describe_retest(retest: pd.DataFrame, datasets: Sequence[str]) -> str:
    """Each predictor against gain, per dataset and pooled (:func:`headroom.retest_predictors`)."""
    scopes = [*datasets, *SCOPES_POOLED]
    return (
        "Descriptive correlations (the trios share families, so they are not independent, and "
        "the permutation p-values below treat them as exchangeable; no verdict rests on them). "
        "Headroom against gain — "
        + "; ".join(describe_scope(retest, s, "headroom") for s in scopes)
        + ". Agreement against gain — "
        + "; ".join(describe_scope(retest, s, "agreement") for s in scopes)
        + "."
    )


def describe_between(
    retest_trios: pd.DataFrame, retest: pd.DataFrame, collinearity: pd.DataFrame
) -> str:
    """What the computation exposes: few distinct headroom values, and how much of each
    column's variance lies between the datasets rather than among trios."""
    names = list(dict.fromkeys(retest_trios["dataset"]))
    r = retest.set_index(["scope", "predictor"])
    distinct = {n: int(r.loc[(n, "headroom"), "distinct"]) for n in names}
    n_trios = retest_trios.groupby("dataset").size()
    c = collinearity.set_index("scope")
    cols = ("headroom", "agreement", "gain")
    share = {col: headroom.between_dataset_share(retest_trios, col) for col in cols}
    levels = retest_trios.groupby("dataset")[list(cols)].mean()
    mixed = (
        "The pooled correlations therefore mostly compare the datasets; "
        if share["headroom"] > 0.5
        else "The pooled correlations therefore mix the dataset difference with trio-to-trio "
        "variation; "
    )
    return (
        "What the computation exposes. Within a dataset the ceiling is one number, so a trio's "
        "headroom changes only with its member of highest probe ρ: it takes "
        + ", ".join(
            f"{distinct[n]} distinct values among the {n_trios[n]} trios of {n}" for n in names
        )
        + ", and a within-dataset correlation with gain is really a comparison of which family "
        "has the trio's highest probe ρ. Pooled, "
        f"{share['headroom']:.0%} of the variance of headroom, {share['agreement']:.0%} of "
        f"agreement and {share['gain']:.0%} of gain lie between the datasets (mean headroom "
        + ", ".join(f"{n} {levels.loc[n, 'headroom']:.3f}" for n in names)
        + "; mean gain "
        + ", ".join(f"{n} {wording.number(levels.loc[n, 'gain'], signed=True)}" for n in names)
        + "), and headroom and agreement correlate at r = "
        f"{wording.number(c.loc['pooled', 'r'], 2, signed=True)} pooled "
        "against "
        + ", ".join(f"{wording.number(c.loc[n, 'r'], 2, signed=True)} within {n}" for n in names)
        + ". "
        + mixed
        + "the within-dataset rows compare trios within one dataset, on "
        + ", ".join(f"{n_trios[n]} trios of {n}" for n in names)
        + "."
    )


def describe_coupling(coupling: pd.DataFrame, retest_fused: pd.DataFrame) -> str:
    """Why raw gain cannot test headroom (:func:`headroom.built_in_coupling`), and headroom
    against fused ρ instead (:func:`headroom.retest_predictors` with ``outcome="fused_rho"``)."""
    c = coupling.set_index("dataset")
    rf = retest_fused.set_index(["scope", "predictor"])
    names = list(c.index)

    def coupled(n: str) -> str:
        rho = c.loc[n, "rho"]
        if not np.isfinite(rho):
            return f"undefined on {n}"
        return f"{wording.number(rho, 2, signed=True)} on {n}"

    def against_fused(n: str) -> str:
        row = rf.loc[(n, "headroom")]
        if not np.isfinite(row["rho"]):
            return f"{n}: undefined"
        return (
            f"{n}: ρ = {wording.number(row['rho'], 2, signed=True)} ({wording.p_value(row['p'])})"
        )

    return (
        "Why the raw gain cannot test headroom: gain is fused ρ minus the trio's best member's ρ, "
        "and within a dataset headroom falls as that best member's ρ rises (Spearman of headroom "
        "with the best member's ρ: "
        + ", ".join(coupled(n) for n in names)
        + "). A trio with a weak best member has both more headroom and, by subtraction, more "
        "gain, so a positive correlation of headroom with gain follows from the definitions. "
        "Fused ρ is not built from the best member's ρ; headroom against fused ρ: "
        + "; ".join(against_fused(n) for n in names)
        + ". The within-dataset rows of the gain table above are therefore no test of "
        "headroom: within a dataset, a trio's headroom is fixed by the largest probe ρ among "
        "its families."
    )
