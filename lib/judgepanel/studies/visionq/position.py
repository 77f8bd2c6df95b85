"""VisionQ position bias: letter shares, the last-letter pull, and a goodness-of-fit test.

Rotation r shows released choice ``(j + r) mod n`` in slot j; these tables look at the
SHOWN letters, which equal the released ones at rotation 0. Shares divide by every
question, an unreadable answer being a category of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgepanel.datasets.visionq import LETTERS
from judgepanel.stats import grouped_draws, percentile_ci, wilson
from judgepanel.stats.grouped import ClusterDraws, iter_groups
from judgepanel.studies.visionq.predictions import check_predictions, judge_keys, select_rotation

UNPARSED = "unparsed"


def shown_letters(preds: pd.DataFrame) -> pd.DataFrame:
    """Add ``pred_shown`` / ``gold_shown``: the slots the judge saw, given the rotation.

    At rotation r the released choice i sits in slot ``(i - r) mod n``.
    """
    frame = check_predictions(preds)
    rot = frame["rotation"] if "rotation" in frame.columns else pd.Series(0, index=frame.index)

    def shift(letter: str | None, r: int, n: int) -> str | None:
        if letter is None:
            return None
        return LETTERS[(LETTERS.index(letter) - r) % n]

    frame["pred_shown"] = [
        shift(p, r, n) for p, r, n in zip(frame["pred"], rot, frame["n_choices"], strict=True)
    ]
    frame["gold_shown"] = [
        shift(g, r, n) for g, r, n in zip(frame["gold"], rot, frame["n_choices"], strict=True)
    ]
    return frame


def letter_frequencies(preds: pd.DataFrame, *, rotation: int | None = 0) -> pd.DataFrame:
    """Predicted vs gold letter shares per judge and ``n_choices``, over all questions.

    Shares divide by every question of the group, so an ``unparsed`` row completes the
    predicted shares to 1 (its gold share is 0).

    Returns:
        judge, n_choices, letter, n_questions, pred_n, pred_share, pred_share_ci_low,
        pred_share_ci_high (Wilson 95% interval of pred_share), gold_n, gold_share, excess
        (pred_share - gold_share).
    """
    frame = select_rotation(shown_letters(preds), rotation)
    rows = []
    for labels, sub in iter_groups(frame, [*judge_keys(frame), "n_choices"]):
        n = len(sub)
        letters = [*LETTERS[: int(labels["n_choices"])], UNPARSED]
        pred = sub["pred_shown"].fillna(UNPARSED)
        for letter in letters:
            pred_n = int((pred == letter).sum())
            gold_n = int((sub["gold_shown"] == letter).sum())
            low, high = wilson(pred_n, n)
            rows.append(
                {
                    **labels,
                    "letter": letter,
                    "n_questions": n,
                    "pred_n": pred_n,
                    "pred_share": pred_n / n,
                    "pred_share_ci_low": low,
                    "pred_share_ci_high": high,
                    "gold_n": gold_n,
                    "gold_share": gold_n / n,
                    "excess": (pred_n - gold_n) / n,
                }
            )
    return pd.DataFrame(rows)


def _is_last(sub: pd.DataFrame, column: str) -> np.ndarray:
    """Whether each row's shown letter in ``column`` is its question's last letter."""
    last = np.array([LETTERS[n - 1] for n in sub["n_choices"]], dtype=object)
    return sub[column].to_numpy(dtype=object) == last


def _last_letter_row(sub: pd.DataFrame) -> dict[str, Any]:
    gold_last = _is_last(sub, "gold_shown")
    pred_last = _is_last(sub, "pred_shown")
    correct = sub["correct"].to_numpy(dtype=bool)
    n_last, n_other = int(gold_last.sum()), int((~gold_last).sum())
    acc_last = float(correct[gold_last].mean()) if n_last else float("nan")
    acc_other = float(correct[~gold_last].mean()) if n_other else float("nan")
    n = len(sub)
    return {
        "n": n,
        "n_gold_last": n_last,
        "acc_gold_last": acc_last,
        "n_gold_other": n_other,
        "acc_gold_other": acc_other,
        "delta": acc_last - acc_other,
        "pred_last_share": pred_last.sum() / n,
        "gold_last_share": gold_last.sum() / n,
        "last_excess": (pred_last.sum() - gold_last.sum()) / n,
    }


def _last_letter_delta_ci(
    sub: pd.DataFrame, draws: ClusterDraws, confidence: float
) -> tuple[float, float]:
    """Paper-bootstrap CI of acc_gold_last - acc_gold_other (resamples lacking a group skipped)."""
    gold_last = _is_last(sub, "gold_shown").astype(float)
    correct = sub["correct"].to_numpy(dtype=float)
    acc_last = draws.ratios(correct * gold_last, gold_last)
    acc_other = draws.ratios(correct * (1 - gold_last), 1 - gold_last)
    delta = acc_last - acc_other
    delta = delta[np.isfinite(delta)]
    if delta.size == 0:
        return float("nan"), float("nan")
    return percentile_ci(delta, confidence)


def last_letter_accuracy(
    preds: pd.DataFrame,
    *,
    rotation: int | None = 0,
    n_resamples: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Accuracy when the gold answer is the last shown letter vs when it is not.

    ``delta`` = acc_gold_last - acc_gold_other; ``last_excess`` = share of questions
    answered with the last letter minus the share whose gold is the last letter. With
    ``n_resamples`` > 0, ``ci_low``/``ci_high`` give a paper-bootstrap interval of
    ``delta`` (the paper draws of :func:`~judgepanel.studies.visionq.accuracy_table` for
    the same judge; resamples in which one of the two groups is empty are skipped).
    """
    frame = select_rotation(shown_letters(preds), rotation)
    keys = judge_keys(frame)
    if n_resamples <= 0:
        return pd.DataFrame(
            [{**lab, **_last_letter_row(sub)} for lab, sub in iter_groups(frame, keys)]
        )
    frame = frame.assign(paper=frame["paper"].astype(str))
    rows = []
    for labels, sub, draws in grouped_draws(
        frame, keys, "paper", n_resamples=n_resamples, seed=seed
    ):
        low, high = _last_letter_delta_ci(sub, draws, confidence)
        rows.append({**labels, **_last_letter_row(sub), "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


def _bias_distance(sub: pd.DataFrame) -> dict[str, float]:
    """TV distance (over all questions, unparsed a category) and a chi-square on parsed."""
    tv_total, chi2, dof, n_total = 0.0, 0.0, 0, len(sub)
    for n_choices, part in sub.groupby("n_choices"):
        n = len(part)
        letters = list(LETTERS[: int(n_choices)])
        pred = part["pred_shown"].fillna(UNPARSED)
        pred_share = np.array([(pred == x).mean() for x in [*letters, UNPARSED]])
        gold_share = np.array([(part["gold_shown"] == x).mean() for x in letters] + [0.0])
        tv_total += 0.5 * np.abs(pred_share - gold_share).sum() * n
        parsed = part[part["pred_shown"].notna()]
        if len(parsed):
            observed = np.array([(parsed["pred_shown"] == x).sum() for x in letters], float)
            expected = gold_share[:-1] * len(parsed)
            keep = expected > 0
            dof += int(keep.sum()) - 1
            if np.any(observed[~keep] > 0):  # answers where the gold never is: no fit at all
                chi2 = float("inf")
            elif keep.sum() > 1:
                chi2 += float(sps.chisquare(observed[keep], expected[keep]).statistic)
    p = float(sps.chi2.sf(chi2, dof)) if dof > 0 else float("nan")
    return {"tv": tv_total / n_total, "chi2": chi2, "dof": dof, "p": p}


def position_bias(preds: pd.DataFrame, *, rotation: int | None = 0) -> pd.DataFrame:
    """Per judge: last-letter excess, total-variation distance and a chi-square test.

    ``tv`` is 0.5 * sum |pred share - gold share| per ``n_choices``, weighted by its
    question count, with unparsed answers as their own category (all questions are the
    denominator). ``chi2``/``p`` test the parsed answers' letter counts against the gold
    letter shares (goodness of fit, summed over ``n_choices``).
    """
    frame = select_rotation(shown_letters(preds), rotation)
    rows = []
    for labels, sub in iter_groups(frame, judge_keys(frame)):
        last = _last_letter_row(sub)
        rows.append(
            {
                **labels,
                "n": last["n"],
                "pred_last_share": last["pred_last_share"],
                "gold_last_share": last["gold_last_share"],
                "last_excess": last["last_excess"],
                **_bias_distance(sub),
            }
        )
    return pd.DataFrame(rows)
