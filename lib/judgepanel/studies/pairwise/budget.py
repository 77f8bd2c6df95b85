"""The budget curve: comparisons against scores at 1 .. c calls per image, with cost.

At ``k`` calls per image, each judge (and the pooled panel) is read two ways:

- **comparisons**: Bradley-Terry from a subsample of its answered holistic pairwise calls
  (:func:`calls_at`). The calls are walked in the order their pairs were drawn (the
  sampling's rounds), the orders of a pair together; a call is kept while both its images
  have been shown in fewer than ``2k`` kept calls and fewer than ``k`` calls per image
  have been kept in all (a call shows two images, so it is half a call to each). At
  ``k = c`` every answered call is kept: the equal-calls comparison's own set.
- **scores**: the mean of its first ``k`` holistic scores.

Each arm gets Spearman's ρ with the human mean and a 95% percentile interval from a
bootstrap over images (the two arms on the same resamples), and the cost billed per image:
the billed USD of the calls read, over the images compared (stated per 1000 images).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgepanel.stats.bootstrap import bootstrap_arms, percentile_ci
from judgepanel.stats.correlation import spearman
from judgepanel.studies.pairwise.analysis import LEVEL, score_means
from judgepanel.studies.pairwise.choices import bradley_terry_scores
from judgepanel.studies.pairwise.prompt import PAIR_CALL_TYPES
from judgepanel.studies.pairwise.sampling import HOLISTIC

PER = 1000
"""Costs are stated per this many images (a call costs a fraction of a cent)."""

PANEL = "panel"
"""The ``judge`` of the budget table's pooled rows (every judge's calls together)."""


def calls_at(choices: pd.DataFrame, drawn: Sequence[str], k: int, c: int) -> pd.DataFrame:
    """One judge's holistic ``choices`` cut to about ``k`` calls per image (module doc).

    Args:
        choices: one judge's answered holistic calls (``pair_id``, ``order``, ``image_a``,
            ``image_b``, ...).
        drawn: the pair ids in the order they were drawn.
        k: calls per image wanted, 1 .. ``c``.
        c: the run's pairwise calls per image (all calls are kept at ``k = c``).

    Raises:
        ValueError: ``k`` outside 1 .. ``c``.
    """
    if not 1 <= k <= c:
        raise ValueError(f"calls per image must be in 1..{c}, got {k}")
    if k == c:
        return choices
    rank = {pair: i for i, pair in enumerate(drawn)}
    walk = choices.assign(_rank=choices["pair_id"].map(rank)).sort_values(
        ["_rank", "order"], kind="stable"
    )
    images = pd.unique(walk[["image_a", "image_b"]].to_numpy().ravel())
    shown = dict.fromkeys(images, 0)
    budget = k * len(images)
    keep = []
    for label, a, b in zip(walk.index, walk["image_a"], walk["image_b"], strict=True):
        if len(keep) >= budget:
            break
        if shown[a] < 2 * k and shown[b] < 2 * k:
            keep.append(label)
            shown[a] += 1
            shown[b] += 1
    return choices.loc[sorted(keep)]


def _pair_costs(calls: pd.DataFrame) -> pd.Series:
    """Billed USD of each answered holistic pairwise call, by (judge, pair_id, order)."""
    ok = calls[(calls["kind"] == PAIR_CALL_TYPES[HOLISTIC]) & (calls["status"] == "ok")]
    index = pd.MultiIndex.from_arrays(
        [ok["family"], ok["item"], ok["repetition"].astype(int)],
        names=["judge", "pair_id", "order"],
    )
    return pd.Series(ok["cost"].to_numpy(float), index=index).groupby(level=[0, 1, 2]).sum()


def _score_costs(scored: pd.DataFrame, ids: Sequence[str], k: int) -> pd.Series:
    """Billed USD per judge of the first ``k`` holistic score calls of the images ``ids``."""
    held = scored[
        (scored["kind"] == "holistic")
        & (scored["status"] == "ok")
        & (scored["repetition"] < k)
        & scored["item"].astype(str).isin(set(ids))
    ]
    return held.groupby("family")["cost"].sum()


def _rhos(
    human: pd.Series, pairs: pd.Series, scores: pd.Series, n_resamples: int, seed: int
) -> dict[str, float]:
    """ρ of each arm with ``human`` on the images both arms have, with 95% intervals."""
    common = human.index.intersection(pairs.dropna().index).intersection(scores.dropna().index)
    y = human[common].to_numpy(float)
    arms = {"pairs": pairs[common].to_numpy(float), "scores": scores[common].to_numpy(float)}
    draws = bootstrap_arms(y, arms, "spearman", n_resamples=n_resamples, seed=seed)
    row: dict[str, float] = {"n_images": len(common)}
    for j, (arm, x) in enumerate(arms.items()):
        low, high = percentile_ci(draws[:, j], LEVEL)
        row.update({f"rho_{arm}": spearman(y, x), f"{arm}_low": low, f"{arm}_high": high})
    return row


def budget_table(
    choices: pd.DataFrame,
    scores: pd.DataFrame,
    human: pd.Series,
    pairs: pd.DataFrame,
    calls: pd.DataFrame,
    scored: pd.DataFrame,
    calls_per_image: int,
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """Per judge (and ``panel``, every judge pooled) and ``k`` = 1 .. ``calls_per_image``:
    ρ with ``human`` of its comparisons and of its scores at ``k`` calls per image, with
    95% intervals, the calls kept and the cost billed per 1000 images of each arm.

    Args:
        choices: :func:`~judgepanel.studies.pairwise.choices.choices_from_calls`.
        scores: the scored dataset's ``score_table``.
        human: the human mean by image id (the images compared).
        pairs: the pairs asked, in the order drawn.
        calls, scored: the pairwise and the scored dataset's store frames (their costs).
    """
    ids = human.index.astype(str).tolist()
    holistic = choices[choices["question"] == HOLISTIC]
    everyone = sorted(holistic["judge"].unique())
    pair_cost = _pair_costs(calls)
    drawn = pairs["pair_id"].tolist()
    rows = []
    for k in range(1, calls_per_image + 1):
        means = score_means(scores, k)
        score_cost = _score_costs(scored, ids, k)
        kept = {j: calls_at(holistic[holistic["judge"] == j], drawn, k, calls_per_image)
                for j in everyone}  # fmt: skip
        for judge in [*[j for j in everyone if j in means.columns], PANEL]:
            group = everyone if judge == PANEL else [judge]
            used = pd.concat([kept[j] for j in group])
            keys = pd.MultiIndex.from_frame(used[["judge", "pair_id", "order"]])
            mean = means.reindex(columns=group).mean(axis=1)
            row = {"judge": judge, "calls_per_image": k, "pair_calls": len(used)}
            row.update(_rhos(human, bradley_terry_scores(used, ids), mean, n_resamples, seed))
            row["usd_pairs_per_1000"] = PER * pair_cost.reindex(keys).sum() / len(ids)
            row["usd_scores_per_1000"] = PER * score_cost.reindex(group).sum() / len(ids)
            rows.append(row)
    return pd.DataFrame(rows)


def budget_long(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`budget_table` one row per judge, ``k`` and arm (``pairs``/``scores``), with
    ``rho``, ``low``, ``high`` and ``usd_per_1000``: the figure's frame."""
    parts = []
    for arm in ("pairs", "scores"):
        cols = {
            f"rho_{arm}": "rho",
            f"{arm}_low": "low",
            f"{arm}_high": "high",
            f"usd_{arm}_per_1000": "usd_per_1000",
        }
        part = table[["judge", "calls_per_image", *cols]].rename(columns=cols)
        parts.append(part.assign(arm=arm))
    return pd.concat(parts, ignore_index=True)
