"""VAB analyses (scores, accuracy, position, vote) on hand-made predictions with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from vab_rows import vab_row

from judgepanel.studies.vab.accuracy import accuracy_table, compare_judges, size_degradation
from judgepanel.studies.vab.position import (
    accuracy_by_gold_slot,
    position_by_slot,
    position_table,
)
from judgepanel.studies.vab.rank import panel_scores, rank_predictions
from judgepanel.studies.vab.scores import chance_rate, task_scores
from judgepanel.studies.vab.vote import vote_scores, vote_table

GOLD = pd.DataFrame(
    {
        "task_id": ["t2", "t3", "t4"],
        "k": [2, 3, 4],
        "domain": ["photograph", "fine-art", "fine-art"],
        "gold_best": ["A", "B", "D"],
        "gold_worst": [None, "C", "A"],
    }
)


def _preds() -> pd.DataFrame:
    rows = [
        # t2 (k=2, gold best A): Top-1 right, right, wrong.
        vab_row("t2", "vab_top1", 0, best="A"),
        vab_row("t2", "vab_top1", 1, best="A"),
        vab_row("t2", "vab_top1", 2, best="B"),
        # t2 Bot-1: B (right), A (wrong), B (right); gold worst is left null.
        vab_row("t2", "vab_bot1", 0, worst="B"),
        vab_row("t2", "vab_bot1", 1, worst="A"),
        vab_row("t2", "vab_bot1", 2, worst="B"),
        # t3 (gold B / C).
        vab_row("t3", "vab_top1", 0, best="B"),
        vab_row("t3", "vab_top1", 1, best="B"),
        vab_row("t3", "vab_top1", 2, best="B"),
        vab_row("t3", "vab_bot1", 0, worst="C"),
        vab_row("t3", "vab_bot1", 1, worst="C"),
        vab_row("t3", "vab_bot1", 2, worst="C"),
        vab_row("t3", "vab_tb1", 0, best="B", worst="C"),
        vab_row("t3", "vab_tb1", 1, best="B", worst="A"),
        vab_row("t3", "vab_tb1", 2, best="B", worst="C"),
        # t4 (gold D / A): Top-1 right, failed, and repetition 2 missing altogether.
        vab_row("t4", "vab_top1", 0, best="D"),
        vab_row("t4", "vab_top1", 1, status="failed"),
        vab_row("t4", "vab_bot1", 0, worst="A"),
        vab_row("t4", "vab_bot1", 1),  # status ok but nothing read: still incorrect
        vab_row("t4", "vab_bot1", 2, worst="A"),
        vab_row("t4", "vab_tb1", 0, best="D", worst="A"),
        vab_row("t4", "vab_tb1", 1, best="D", worst="A"),
        vab_row("t4", "vab_tb1", 2, best="D", worst="A"),
    ]
    return pd.DataFrame(rows)


def _get(scores, task, metric):
    return scores.set_index(["task_id", "metric"]).loc[(task, metric)]


def test_task_scores_known_answers_and_k2_tb1_derivation():
    s = task_scores(_preds(), GOLD)
    assert len(s) == 9  # 3 tasks x 3 metrics, one judge
    assert _get(s, "t2", "top1").ap1 == pytest.approx(2 / 3)
    assert _get(s, "t2", "top1").pass3 == 0.0
    # TB-1 for two images is the Top-1 answer.
    assert _get(s, "t2", "tb1").ap1 == pytest.approx(2 / 3)
    assert _get(s, "t2", "bot1").ap1 == pytest.approx(2 / 3)
    assert _get(s, "t3", "top1").pass3 == 1.0
    assert _get(s, "t3", "tb1").ap1 == pytest.approx(2 / 3)
    t4 = _get(s, "t4", "top1")
    assert (t4.n_orders, t4.n_correct, t4.n_failed, t4.n_missing) == (3, 1, 1, 1)
    assert _get(s, "t4", "bot1").ap1 == pytest.approx(2 / 3)
    assert _get(s, "t4", "tb1").pass3 == 1.0
    table = accuracy_table(s, n_resamples=200)
    top = table.set_index(["metric", "stat"]).loc[("top1", "ap1")]
    assert top.value == pytest.approx((2 / 3 + 1 + 1 / 3) / 3)
    assert top.chance == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert top.n_failed == 1 and top.n_missing == 1
    tb = table.set_index(["metric", "stat"]).loc[("tb1", "pass3")]
    assert tb.value == pytest.approx(1 / 3)  # only t4 is right in all three orders
    assert tb.chance == pytest.approx(((1 / 2) ** 3 + (1 / 6) ** 3 + (1 / 12) ** 3) / 3)


def test_unparseable_answers_are_wrong_with_one_denominator():
    rows = [vab_row("t3", "vab_tb1", r, status="failed") for r in range(3)]
    rows += [vab_row("t4", "vab_tb1", 0, best="D", worst="A")]
    rows += [vab_row("t4", "vab_tb1", r, status="failed") for r in (1, 2)]
    rows += [vab_row(t, "vab_top1", r, best="A") for t in ("t2", "t3", "t4") for r in range(3)]
    s = task_scores(pd.DataFrame(rows), GOLD)
    tb = s.loc[s.metric == "tb1"]
    # Denominator: 3 tasks x 3 orders = 9; correct: t2 (from Top-1, A right) 3 + t4 1.
    assert tb["n_orders"].sum() == 9
    assert tb["n_correct"].sum() == 4
    assert tb["ap1"].mean() == pytest.approx((1 + 0 + 1 / 3) / 3)
    top = s.loc[s.metric == "top1"]
    assert top["ap1"].mean() == pytest.approx(1 / 3)


def test_grid_counts_tasks_a_judge_never_answered():
    preds = _preds()
    preds = preds.loc[preds.task_id != "t3"]
    s = task_scores(preds, GOLD)
    t3 = _get(s, "t3", "top1")
    assert (t3.n_missing, t3.ap1) == (3, 0.0)


def test_chance_rate_values():
    assert chance_rate(4, "top1") == pytest.approx(0.25)
    assert chance_rate(2, "tb1") == pytest.approx(0.5)
    assert chance_rate(3, "tb1") == pytest.approx(1 / 6)
    assert chance_rate(5, "tb1") == pytest.approx(1 / 20)


def test_vote_majority_and_split_ties():
    v = vote_scores(_preds(), GOLD).set_index(["task_id", "metric"])["vote"]
    assert v[("t2", "top1")] == 1.0  # A, A, B
    assert v[("t2", "bot1")] == 1.0  # the other image twice
    assert v[("t3", "tb1")] == 1.0  # worst C, A, C -> C
    assert v[("t4", "top1")] == 1.0  # one vote (D); the failure casts none
    rows = [vab_row("t3", "vab_top1", r, best=b) for r, b in enumerate("ABC")]
    tie = vote_scores(pd.DataFrame(rows), GOLD).set_index(["task_id", "metric"])["vote"]
    assert tie[("t3", "top1")] == pytest.approx(1 / 3)
    assert tie[("t2", "top1")] == 0.0  # no answer at all for t2
    table = vote_table(_preds(), GOLD, n_resamples=200).set_index("metric")
    assert table.loc["top1", "vote"] == pytest.approx(1.0)
    assert table.loc["top1", "single"] == pytest.approx(2 / 3)
    assert table.loc["top1", "cost_ratio"] == 3.0


def test_compare_judges_paired():
    a = _preds()
    b = a.assign(judge="g", pred_best=None)
    s = task_scores(pd.concat([a, b]), GOLD)
    out = compare_judges(s, metric="top1", stat="ap1", n_resamples=500)
    row = out.iloc[0]
    assert (row.a, row.b) == ("f", "g")
    assert row.delta == pytest.approx(2 / 3)
    assert row.ci_low > 0 and row.p < 0.05
    same = compare_judges(
        task_scores(pd.concat([a, a.assign(judge="h")]), GOLD),
        metric="top1",
        stat="ap1",
        n_resamples=200,
    )
    assert same.iloc[0].delta == 0.0 and same.iloc[0].p == 1.0


def test_a_judge_interval_does_not_move_when_another_judge_joins():
    """Each group is seeded by its own key, never by its place in the table."""
    g = _preds().assign(judge="g", pred_best=None)
    alone = task_scores(g, GOLD)
    both = task_scores(pd.concat([_preds().assign(judge="a"), g]), GOLD)
    for table in (accuracy_table, lambda s: accuracy_table(s, by=["k"])):
        one = table(alone).reset_index(drop=True)
        two = table(both)
        pd.testing.assert_frame_equal(one, two.loc[two["judge"] == "g"].reset_index(drop=True))
    pred, gold = _positional_preds()
    pos = position_table(pred, gold, n_resamples=300)
    joined = pd.concat([pred.assign(judge="a"), pred])
    pos_two = position_table(joined, gold, n_resamples=300)
    cols = ["slot", "picked", "ci_low", "ci_high", "p"]
    pd.testing.assert_frame_equal(
        pos[cols], pos_two.loc[pos_two["judge"] == "f", cols].reset_index(drop=True)
    )


def test_size_degradation_is_a_difference_never_a_ratio():
    s = task_scores(_preds(), GOLD)
    d = size_degradation(s, n_resamples=200).set_index(["metric", "stat"])
    row = d.loc[("top1", "ap1")]
    assert row.small == pytest.approx(2 / 3) and row.large == pytest.approx(1 / 3)
    assert row.delta == pytest.approx(-1 / 3) and "ratio" not in d.columns


def _positional_preds(n_tasks=40, k=3, rng_seed=0):
    """A judge that always picks slot A (first), on random orders."""
    rng = np.random.default_rng(rng_seed)
    rows, gold = [], []
    for t in range(n_tasks):
        labels = list("ABCDEF"[:k])
        gold.append(
            {
                "task_id": f"p{t}",
                "k": k,
                "domain": "photograph",
                "gold_best": labels[t % k],
                "gold_worst": labels[(t + 1) % k],
            }
        )
        for r in range(3):
            order = [labels[i] for i in rng.permutation(k)]
            rows.append(vab_row(f"p{t}", "vab_top1", r, best=order[0], order=",".join(order)))
    return pd.DataFrame(rows), pd.DataFrame(gold)


def test_position_analysis_finds_a_first_slot_judge():
    pred, gold = _positional_preds()
    pos = position_table(pred, gold, n_resamples=300).set_index("slot")
    assert pos.loc["first", "picked"] == 1.0
    assert pos.loc["first", "expected"] == pytest.approx(1 / 3)
    assert pos.loc["middle", "picked"] == 0.0 and pos.loc["last", "picked"] == 0.0
    assert pos.loc["first", "ci_low"] > 0 and pos.loc["first", "p"] < 0.01
    by_slot = position_by_slot(pred, gold)
    assert by_slot.loc[by_slot.slot == 0, "picked"].item() == 1.0
    acc = accuracy_by_gold_slot(pred, gold, n_resamples=200).set_index("slot")
    assert acc.loc["first", "accuracy"] == 1.0
    assert acc.loc["last", "accuracy"] == 0.0


def test_rank_predictions_ties_and_missing_scores():
    tasks = pd.DataFrame(
        {
            "task_id": ["t2", "t3", "t4"],
            "n_images": [2, 3, 4],
            "domain": ["photograph", "fine-art", "fine-art"],
            "labels": [("A", "B"), ("A", "B", "C"), ("A", "B", "C", "D")],
            "ground_truth_best": ["A", "B", "D"],
            "ground_truth_worst": [None, "C", "A"],
        }
    )
    scores = {
        "t2/A": 5.0,
        "t2/B": 3.0,
        "t3/A": 4.0,
        "t3/B": 7.0,
        "t3/C": 7.0,
        "t4/A": 1.0,
        "t4/B": 2.0,
        "t4/C": 3.0,
    }  # t4/D missing
    pred = rank_predictions(scores, tasks, judge="ranker")
    assert set(pred.kind) == {"vab_top1", "vab_bot1", "vab_tb1"}
    assert not ((pred.task_id == "t2") & (pred.kind == "vab_tb1")).any()
    t3 = pred.loc[(pred.task_id == "t3") & (pred.kind == "vab_tb1")]
    assert t3.tied.all() and t3.pred_best.nunique() == 1  # same draw in every order
    assert t3.pred_best.iloc[0] in ("B", "C") and t3.pred_worst.iloc[0] == "A"
    assert (pred.loc[pred.task_id == "t4", "status"] == "failed").all()
    s = task_scores(pred, tasks)
    assert (s["ap1"] == s["pass3"]).all()
    assert _get(s, "t2", "tb1").ap1 == 1.0
    assert _get(s, "t4", "top1").ap1 == 0.0
    again = rank_predictions(scores, tasks, judge="ranker")
    pd.testing.assert_frame_equal(pred, again)


def test_panel_scores_standardise_each_family():
    per = pd.DataFrame(
        {
            "image_id": ["x/A", "x/B", "x/A", "x/B"],
            "family": ["f", "f", "g", "g"],
            "score": [1.0, 2.0, 10.0, 30.0],
        }
    )
    panel = panel_scores(per)
    assert panel["x/B"] > panel["x/A"]
    assert panel.sum() == pytest.approx(0.0)
