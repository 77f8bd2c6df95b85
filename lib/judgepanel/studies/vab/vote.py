"""The permutation vote: the majority over a task's orders as a debiased VAB judge.

Each readable answer in the listed orders casts one vote; the verdict is the label with
the most votes. The vote is compared with a single ask on the same tasks, paired over
tasks, with the interval of :func:`judgepanel.stats.grouped_ratios` (seeded by the judge
and metric).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.stats import grouped_ratios
from judgepanel.stats.means import ROUND_OFF
from judgepanel.studies.vab.accuracy import tested_q
from judgepanel.studies.vab.columns import STANDARD_REPS
from judgepanel.studies.vab.predictions import check_predictions, gold_of, pair_worst, with_gold
from judgepanel.studies.vab.scores import metric_grid, task_scores

PAIRS_ONLY = "repeats the Top-1 row: every task is a pair, whose TB-1 is read from Top-1"
"""Why a judge's TB-1 row on pairs alone is kept out of the correction family."""


def _vote_credits(df: pd.DataFrame, label: str, gold: str) -> pd.Series:
    """Majority credit per (judge, task): 1 or 0 for a clear winner; 1/m when m labels
    tie and the gold label is one of them; groups without a vote are absent."""
    votes = df.loc[df[label].notna(), ["judge", "task_id", label, gold]]
    counts = votes.groupby(["judge", "task_id", label]).size().rename("n").reset_index()
    top = counts.groupby(["judge", "task_id"])["n"].transform("max")
    winners = counts.loc[counts["n"] == top]
    golds = votes.drop_duplicates(["judge", "task_id"]).set_index(["judge", "task_id"])[gold]
    winners = winners.join(golds, on=["judge", "task_id"])
    grouped = winners.assign(hit=winners[label].eq(winners[gold])).groupby(["judge", "task_id"])
    return grouped["hit"].sum() / grouped.size()


def vote_scores(
    pred: pd.DataFrame,
    tasks: pd.DataFrame | None = None,
    *,
    repetitions: Sequence[int] = STANDARD_REPS,
) -> pd.DataFrame:
    """Per judge, task and metric: accuracy of the majority over the orders.

    Each readable answer in the listed orders casts one vote; failed answers cast none.
    The label with the most votes is the verdict. Ties are scored as a split: with m tied
    labels the credit is 1/m if the gold label is one of them (the expected accuracy of a
    uniform random tie-break, without drawing one). No vote at all scores 0. TB-1 votes
    best and worst separately (from the TB-1 answers; for two images from Top-1) and
    scores the product of the two credits.

    Returns:
        judge, task_id, metric, domain, k, vote (credit in [0, 1]).
    """
    check_predictions(pred)
    gold = gold_of(pred, tasks)
    pred = pred.loc[pred["repetition"].isin(list(repetitions))]
    df = with_gold(pred, gold)
    df = df.assign(
        pred_best=df["pred_best"].where(df["status"].eq("ok")),
        pred_worst=df["pred_worst"].where(df["status"].eq("ok")),
    )
    df = pair_worst(df)
    two = df["k"].eq(2)
    question = df["kind"]
    parts = [
        _vote_credits(df.loc[question == "vab_top1"], "pred_best", "gold_best").rename("top1"),
        _vote_credits(df.loc[question == "vab_bot1"], "pred_worst", "gold_worst").rename("bot1"),
        _vote_credits(df.loc[(question == "vab_top1") & two], "pred_best", "gold_best").rename(
            "tb1_two"
        ),
    ]
    many = df.loc[(question == "vab_tb1") & df["k"].ge(3)]
    tb_best = _vote_credits(many, "pred_best", "gold_best")
    tb_worst = _vote_credits(many, "pred_worst", "gold_worst")
    parts.append(tb_best.mul(tb_worst, fill_value=0.0).rename("tb1_many"))
    wide = pd.concat(parts, axis=1)
    wide["tb1"] = wide.pop("tb1_two").fillna(0.0) + wide.pop("tb1_many").fillna(0.0)
    long = wide.rename_axis(["judge", "task_id"]).reset_index()
    votes = long.melt(["judge", "task_id"], var_name="metric", value_name="vote")
    # Every task of the grid counts: a judge that answered a metric somewhere but not for a
    # task (all its calls missing) scores 0 there.
    grid = metric_grid(pred, gold, [0]).drop(columns="repetition")
    out = grid.merge(votes, on=["judge", "task_id", "metric"], how="left")
    out["vote"] = out["vote"].fillna(0.0)
    out = out.merge(gold[["task_id", "domain", "k"]], on="task_id", how="left")
    return out.loc[:, ["judge", "task_id", "metric", "domain", "k", "vote"]]


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def vote_table(
    pred: pd.DataFrame,
    tasks: pd.DataFrame | None = None,
    *,
    repetitions: Sequence[int] = STANDARD_REPS,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The permutation vote as a debiased judge, against a single pass, with its cost.

    The single pass is ap@1 over the same orders (the expected accuracy of asking once in
    a random one of them). The difference is paired over tasks.

    Returns:
        judge, metric, n_tasks, single, vote, delta (vote - single), ci_low, ci_high, p,
        q (Benjamini-Hochberg over the rows not excluded; NaN on the excluded), excluded
        (why a row is left out of the correction, "" for a tested row: a judge's TB-1 row
        when all its tasks are pairs, where TB-1 is read from the Top-1 answer and the row
        repeats the Top-1 row), calls_single (1 per task and question), calls_vote
        (orders per task and question), cost_ratio.
    """
    scores = task_scores(pred, tasks, repetitions=repetitions)
    votes = vote_scores(pred, tasks, repetitions=repetitions)
    both = scores.merge(
        votes[["judge", "task_id", "metric", "vote"]], on=["judge", "task_id", "metric"]
    )
    both["diff"] = both["vote"] - both["ap1"]
    table = grouped_ratios(
        both,
        ["judge", "metric"],
        "task_id",
        "diff",
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        p_value=True,
        extra={"single": ("ap1", _mean), "vote": ("vote", _mean)},
    )
    n_orders = len(list(repetitions))
    delta = table["estimate"].where(table["estimate"].abs() >= ROUND_OFF, 0.0)
    out = pd.DataFrame(
        {
            "judge": table["judge"],
            "metric": table["metric"],
            "n_tasks": table["n"],
            "single": table["single"],
            "vote": table["vote"],
            "delta": delta,
            "ci_low": table["ci_low"],
            "ci_high": table["ci_high"],
            "p": table["p"],
            "q": np.nan,
            "excluded": "",
            "calls_single": 1,
            "calls_vote": n_orders,
            "cost_ratio": float(n_orders),
        }
    )
    if len(out):
        pairs_only = both.groupby("judge")["k"].max() == 2
        has_top1 = set(zip(out["judge"], out["metric"], strict=True))
        out["excluded"] = [
            PAIRS_ONLY
            if m == "tb1" and bool(pairs_only.get(j, False)) and (j, "top1") in has_top1
            else ""
            for j, m in zip(out["judge"], out["metric"], strict=True)
        ]
        out["q"] = tested_q(out["p"], out["excluded"])
    return out
