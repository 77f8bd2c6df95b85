"""VAB position analysis: which slots a judge picks, and how accuracy depends on the slot.

Every call with an order is read field by field (the best of Top-1 and TB-1 answers, the
worst of Bot-1 and TB-1 answers). Slots fall in three classes, first (slot 0), last (slot
k - 1) and middle; intervals are percentile bootstraps over TASKS from
:func:`judgepanel.stats.grouped_ratios`, one group per judge, question (column ``kind``),
field and slot class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.stats import grouped_ratios
from judgepanel.studies.vab.accuracy import tested_q
from judgepanel.studies.vab.predictions import gold_of, with_gold

SLOT_CLASSES: tuple[str, ...] = ("first", "middle", "last")
KEYS: list[str] = ["judge", "kind", "field", "slot"]
"""The groups of the slot-class tables."""
MIRROR = "mirrors the first-slot row: in a pair the two slots' excesses are opposite"
"""Why the last-slot row of a group of pairs alone is kept out of the correction family."""
SUMS_TO_ONE = (
    "minus the sum of the first- and last-slot rows: the three slot classes' shares, picked "
    "and expected, each sum to one"
)
"""Why the middle-slot row is kept out of the correction family: it is fixed by the other two."""

_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("vab_top1", "best", "pred_best"),
    ("vab_bot1", "worst", "pred_worst"),
    ("vab_tb1", "best", "pred_best"),
    ("vab_tb1", "worst", "pred_worst"),
)


def slot_class(slot: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``first`` (slot 0), ``last`` (slot k-1) or ``middle``."""
    slot, k = np.asarray(slot), np.asarray(k)
    return np.where(slot == 0, "first", np.where(slot == k - 1, "last", "middle"))


def _class_share(cls: str, k: np.ndarray) -> np.ndarray:
    """Share of the k slots that belong to a class: 1/k for first and last, (k-2)/k middle."""
    k = np.asarray(k, dtype=float)
    return (k - 2.0) / k if cls == "middle" else 1.0 / k


def _slots(df: pd.DataFrame, column: str) -> np.ndarray:
    """Slot of each row's label in its order, -1 where the label or the order is null."""
    out = np.full(len(df), -1, dtype=int)
    for i, (order, label) in enumerate(zip(df["order"], df[column], strict=True)):
        if isinstance(order, str) and isinstance(label, str):
            seq = order.split(",")
            if label in seq:
                out[i] = seq.index(label)
    return out


def _field_frame(
    pred: pd.DataFrame, tasks: pd.DataFrame | None, repetitions: Sequence[int] | None
) -> pd.DataFrame:
    """One row per call (of ``repetitions``, default all) and field, with picked and gold
    slots; calls without an order (score-then-rank) are left out."""
    if repetitions is not None:
        pred = pred.loc[pred["repetition"].isin(list(repetitions))]
    df = with_gold(pred, gold_of(pred, tasks))
    df = df.loc[df["order"].notna()]
    parts = []
    for question, field, column in _FIELDS:
        sub = df.loc[df["kind"] == question].copy()
        if sub.empty:
            continue
        gold_col = "gold_best" if field == "best" else "gold_worst"
        if field == "worst":
            two = sub["k"].eq(2) & sub["gold_worst"].isna()
            sub.loc[two, "gold_worst"] = [
                next(x for x in o.split(",") if x != b)
                for o, b in zip(sub.loc[two, "order"], sub.loc[two, "gold_best"], strict=True)
            ]
        sub["field"] = field
        answered = sub["status"].eq("ok") & sub[column].notna()
        sub["picked_slot"] = np.where(answered, _slots(sub, column), -1)
        sub["gold_slot"] = _slots(sub, gold_col)
        sub["correct"] = answered & sub[column].eq(sub[gold_col])
        cols = ["judge", "task_id", "kind", "field", "repetition", "k"]
        parts.append(sub[[*cols, "picked_slot", "gold_slot", "correct"]])
    if not parts:
        raise ValueError("no predictions with an order: position analysis needs the order column")
    return pd.concat(parts, ignore_index=True)


def _in_slot_order(table: pd.DataFrame) -> pd.DataFrame:
    """Rows by judge, question (``kind``) and field, then first, middle, last."""
    rank = {c: i for i, c in enumerate(SLOT_CLASSES)}
    return table.sort_values(
        KEYS, key=lambda s: s.map(rank) if s.name == "slot" else s, kind="stable"
    ).reset_index(drop=True)


