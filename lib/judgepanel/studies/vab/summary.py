"""Report tables of the VAB study: baselines, side-by-side accuracies, slots, costs.

These shape the outputs of the study's analyses (:mod:`~judgepanel.studies.vab.accuracy`,
:mod:`~judgepanel.studies.vab.position`, :mod:`~judgepanel.studies.vab.vote`) for reading, and
add what those do not know about: which repetitions form the position design, and what a call
costs (from the store's ``cost`` column or from the scoring design).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgepanel.core.prompts import DIMENSIONS
from judgepanel.studies.common.choice_parse import LETTERS, QUESTIONS
from judgepanel.studies.vab.columns import METRICS
from judgepanel.studies.vab.predictions import gold_table
from judgepanel.studies.vab.rankers import FUSED, PANEL, RANK_PREFIX, is_ranker
from judgepanel.studies.vab.scores import chance_rate


def baseline_table(tasks: pd.DataFrame, n_orders: int = 3) -> pd.DataFrame:
    """Chance accuracy per set size and over the dataset's own mix of sizes.

    Returns:
        One row per k and a last row ``k = "all"``: n_tasks, then for each metric its
        chance accuracy of one answer (``<metric>``) and of ``n_orders`` independent
        answers all right (``<metric>_pass``); the ``all`` row averages over the tasks.
    """
    gold = gold_table(tasks)
    rows = []
    for k, sub in gold.groupby("k", sort=True):
        row: dict[str, object] = {"k": str(int(k)), "n_tasks": len(sub)}
        for m in METRICS:
            base = float(chance_rate(int(k), m))
            row[m], row[f"{m}_pass"] = base, base**n_orders
        rows.append(row)
    all_row: dict[str, object] = {"k": "all", "n_tasks": len(gold)}
    for m in METRICS:
        base = chance_rate(gold["k"].to_numpy(), m)
        all_row[m], all_row[f"{m}_pass"] = float(base.mean()), float((base**n_orders).mean())
    rows.append(all_row)
    return pd.DataFrame(rows)


def accuracy_wide(acc: pd.DataFrame) -> pd.DataFrame:
    """ap@1 and pass^3 side by side, each with its CI and chance level.

    Args:
        acc: :func:`judgepanel.studies.vab.accuracy.accuracy_table` output (long, one row
            per stat).

    Returns:
        One row per judge, metric and grouping column: n_tasks, ap1, ap1_ci_low,
        ap1_ci_high, ap1_chance, pass3, pass3_ci_low, pass3_ci_high, pass3_chance,
        n_failed, n_missing.
    """
    fixed = {"stat", "n_tasks", "value", "ci_low", "ci_high", "chance", "n_failed", "n_missing"}
    keys = [c for c in acc.columns if c not in fixed]
    parts = []
    for stat in ("ap1", "pass3"):
        sub = acc.loc[acc["stat"] == stat, [*keys, "value", "ci_low", "ci_high", "chance"]]
        parts.append(
            sub.rename(
                columns={
                    "value": stat,
                    "ci_low": f"{stat}_ci_low",
                    "ci_high": f"{stat}_ci_high",
                    "chance": f"{stat}_chance",
                }
            ).set_index(keys)
        )
    counts = acc.loc[acc["stat"] == "ap1", [*keys, "n_tasks", "n_failed", "n_missing"]].set_index(
        keys
    )
    out = counts[["n_tasks"]].join(parts[0]).join(parts[1]).join(counts[["n_failed", "n_missing"]])
    return out.reset_index()


def position_repetitions(
    n_orders: int, balanced: bool, max_k: int, present: Sequence[int] | None = None
) -> list[int]:
    """The repetitions the position analysis reads.

    With the balanced design these are the k cyclic shifts (repetitions ``n_orders`` to
    ``n_orders + k - 1``; every image in every slot once), else the standard orders.

    Args:
        present: the repetitions the predictions hold; when given, a balanced analysis
            with no balanced answer raises instead of silently reading nothing.

    Raises:
        ValueError: ``balanced`` but none of the balanced repetitions is present.
    """
    if not balanced:
        return list(range(n_orders))
    reps = list(range(n_orders, n_orders + int(max_k)))
    if present is not None and not set(reps) & {int(r) for r in present}:
        raise ValueError(
            "the balanced position design was asked for (vab_balanced), but the store holds "
            f"no answers in repetitions {reps[0]}-{reps[-1]}: score the run with balanced "
            "orders, or analyse positions on the standard orders (vab_balanced: false)"
        )
    return reps


def slot_matrix(by_slot: pd.DataFrame, judge: str, question: str, field: str) -> pd.DataFrame:
    """Pick rate minus the position-blind 1/k, as a k x slot matrix (for a heat map).

    Args:
        by_slot: :func:`judgepanel.studies.vab.position.position_by_slot` output.

    Returns:
        Index ``k`` (set sizes present), columns the slot letters ``A``..; NaN where the
        slot does not exist for that k.
    """
    sub = by_slot.loc[
        (by_slot["judge"] == judge) & (by_slot["kind"] == question) & (by_slot["field"] == field)
    ]
    if sub.empty:
        return pd.DataFrame()
    wide = (sub.assign(excess=sub["picked"] - sub["expected"])).pivot_table(
        index="k", columns="slot", values="excess"
    )
    wide = wide.reindex(columns=range(int(sub["k"].max())))
    wide.columns = [LETTERS[c] for c in wide.columns]
    return wide


def answer_costs(
    frame: pd.DataFrame,
    tasks: pd.DataFrame,
    *,
    families: Sequence[str] | None = None,
    repetitions: Sequence[int] = (0, 1, 2),
) -> pd.DataFrame:
    """Mean USD of the one call that answers each metric for a task in one order.

    Top-1 is answered by a ``vab_top1`` call and Bot-1 by a ``vab_bot1`` call; TB-1 by a
    ``vab_tb1`` call for three or more images and by the Top-1 call for two.

    Args:
        frame: store rows; their ``family`` is the judge.
        families: the families to read (default all).

    Returns:
        judge, metric, n_calls, usd_per_call (mean over the calls with a recorded cost).
    """
    gold = gold_table(tasks).set_index("task_id")["k"]
    sub = frame.loc[frame["kind"].isin(list(QUESTIONS))]
    sub = sub.loc[sub["repetition"].isin(list(repetitions)) & sub["item"].isin(gold.index)]
    if families is not None:
        sub = sub.loc[sub["family"].isin(list(families))]
    k = sub["item"].map(gold)
    rows = []
    masks = {
        "top1": sub["kind"].eq("vab_top1"),
        "bot1": sub["kind"].eq("vab_bot1"),
        "tb1": (sub["kind"].eq("vab_tb1") & k.ge(3)) | (sub["kind"].eq("vab_top1") & k.eq(2)),
    }
    for metric, mask in masks.items():
        for fam, part in sub.loc[mask].groupby("family", sort=True):
            cost = part["cost"].dropna()
            rows.append(
                {
                    "judge": fam,
                    "metric": metric,
                    "n_calls": len(part),
                    "usd_per_call": float(cost.mean()) if len(cost) else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=["judge", "metric", "n_calls", "usd_per_call"])


def add_vote_costs(votes: pd.DataFrame, costs: pd.DataFrame) -> pd.DataFrame:
    """The vote table with its price: extra calls and USD per task, single against vote.

    Returns:
        ``votes`` plus extra_calls (calls_vote - calls_single), usd_single, usd_vote (per
        task), from :func:`answer_costs`.
    """
    out = votes.merge(
        costs[["judge", "metric", "usd_per_call"]], on=["judge", "metric"], how="left"
    )
    out["extra_calls"] = out["calls_vote"] - out["calls_single"]
    out["usd_single"] = out["usd_per_call"] * out["calls_single"]
    out["usd_vote"] = out["usd_per_call"] * out["calls_vote"]
    return out.drop(columns="usd_per_call")


def calls_per_task(
    judges: Sequence[str],
    tasks: pd.DataFrame,
    *,
    holistic_k: int,
    dimension_r: int,
    panel_size: int,
) -> pd.Series:
    """Calls one judge makes for one task (one order, one metric for a direct judge).

    A direct judge asks one call per task and prompt. A ranker scores every image of the
    set: ``holistic_k`` calls per image for a family's holistic mean, that times the panel
    size for the panel mean, and ``holistic_k + 5 dimension_r`` per image and family for
    the fused panel (its scores serve every metric at once). Averaged over the set sizes.
    """
    mean_k = float(gold_table(tasks)["k"].mean())
    out = {}
    for j in judges:
        if not is_ranker(j):
            out[j] = 1.0
        elif j == PANEL:
            out[j] = mean_k * holistic_k * panel_size
        elif j == FUSED:
            out[j] = mean_k * (holistic_k + len(DIMENSIONS) * dimension_r) * panel_size
        elif j.startswith(RANK_PREFIX):
            out[j] = mean_k * holistic_k
    return pd.Series(out, name="calls_per_task", dtype=float)


def count_comparison_calls(
    pred: pd.DataFrame,
    tasks: pd.DataFrame,
    judges: Sequence[str],
    *,
    repetitions: Sequence[int] = (0, 1, 2),
) -> pd.DataFrame:
    """Planned, answered, failed and missing comparison calls per judge and question.

    Planned: every task x order for Top-1 and Bot-1, and for TB-1 every task of three or
    more images. Failed and missing calls count as wrong answers in every metric.

    Returns:
        judge, kind (the question), planned, answered (status ok), failed, missing.
    """
    gold = gold_table(tasks)
    n_reps = len(list(repetitions))
    n_all, n_many = len(gold), int(gold["k"].ge(3).sum())
    sub = pred.loc[
        pred["repetition"].isin(list(repetitions)) & pred["task_id"].isin(gold["task_id"])
    ]
    rows = []
    for judge in judges:
        for question in QUESTIONS:
            part = sub.loc[(sub["judge"] == judge) & (sub["kind"] == question)]
            planned = (n_many if question == "vab_tb1" else n_all) * n_reps
            answered = int(part["status"].eq("ok").sum())
            failed = int(part["status"].ne("ok").sum())
            rows.append(
                {
                    "judge": judge,
                    "kind": question,
                    "planned": planned,
                    "answered": answered,
                    "failed": failed,
                    "missing": planned - answered - failed,
                }
            )
    return pd.DataFrame(rows)


def ranker_table(acc: pd.DataFrame, ties: pd.DataFrame, calls: pd.Series) -> pd.DataFrame:
    """Score-then-rank accuracies with their ties and call counts.

    A ranker answers the same in every order, so its ap@1 equals its pass^3 and chance is
    the one-answer chance; one accuracy column stands for both.

    Args:
        acc: :func:`judgepanel.studies.vab.accuracy.accuracy_table` of the rankers.
        ties: :attr:`judgepanel.studies.vab.rankers.ScoreThenRank.ties`.
        calls: :func:`calls_per_task` of the rankers.

    Returns:
        ranker, metric, n_tasks, accuracy, ci_low, ci_high, chance, n_tied, n_failed
        (sets with an unscored image), calls_per_task.
    """
    sub = acc.loc[acc["stat"] == "ap1"].rename(columns={"judge": "ranker", "value": "accuracy"})
    out = sub[["ranker", "metric", "n_tasks", "accuracy", "ci_low", "ci_high", "chance"]]
    out = out.merge(ties[["ranker", "n_tied", "n_failed"]], on="ranker", how="left")
    out["calls_per_task"] = out["ranker"].map(calls)
    return out.reset_index(drop=True)
