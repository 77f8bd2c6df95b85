"""Scores or comparisons: the pairwise study's analyses, on tidy tables.

- :func:`accuracy_table`: per judge and question, accuracy on the people's decided pairs
  and position consistency (the same image chosen in both orders), each with a 95%
  percentile interval from a bootstrap over images: a resample draws images with
  replacement and weighs each pair by how often both its images were drawn.
- :func:`equal_calls_table`: per judge, Spearman's ρ of its Bradley-Terry scores with the
  human mean against ρ of its own holistic scores at the same calls per image (the mean
  of its first ``c`` holistic repetitions, ``c`` the pairwise calls per image), as a
  paired bootstrap over images, with the cost each arm was billed.
- :func:`adaptive_vs_random`: Bradley-Terry from half of a judge's pairs, chosen where
  the current scores are least certain, against a random half.
- :func:`panel_table`: Bradley-Terry on the pooled choices of every judge against the
  panel mean of their holistic scores at the same calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.stats.bootstrap import paired_bootstrap
from judgepanel.stats.bradley_terry import win_probability
from judgepanel.stats.correlation import spearman
from judgepanel.studies.pairwise.choices import bradley_terry_scores

LEVEL = 0.95


def _image_weights(pairs: pd.DataFrame, ids: Sequence[str], n: int, seed: int) -> np.ndarray:
    """(resamples x pairs): the product of the draw counts of each pair's two images."""
    index = {image: k for k, image in enumerate(ids)}
    a = pairs["image_a"].map(index).to_numpy(int)
    b = pairs["image_b"].map(index).to_numpy(int)
    counts = np.random.default_rng(seed).multinomial(len(ids), np.full(len(ids), 1 / len(ids)), n)
    return counts[:, a] * counts[:, b]


def _share_with_interval(values: np.ndarray, weights: np.ndarray) -> tuple[float, float, float]:
    """A mean of ``values`` and its bootstrap interval under the resampled ``weights``."""
    keep = ~np.isnan(values)
    if not keep.any():
        return np.nan, np.nan, np.nan
    v, w = values[keep], weights[:, keep]
    total = w.sum(axis=1)
    boot = (w @ v)[total > 0] / total[total > 0]
    tail = (1 - LEVEL) / 2 * 100
    return float(v.mean()), float(np.percentile(boot, tail)), float(np.percentile(boot, 100 - tail))


