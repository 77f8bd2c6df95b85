"""VisionQ accuracy over ALL questions, with paper-bootstrap and Wilson intervals.

Questions of one paper share figures and authors, so the paper is the unit resampled:
:func:`judgepanel.stats.grouped_ratios` with the paper as cluster, one group per judge
(and taxonomy group), each seeded by its key, so a judge's interval does not move when
another judge joins the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.stats import grouped_draws, grouped_ratios, wilson
from judgepanel.stats.grouped import iter_groups
from judgepanel.stats.means import finite_ci, finite_p
from judgepanel.studies.visionq.predictions import (
    as_list,
    check_predictions,
    judge_column,
    judge_keys,
    select_rotation,
)

FEW_PAPERS = 10
"""Groups (axes, leaves) resting on fewer papers than this are flagged as thin: with
questions clustered in papers, their intervals are wide and conclusions indicative."""


def chance_rate(n_choices: Iterable[int]) -> float:
    """Accuracy of uniform guessing: the mean of 1/n_choices."""
    n = np.asarray(list(n_choices), dtype=float)
    return float(np.mean(1.0 / n))


def normalised_accuracy(accuracy: Any, chance: Any) -> Any:
    """(accuracy - chance) / (1 - chance): 0 at chance, 1 when perfect."""
    return (accuracy - chance) / (1.0 - chance)


def _count_false(values: np.ndarray) -> int:
    return int((~values.astype(bool)).sum())


def accuracy_table(
    preds: pd.DataFrame,
    by: str | Sequence[str] | None = None,
    *,
    rotation: int | None = 0,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Accuracy per judge (and per ``by`` group) with paper-bootstrap and Wilson CIs.

    Args:
        preds: a predictions table.
        by: grouping column(s), e.g. ``"axis"`` or ``["axis", "leaf"]``; None = overall.
        rotation: which rotation to score when a ``rotation`` column exists (0 = the
            released order); None scores every row.
        n_resamples: bootstrap resamples of PAPERS.
        seed: bootstrap seed, mixed with each group's key.
        confidence: CI level.

    Returns:
        One row per judge and group: ``n``, ``n_papers``, ``n_correct``, ``n_unparsed``,
        ``accuracy``, ``ci_low``/``ci_high`` (paper bootstrap), ``wilson_ci_low``/
        ``wilson_ci_high``, ``chance``, ``normalised`` and its bootstrap CI
        ``normalised_ci_low``/``normalised_ci_high`` (on the same paper resamples;
        chance is recomputed in each, as normalised accuracy is the ratio
        sum(correct - 1/n_choices) / sum(1 - 1/n_choices)).
    """
    frame = select_rotation(check_predictions(preds), rotation)
    keys = judge_keys(frame) + as_list(by)
    inv_n = 1.0 / frame["n_choices"].to_numpy(dtype=float)
    correct = frame["correct"].to_numpy(dtype=float)
    frame = frame.assign(
        paper=frame["paper"].astype(str),
        correct=correct,
        above_chance=correct - inv_n,
        chance_gap=1.0 - inv_n,
    )
    common = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    acc = grouped_ratios(
        frame,
        keys,
        "paper",
        "correct",
        **common,
        extra={"chance": ("n_choices", chance_rate), "n_unparsed": ("parsed", _count_false)},
    )
    if acc.empty:
        return pd.DataFrame()
    norm = grouped_ratios(frame, keys, "paper", "above_chance", "chance_gap", **common)
    n_correct = acc["sum_numerator"].round().astype(int)
    accuracy = n_correct / acc["n"]
    w_low, w_high = wilson(n_correct.to_numpy(), acc["n"].to_numpy(), confidence)
    return pd.DataFrame(
        {
            **{k: acc[k] for k in keys},
            "n": acc["n"],
            "n_papers": acc["n_clusters"],
            "n_correct": n_correct,
            "n_unparsed": acc["n_unparsed"],
            "accuracy": accuracy,
            "ci_low": acc["ci_low"],
            "ci_high": acc["ci_high"],
            "wilson_ci_low": w_low,
            "wilson_ci_high": w_high,
            "chance": acc["chance"],
            "normalised": normalised_accuracy(accuracy, acc["chance"]),
            "normalised_ci_low": norm["ci_low"],
            "normalised_ci_high": norm["ci_high"],
        }
    )