def position_table(
    pred: pd.DataFrame,
    tasks: pd.DataFrame | None = None,
    *,
    repetitions: Sequence[int] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """How often a judge picks the first, middle or last slot, against a position-blind judge.

    A position-blind judge picks by content, so under random or balanced orders its pick
    lands in a slot class in proportion to the slots in the class: 1/k for the first and
    the last, (k-2)/k for the middle. ``expected`` averages that share over the answered
    calls, so it adjusts for the mix of set sizes. It is exact for the balanced design and
    for uniformly random orders; the identity order of the standard design follows the
    release's labelling, whose positions may carry information of their own.

    Returns:
        judge, kind (the question), field (best|worst), slot (first|middle|last), n_answers, picked,
        expected, delta (picked - expected), ci_low, ci_high, p (two-sided bootstrap over
        tasks), q (Benjamini-Hochberg over the rows not excluded; NaN on the excluded),
        excluded (why a row is left out of the correction, "" for a tested row: in a
        group of pairs alone, with no middle slot, the last slot's excess is minus the
        first's on every resample, so that row repeats the first's test; in a group with a
        middle slot, the three excesses sum to zero, so the middle row is fixed by the
        other two and stays out).
    """
    ff = _field_frame(pred, tasks, repetitions)
    ff = ff.loc[ff["picked_slot"] >= 0]
    picked_class = slot_class(ff["picked_slot"], ff["k"])
    long = pd.concat(
        [
            ff.assign(
                slot=cls,
                hit=(picked_class == cls).astype(float),
                share=_class_share(cls, ff["k"].to_numpy()),
            )
            for cls in SLOT_CLASSES
        ],
        ignore_index=True,
    )
    per_task = long.groupby([*KEYS, "task_id"], sort=True)[["hit", "share"]].sum()
    totals = per_task.groupby(level=KEYS, sort=True).agg(lambda s: s.to_numpy().sum())
    # A class that none of the group's set sizes has (the middle of pairs) is left out.
    kept = totals.index[totals["share"] != 0]
    long = long.loc[pd.MultiIndex.from_frame(long[KEYS]).isin(kept)]
    long = long.assign(excess=long["hit"] - long["share"])
    ci = grouped_ratios(
        long,
        KEYS,
        "task_id",
        "excess",
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        p_value=True,
    )
    totals = totals.loc[kept]
    n = ci["n"].to_numpy(float)
    picked, expected = totals["hit"].to_numpy() / n, totals["share"].to_numpy() / n
    out = ci.loc[:, KEYS].assign(
        n_answers=ci["n"],
        picked=picked,
        expected=expected,
        delta=ci["estimate"],
        ci_low=ci["ci_low"],
        ci_high=ci["ci_high"],
        p=ci["p"],
    )
    out = _in_slot_order(out)
    groups = out.groupby(KEYS[:-1], sort=False)["slot"].transform(lambda s: "middle" in set(s))
    out["q"] = np.nan
    has_middle = groups.astype(bool)
    out["excluded"] = np.select(
        [(out["slot"] == "last") & ~has_middle, out["slot"] == "middle"],
        [MIRROR, SUMS_TO_ONE],
        "",
    )
    if len(out):
        out["q"] = tested_q(out["p"], out["excluded"])
    return out


def position_by_slot(
    pred: pd.DataFrame,
    tasks: pd.DataFrame | None = None,
    *,
    repetitions: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Pick rate of every slot index per set size (for heat maps): picked vs 1/k.

    Returns:
        judge, kind, field, k, slot (0-based), n_answers (of that k), picked, expected.
    """
    ff = _field_frame(pred, tasks, repetitions)
    ff = ff.loc[ff["picked_slot"] >= 0]
    rows = []
    for (judge, question, field, k), sub in ff.groupby(["judge", "kind", "field", "k"], sort=True):
        counts = np.bincount(sub["picked_slot"].to_numpy(), minlength=int(k))
        for slot in range(int(k)):
            rows.append(
                {
                    "judge": judge,
                    "kind": question,
                    "field": field,
                    "k": int(k),
                    "slot": slot,
                    "n_answers": len(sub),
                    "picked": counts[slot] / len(sub),
                    "expected": 1.0 / k,
                }
            )
    return pd.DataFrame(rows)


def _mean_inverse(k: np.ndarray) -> float:
    return float(np.mean(1.0 / k.astype(float)))


def accuracy_by_gold_slot(
    pred: pd.DataFrame,
    tasks: pd.DataFrame | None = None,
    *,
    repetitions: Sequence[int] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Accuracy by where the gold image was shown (first, middle, last slot).

    Every call counts (failed ones as incorrect); the field is ``best`` for Top-1 and TB-1
    answers and ``worst`` for Bot-1 and TB-1 answers, each judged on its own.

    Returns:
        judge, kind, field, slot, n_calls, accuracy, ci_low, ci_high (bootstrap over
        tasks), chance (1/k averaged over the calls).
    """
    ff = _field_frame(pred, tasks, repetitions)
    ff = ff.loc[ff["gold_slot"] >= 0]
    ff = ff.assign(slot=slot_class(ff["gold_slot"], ff["k"]), correct=ff["correct"].astype(float))
    table = grouped_ratios(
        ff,
        KEYS,
        "task_id",
        "correct",
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        extra={"chance": ("k", _mean_inverse)},
    )
    out = table.rename(columns={"n": "n_calls", "estimate": "accuracy"})
    out = out.loc[:, [*KEYS, "n_calls", "accuracy", "ci_low", "ci_high", "chance"]]
    return _in_slot_order(out)