def accuracy_table(
    choices: pd.DataFrame,
    labelled: pd.DataFrame,
    ids: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Per judge and question: accuracy on decided pairs and position consistency.

    Args:
        choices: :func:`~judgepanel.studies.pairwise.choices.choices_from_calls`.
        labelled: the pairs labelled per question (``label_pairs``, with ``question``).
        ids: the images resampled.
    """
    merged = choices.merge(
        labelled[["pair_id", "question", "human", "decided"]], on=["pair_id", "question"]
    )
    merged["correct"] = (merged["winner"] == merged["human"]).astype(float)
    rows = []
    for (judge, question), g in merged.groupby(["judge", "question"], sort=True):
        per_pair = g.groupby("pair_id").agg(
            image_a=("image_a", "first"),
            image_b=("image_b", "first"),
            decided=("decided", "first"),
            correct=("correct", "mean"),
            n=("winner", "size"),
            same=("winner", "nunique"),
        )
        weights = _image_weights(per_pair, ids, n_resamples, seed)
        decided = per_pair["decided"].to_numpy(bool)
        accuracy = np.where(decided, per_pair["correct"], np.nan)
        consistent = np.where(per_pair["n"] == 2, (per_pair["same"] == 1).astype(float), np.nan)
        acc, acc_low, acc_high = _share_with_interval(accuracy, weights)
        con, con_low, con_high = _share_with_interval(consistent, weights)
        rows.append(
            {
                "judge": judge,
                "question": question,
                "decided_pairs": int(decided.sum()),
                "accuracy": acc,
                "acc_low": acc_low,
                "acc_high": acc_high,
                "consistent": con,
                "cons_low": con_low,
                "cons_high": con_high,
                "first_slot": float((g["shown"] == "A").mean()),
            }
        )
    return pd.DataFrame(rows)


def score_means(scores: pd.DataFrame, calls_per_image: int) -> pd.DataFrame:
    """Per image (rows) and judge (columns): the mean of its first ``calls_per_image``
    holistic repetitions (a ``score_table``)."""
    held = scores[(scores["kind"] == "holistic") & (scores["repetition"] < calls_per_image)]
    return held.pivot_table(index="item", columns="family", values="value", aggfunc="mean")


def equal_calls(orders: int, pairs_per_image: int) -> int:
    """Pairwise calls per image: each pair is one call per order and shows two images."""
    return max(1, round(pairs_per_image * orders / 2))


def _compare(
    human: pd.Series, a: pd.Series, b: pd.Series, n_resamples: int, seed: int
) -> dict[str, float]:
    common = human.index.intersection(a.dropna().index).intersection(b.dropna().index)
    y, av, bv = human[common].to_numpy(), a[common].to_numpy(), b[common].to_numpy()
    res = paired_bootstrap(
        y, av, bv, "spearman", n_resamples=n_resamples, seed=seed, alternative="two-sided"
    )
    return {
        "n_images": len(common),
        "rho_a": spearman(y, av),
        "rho_b": spearman(y, bv),
        "delta": res.delta,
        "ci_low": res.ci_low,
        "ci_high": res.ci_high,
        "p": res.p,
    }


def equal_calls_table(
    choices: pd.DataFrame,
    scores: pd.DataFrame,
    human: pd.Series,
    calls_per_image: int,
    costs: pd.DataFrame,
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Per judge: ρ of its Bradley-Terry scores (holistic choices) against ρ of its
    holistic score means at ``calls_per_image`` calls, with each arm's billed cost.

    ``costs``: per judge, ``usd_pairs`` and ``usd_scores`` (:func:`billed`).
    """
    ids = human.index.astype(str).tolist()
    means = score_means(scores, calls_per_image)
    rows = []
    for judge, g in choices[choices["question"] == "holistic"].groupby("judge", sort=True):
        if judge not in means.columns:
            continue
        bt = bradley_terry_scores(g, ids)
        row = {"judge": judge, "calls_per_image": calls_per_image}
        row.update(_compare(human, bt, means[judge], n_resamples, seed))
        rows.append(row)
    out = pd.DataFrame(rows).rename(columns={"rho_a": "rho_pairs", "rho_b": "rho_scores"})
    return out.merge(costs, on="judge", how="left")


def billed(
    calls: pd.DataFrame, scored: pd.DataFrame, calls_per_image: int, ids: Sequence[str]
) -> pd.DataFrame:
    """Per judge: the cost billed for its holistic pairwise calls (``calls``) and for its
    first ``calls_per_image`` holistic score calls of the compared images ``ids``
    (``scored``, store frames), in USD: both arms over the same images, though the scored
    dataset may hold more."""
    pairs = calls[(calls["kind"] == "pair_holistic") & (calls["status"] == "ok")]
    held = scored[
        (scored["kind"] == "holistic")
        & (scored["status"] == "ok")
        & (scored["repetition"] < calls_per_image)
        & scored["item"].astype(str).isin(set(ids))
    ]
    return (
        pd.DataFrame(
            {
                "usd_pairs": pairs.groupby("family")["cost"].sum(),
                "usd_scores": held.groupby("family")["cost"].sum(),
            }
        )
        .rename_axis("judge")
        .reset_index()
    )


def _adaptive_subset(pool: pd.DataFrame, ids: list[str], take: int, rounds: int, seed: int):
    """Pairs of ``pool`` picked in ``rounds`` batches: first at random, then where the
    current Bradley-Terry scores are least certain (win probability nearest 1/2, weighed
    by the two scores' variances)."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pool))
    first = max(1, take // rounds)
    chosen = list(order[:first])
    index = {image: k for k, image in enumerate(ids)}
    a = pool["image_a"].map(index).to_numpy(int)
    b = pool["image_b"].map(index).to_numpy(int)
    while len(chosen) < take:
        fit = bradley_terry_scores(pool.iloc[chosen], ids)
        p = win_probability(fit.to_numpy(), a, b)
        counts = np.bincount(np.r_[a[chosen], b[chosen]], minlength=len(ids)) + 1.0
        need = p * (1 - p) * (1 / counts[a] + 1 / counts[b])
        need[chosen] = -np.inf
        step = min(first, take - len(chosen))
        chosen += list(np.argsort(-need, kind="stable")[:step])
    return pool.iloc[chosen]


def adaptive_vs_random(
    choices: pd.DataFrame,
    human: pd.Series,
    *,
    share: float = 0.5,
    rounds: int = 4,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Per judge: ρ of Bradley-Terry from ``share`` of its holistic pairs chosen
    adaptively (:func:`_adaptive_subset`) against a random ``share``, same budget.

    Both orders of a chosen pair are kept, so the two arms make the same number of calls.
    """
    ids = human.index.astype(str).tolist()
    rows = []
    holistic = choices[choices["question"] == "holistic"]
    for judge, g in holistic.groupby("judge", sort=True):
        pool = g.drop_duplicates("pair_id").reset_index(drop=True)
        take = max(2, round(share * len(pool)))
        adaptive = set(_adaptive_subset(pool, ids, take, rounds, seed)["pair_id"])
        random = set(pool.sample(take, random_state=seed)["pair_id"])
        bt_adaptive = bradley_terry_scores(g[g["pair_id"].isin(adaptive)], ids)
        bt_random = bradley_terry_scores(g[g["pair_id"].isin(random)], ids)
        row = {"judge": judge, "pairs": take}
        row.update(_compare(human, bt_adaptive, bt_random, n_resamples, seed))
        rows.append(row)
    return pd.DataFrame(rows).rename(columns={"rho_a": "rho_adaptive", "rho_b": "rho_random"})


def panel_table(
    choices: pd.DataFrame,
    scores: pd.DataFrame,
    human: pd.Series,
    calls_per_image: int,
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Bradley-Terry on every judge's pooled holistic choices against the panel mean of
    their holistic score means at ``calls_per_image`` calls (one row)."""
    ids = human.index.astype(str).tolist()
    holistic = choices[choices["question"] == "holistic"]
    judges = sorted(holistic["judge"].unique())
    means = score_means(scores, calls_per_image)
    panel = means[[j for j in judges if j in means.columns]].mean(axis=1)
    bt = bradley_terry_scores(holistic, ids)
    row = {"judges": ", ".join(judges), "calls_per_image": calls_per_image}
    row.update(_compare(human, bt, panel, n_resamples, seed))
    return pd.DataFrame([row]).rename(columns={"rho_a": "rho_pairs", "rho_b": "rho_scores"})
