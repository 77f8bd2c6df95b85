"""VisionQ position bias: letter shares, the last-letter pull, and what it does to accuracy.

Rotation r shows released choice ``(j + r) mod n`` in slot j; these tables look at the
SHOWN letters, which equal the released ones at rotation 0. Shares divide by every
question, an unreadable answer being a category of its own.

Questions cluster in papers (one figure, one set of authors), so every interval and p here
treats the paper as the unit: intervals and the p of a difference come from the judge's
paper resamples (the draws of :func:`judgepanel.stats.grouped_draws` that its accuracy
interval uses), and the test of the letter shares flips whole papers
(:func:`letter_fit_p`). The chi-square of the letter shares, which treats questions as
independent, is kept beside its paper-clustered counterpart for reference only.

Accuracy with the gold answer in the last panel is compared with accuracy otherwise
within each number of panels: the gold answer is last in a larger share of the questions
with few panels, whose chance accuracy is higher, so the raw difference mixes the
judge's pull toward the last panel with the number of panels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

from judgepanel.datasets.visionq import LETTERS
from judgepanel.stats import bh, grouped_draws, wilson
from judgepanel.stats.grouped import ClusterDraws, group_seed, iter_groups, snap_zero
from judgepanel.stats.intervals import cluster_numbers
from judgepanel.stats.means import finite_ci, finite_p
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


def _finite_q(p: pd.Series) -> NDArray[np.float64]:
    """Benjamini-Hochberg q over the rows that have a p; NaN on the others (not tested)."""
    values = p.to_numpy(dtype=float)
    q = np.full(values.shape, np.nan)
    tested = np.isfinite(values)
    if tested.any():
        q[tested] = bh(values[tested])
    return q


def _resampled(draws: ClusterDraws, columns: NDArray[np.float64]) -> NDArray[np.float64]:
    """The resampled sums of each row of ``columns`` (one value per question each), in
    an array of the same leading shape with the resamples last."""
    flat = columns.reshape(-1, columns.shape[-1])
    sums = [draws.resampled_sums(draws.cluster_sums(c)) for c in flat]
    return np.stack(sums).reshape(*columns.shape[:-1], draws.indices.shape[0])


def _judge_rows(
    preds: pd.DataFrame,
    rotation: int | None,
    n_resamples: int,
    seed: int,
    point: Callable[[pd.DataFrame], dict[str, Any]],
    tests: Callable[[dict[str, Any], pd.DataFrame, ClusterDraws], dict[str, Any]],
) -> pd.DataFrame:
    """One row per judge at ``rotation``: ``point`` of its questions and, with resamples,
    ``tests`` on its paper draws (:func:`judgepanel.stats.grouped_draws`, seeded by the
    judge's key as its accuracy interval is)."""
    frame = select_rotation(shown_letters(preds), rotation)
    keys = judge_keys(frame)
    if n_resamples <= 0:
        return pd.DataFrame([{**lab, **point(sub)} for lab, sub in iter_groups(frame, keys)])
    frame = frame.assign(paper=frame["paper"].astype(str))
    groups = grouped_draws(frame, keys, "paper", n_resamples=n_resamples, seed=seed)
    return pd.DataFrame(
        [{**lab, **point(sub), **tests(lab, sub, draws)} for lab, sub, draws in groups]
    )


# -- accuracy with the gold answer last, within strata of the number of panels ------------


def mantel_haenszel_difference(
    hits_a: ArrayLike, n_a: ArrayLike, hits_b: ArrayLike, n_b: ArrayLike
) -> NDArray[np.float64]:
    """The Mantel-Haenszel difference of two proportions over strata (the last axis).

    Sum over strata of w (hits_a / n_a - hits_b / n_b), over the sum of w, with weight
    w = n_a n_b / (n_a + n_b): each stratum compares like with like, and weighs as much as
    its smaller group allows. A stratum lacking either group weighs nothing; NaN where no
    stratum has both. Values within rounding of zero are zero.
    """
    ha, na, hb, nb = (np.asarray(x, dtype=np.float64) for x in (hits_a, n_a, hits_b, n_b))
    both = (na > 0) & (nb > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.where(both, ha / na - hb / nb, 0.0)
        weight = np.where(both, na * nb / (na + nb), 0.0)
        return snap_zero((weight * diff).sum(axis=-1) / weight.sum(axis=-1))


def _gold_last_counts(sub: pd.DataFrame) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """The numbers of panels of ``sub`` (sorted) and, per question, four 0/1 indicators
    per number of panels: gold last, gold last and correct, gold elsewhere, gold elsewhere
    and correct (shape 4 x strata x questions)."""
    n = sub["n_choices"].to_numpy(dtype=int)
    strata = np.unique(n)
    last = _is_last(sub, "gold_shown")
    correct = sub["correct"].to_numpy(dtype=bool)
    groups = (last, last & correct, ~last, ~last & correct)
    cols = np.array([[g & (n == s) for s in strata] for g in groups], dtype=np.float64)
    return strata, cols


def _chance(n_choices: NDArray[np.int64]) -> float:
    return float(np.mean(1.0 / n_choices)) if n_choices.size else float("nan")


def _last_letter_row(sub: pd.DataFrame) -> dict[str, Any]:
    gold_last = _is_last(sub, "gold_shown")
    correct = sub["correct"].to_numpy(dtype=bool)
    n_choices = sub["n_choices"].to_numpy(dtype=int)
    n_last, n_other = int(gold_last.sum()), int((~gold_last).sum())
    acc_last = float(correct[gold_last].mean()) if n_last else float("nan")
    acc_other = float(correct[~gold_last].mean()) if n_other else float("nan")
    _, cols = _gold_last_counts(sub)
    last, hits_last, other, hits_other = cols.sum(axis=-1)
    return {
        "n": len(sub),
        "n_strata": int(((last > 0) & (other > 0)).sum()),
        "n_gold_last": n_last,
        "acc_gold_last": acc_last,
        "chance_gold_last": _chance(n_choices[gold_last]),
        "n_gold_other": n_other,
        "acc_gold_other": acc_other,
        "chance_gold_other": _chance(n_choices[~gold_last]),
        "raw_delta": acc_last - acc_other,
        "delta": float(mantel_haenszel_difference(hits_last, last, hits_other, other)),
    }


def _last_letter_tests(
    sub: pd.DataFrame, draws: ClusterDraws, confidence: float
) -> dict[str, float]:
    """Intervals and two-sided p of the raw and the stratified difference, on one set of
    paper resamples (resamples where a difference is undefined are skipped)."""
    _, cols = _gold_last_counts(sub)
    last, hits_last, other, hits_other = np.moveaxis(_resampled(draws, cols), -1, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        raw = snap_zero(
            hits_last.sum(axis=-1) / last.sum(axis=-1)
            - hits_other.sum(axis=-1) / other.sum(axis=-1)
        )
    stratified = mantel_haenszel_difference(hits_last, last, hits_other, other)
    raw_low, raw_high = finite_ci(raw, confidence)
    low, high = finite_ci(stratified, confidence)
    return {
        "raw_ci_low": raw_low,
        "raw_ci_high": raw_high,
        "raw_p": finite_p(raw),
        "ci_low": low,
        "ci_high": high,
        "p": finite_p(stratified),
    }


def last_letter_accuracy(
    preds: pd.DataFrame,
    *,
    rotation: int | None = 0,
    n_resamples: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Accuracy with the gold answer in the last shown panel against otherwise, per judge.

    ``raw_delta`` = acc_gold_last - acc_gold_other over all questions is kept for
    reference: it mixes numbers of panels, and the two groups' chance accuracies
    (``chance_gold_last``, ``chance_gold_other``: their mean 1/n_choices) show by how much.
    ``delta``, the comparison a verdict is read from, compares the two groups within each
    number of panels and combines the strata with Mantel-Haenszel weights
    (:func:`mantel_haenszel_difference`); :func:`last_letter_strata` gives each stratum.

    With ``n_resamples`` > 0, both differences get a percentile interval and a TWO-SIDED
    bootstrap p (twice the smaller share of resamples on either side of zero, at least
    2/(B+1); a judge may be pulled toward the last panel or away from it), all from one
    set of paper resamples: the judge's draws of :func:`judgepanel.stats.grouped_draws`,
    as its accuracy interval draws them. The weights are recomputed in every resample, and
    a resample in which a difference is undefined is skipped for that difference.

    Returns:
        judge, n, n_strata (numbers of panels with questions of both groups), n_gold_last,
        acc_gold_last, chance_gold_last, n_gold_other, acc_gold_other, chance_gold_other,
        raw_delta [raw_ci_low, raw_ci_high, raw_p], delta [ci_low, ci_high, p, q (BH over
        the judges with a p)].
    """

    def tests(_: dict[str, Any], sub: pd.DataFrame, draws: ClusterDraws) -> dict[str, float]:
        return _last_letter_tests(sub, draws, confidence)

    out = _judge_rows(preds, rotation, n_resamples, seed, _last_letter_row, tests)
    if n_resamples <= 0:
        return out
    out["q"] = _finite_q(out["p"])
    return out


def last_letter_strata(preds: pd.DataFrame, *, rotation: int | None = 0) -> pd.DataFrame:
    """The strata of :func:`last_letter_accuracy`: per judge and number of panels, accuracy
    with the gold answer last and otherwise, the chance accuracy 1/n_choices they share,
    and the stratum's share of the Mantel-Haenszel weight (0 when a group is empty).

    Returns:
        judge, n_choices, chance, n_gold_last, acc_gold_last, n_gold_other,
        acc_gold_other, delta, weight.
    """
    frame = select_rotation(shown_letters(preds), rotation)
    rows = []
    for labels, sub in iter_groups(frame, judge_keys(frame)):
        strata, cols = _gold_last_counts(sub)
        last, hits_last, other, hits_other = cols.sum(axis=-1)
        both = (last > 0) & (other > 0)
        weight = np.where(both, last * other / np.maximum(last + other, 1), 0.0)
        share = weight / weight.sum() if weight.sum() > 0 else weight
        for i, s in enumerate(strata):
            with np.errstate(invalid="ignore", divide="ignore"):
                acc_last, acc_other = hits_last[i] / last[i], hits_other[i] / other[i]
            rows.append(
                {
                    **labels,
                    "n_choices": int(s),
                    "chance": 1.0 / s,
                    "n_gold_last": int(last[i]),
                    "acc_gold_last": float(acc_last) if last[i] else float("nan"),
                    "n_gold_other": int(other[i]),
                    "acc_gold_other": float(acc_other) if other[i] else float("nan"),
                    "delta": float(acc_last - acc_other) if both[i] else float("nan"),
                    "weight": float(share[i]),
                }
            )
    return pd.DataFrame(rows)


# -- the letter shares against the gold shares --------------------------------------------


def _last_share_row(sub: pd.DataFrame) -> dict[str, float]:
    pred_last = _is_last(sub, "pred_shown")
    gold_last = _is_last(sub, "gold_shown")
    n = len(sub)
    return {
        "pred_last_share": pred_last.sum() / n,
        "gold_last_share": gold_last.sum() / n,
        "last_excess": (pred_last.sum() - gold_last.sum()) / n,
    }


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
    return {"tv": tv_total / n_total, "chi2": chi2, "dof": dof, "chi2_p": p}


def _letter_columns(sub: pd.DataFrame) -> tuple[list[int], NDArray[np.float64]]:
    """Per number of panels n and letter x (the first n letters), 0/1 per question: the
    question has n panels, is read, is read as x, has gold x. Shape strata x (2 + 2 * n_max)
    x questions, padded with zeros past a stratum's letters."""
    n = sub["n_choices"].to_numpy(dtype=int)
    strata = sorted({int(s) for s in n})
    width = max(strata)
    pred = sub["pred_shown"].to_numpy(dtype=object)
    gold = sub["gold_shown"].to_numpy(dtype=object)
    parsed = pd.notna(sub["pred_shown"]).to_numpy()
    cols = np.zeros((len(strata), 2 + 2 * width, len(sub)))
    for i, s in enumerate(strata):
        here = n == s
        cols[i, 0], cols[i, 1] = here, here & parsed
        for j, letter in enumerate(LETTERS[:s]):
            cols[i, 2 + j] = here & (pred == letter)
            cols[i, 2 + width + j] = here & (gold == letter)
    return strata, cols


def _tv_of_counts(counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """The total-variation distance of :func:`_bias_distance` from the counts of
    :func:`_letter_columns` summed over questions (strata x columns, resamples last):
    0.5 (sum over strata and letters of |pred - gold| + the unread answers) / questions."""
    width = (counts.shape[1] - 2) // 2
    questions, parsed = counts[:, 0], counts[:, 1]
    gap = np.abs(counts[:, 2 : 2 + width] - counts[:, 2 + width :]).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 0.5 * (gap + questions - parsed).sum(axis=0) / questions.sum(axis=0)


def resampled_tv(sub: pd.DataFrame, draws: ClusterDraws) -> NDArray[np.float64]:
    """The total-variation distance of the predicted from the gold letter shares on each
    of the judge's paper resamples (the draws its other intervals use)."""
    _, cols = _letter_columns(sub)
    return _tv_of_counts(_resampled(draws, cols))


FLIP_STREAM = 1
"""Mixed with a judge's seed for the sign flips of :func:`letter_fit_p`, so that they are
not the bits of the judge's paper resamples."""


def letter_fit_p(sub: pd.DataFrame, n_resamples: int, seed: int) -> float:
    """Paper-clustered p of "the read answers' letter shares equal the gold letter shares".

    The statistic is Pearson's form with the chance share in the denominator: the sum over
    numbers of panels n and their letters x of N_n (pred share - gold share)^2 / (1/n),
    N_n the read answers of n-panel questions (pred shares among them, gold shares among
    all n-panel questions, as the chi-square's expected counts take them); unlike the
    chi-square's gold-share denominator it stays finite when a letter is never the gold
    answer. The excess shares are sums of each paper's contribution, and under the null
    a paper's contribution is as likely to point either way, so each of ``n_resamples``
    draws flips the sign of every paper's contribution at random (a wild bootstrap over
    papers with Rademacher signs, the null imposed; a paper flips as a whole) and
    p = (1 + draws whose statistic is at least the observed) / (B + 1). With few papers
    it errs on the conservative side. Duplicating every question of a paper leaves p as
    it is; the chi-square, which counts questions as independent, would shrink.
    """
    strata, cols = _letter_columns(sub)
    cluster_of, k = cluster_numbers(sub["paper"].astype(str).to_numpy(), n_resamples)
    per_paper = np.zeros((*cols.shape[:2], k))
    for c in range(k):  # papers in sorted label order, questions in row order within each
        per_paper[..., c] = cols[..., cluster_of == c].sum(axis=-1)
    width = (cols.shape[1] - 2) // 2
    questions, parsed = per_paper[:, 0].sum(axis=-1), per_paper[:, 1].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (
            per_paper[:, 2 : 2 + width] / parsed[:, None, None]
            - per_paper[:, 2 + width :] / questions[:, None, None]
        )
    letters = np.arange(width)[None, :] < np.array(strata)[:, None]
    share = np.where(letters[..., None] & np.isfinite(share), share, 0.0)  # strata x letters x k
    weight = parsed * np.array(strata, dtype=float)
    observed = float((weight * (snap_zero(share.sum(axis=-1)) ** 2).sum(axis=1)).sum())
    signs = np.random.default_rng([seed, FLIP_STREAM]).choice([-1.0, 1.0], size=(k, n_resamples))
    flipped = snap_zero(share.reshape(-1, k) @ signs).reshape(*share.shape[:2], n_resamples)
    resampled = (weight[:, None] * (flipped**2).sum(axis=1)).sum(axis=0)
    return float((1 + np.count_nonzero(resampled >= observed * (1 - 1e-9))) / (n_resamples + 1))


TESTED_POSITION_COLUMNS = (
    "n", "pred_last_share", "gold_last_share", "last_excess", "last_excess_ci_low",
    "last_excess_ci_high", "last_excess_p", "last_excess_q", "tv", "tv_ci_low", "tv_ci_high",
    "chi2", "dof", "chi2_p", "fit_p", "fit_q",
)  # fmt: skip
"""The columns of :func:`position_bias` with resamples, after the judge's."""


def position_bias(
    preds: pd.DataFrame,
    *,
    rotation: int | None = 0,
    n_resamples: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per judge: last-letter excess, total-variation distance and tests of the letter shares.

    ``last_excess`` is the share of questions answered with the last letter minus the
    share whose gold answer is the last letter. ``tv`` is 0.5 * sum |pred share - gold
    share| per ``n_choices``, weighted by its question count, with unparsed answers as
    their own category (all questions are the denominator). ``chi2``/``chi2_p`` test the
    parsed answers' letter counts against the gold letter shares (goodness of fit, summed
    over ``n_choices``) as if questions were independent; they are kept for reference.

    With ``n_resamples`` > 0 the tests are clustered in papers: ``last_excess`` gets a
    percentile interval and a two-sided bootstrap p from the judge's paper draws
    (:func:`judgepanel.stats.grouped_draws`), and ``fit_p`` is :func:`letter_fit_p`, the
    paper-clustered counterpart of ``chi2_p`` (sign flips of whole papers, seeded by the
    judge's key and ``seed``); each has a BH q over the judges. ``tv`` gets a percentile
    interval from the same paper draws (``tv_ci_low``, ``tv_ci_high``): a distance, so the
    interval describes its size, and ``fit_p`` decides whether the shares depart.

    Returns:
        judge, n, pred_last_share, gold_last_share, last_excess [last_excess_ci_low,
        last_excess_ci_high, last_excess_p, last_excess_q], tv [tv_ci_low, tv_ci_high],
        chi2, dof, chi2_p [fit_p, fit_q].
    """

    def point(sub: pd.DataFrame) -> dict[str, Any]:
        return {"n": len(sub), **_last_share_row(sub), **_bias_distance(sub)}

    def tests(labels: dict[str, Any], sub: pd.DataFrame, draws: ClusterDraws) -> dict[str, float]:
        excess = _is_last(sub, "pred_shown").astype(float) - _is_last(sub, "gold_shown")
        resampled = draws.ratios(excess)
        low, high = finite_ci(resampled, confidence)
        tv_low, tv_high = finite_ci(resampled_tv(sub, draws), confidence)
        return {
            "last_excess_ci_low": low,
            "last_excess_ci_high": high,
            "last_excess_p": finite_p(resampled),
            "tv_ci_low": tv_low,
            "tv_ci_high": tv_high,
            "fit_p": letter_fit_p(sub, n_resamples, group_seed(tuple(labels.values()), seed)),
        }

    out = _judge_rows(preds, rotation, n_resamples, seed, point, tests)
    if n_resamples <= 0:
        return out
    out["last_excess_q"] = _finite_q(out["last_excess_p"])
    out["fit_q"] = _finite_q(out["fit_p"])
    return out[[*judge_keys(out), *TESTED_POSITION_COLUMNS]]
