"""VisionQ's claims: its correction families, declared before any result, and one claim of
the ledger (:mod:`judgepanel.stats.claims`) per judge for each position comparison.

Notebook 06 declares :func:`correction_families` right after its setup, then turns the
position tables into claims with the builders here and quotes them (``nb.claim``):

- ``last-panel``: accuracy with the gold answer in the last panel against accuracy with
  it elsewhere, compared within each number of panels and combined (the Mantel-Haenszel
  ``delta`` of :func:`~judgepanel.studies.visionq.position.last_letter_accuracy`). The
  raw difference, which mixes numbers of panels, stays in the table and is no claim.
- ``last-share``: the share of answers naming the last panel against the share of
  questions whose gold answer is the last panel
  (:func:`~judgepanel.studies.visionq.position.position_bias`).

Both resample papers and test two-sided; q is Benjamini-Hochberg over the judges of the
family. A judge whose comparison has no p (no number of panels has questions of both
groups) names no family: it is a family of one, and its verdict says it was not estimable.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from judgepanel.stats.claims import Claim, Family, correct, slug

LAST_PANEL = "last-panel"
LAST_SHARE = "last-share"
UNIT = "papers"
SCOPE = "rotation 0 (the released panel order)"


def correction_families(*, alpha: float = 0.05) -> list[Family]:
    """Notebook 06's correction families, declared before any result is computed: each is
    Benjamini-Hochberg over the judges, two-sided, papers resampled."""
    return [
        Family(
            LAST_PANEL,
            "accuracy with the gold answer in the last panel against accuracy with it "
            "elsewhere, within each number of panels (Mantel-Haenszel), one row per judge; "
            "papers resampled, two-sided",
            alpha=alpha,
        ),
        Family(
            LAST_SHARE,
            "the share of a judge's answers naming the last panel against the share of "
            "questions whose gold answer is the last panel, one row per judge; papers "
            "resampled, two-sided",
            alpha=alpha,
        ),
    ]


def _claims(
    table: pd.DataFrame,
    family: str,
    alpha: float,
    build: Callable[[Any, str], dict[str, Any]],
    columns: tuple[str, str, str, str],
) -> list[Claim]:
    """One claim per row of ``table`` (``columns`` name its estimate, interval and p),
    corrected over ``family``; a row without a p stays out of it."""
    estimate, low, high, p = columns
    claims = []
    for r in table.itertuples(index=False):
        judge = str(getattr(r, "judge", "the judge"))
        p_value = float(getattr(r, p))
        claims.append(
            Claim(
                id=f"{family}:{slug(judge)}",
                unit=UNIT,
                estimate=float(getattr(r, estimate)),
                ci_low=float(getattr(r, low)),
                ci_high=float(getattr(r, high)),
                p=p_value,
                family="" if math.isnan(p_value) else family,
                alpha=alpha,
                in_points=True,
                **build(r, judge),
            )
        )
    return correct(claims, {family: Family(family, family, alpha=alpha)})


def last_panel_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of :func:`~judgepanel.studies.visionq.position.last_letter_accuracy`
    (with resamples): the stratified difference, in points; the note keeps the raw one and
    the chance accuracies that confound it."""

    def build(r: Any, judge: str) -> dict[str, Any]:
        return {
            "a": f"{judge} with the gold answer in the last panel",
            "b": f"{judge} with the gold answer in another panel",
            "dataset": dataset,
            "scope": f"{SCOPE}, within each number of panels (Mantel-Haenszel)",
            "metric": "accuracy",
            "symbol": "Δ accuracy",
            "note": (
                f"unstratified difference {100 * r.raw_delta:+.1f} points, with chance "
                f"accuracy {r.chance_gold_last:.3f} for the gold answer in the last panel "
                f"and {r.chance_gold_other:.3f} elsewhere"
            ),
        }

    return _claims(table, LAST_PANEL, alpha, build, ("delta", "ci_low", "ci_high", "p"))


def last_share_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of :func:`~judgepanel.studies.visionq.position.position_bias` (with
    resamples): the last-panel share of the answers against that of the gold answers."""

    def build(r: Any, judge: str) -> dict[str, Any]:
        return {
            "a": f"{judge}'s share of answers naming the last panel",
            "b": "the share of questions whose gold answer is the last panel",
            "dataset": dataset,
            "scope": f"{SCOPE}, every question (an unreadable answer names no panel)",
            "metric": "share of questions",
            "symbol": "Δ share",
        }

    columns = ("last_excess", "last_excess_ci_low", "last_excess_ci_high", "last_excess_p")
    return _claims(table, LAST_SHARE, alpha, build, columns)
