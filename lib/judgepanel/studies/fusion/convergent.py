"""Convergent and discriminant validity of the dimension prompts, from raw correlations.

The MTMM cells (:mod:`judgepanel.studies.fusion.mtmm`) partial out the human overall score
and compare each dimension prompt with the holistic prompt. A study without an overall
rating, or whose rubric asks no holistic question, has neither, so its dimension prompts
are read the classical way: each prompt should correlate with the human rating of its own
attribute (convergent validity) more than with the rating of any other attribute
(discriminant validity). Each prompt's margin over its best other attribute is a paired
bootstrap over images (the same resamples for every correlation), with a one-sided p and
Benjamini-Hochberg q over the prompts of the table.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.claims.rows import Claim, Family, slug
from judgepanel.stats import add_q, bootstrap_arms, spearman, summarize_paired

COLUMNS: tuple[str, ...] = (
    "family", "dimension", "rho_own", "own_low", "own_high", "other", "rho_other",
    "margin", "ci_low", "ci_high", "p", "q", "n", "resamples",
)  # fmt: skip


def validity_table(
    P: pd.DataFrame,
    human: pd.DataFrame,
    families: Sequence[str],
    attributes: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per family and dimension prompt with a human rating of its attribute.

    Args:
        P: dimension means, columns ``family:dimension``, indexed by image.
        human: per-image human means of the ``attributes`` (columns named as dimensions).
        families: the families.
        attributes: the dimensions a human rating validates (at least one).
        n_resamples: bootstrap resamples over images.
        seed: resampling seed (every correlation sees the same resamples).

    Returns:
        Columns of :data:`COLUMNS`: Spearman ρ with the own attribute and its 95%
        interval; the other attribute the prompt correlates with most and that ρ; the
        margin (own − other) with its paired 95% interval, one-sided p (the own attribute
        is higher), q (BH over the table) and the resamples the test used (a resample
        where an answer does not vary has no correlation). Without a second attribute the margin and
        its test are missing, and a prompt whose answers do not vary has no correlation.
    """
    items = P.index.intersection(human.dropna(subset=list(attributes)).index)
    P, human = P.loc[items], human.loc[items]
    rows = []
    for dim in attributes:
        arms = {fam: P[f"{fam}:{dim}"].to_numpy(float) for fam in families}
        boot = {
            a: bootstrap_arms(human[a].to_numpy(float), arms, n_resamples=n_resamples, seed=seed)
            for a in attributes
        }
        for j, fam in enumerate(families):
            x = arms[fam]
            row = {"family": fam, "dimension": dim, "rho_own": np.nan, "n": len(items)}
            own = boot[dim][:, j]
            if np.ptp(x) == 0 or np.isnan(own).all():  # the answers do not vary
                rows.append(row)
                continue
            rho = {a: spearman(x, human[a].to_numpy(float)) for a in attributes}
            row["rho_own"] = rho[dim]
            row["own_low"], row["own_high"] = np.nanpercentile(own, [2.5, 97.5])
            others = {a: r for a, r in rho.items() if a != dim and np.isfinite(r)}
            if others:
                other = max(others, key=others.__getitem__)
                with warnings.catch_warnings():  # the count of resamples used says it
                    warnings.simplefilter("ignore", RuntimeWarning)
                    res = summarize_paired(
                        own, boot[other][:, j], rho[dim], rho[other], metric="spearman",
                        n=len(items), alternative="greater",
                    )  # fmt: skip
                row.update(other=other, rho_other=rho[other], margin=res.delta,
                           ci_low=res.ci_low, ci_high=res.ci_high, p=res.p,
                           resamples=res.n_resamples)  # fmt: skip
            rows.append(row)
    table = pd.DataFrame(rows).reindex(columns=[c for c in COLUMNS if c != "q"])
    if table["p"].notna().any():
        tested = add_q(table.dropna(subset=["p"]))
        table["q"] = tested["q"].reindex(table.index)
    else:
        table["q"] = np.nan
    table["resamples"] = table["resamples"].astype("Int64")  # a count, missing where untested
    return table[list(COLUMNS)]


def correlation_matrix(
    P: pd.DataFrame, human: pd.DataFrame, families: Sequence[str], attributes: Sequence[str]
) -> pd.DataFrame:
    """Spearman ρ of every ``family:dimension`` prompt (rows) with every human attribute
    (columns), on the images both have (missing for a prompt whose answers do not vary)."""
    items = P.index.intersection(human.dropna(subset=list(attributes)).index)
    rows = {}
    for fam in families:
        for dim in attributes:
            x = P.loc[items, f"{fam}:{dim}"].to_numpy(float)
            rows[f"{fam}:{dim}"] = [
                spearman(x, human.loc[items, a].to_numpy(float)) if np.ptp(x) > 0 else np.nan
                for a in attributes
            ]
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(attributes))


FAMILY = "convergent"
"""The family of the table's margins: every prompt with a tested margin."""


def correction_family(alpha: float = 0.05) -> Family:
    """The margins' family, declared before they are computed (BH over the tested rows)."""
    return Family(
        FAMILY,
        "01 convergent validity: each dimension prompt's ρ with its own attribute against "
        "its ρ with the highest other attribute, one-sided, BH over the prompts tested",
        alpha=alpha,
    )


def untested_reason(row: pd.Series) -> str:
    """Why a row of :func:`validity_table` has no test ("" when it has one)."""
    if not np.isfinite(row["p"]):
        if not np.isfinite(row["rho_own"]):
            return "the prompt's answers do not vary: no correlation"
        return "no other attribute with a correlation to compare with"
    return ""


def validity_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """Every row of :func:`validity_table` as a ledger row, in its order: a one-sided test
    that the prompt's own attribute correlates higher than the highest other; a row
    without a test is kept out of the family with its reason."""
    out = []
    for _, r in table.iterrows():
        why = untested_reason(r)
        other = r["other"] if isinstance(r["other"], str) else "the other attributes"
        out.append(
            Claim(
                id=f"convergent:{slug(str(r['family']))}:{slug(str(r['dimension']))}",
                a=f"{r['family']}'s {r['dimension']} prompt's ρ with its own attribute",
                b=f"its ρ with {other} (the highest other attribute by point estimate)",
                dataset=dataset,
                scope=f"{r['family']}: {r['dimension']} prompt",
                metric="spearman",
                unit="images",
                estimate=float(r["margin"]),
                ci_low=float(r["ci_low"]),
                ci_high=float(r["ci_high"]),
                p=float(r["p"]),
                q=float(r["q"]),
                alternative="greater",
                family="" if why else FAMILY,
                excluded=why,
                alpha=alpha,
            )
        )
    return out
