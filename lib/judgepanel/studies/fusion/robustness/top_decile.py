"""Precision at the top 10%: what a shortlist built from an arm recovers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgepanel.stats import (
    bootstrap_p,
    percentile_ci,
    resample_indices,
)
from judgepanel.studies.common.combiners import gb_combiner, oof_predict
from judgepanel.studies.fusion.blocks import Blocks, best_single, hp_design, panel_mean
from judgepanel.studies.fusion.compare import plain_arm, stack_datasets

MAX_RESAMPLES = 2000
"""The shortlist's resamples are capped here: a run asking for more gets this many."""


def top_weights(values: np.ndarray, m: int) -> np.ndarray:
    """Membership of each item in the top ``m`` of each row, ties shared fractionally.

    Items strictly above the m-th largest value are in (weight 1); the items tied with it
    share the remaining places equally. This is the expected membership under a random
    tie-break, so a coarse score is neither favoured nor penalised by an arbitrary order.
    """
    v = np.atleast_2d(np.asarray(values, float))
    n = v.shape[1]
    if not 1 <= m <= n:
        raise ValueError(f"top size must lie in [1, {n}], got {m}")
    thr = np.partition(v, n - m, axis=1)[:, n - m][:, None]
    above = v > thr
    tied = v == thr
    share = (m - above.sum(axis=1)) / tied.sum(axis=1)
    return above + tied * share[:, None]


def precision_at_top(y: np.ndarray, score: np.ndarray, frac: float = 0.1) -> float:
    """Share of the true top ``frac`` (by ``y``) that ``score``'s top ``frac`` recovers.

    Ties at either cut-off are shared fractionally (:func:`top_weights`). A perfect
    predictor scores 1 when ``y`` has no tie at the cut-off; a random one about ``frac``.
    """
    y, score = np.asarray(y, float), np.asarray(score, float)
    m = top_size(y.size, frac)
    return float((top_weights(y, m) * top_weights(score, m)).sum() / m)


def top_size(n: int, frac: float) -> int:
    """How many images the top ``frac`` of ``n`` holds (at least one, halves rounded up)."""
    if not 0 < frac <= 1:
        raise ValueError(f"frac must lie in (0, 1], got {frac}")
    return max(1, int(np.floor(frac * n + 0.5)))


def _resampled_precision(y, score, idx, m) -> np.ndarray:
    return (top_weights(y[idx], m) * top_weights(score[idx], m)).sum(axis=1) / m


def compare_top_decile(
    y: np.ndarray,
    arms: Mapping[str, np.ndarray],
    *,
    comparator: str = "best single",
    frac: float = 0.1,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Precision at the top ``frac`` of every arm, with bootstrap CIs, against a comparator.

    Resamples are the shared ``resample_indices(n, B, seed)``; on each, both the true top
    and each arm's top are recomputed (duplicated images count as ties). The difference
    from the comparator is paired; p is one-sided (the arm is better).

    Returns:
        arm, precision with ``precision_ci_low``/``precision_ci_high``, top_size, chance,
        and against the comparator delta with ``delta_ci_low``/``delta_ci_high`` and p.
    """
    y = np.asarray(y, float)
    m = top_size(y.size, frac)
    idx = resample_indices(y.size, n_resamples, seed)
    boot = {k: _resampled_precision(y, np.asarray(v, float), idx, m) for k, v in arms.items()}
    full = {k: precision_at_top(y, v, frac) for k, v in arms.items()}
    rows = []
    for k in arms:
        lo, hi = percentile_ci(boot[k])
        row = {
            "arm": k,
            "precision": full[k],
            "precision_ci_low": lo,
            "precision_ci_high": hi,
            "top_size": m,
            "chance": m / y.size,
        }
        if comparator in arms and k != comparator:
            d = boot[k] - boot[comparator]
            dlo, dhi = percentile_ci(d)
            row.update(
                delta=full[k] - full[comparator],
                delta_ci_low=dlo,
                delta_ci_high=dhi,
                p=bootstrap_p(d, "greater"),
            )
        rows.append(row)
    return pd.DataFrame(rows)


def decile_arms(
    blocks: Blocks,
    predeclared: Sequence[str],
    family_sets: Mapping[str, Sequence[str]],
    fused: Mapping[tuple[str, ...], np.ndarray],
) -> tuple[str, dict[str, np.ndarray]]:
    """The best single family of all, and the scores of each shortlist arm.

    Arms: the best single model, the pre-declared panel mean, and H+P_gb of each family
    block (a trio's out-of-fold prediction is taken from ``fused``, whatever the order of
    its members; a block of another size is fitted out of fold here).
    """
    best, _ = best_single(blocks.H, blocks.y)
    arms = {
        "best single": blocks.H[best].to_numpy(float),
        "panel mean (pre-declared)": panel_mean(blocks.H_of(predeclared)).to_numpy(float),
    }
    for block, members in family_sets.items():
        trio = next((k for k in fused if set(k) == set(members)), None)
        if len(members) == 3 and trio is not None:
            arms[f"H+P_gb ({block})"] = fused[trio]
        else:
            arms[f"H+P_gb ({block})"] = oof_predict(
                gb_combiner(), hp_design(blocks, members), blocks.y
            )
    return best, arms


def top_decile_table(
    blocks: Mapping[str, Blocks],
    predeclared: Sequence[str],
    family_sets: Mapping[str, Mapping[str, Sequence[str]]],
    fused: Mapping[str, Mapping[tuple[str, ...], np.ndarray]],
    *,
    n_resamples: int = MAX_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`compare_top_decile` of every dataset's :func:`decile_arms`, with its best
    family, on at most :data:`MAX_RESAMPLES` resamples."""
    tables = {}
    for name, b in blocks.items():
        best, arms = decile_arms(b, predeclared, family_sets[name], fused[name])
        table = compare_top_decile(
            b.y.to_numpy(float), arms, n_resamples=min(n_resamples, MAX_RESAMPLES), seed=seed
        )
        tables[name] = table.assign(best_family=best)
    return stack_datasets(tables)


def shortlist_sentence(top: pd.DataFrame, dataset: str) -> str:
    """One dataset's precision@10% per arm, and which arms have the highest by point
    estimate (described, not tested: the table's rows test each arm against the best
    single model)."""
    t = top[top["dataset"] == dataset]
    leaders = t[np.isclose(t["precision"], t["precision"].max())]["arm"].tolist()
    lead = (
        "every arm has the same precision@10%"
        if len(leaders) == len(t)
        else "the highest precision@10% by point estimate is that of "
        + " and ".join(plain_arm(a) for a in leaders)
    )
    return (
        f"On {dataset}, precision@10% is "
        + ", ".join(f"{row.precision:.2f} for {plain_arm(row.arm)}" for row in t.itertuples())
        + f" (chance {t['chance'].iloc[0]:.2f}, {int(t['top_size'].iloc[0])} images in the top "
        f"decile); {lead}."
    )
