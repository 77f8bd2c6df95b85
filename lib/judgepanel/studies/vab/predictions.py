"""VAB's predictions table: built from the store, checked, and joined to the gold table.

The columns are :data:`~judgepanel.studies.vab.columns.PRED_COLUMNS`; every analysis of
the study (accuracy, position, vote) reads this one table, whoever produced it.
"""

from __future__ import annotations

import json

import pandas as pd

from judgepanel.studies.common.choice_parse import QUESTIONS
from judgepanel.studies.vab.columns import GOLD_COLUMNS, PRED_COLUMNS
from judgepanel.studies.vab.protocol import Order, VabAnswer, order_labels, task_orders


def gold_table(tasks: pd.DataFrame) -> pd.DataFrame:
    """The gold columns from a loaded VAB table (``load_vab``) or an existing gold table."""
    if set(GOLD_COLUMNS) <= set(tasks.columns):
        out = tasks.loc[:, list(GOLD_COLUMNS)].copy()
    else:
        need = ("task_id", "n_images", "domain", "ground_truth_best", "ground_truth_worst")
        missing = [c for c in need if c not in tasks.columns]
        if missing:
            raise ValueError(f"tasks table lacks columns: {', '.join(missing)}")
        out = pd.DataFrame(
            {
                "task_id": tasks["task_id"],
                "k": tasks["n_images"].astype(int),
                "domain": tasks["domain"],
                "gold_best": tasks["ground_truth_best"],
                "gold_worst": tasks["ground_truth_worst"],
            }
        )
    if "labels" in tasks.columns:
        # For two images the worst is the other label; fill it where the release left it empty.
        two = out["k"].eq(2) & out["gold_worst"].isna()
        out.loc[two, "gold_worst"] = [
            next(x for x in labels if x != best)
            for labels, best in zip(
                tasks.loc[two, "labels"], out.loc[two, "gold_best"], strict=True
            )
        ]
    out["k"] = out["k"].astype(int)
    if out["task_id"].duplicated().any():
        dup = out.loc[out["task_id"].duplicated(), "task_id"].iloc[0]
        raise ValueError(f"gold table repeats task {dup!r}")
    return out.reset_index(drop=True)


def gold_of(pred: pd.DataFrame, tasks: pd.DataFrame | None) -> pd.DataFrame:
    """The gold table of the tasks, or (no tasks given) of the tasks in the predictions."""
    if tasks is not None:
        return gold_table(tasks)
    return pred.drop_duplicates("task_id").loc[:, list(GOLD_COLUMNS)].reset_index(drop=True)


def with_gold(pred: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Predictions of the gold tasks, with the gold table's columns (not their own copies)."""
    df = pred.drop(columns=[c for c in GOLD_COLUMNS if c != "task_id" and c in pred.columns])
    return df.merge(gold, on="task_id", how="inner")


OTHER = "<other>"
"""The token that names the worst of two images: the one that is not the best."""


def pair_worst(df: pd.DataFrame) -> pd.DataFrame:
    """Two-image rows with the worst named by one token, :data:`OTHER`.

    For two images any readable worst that is not the gold best names the gold worst,
    whose label the gold table may leave empty; both become the token, so that "right"
    is one equality for every set size.
    """
    two = df["k"].eq(2)
    other = two & df["pred_worst"].notna() & df["pred_worst"].ne(df["gold_best"])
    return df.assign(
        gold_worst=df["gold_worst"].where(~two, OTHER),
        pred_worst=df["pred_worst"].where(~other, OTHER),
    )


def check_predictions(pred: pd.DataFrame) -> None:
    """Raise a ValueError for a missing column or a repeated (judge, task, kind, repetition)."""
    optional = ("order", "gold_best", "gold_worst", "k", "domain")
    missing = [c for c in PRED_COLUMNS if c not in optional and c not in pred.columns]
    if missing:
        raise ValueError(f"predictions table lacks columns: {', '.join(missing)}")
    dup = pred.duplicated(["judge", "task_id", "kind", "repetition"])
    if dup.any():
        row = pred.loc[dup].iloc[0]
        raise ValueError(
            f"predictions repeat (judge={row.judge!r}, task={row.task_id!r}, "
            f"kind={row.kind!r}, repetition={row.repetition})"
        )


def predictions_from_store(
    frame: pd.DataFrame,
    tasks: pd.DataFrame,
    *,
    n_orders: int = 3,
    seed: int = 0,
) -> pd.DataFrame:
    """The predictions table from store rows, the store's ``family`` as the judge.

    Orders are recomputed from ``(seed, n_orders)`` for every row, failed ones included (so
    that a failure still has a gold slot), and checked against the order each parsed answer
    recorded: a mismatch means the analysis was given other protocol parameters than the run.

    Args:
        frame: ``Store.frame(...)`` rows of the VAB questions (other calls are ignored); their
            ``parsed`` is the JSON of a :class:`~judgepanel.studies.vab.protocol.VabAnswer`.
        tasks: the loaded VAB tasks the calls were planned from.
        n_orders: standard orders per task in the run (``vab_orders``).
        seed: the run's order seed.

    Raises:
        ValueError: a row names a task that is not in ``tasks``, or its recorded order
            disagrees with the recomputed one.
    """
    gold = gold_table(tasks).set_index("task_id")
    by_task = tasks.set_index("task_id")
    sub = frame.loc[frame["kind"].isin(QUESTIONS)]
    cache: dict[str, list[Order]] = {}
    rows = []
    for r in sub.itertuples(index=False):
        if r.item not in by_task.index:
            raise ValueError(f"store row for task {r.item!r} that the dataset does not have")
        labels = tuple(by_task.at[r.item, "labels"])
        if r.item not in cache:
            cache[r.item] = task_orders(
                len(labels), r.item, seed=seed, n_orders=n_orders, balanced=True
            )
        orders = cache[r.item]
        if not 0 <= r.repetition < len(orders):
            raise ValueError(f"task {r.item!r}: repetition {r.repetition} has no order")
        shown = order_labels(orders[r.repetition], labels)
        best = worst = None
        if r.status == "ok" and isinstance(r.parsed, str):
            answer: VabAnswer = json.loads(r.parsed)
            if answer.get("order") not in (None, shown):
                raise ValueError(
                    f"task {r.item!r} repetition {r.repetition}: the answer was given for order "
                    f"{answer.get('order')} but seed={seed}, n_orders={n_orders} give {shown}"
                )
            best, worst = answer.get("best"), answer.get("worst")
        g = gold.loc[r.item]
        rows.append(
            {
                "task_id": r.item,
                "judge": r.family,
                "kind": r.kind,
                "repetition": int(r.repetition),
                "order": shown,
                "pred_best": best,
                "pred_worst": worst,
                "status": "ok" if r.status == "ok" else "failed",
                "gold_best": g.gold_best,
                "gold_worst": g.gold_worst,
                "k": int(g.k),
                "domain": g.domain,
            }
        )
    return pd.DataFrame(rows, columns=list(PRED_COLUMNS))
