"""VisionQ's claims: its correction families, declared before any result, and one claim of
the ledger (:mod:`judgepanel.claims.rows`) per judge for each position comparison.

Notebook 06 declares :func:`correction_families` right after its setup, then turns the
position tables into claims with the builders here and quotes them (``nb.claim``):

- ``last-panel``: accuracy with the gold answer in the last panel against accuracy with
  it elsewhere, compared within each number of panels and combined (the Mantel-Haenszel
  ``delta`` of :func:`~judgepanel.studies.visionq.position.last_letter_accuracy`). The
  raw difference, which mixes numbers of panels, stays in the table and is no claim.
- ``last-share``: the share of answers naming the last panel against the share of
  questions whose gold answer is the last panel
  (:func:`~judgepanel.studies.visionq.position.position_bias`).

- ``letter-fit``: whether a judge's letter shares depart from the gold letter shares, the
  paper-clustered fit test of :func:`~judgepanel.studies.visionq.position.letter_fit_p`
  (one-sided: a distance can only be positive), its estimate the total-variation distance;
- ``above-chance``: a judge's accuracy against the chance rate of its questions
  (:func:`~judgepanel.studies.visionq.accuracy.chance_test`);
- ``judge-pairs``: every pair of judges on the same resampled papers, the higher by point
  estimate named first (:func:`~judgepanel.studies.common.leader.pairwise`).

All resample papers; the two-sided ones test two-sided; q is Benjamini-Hochberg over the
rows of the family. A judge whose comparison has no p (no number of panels has questions
of both groups) names no family: it is a family of one, and its verdict says it was not
estimable. The judge first by point estimate is a ``best-of`` row (:func:`leader_claim`): a
max-T over every pair of judges, papers resampled, a family of one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from judgepanel.claims.rows import Claim, Family, correct, slug
from judgepanel.studies.common.leader import BestOf, best_of, best_of_claim, pairwise
from judgepanel.studies.visionq.accuracy import paper_sums

LAST_PANEL = "last-panel"
LAST_SHARE = "last-share"
LETTER_FIT = "letter-fit"
ABOVE_CHANCE = "above-chance"
JUDGE_PAIRS = "judge-pairs"
UNIT = "papers"
SCOPE = "rotation 0 (the released panel order)"


def correction_families(*, alpha: float = 0.05) -> list[Family]:
    """Notebook 06's correction families, declared before any result is computed: each is
    Benjamini-Hochberg over its rows (the judges, or the pairs of judges), papers
    resampled."""
    return [
        Family(
            ABOVE_CHANCE,
            "each judge's accuracy against the chance rate of its questions, one row per "
            "judge; papers resampled, two-sided",
            alpha=alpha,
        ),
        Family(
            JUDGE_PAIRS,
            "every pair of judges, accuracy on the same resampled papers, the higher by point "
            "estimate named first; two-sided",
            alpha=alpha,
        ),
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
        Family(
            LETTER_FIT,
            "whether a judge's readable answers' letter shares depart from the gold letter "
            "shares (sign flips of whole papers), one row per judge; one-sided, as a "
            "departure is a positive distance",
            alpha=alpha,
        ),
    ]


def _claims(
    table: pd.DataFrame,
    family: str,
    alpha: float,
    build: Callable[[Any, str], dict[str, Any]],
    columns: tuple[str, str, str, str],
    **fields: Any,
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
                **{"in_points": True, **fields, **build(r, judge)},
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


def letter_fit_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of :func:`~judgepanel.studies.visionq.position.position_bias` (with
    resamples): the letter shares' total-variation distance from the gold shares, with its
    paper-bootstrap interval, tested by the paper-clustered fit test (``fit_p``), one-sided
    since a departure can only make the distance larger."""

    def build(r: Any, judge: str) -> dict[str, Any]:
        return {
            "a": f"the distance of {judge}'s letter shares from the gold letter shares",
            "b": "the zero distance of a judge without a favourite letter",
            "dataset": dataset,
            "scope": f"{SCOPE}, every question (an unreadable answer is a category of its own)",
            "metric": "total-variation distance",
            "symbol": "TV",
            "note": "tested by sign flips of whole papers (fit_p); the interval describes "
            "the distance, which is positive in any finite sample",
        }

    columns = ("tv", "tv_ci_low", "tv_ci_high", "fit_p")
    return _claims(table, LETTER_FIT, alpha, build, columns, alternative="greater",
                   in_points=False)  # fmt: skip


def chance_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of :func:`~judgepanel.studies.visionq.accuracy.chance_test`: a
    judge's accuracy against the chance rate of its questions, in points."""

    def build(r: Any, judge: str) -> dict[str, Any]:
        return {
            "a": f"{judge}'s accuracy ({r.accuracy:.1%})",
            "b": f"the chance rate of its questions ({r.chance:.1%})",
            "dataset": dataset,
            "scope": SCOPE,
            "metric": "accuracy",
            "symbol": "Δ accuracy",
        }

    return _claims(table, ABOVE_CHANCE, alpha, build, ("delta", "ci_low", "ci_high", "p"))


def judge_pair_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of :func:`~judgepanel.studies.common.leader.pairwise` over the
    judges: the higher judge by point estimate against the lower, papers resampled."""
    claims = [
        Claim(
            id=f"{JUDGE_PAIRS}:{slug(r.a)}-vs-{slug(r.b)}",
            a=f"{r.a} ({r.value_a:.1%})",
            b=f"{r.b} ({r.value_b:.1%})",
            dataset=dataset,
            scope=SCOPE,
            metric="accuracy",
            unit=UNIT,
            estimate=float(r.delta),
            ci_low=float(r.ci_low),
            ci_high=float(r.ci_high),
            p=float(r.p),
            family=JUDGE_PAIRS,
            alpha=alpha,
            in_points=True,
            symbol="Δ accuracy",
        )
        for r in table.itertuples(index=False)
    ]
    return correct(claims, {JUDGE_PAIRS: Family(JUDGE_PAIRS, JUDGE_PAIRS, alpha=alpha)})


def leader_claim(result: BestOf, *, dataset: str, alpha: float = 0.05) -> Claim:
    """The ``best-of`` row of the judge first by accuracy: a max-T over every pair of judges,
    papers resampled, a family of one (its p pays for the choice of the leader)."""
    return best_of_claim(
        result, id="leader", dataset=dataset, metric="accuracy", unit=UNIT, noun="judge",
        alpha=alpha, scope=SCOPE, in_points=True,
    )  # fmt: skip


def leader_test(
    preds: pd.DataFrame, *, rotation: int | None = 0, n_resamples: int = 2000, seed: int = 0
) -> BestOf:
    """The judge first by accuracy, tested against every other judge at once by a max-T
    over all pairs, every judge on the same resampled papers."""
    correct_, asked, judges = paper_sums(preds, rotation=rotation)
    return best_of(correct_, asked, judges, n_resamples=n_resamples, seed=seed)


def judge_pairs(
    preds: pd.DataFrame, *, rotation: int | None = 0, n_resamples: int = 2000, seed: int = 0
) -> pd.DataFrame:
    """Every pair of judges on the same resampled papers (the higher by point estimate
    first), with two-sided bootstrap p and BH q over the pairs: questions cluster in
    papers, so the judges are compared as their intervals are computed."""
    correct_, asked, judges = paper_sums(preds, rotation=rotation)
    return pairwise(correct_, asked, judges, n_resamples=n_resamples, seed=seed)