def per_axis_accuracy(preds: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    """:func:`accuracy_table` by taxonomy axis."""
    return accuracy_table(preds, "axis", **kwargs)


def per_leaf_accuracy(preds: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    """:func:`accuracy_table` by (axis, leaf)."""
    return accuracy_table(preds, ["axis", "leaf"], **kwargs)


def thin_groups(
    table: pd.DataFrame, by: str | Sequence[str] = "axis", *, min_papers: int = FEW_PAPERS
) -> pd.DataFrame:
    """The groups of an accuracy table that rest on fewer than ``min_papers`` papers.

    Args:
        table: :func:`accuracy_table` output grouped by ``by`` (any judges).
        by: the grouping column(s).
        min_papers: the threshold (``FEW_PAPERS`` by default).

    Returns:
        One row per thin group: the ``by`` columns, ``n`` (questions), ``n_papers`` and
        ``ci_width`` (mean paper-bootstrap CI width over judges), fewest papers first.
    """
    keys = as_list(by)
    groups = table.assign(ci_width=table["ci_high"] - table["ci_low"]).groupby(keys, sort=False)
    out = groups.agg(
        n=("n", "first"), n_papers=("n_papers", "first"), ci_width=("ci_width", "mean")
    )
    out = out.reset_index()
    out = out[out["n_papers"] < min_papers]
    return out.sort_values(["n_papers", "n"], kind="stable").reset_index(drop=True)


def count_answers(preds: pd.DataFrame) -> pd.DataFrame:
    """Per judge: planned calls, and how many were answered, read, unreadable or missing.

    Uses the ``answered`` column of
    :func:`~judgepanel.studies.visionq.predictions.predictions_from_store` (absent: every
    row counts as answered). An unreadable or failed call, a letter outside the choices
    and a call never made are all incorrect answers in every accuracy; this table only
    says which is which.

    Returns:
        judge, questions, calls, answered, parsed, unparsed (answered, no letter),
        out_of_range (answered with a letter the question does not have), missing (never
        answered), parsed_share (of all planned calls). parsed + unparsed + out_of_range
        + missing = calls.
    """
    frame = check_predictions(preds)
    answered = (
        frame["answered"].astype(bool)
        if "answered" in frame.columns
        else pd.Series(True, index=frame.index)
    )
    frame = frame.assign(_answered=answered)
    rows = []
    for labels, sub in iter_groups(frame, judge_keys(frame)):
        calls = len(sub)
        parsed = int(sub["parsed"].sum())
        n_answered = int(sub["_answered"].sum())
        unread = sub["_answered"] & ~sub["parsed"]
        rows.append(
            {
                **labels,
                "questions": int(sub["id"].nunique()),
                "calls": calls,
                "answered": n_answered,
                "parsed": parsed,
                "unparsed": int((unread & ~sub["out_of_range"]).sum()),
                "out_of_range": int(sub["out_of_range"].sum()),
                "missing": calls - n_answered,
                "parsed_share": parsed / calls,
            }
        )
    return pd.DataFrame(rows)


def chance_test(
    preds: pd.DataFrame,
    *,
    rotation: int | None = 0,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Each judge's accuracy against chance on its own questions, papers resampled.

    ``delta`` is the mean over questions of correct - 1/n_choices (accuracy minus the
    chance rate of the same questions), with a percentile interval and a two-sided
    bootstrap p from the judge's paper resamples: the draws of its accuracy interval
    (:func:`judgepanel.stats.grouped_draws`, seeded by the judge's key), so the interval
    lies above zero exactly when that of the normalised accuracy does.

    Returns:
        judge, n, n_papers, accuracy, chance, delta, ci_low, ci_high, p.
    """
    frame = select_rotation(check_predictions(preds), rotation)
    frame = frame.assign(
        paper=frame["paper"].astype(str),
        excess=frame["correct"].to_numpy(dtype=float) - 1.0 / frame["n_choices"].to_numpy(float),
    )
    rows = []
    for labels, sub, draws in grouped_draws(
        frame, judge_keys(frame), "paper", n_resamples=n_resamples, seed=seed
    ):
        resampled = draws.ratios(sub["excess"].to_numpy(float))
        low, high = finite_ci(resampled, confidence)
        rows.append(
            {
                **labels,
                "n": len(sub),
                "n_papers": draws.n_clusters,
                "accuracy": float(sub["correct"].astype(float).mean()),
                "chance": chance_rate(sub["n_choices"]),
                "delta": float(sub["excess"].mean()),
                "ci_low": low,
                "ci_high": high,
                "p": finite_p(resampled),
            }
        )
    return pd.DataFrame(rows)


def paper_sums(
    preds: pd.DataFrame, *, rotation: int | None = 0
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(correct, questions, judges)``: per paper (rows, in sorted label order) and judge
    (columns), the correct answers and the questions asked, for tests that resample
    papers with every judge on the same draws (:mod:`judgepanel.studies.common.leader`)."""
    frame = select_rotation(check_predictions(preds), rotation)
    judge = judge_column(frame)
    if judge is None:
        raise ValueError("comparing judges needs a judge column")
    frame = frame.assign(paper=frame["paper"].astype(str), correct=frame["correct"].astype(float))
    grouped = frame.groupby(["paper", judge], sort=True)["correct"]
    correct = grouped.sum().unstack(judge, fill_value=0.0).sort_index()
    asked = grouped.size().unstack(judge, fill_value=0).reindex_like(correct).astype(float)
    judges = [str(j) for j in dict.fromkeys(frame[judge])]
    return correct[judges].to_numpy(float), asked[judges].to_numpy(float), judges
