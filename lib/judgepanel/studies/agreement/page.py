"""What the agreement page (notebook 10) computes between its tables and its sentences.

The page keeps the call that makes each table and figure and the sentences that read them;
these helpers run the alternative annotator test on every compared dimension (and pooled
over them), lay its results out as the page's tables, name the judges it could not test,
and draw the holistic test's figure. Not imported by the package: only a page draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim, Family
from judgepanel.stats.alt_test import AltTestResult
from judgepanel.studies.agreement.data import AgreementData
from judgepanel.studies.agreement.measures import alt_table, alt_tests, pooled_alt_tests

DIMENSION_FAMILY = "alt-test/dimensions"
POOLED = "pooled dimensions"
"""The section of the test pooled over every compared dimension."""

Results = Mapping[str, AltTestResult | str]
"""One question's alt-test results by judge (a string: why the judge was not tested)."""


def dimension_family(alpha: float = 0.05) -> Family:
    """The declared family of the per-dimension and pooled alt-test rows (BY over them)."""
    return Family(
        DIMENSION_FAMILY,
        "the alternative annotator test of every judge family and the panel mean on every "
        "mapped rubric dimension, and pooled over them (Benjamini-Yekutieli over all of these, "
        "on top of the test's own correction over annotators)",
        alpha=alpha,
        method="fdr_by",
    )


def tested_table(results: Results) -> pd.DataFrame:
    """One row per judge of the test (:func:`alt_table`), without the test's own pass
    column: a row's one verdict is its ledger row's (the winning rate shows the test's
    own rule, and the row's words say which rule decided)."""
    return alt_table(dict(results)).drop(columns="passed", errors="ignore")


def judge_words(claims: Sequence[Claim]) -> dict[str, dict[str, str]]:
    """Each judge's ledger words: its name and its advantage probability."""
    return {
        c.id: {"a": f"{c.a} (advantage probability {c.extra['advantage_probability']:.3f})"}
        for c in claims
    }


def dimension_sections(
    dims: Mapping[str, AgreementData],
    *,
    epsilon: float,
    metric: str,
    q: float,
    min_items: int,
) -> dict[str, Results]:
    """The test on each compared dimension and, with more than one, pooled over them
    (:data:`POOLED`); a section without results (no rater ids) is left out."""
    settings = {"epsilon": epsilon, "metric": metric, "q": q, "min_items": min_items}
    tests = {key: alt_tests(d, **settings) for key, d in dims.items()}
    pooled = pooled_alt_tests(list(dims.values()), **settings) if len(dims) > 1 else {}
    return {key: results for key, results in [*tests.items(), (POOLED, pooled)] if results}


def sections_table(sections: Mapping[str, Results]) -> pd.DataFrame:
    """Every section's :func:`tested_table`, the dimension first."""
    table = pd.concat(
        [tested_table(results).assign(dimension=key) for key, results in sections.items()],
        ignore_index=True,
    )
    return table[["dimension", *[c for c in table.columns if c != "dimension"]]]


def untested_judges(table: pd.DataFrame, tested: Sequence[bool]) -> list[str]:
    """The judges a section could not test, grouped by dimension and reason: ``every
    judge on X (why)`` or the judges named."""
    untested: dict[tuple[str, str], list[str]] = {}
    for r in table[[not t for t in tested]].itertuples():
        untested.setdefault((r.dimension, r.note), []).append(r.judge)
    judges_of = table.groupby("dimension", sort=False)["judge"].nunique()
    return [
        f"{'every judge' if len(who) == judges_of[key] else wording.join(who)} on {key} ({why})"
        for (key, why), who in untested.items()
    ]


def alt_test_figure(alt: pd.DataFrame, claims: Sequence[Claim], epsilon: float) -> plt.Figure:
    """Left, each tested judge's advantage probability with its interval over images (a
    dotted line at one half); right, the decisive annotator's deficit ρ_human − ρ_judge
    with its interval at the level of its row's q, against ε (red).

    Args:
        alt: :func:`tested_table` rows (``advantage_probability``, ``adv_ci_low/high``).
        claims: the judges' ledger rows, in the order drawn.
    """
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.5 * len(claims) + 1.6), sharey=True)
    rows = alt.set_index("judge").loc[[c.a for c in claims]]
    y = np.arange(len(claims))
    lo = (rows["advantage_probability"] - rows["adv_ci_low"]).fillna(0).clip(lower=0)
    hi = (rows["adv_ci_high"] - rows["advantage_probability"]).fillna(0).clip(lower=0)
    axes[0].errorbar(rows["advantage_probability"], y, xerr=[lo, hi], fmt="o", color="0.2")
    axes[0].axvline(0.5, color="0.6", ls=":", lw=1)
    axes[0].set_xlabel("advantage probability")
    deficit = np.array([epsilon - c.estimate for c in claims], dtype=float)
    d_lo = np.array([c.estimate - c.ci_low for c in claims], dtype=float)
    d_hi = np.array([c.ci_high - c.estimate for c in claims], dtype=float)
    axes[1].errorbar(
        deficit, y, xerr=[np.nan_to_num(d_hi), np.nan_to_num(d_lo)], fmt="o", color="0.2"
    )
    axes[1].axvline(epsilon, color="tab:red", lw=1.2, label=f"ε = {epsilon:g}")
    axes[1].set_xlabel("ρ_human − ρ_judge of the decisive annotator")
    axes[1].legend()
    axes[0].set_yticks(y, [c.a for c in claims])
    fig.tight_layout()
    return fig
