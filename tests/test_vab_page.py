"""The VAB page's helpers and figures, on hand-made predictions whose answers are known."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from vab_rows import vab_row

from judgepanel.claims.rows import Claim
from judgepanel.studies.vab import (
    accuracy_table,
    accuracy_wide,
    figures,
    page,
    position_by_slot,
    position_claims,
    position_table,
    task_scores,
)

TASKS = pd.DataFrame(
    {
        "task_id": [f"t{i}" for i in range(8)],
        "n_images": [2, 3, 4, 4] * 2,
        "domain": ["photograph", "fine-art"] * 4,
        "labels": [tuple("ABCD"[:k]) for k in [2, 3, 4, 4] * 2],
        "ground_truth_best": ["A", "B", "D", "C"] * 2,
        "ground_truth_worst": [None, "C", "A", "B"] * 2,
    }
)


def _preds() -> pd.DataFrame:
    """Judge ``f`` right in every order; judge ``g`` right only in the first order."""
    rows = []
    for t in TASKS.itertuples():
        for r in range(3):
            for judge, right in (("f", True), ("g", r == 0)):
                best = t.ground_truth_best if right else "A" if t.ground_truth_best != "A" else "B"
                worst = t.ground_truth_worst or ("B" if best == "A" else "A")
                rows.append(vab_row(t.task_id, "vab_top1", r, best=best, judge=judge))
                rows.append(vab_row(t.task_id, "vab_bot1", r, worst=worst, judge=judge))
                if t.n_images > 2:
                    rows.append(
                        vab_row(t.task_id, "vab_tb1", r, best=best, worst=worst, judge=judge)
                    )
    return pd.DataFrame(rows)


def _claim(id: str, a: str = "x", b: str = "y") -> Claim:
    return Claim(
        id=id,
        a=a,
        b=b,
        dataset="d",
        metric="m",
        unit="tasks",
        estimate=0.1,
        ci_low=0.0,
        ci_high=0.2,
        p=0.5,
    )


def test_pass3_kept_is_the_share_of_ap1_that_survives_the_orders():
    acc = pd.DataFrame(
        {
            "judge": ["f", "g", "h"],
            "metric": "tb1",
            "ap1": [0.8, 0.5, 0.0],
            "pass3": [0.4, 0.5, 0.0],
        }
    )
    kept = page.pass3_kept(acc)
    assert kept["f"] == pytest.approx(0.5) and kept["g"] == pytest.approx(1.0)
    assert np.isnan(kept["h"])  # no accuracy to keep: undefined, not infinite


def test_claim_of_finds_the_one_matching_row_and_refuses_ambiguity():
    table = pd.DataFrame({"judge": ["f", "f", "g"], "metric": ["top1", "tb1", "tb1"]})
    claims = [_claim("a"), _claim("b"), _claim("c")]
    assert page.claim_of(table, claims, judge="f", metric="tb1").id == "b"
    with pytest.raises(KeyError, match="2 rows"):
        page.claim_of(table, claims, metric="tb1")


def test_own_protocol_and_forest_rows_read_the_score_then_rank_table():
    table = pd.DataFrame(
        {
            "a": ["rank:f", "rank:g", "rank:panel", "rank:f"],
            "b": ["f", "g", "f", "f"],
            "metric": ["tb1", "tb1", "tb1", "top1"],
            "stat": ["ap1", "ap1", "ap1", "pass3"],
            "value_a": [0.5, 0.4, 0.3, 0.2],
            "value_b": [0.1, 0.2, 0.3, 0.4],
        }
    )
    claims = [_claim(f"c{i}", a=r.a, b=r.b) for i, r in enumerate(table.itertuples())]
    assert [c.id for c in page.own_protocol(table, claims, "tb1")] == ["c0", "c1"]
    assert page.own_protocol(table, claims, "top1") == []  # that row is pass^3
    words = page.side_words(table, claims)
    assert words["c0"] == {"a": "rank:f (0.500)", "b": "f (0.100)"}
    rows = page.forest_rows(table)
    assert list(rows["label"]) == [
        "rank:f − f · TB-1",
        "rank:g − g · TB-1",
        "rank:panel − f · TB-1",
    ]


def _ordered_preds() -> pd.DataFrame:
    """Top-1 answers in seeded orders: ``f`` always picks the first slot, ``g`` the slot of
    the repetition's number."""
    rng = np.random.default_rng(1)
    rows = []
    for t in TASKS.itertuples():
        for r in range(3):
            order = [t.labels[i] for i in rng.permutation(t.n_images)]
            for judge in ("f", "g"):
                first = order[0] if judge == "f" else order[r % t.n_images]
                rows.append(
                    vab_row(
                        t.task_id, "vab_top1", r, best=first, judge=judge, order=",".join(order)
                    )
                )
    return pd.DataFrame(rows)


def test_slot_pulls_quote_the_largest_tested_departures():
    pred = _ordered_preds()
    pos = position_table(pred, TASKS, n_resamples=200)
    claims = position_claims(pos, dataset="d", orders="standard")
    pulls = page.slot_pulls(pos, claims)
    assert len(pulls.strongest) == 2
    assert pulls.pull.role == "headline" and sum(c.role == "headline" for c in pulls.claims) == 1
    tested = pos.loc[(pos["kind"] == "vab_top1") & (pos["excluded"] == "")]
    assert abs(pulls.pull.estimate) == pytest.approx(tested["delta"].abs().max())
    assert pulls.first_lowest.estimate <= pulls.first_highest.estimate
    words = page.position_words(pos, claims)
    first_f = pos.index[(pos["judge"] == "f") & (pos["slot"] == "first")][0]
    said = words[claims[pos.index.get_loc(first_f)].id]["a"]
    assert said.startswith("f's share of best picks (Top-1) in the first slot")


def test_domain_leaders_and_the_figures_draw_the_tables():
    scores = task_scores(_preds(), TASKS)
    acc = accuracy_wide(accuracy_table(scores, n_resamples=200))
    by_domain = accuracy_wide(accuracy_table(scores, by=["domain"], n_resamples=200))
    means, first = page.domain_leaders(by_domain)
    assert means.is_monotonic_increasing and set(first["judge"]) == {"f"}
    fig = figures.accuracy_figure(acc, ["f", "g"], "vab")
    assert [ax.get_title() for ax in fig.axes] == ["Top-1", "Bot-1", "TB-1"]
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["f", "g"]
    size = accuracy_wide(accuracy_table(scores, by=["k"], n_resamples=200))
    fig = figures.size_figure(size, ["f", "g"], "vab", {"f": "red", "g": "blue"})
    assert fig.axes[0].get_xticks().tolist() == [2, 3, 4]
    fig = figures.slot_figure(position_by_slot(_ordered_preds(), TASKS), ["f", "g"], "t")
    assert fig.get_suptitle() == "t"
    top_f, bottom_f = fig.axes[0], fig.axes[2]  # the plots by row, then the colour bar
    assert top_f.get_title() == "f · Top-1 best pick"
    assert not bottom_f.axison  # no Bot-1 answer: nothing to place
