"""Per-task VAB scores from the predictions table, and the chance level they are read against.

Rules, the same in every analysis of the study:

- One denominator: every task x order of the grid (all tasks of the gold table x the
  requested repetitions) counts. A failed, unparseable or missing answer is INCORRECT; the
  counts of failed and missing answers are reported next to each accuracy.
- Top-1: the predicted best is the gold best. Bot-1: the predicted worst is the gold worst.
  TB-1: both right in one TB-1 answer; for two images it is derived from the Top-1 answer
  (naming the best names the worst), and TB-1 is never asked.
- ap@1: mean accuracy over the standard orders (repetitions 0-2); pass^3: all of them right.
- Chance is analytic (:func:`chance_rate`): Top-1 and Bot-1 1/k, TB-1 1/(k(k-1)) for
  k >= 3 and 1/2 for k = 2; pass^3 under independence is the cube; both averaged over the
  tasks.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.studies.vab.columns import METRICS, STANDARD_REPS
from judgepanel.studies.vab.predictions import check_predictions, gold_of, pair_worst, with_gold


def chance_rate(k: int | np.ndarray, metric: str) -> np.ndarray:
    """Chance accuracy of one answer: 1/k (Top-1, Bot-1); TB-1 1/(k(k-1)), 1/2 for k=2."""
    k = np.asarray(k, dtype=float)
    if metric in ("top1", "bot1"):
        return 1.0 / k
    if metric == "tb1":
        return np.where(k == 2, 0.5, 1.0 / (k * np.maximum(k - 1, 1)))
    raise ValueError(f"unknown metric {metric!r}; expected one of {METRICS}")


def _row_correct(df: pd.DataFrame) -> pd.DataFrame:
    """Per-row correctness of the Top-1, Bot-1 and TB-1 readings of each answer."""
    ok = df["status"].eq("ok")
    best_ok = ok & df["pred_best"].notna() & df["pred_best"].eq(df["gold_best"])
    paired = pair_worst(df)
    worst_ok = ok & paired["pred_worst"].notna() & paired["pred_worst"].eq(paired["gold_worst"])
    return pd.DataFrame({"best_ok": best_ok, "worst_ok": worst_ok}, index=df.index)


def _metric_rows(pred: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Long table: judge, task_id, metric, repetition, correct, failed."""
    df = with_gold(pred, gold)
    flags = _row_correct(df)
    failed = ~df["status"].eq("ok")
    parts = []
    sources = (
        ("top1", df["kind"].eq("vab_top1"), flags["best_ok"]),
        ("bot1", df["kind"].eq("vab_bot1"), flags["worst_ok"]),
        ("tb1", df["kind"].eq("vab_tb1") & df["k"].ge(3), flags["best_ok"] & flags["worst_ok"]),
        ("tb1", df["kind"].eq("vab_top1") & df["k"].eq(2), flags["best_ok"]),
    )
    for metric, mask, correct in sources:
        sub = df.loc[mask, ["judge", "task_id", "repetition"]].copy()
        sub["metric"] = metric
        sub["correct"] = correct[mask].astype(bool).to_numpy()
        sub["failed"] = failed[mask].to_numpy()
        parts.append(sub)
    return pd.concat(parts, ignore_index=True)


def metric_grid(pred: pd.DataFrame, gold: pd.DataFrame, reps: Sequence[int]) -> pd.DataFrame:
    """The full judge x task x metric x repetition grid, a metric kept for a judge only
    when the judge answered at least one prompt of that metric's question."""
    questions_by_judge = pred.groupby("judge")["kind"].agg(lambda s: set(s))
    any_three = bool(gold["k"].ge(3).any())
    parts = []
    for judge, questions in questions_by_judge.items():
        metrics = []
        if "vab_top1" in questions:
            metrics.append("top1")
        if "vab_bot1" in questions:
            metrics.append("bot1")
        if "vab_tb1" in questions or ("vab_top1" in questions and not any_three):
            metrics.append("tb1")
        idx = pd.MultiIndex.from_product(
            [[judge], gold["task_id"], metrics, list(reps)],
            names=["judge", "task_id", "metric", "repetition"],
        )
        parts.append(idx.to_frame(index=False))
    return (
        pd.concat(parts, ignore_index=True)
        if parts
        else pd.DataFrame(columns=["judge", "task_id", "metric", "repetition"])
    )


def task_scores(
    pred: pd.DataFrame,
    tasks: pd.DataFrame | None = None,
    *,
    repetitions: Sequence[int] = STANDARD_REPS,
) -> pd.DataFrame:
    """Per judge, task and metric: how many of the orders were answered correctly.

    Args:
        pred: the predictions table.
        tasks: the gold tasks (``load_vab`` output or a gold table); defaults to the tasks
            that appear in ``pred``. It fixes the denominator.
        repetitions: the orders that count (ap@1 and pass^3 use 0, 1, 2).

    Returns:
        Columns judge, task_id, metric, domain, k, n_orders, n_correct, n_failed,
        n_missing, ap1 (mean correctness), pass3 (1.0 if every order is right),
        chance_ap1, chance_pass3.
    """
    check_predictions(pred)
    gold = gold_of(pred, tasks)
    reps = list(repetitions)
    pred = pred.loc[pred["repetition"].isin(reps)]
    rows = _metric_rows(pred, gold)
    grid = metric_grid(pred, gold, reps)
    full = grid.merge(rows, on=["judge", "task_id", "metric", "repetition"], how="left")
    full["missing"] = full["correct"].isna()
    full["correct"] = full["correct"].fillna(False).astype(bool)
    full["failed"] = full["failed"].fillna(False).astype(bool)
    out = (
        full.groupby(["judge", "task_id", "metric"], sort=False)
        .agg(
            n_orders=("correct", "size"),
            n_correct=("correct", "sum"),
            n_failed=("failed", "sum"),
            n_missing=("missing", "sum"),
        )
        .reset_index()
    )
    out = out.merge(gold[["task_id", "domain", "k"]], on="task_id", how="left")
    out["ap1"] = out["n_correct"] / out["n_orders"]
    out["pass3"] = (out["n_correct"] == out["n_orders"]).astype(float)
    base = np.empty(len(out))
    for metric in METRICS:
        m = out["metric"].eq(metric).to_numpy()
        base[m] = chance_rate(out.loc[m, "k"].to_numpy(), metric)
    out["chance_ap1"] = base
    out["chance_pass3"] = base ** len(reps)
    cols = [
        "judge",
        "task_id",
        "metric",
        "domain",
        "k",
        "n_orders",
        "n_correct",
        "n_failed",
        "n_missing",
        "ap1",
        "pass3",
        "chance_ap1",
        "chance_pass3",
    ]
    return out.loc[:, cols]
