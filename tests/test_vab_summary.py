"""Report tables of the VAB study, on hand-made predictions whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from vab_rows import vab_row

from judgepanel.stats import bh
from judgepanel.studies.vab import (
    FUSED,
    PANEL,
    accuracy_table,
    accuracy_wide,
    add_vote_costs,
    answer_costs,
    baseline_table,
    calls_per_task,
    count_comparison_calls,
    position_by_slot,
    position_repetitions,
    position_table,
    ranker_table,
    slot_matrix,
    task_scores,
    vote_table,
)

TASKS = pd.DataFrame(
    {
        "task_id": ["t2", "t3", "t4"],
        "n_images": [2, 3, 4],
        "domain": ["photograph", "fine-art", "fine-art"],
        "labels": [("A", "B"), ("A", "B", "C"), ("A", "B", "C", "D")],
        "ground_truth_best": ["A", "B", "D"],
        "ground_truth_worst": [None, "C", "A"],
    }
)


def test_baseline_table_per_size_and_over_the_mix():
    b = baseline_table(TASKS, n_orders=3).set_index("k")
    assert list(b.index) == ["2", "3", "4", "all"]
    assert b.loc["2", "tb1"] == pytest.approx(0.5)
    assert b.loc["3", "tb1"] == pytest.approx(1 / 6)
    assert b.loc["4", "top1"] == pytest.approx(0.25)
    assert b.loc["4", "tb1_pass"] == pytest.approx((1 / 12) ** 3)
    assert b.loc["all", "top1"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert b.loc["all", "tb1_pass"] == pytest.approx(
        ((1 / 2) ** 3 + (1 / 6) ** 3 + (1 / 12) ** 3) / 3
    )
    assert b.loc["all", "n_tasks"] == 3


def _preds():
    rows = [vab_row("t2", "vab_top1", r, best="A") for r in range(3)]
    rows += [vab_row("t2", "vab_bot1", r, worst="B" if r else "A") for r in range(3)]
    rows += [vab_row("t3", "vab_top1", r, best="B") for r in range(2)]
    rows += [vab_row("t3", "vab_top1", 2, status="failed")]
    rows += [vab_row("t3", "vab_bot1", r, worst="C") for r in range(3)]
    rows += [vab_row("t3", "vab_tb1", r, best="B", worst="C") for r in range(3)]
    rows += [vab_row("t4", "vab_top1", r, best="A") for r in range(3)]
    rows += [vab_row("t4", "vab_bot1", r, worst="A") for r in range(3)]
    rows += [vab_row("t4", "vab_tb1", r, best="D", worst="A") for r in range(2)]  # one missing
    return pd.DataFrame(rows)


def test_accuracy_wide_puts_the_stats_side_by_side():
    s = task_scores(_preds(), TASKS)
    long = accuracy_table(s, n_resamples=200)
    wide = accuracy_wide(long).set_index(["judge", "metric"])
    assert len(wide) == 3
    top = wide.loc[("f", "top1")]
    assert top.ap1 == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert top.pass3 == pytest.approx(1 / 3)
    assert top.ap1_chance == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert top.n_failed == 1 and top.n_tasks == 3
    tb = wide.loc[("f", "tb1")]
    assert tb.ap1 == pytest.approx((1 + 1 + 2 / 3) / 3) and tb.n_missing == 1
    by = accuracy_wide(accuracy_table(s, by=["k"], n_resamples=200))
    assert set(by.columns) >= {"judge", "metric", "k", "ap1", "pass3_ci_high"}
    assert len(by) == 9


def test_position_repetitions_pick_the_design():
    assert position_repetitions(3, False, 6) == [0, 1, 2]
    assert position_repetitions(3, True, 4) == [3, 4, 5, 6]
    assert position_repetitions(3, True, 4, present=[0, 1, 2, 5]) == [3, 4, 5, 6]
    with pytest.raises(ValueError, match="vab_balanced"):
        position_repetitions(3, True, 4, present=[0, 1, 2])


def _first_slot_judge(n_tasks=30, k=4, seed=0):
    rng = np.random.default_rng(seed)
    rows, gold = [], []
    labels = list("ABCDEF"[:k])
    for t in range(n_tasks):
        gold.append({"task_id": f"p{t}", "k": k, "domain": "photograph",
                     "gold_best": labels[t % k], "gold_worst": labels[(t + 1) % k]})  # fmt: skip
        for r in range(3):
            order = [labels[i] for i in rng.permutation(k)]
            rows.append(vab_row(f"p{t}", "vab_top1", r, best=order[0], order=",".join(order)))
            rows.append(vab_row(f"p{t}", "vab_bot1", r, worst=order[-1], order=",".join(order)))
    return pd.DataFrame(rows), pd.DataFrame(gold)


def test_slot_matrix_and_q_of_the_position_table():
    pred, gold = _first_slot_judge()
    m = slot_matrix(position_by_slot(pred, gold), "f", "vab_top1", "best")
    assert list(m.index) == [4] and list(m.columns) == ["A", "B", "C", "D"]
    np.testing.assert_allclose(m.loc[4].to_numpy(), [0.75, -0.25, -0.25, -0.25])
    worst = slot_matrix(position_by_slot(pred, gold), "f", "vab_bot1", "worst")
    assert worst.loc[4, "D"] == pytest.approx(0.75)
    assert slot_matrix(position_by_slot(pred, gold), "f", "vab_tb1", "best").empty
    pos = position_table(pred, gold, n_resamples=200)
    # the middle slot, fixed by the first and the last, stays out of the correction
    tested = pos["slot"] != "middle"
    assert pos.loc[~tested, "q"].isna().all() and (pos.loc[~tested, "excluded"] != "").all()
    np.testing.assert_allclose(pos.loc[tested, "q"], bh(pos.loc[tested, "p"].to_numpy()))
    first = pos.set_index(["kind", "slot"]).loc[("vab_top1", "first")]
    assert first.picked == 1.0 and first.q < 0.05


def test_coverage_counts_planned_failed_and_missing():
    c = count_comparison_calls(_preds(), TASKS, ["f", "g"]).set_index(["judge", "kind"])
    assert c.loc[("f", "vab_top1")].tolist() == [9, 8, 1, 0]
    assert c.loc[("f", "vab_tb1")].tolist() == [6, 5, 0, 1]  # two tasks of 3+ images
    assert c.loc[("g", "vab_bot1")].tolist() == [9, 0, 0, 9]


def test_vote_costs_from_the_recorded_spend():
    pred = _preds()
    votes = vote_table(pred, TASKS, n_resamples=200)
    np.testing.assert_allclose(votes["q"], bh(votes["p"].to_numpy()))
    item_k = {"t2": 2, "t3": 3, "t4": 4}
    frame = pd.DataFrame(
        [
            {"item": t, "family": "f", "kind": kind, "repetition": r,
             "cost": {"vab_top1": 0.001, "vab_bot1": 0.002, "vab_tb1": 0.004}[kind]}
            for t in item_k for kind in ("vab_top1", "vab_bot1", "vab_tb1")
            for r in range(4)
            if not (kind == "vab_tb1" and item_k[t] == 2)
        ]
    )  # fmt: skip
    costs = answer_costs(frame, TASKS, repetitions=(0, 1, 2)).set_index(["judge", "metric"])
    assert costs.loc[("f", "top1"), "usd_per_call"] == pytest.approx(0.001)
    assert costs.loc[("f", "top1"), "n_calls"] == 9  # repetition 3 is not a standard order
    # TB-1 is answered by the Top-1 call for the pair and by TB-1 calls for the others.
    assert costs.loc[("f", "tb1"), "usd_per_call"] == pytest.approx((3 * 0.001 + 6 * 0.004) / 9)
    out = add_vote_costs(votes, costs.reset_index()).set_index("metric")
    assert out.loc["bot1", "extra_calls"] == 2
    assert out.loc["bot1", "usd_single"] == pytest.approx(0.002)
    assert out.loc["bot1", "usd_vote"] == pytest.approx(0.006)


def test_calls_per_task_and_ranker_table():
    calls = calls_per_task(["f", "rank:f", PANEL, FUSED], TASKS, holistic_k=5, dimension_r=3,
                           panel_size=3)  # fmt: skip
    mean_k = 3.0
    assert calls["f"] == 1.0
    assert calls["rank:f"] == pytest.approx(mean_k * 5)
    assert calls[PANEL] == pytest.approx(mean_k * 5 * 3)
    assert calls[FUSED] == pytest.approx(mean_k * (5 + 5 * 3) * 3)
    pred = _preds().assign(judge="rank:f")
    acc = accuracy_table(task_scores(pred, TASKS), n_resamples=100)
    ties = pd.DataFrame({"ranker": ["rank:f"], "n_tasks": [3], "n_tied": [1], "n_failed": [0]})
    tab = ranker_table(acc, ties, calls).set_index("metric")
    assert list(tab.columns) == ["ranker", "n_tasks", "accuracy", "ci_low", "ci_high", "chance",
                                 "n_tied", "n_failed", "calls_per_task"]  # fmt: skip
    assert tab.loc["top1", "accuracy"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert tab.loc["tb1", "calls_per_task"] == pytest.approx(15.0)
