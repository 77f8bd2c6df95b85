"""What the VisionQ page (notebook 06) computes between its tables and its sentences.

The page keeps the call that makes each table and figure and the sentences that read them;
these helpers read its answers (from the store or from the official harness's files) and
word its tables' ledger rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from judgepanel.claims.rows import Claim
from judgepanel.core.config import Run
from judgepanel.studies.common.leader import BestOf
from judgepanel.studies.visionq.imports import load_predictions, questions_of
from judgepanel.studies.visionq.run import load_run
from judgepanel.studies.visionq.verdicts import leader_claim, leader_test

LETTER_FIT_COLUMNS = [
    "judge", "n", "tv", "tv_ci_low", "tv_ci_high", "fit_p", "fit_q", "chi2", "dof", "chi2_p",
]  # fmt: skip
"""The columns of the letter-fit table, taken from the position-bias table."""


@dataclass(frozen=True)
class VisionqAnswers:
    """The answers a page reads.

    Attributes:
        questions: the eligible questions.
        predictions: one row per planned answer.
        families: judge name -> model id (an imported judge is its own model).
        imported: whether they come from the official harness's files, not the store.
    """

    questions: pd.DataFrame
    predictions: pd.DataFrame
    families: dict[str, str]
    imported: bool = False


def read_answers(
    run: Run,
    *,
    families: Mapping[str, str],
    rotations: int,
    seed: int,
    predictions: Sequence[str] | None = None,
    judge: str | None = None,
    slice_name: str = "eligible",
) -> VisionqAnswers:
    """The run's answers: from the files of ``predictions`` (the official harness's, one
    judge per file, ``judge`` picking one; the ``slice_name`` slice) when given, else the
    store's answers of ``families`` in ``rotations`` rotations."""
    if predictions:
        preds = load_predictions(predictions, judge=judge, slice_name=slice_name)
        judges = {j: j for j in dict.fromkeys(preds["judge"])}
        return VisionqAnswers(questions_of(preds), preds, judges, imported=True)
    data = load_run(run, families=families, rotations=rotations, seed=seed)
    return VisionqAnswers(data.questions, data.predictions, dict(families))


def leader(
    preds: pd.DataFrame, *, dataset: str, n_resamples: int = 2000, seed: int = 0
) -> tuple[BestOf, Claim]:
    """The judge first by accuracy in the released order, tested against every other at
    once (max-T over the pairs, papers resampled), and its ledger row, a headline row."""
    test = leader_test(preds, rotation=0, n_resamples=n_resamples, seed=seed)
    return test, replace(leader_claim(test, dataset=dataset), role="headline")


def interval_widening(overall: pd.DataFrame) -> float:
    """How many times as wide the paper-bootstrap intervals are as the Wilson intervals,
    on average over the judges: above one, clustering in papers widens them."""
    boot = overall["ci_high"] - overall["ci_low"]
    wilson = overall["wilson_ci_high"] - overall["wilson_ci_low"]
    return float((boot / wilson).mean())


def last_share_words(bias: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, dict[str, str]]:
    """The ledger words of each judge's last-share row: its share of last-panel answers
    against the share of questions whose gold answer is last."""
    return {
        c.id: {
            "a": f"{r.judge}'s share of last-panel answers ({r.pred_last_share:.1%})",
            "b": f"the share of questions whose gold answer is last ({r.gold_last_share:.1%})",
        }
        for c, r in zip(claims, bias.itertuples(), strict=True)
    }


def last_panel_words(last: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, dict[str, str]]:
    """The ledger words of each judge's last-panel row: its accuracy with the gold answer
    in the last panel against its accuracy with it elsewhere."""
    return {
        c.id: {
            "a": f"{r.judge}'s accuracy with the gold answer in the last panel",
            "b": "its accuracy with it in another panel",
        }
        for c, r in zip(claims, last.itertuples(), strict=True)
    }
