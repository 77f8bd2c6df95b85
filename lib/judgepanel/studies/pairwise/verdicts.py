"""The pairwise study's ledger rows: comparisons against scores at equal calls, per judge.

Families, declared before any result:

- ``pairwise/equal-calls``: one row per judge, Bradley-Terry from its comparisons against
  its own holistic scores at the same calls per image (Δρ with the human mean, two-sided,
  BH over the judges).
- ``pairwise/adaptive``: adaptive pair choice against random pairs, per judge (BH).
- the panel's row is a family of one (its p decides).
"""

from __future__ import annotations

import pandas as pd

from judgepanel.claims.rows import Claim, Family
from judgepanel.stats.multitest import bh

EQUAL_CALLS = "pairwise/equal-calls"
ADAPTIVE = "pairwise/adaptive"


def correction_families() -> list[Family]:
    """The families notebook 11 declares before its results."""
    return [
        Family(EQUAL_CALLS, "comparisons against scores at equal calls per image, one per judge"),
        Family(ADAPTIVE, "adaptive against random pairs at the same budget, one per judge"),
    ]


def _with_q(table: pd.DataFrame) -> pd.DataFrame:
    out = table.copy()
    out["q"] = bh(out["p"].to_numpy()) if len(out) else []
    return out


def _per_judge(
    table: pd.DataFrame, dataset: str, family: str, id: str, sides: tuple[str, str], scope: str
) -> list[Claim]:
    """One row per judge of ``table``: ids, sides and scope are formats of its columns."""
    claims = []
    for _, r in _with_q(table).iterrows():
        note = ""
        if "usd_pairs" in r:
            note = f"billed: comparisons ${r['usd_pairs']:.4f}, scores ${r['usd_scores']:.4f}"
        fields = dict(dataset=dataset, metric="spearman", unit="images", family=family)
        claims.append(
            Claim.of_row(
                r,
                id=id.format(**r),
                a=sides[0].format(**r),
                b=sides[1].format(**r),
                scope=scope.format(**r),
                note=note,
                **fields,
            )
        )
    return claims


def equal_calls_claims(table: pd.DataFrame, dataset: str) -> list[Claim]:
    """One row per judge of :func:`~judgepanel.studies.pairwise.analysis.equal_calls_table`,
    its billed costs in the note."""
    sides = ("{judge} comparisons (Bradley-Terry)", "{judge} scores")
    scope = "{calls_per_image:.0f} calls per image each"
    return _per_judge(table, dataset, EQUAL_CALLS, "pairs-vs-scores:{judge}", sides, scope)


def adaptive_claims(table: pd.DataFrame, dataset: str) -> list[Claim]:
    """One row per judge of :func:`~judgepanel.studies.pairwise.analysis.adaptive_vs_random`."""
    sides = ("{judge} adaptive pairs", "{judge} random pairs")
    scope = "{pairs:.0f} pairs each"
    return _per_judge(table, dataset, ADAPTIVE, "adaptive-vs-random:{judge}", sides, scope)


def panel_claim(table: pd.DataFrame, dataset: str) -> Claim:
    """The panel's row of :func:`~judgepanel.studies.pairwise.analysis.panel_table`."""
    r = table.iloc[0].copy()
    r["q"] = float("nan")
    return Claim.of_row(
        r,
        id="panel-pairs-vs-scores",
        a="panel comparisons (pooled Bradley-Terry)",
        b="panel mean of scores",
        dataset=dataset,
        scope=f"{r['judges']}; {int(r['calls_per_image'])} calls per image and judge",
        metric="spearman",
        unit="images",
    )
