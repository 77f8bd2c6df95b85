"""Score-then-rank: VAB predictions from per-image scores, for a like-for-like comparison.

Any ranker that scores images one at a time (a family's holistic mean, the panel mean, a
fused rubric combiner trained elsewhere) becomes a VAB judge by ranking each set by its
scores: the highest-scored image is the predicted best, the lowest the predicted worst.
The predictions come out in the same table as direct comparison
(:data:`~judgepanel.studies.vab.columns.PRED_COLUMNS`), one row per standard order with the
same answer in each (a score does not depend on the order shown), so ap@1 equals pass^3 for
a ranker and both are computed on the same tasks and the same denominator as the direct
judges.

Rules:

- Ties: images whose scores are equal (to 1e-12) at the top or the bottom are resolved by
  a uniform draw from a generator seeded by ``(seed, task_id)``, the same draw for every
  order; the table flags such tasks in a ``tied`` column. For three or more images the
  worst is drawn from the tied bottom images other than the chosen best.
- A set with any unscored image gets no prediction (``status = "failed"``): it counts as
  incorrect, exactly like a failed call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgepanel.studies.vab.columns import PRED_COLUMNS, STANDARD_REPS
from judgepanel.studies.vab.predictions import gold_table

TIE_TOLERANCE = 1e-12


def _tie_rng(seed: int, task_id: str) -> np.random.Generator:
    digest = hashlib.sha256(f"vab-rank-ties\x1f{seed}\x1f{task_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def _draw(candidates: np.ndarray, rng: np.random.Generator) -> int:
    """One of ``candidates``, drawn uniformly only when there is a choice to make."""
    if len(candidates) == 1:
        return int(candidates[0])
    return int(candidates[rng.integers(len(candidates))])


def _as_series(scores: Mapping[str, float] | pd.Series | pd.DataFrame) -> pd.Series:
    if isinstance(scores, pd.DataFrame):
        if not {"image_id", "score"} <= set(scores.columns):
            raise ValueError("a score table needs columns image_id and score")
        if scores["image_id"].duplicated().any():
            dup = scores.loc[scores["image_id"].duplicated(), "image_id"].iloc[0]
            raise ValueError(f"score table repeats image {dup!r}")
        return pd.Series(scores["score"].to_numpy(float), index=scores["image_id"])
    if isinstance(scores, pd.Series):
        return scores.astype(float)
    return pd.Series(dict(scores), dtype=float)


def rank_predictions(
    scores: Mapping[str, float] | pd.Series | pd.DataFrame,
    tasks: pd.DataFrame,
    *,
    judge: str,
    repetitions: Sequence[int] = STANDARD_REPS,
    seed: int = 0,
) -> pd.DataFrame:
    """Top-1, Bot-1 and TB-1 predictions from per-image scores.

    Args:
        scores: image_id (``f"{task_id}/{label}"``) -> score; a mapping, a Series, or a
            DataFrame with ``image_id`` and ``score``.
        tasks: the loaded VAB tasks (needs ``task_id``, ``labels``, ``n_images``, ``domain``,
            gold columns).
        judge: the name this ranker carries in the predictions table.
        repetitions: order indices to emit (the same answer in each).
        seed: seeds the tie draws.

    Returns:
        The predictions table (``PRED_COLUMNS``, ``order`` null) plus ``tied`` (bool).
        TB-1 rows are emitted for three or more images only, as for direct judges.
    """
    s = _as_series(scores)
    gold = gold_table(tasks).set_index("task_id")
    rows = []
    for task in tasks.itertuples(index=False):
        labels = list(task.labels)
        k = len(labels)
        vals = np.array([s.get(f"{task.task_id}/{lab}", np.nan) for lab in labels], float)
        g = gold.loc[task.task_id]
        best = worst = None
        tied = False
        if np.all(np.isfinite(vals)):
            rng = _tie_rng(seed, task.task_id)
            top = np.flatnonzero(vals >= vals.max() - TIE_TOLERANCE)
            b = _draw(top, rng)
            # Never empty for two or more images: were the best the only bottom image, every
            # score would lie within the tolerance of the lowest, so all would be bottom.
            bottom = np.flatnonzero(vals <= vals.min() + TIE_TOLERANCE)
            bottom = bottom[bottom != b]
            w = _draw(bottom, rng)
            tied = len(top) > 1 or len(bottom) > 1
            best, worst = labels[b], labels[w]
        status = "ok" if best is not None else "failed"
        questions = ["vab_top1", "vab_bot1"] + (["vab_tb1"] if k >= 3 else [])
        for question in questions:
            for rep in repetitions:
                rows.append(
                    {
                        "task_id": task.task_id,
                        "judge": judge,
                        "kind": question,
                        "repetition": int(rep),
                        "order": None,
                        "pred_best": best if question != "vab_bot1" else None,
                        "pred_worst": worst if question != "vab_top1" else None,
                        "status": status,
                        "gold_best": g.gold_best,
                        "gold_worst": g.gold_worst,
                        "k": int(g.k),
                        "domain": g.domain,
                        "tied": tied,
                    }
                )
    return pd.DataFrame(rows, columns=[*PRED_COLUMNS, "tied"])


def image_scores(
    frame: pd.DataFrame, *, call_type: str = "holistic", dimension: str = ""
) -> pd.DataFrame:
    """Mean score per image and family from a store frame (the scorer's per-image calls).

    Only ``status == "ok"`` rows with a value count; an image whose every call failed is
    absent, so score-then-rank records its set as failed.

    Returns:
        image_id, family, score (mean over repetitions), n (calls averaged).
    """
    sub = frame.loc[(frame["kind"] == call_type) & (frame["dimension"] == dimension)]
    sub = sub.loc[sub["status"].eq("ok") & sub["value"].notna()]
    out = (
        sub.groupby(["item", "family"])["value"]
        .agg(score="mean", n="size")
        .reset_index()
        .rename(columns={"item": "image_id"})
    )
    return out


def panel_scores(per_family: pd.DataFrame, families: Sequence[str] | None = None) -> pd.Series:
    """The panel mean: each family's scores z-scored over all images, then averaged.

    Standardising first keeps one family's wider scale from dominating the mean. An image
    must be scored by every family in the panel, or it is left out (its set then fails).
    """
    wide = per_family.pivot_table(index="image_id", columns="family", values="score")
    if families is not None:
        missing = [f for f in families if f not in wide.columns]
        if missing:
            raise ValueError(f"no scores for families: {', '.join(missing)}")
        wide = wide[list(families)]
    z = (wide - wide.mean()) / wide.std(ddof=0).replace(0.0, np.nan)
    return z.dropna().mean(axis=1).rename("score")
