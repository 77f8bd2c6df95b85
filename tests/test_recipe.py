"""The deployment recipe's decision and costs on hand-made inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgepanel.claims import wording
from judgepanel.core.config import Price
from judgepanel.studies.fusion import recipe


def test_threshold_separable_is_the_midpoint_of_the_gap():
    rule = recipe.derive_threshold(
        [0.1, 0.12, 0.15, 0.35, 0.4, 0.42], [False, False, False, True, True, True]
    )
    assert rule.separable and rule.accuracy == 1.0
    assert rule.threshold == pytest.approx((0.15 + 0.35) / 2)
    assert (rule.low, rule.high) == (0.15, 0.35)
    assert (rule.n, rule.n_pays) == (6, 3)


def test_threshold_with_overlap_reports_the_overlap_band():
    h = [0.1, 0.2, 0.3, 0.25, 0.4, 0.5]
    pays = [False, False, False, True, True, True]
    rule = recipe.derive_threshold(h, pays)
    assert not rule.separable
    assert (rule.low, rule.high) == (0.25, 0.3)
    assert rule.accuracy == pytest.approx(5 / 6)
    # The chosen cut classifies as well as any cut can.
    best = max(np.mean((np.array(h) >= c) == np.array(pays)) for c in np.linspace(0, 0.6, 601))
    assert rule.accuracy == pytest.approx(best)


def test_a_cut_that_does_not_beat_a_constant_rule_is_not_kept():
    # One paying trio, at the lowest headroom: no cut beats "never a panel".
    h = [0.50, 0.6, 0.65, 0.7, 0.75, 0.8]
    pays = [True, False, False, False, False, False]
    rule = recipe.derive_threshold(h, pays)
    assert rule.threshold == np.inf
    assert rule.accuracy == rule.majority_accuracy == pytest.approx(5 / 6)
    assert "did not predict" in rule.method
    assert recipe.decide(0.9, rule).action == recipe.SINGLE
    # The same single paying trio at the top is separable: the cut is informative.
    top = recipe.derive_threshold(h[::-1], pays)
    assert top.threshold == pytest.approx(0.775) and top.accuracy == 1.0
    # Mostly paying, the one failure at the top: "always a panel".
    always = recipe.derive_threshold(
        [0.8, 0.5, 0.55, 0.6, 0.65, 0.7], [False, True, True, True, True, True]
    )
    assert always.threshold == -np.inf
    assert recipe.decide(0.1, always).action == recipe.PANEL


def test_threshold_one_sided_cases():
    all_pay = recipe.derive_threshold([0.3, 0.4], [True, True])
    assert all_pay.threshold == 0.3 and "every trio" in all_pay.method
    none_pay = recipe.derive_threshold([0.3, 0.4], [False, False])
    assert none_pay.threshold == np.inf and "no trio" in none_pay.method
    assert recipe.decide(0.9, none_pay).action == recipe.SINGLE
    # a rule that equals a constant says so, and its open band is written in words
    assert none_pay.constant and not recipe.derive_threshold([0.3, 0.4], [False, True]).constant
    assert "the constant rule 'never a panel'" in none_pay.learnt
    # how many paid is a count of test results: stated through count rows, not here
    assert "no threshold on headroom was learnt" in none_pay.learnt
    assert " of 2 " not in none_pay.learnt
    assert none_pay.band == "from 0.400 upward"
    eva = recipe.decide(0.6, none_pay, (0.531, 0.692), dataset="eva")
    assert eva.uncertain and "inf" not in eva.text and "never a panel" in eva.text
    with pytest.raises(ValueError):
        recipe.derive_threshold([0.1], [True, False])


def test_decide_panel_single_and_uncertainty():
    rule = recipe.ThresholdRule(0.25, 0.15, 0.35, 1.0, 0.5, 20, 10, True, "test")
    far = recipe.decide(0.45, rule, (0.40, 0.50), dataset="eva")
    assert far.action == recipe.PANEL and not far.uncertain
    near = recipe.decide(0.10, rule, (0.05, 0.14), dataset="para")
    assert near.action == recipe.SINGLE and not near.uncertain
    straddle = recipe.decide(0.22, rule, (0.18, 0.30))
    assert straddle.action == recipe.SINGLE and straddle.straddles and straddle.uncertain
    assert "contains the threshold" in straddle.text
    band = recipe.decide(0.30, rule, (0.28, 0.32))
    assert band.action == recipe.PANEL and not band.straddles and band.in_band
    # the point lies outside the band, but its interval reaches into it: still uncertain
    reach = recipe.decide(0.10, rule, (0.05, 0.16))
    assert reach.action == recipe.SINGLE and reach.in_band and reach.uncertain
    assert "reaches into the band" in reach.text and "[0.150, 0.350]" in reach.text
    with pytest.raises(ValueError, match="reversed"):
        recipe.decide(0.3, rule, (0.4, 0.35))
    # A percentile interval need not contain its estimate; the decision still stands.
    assert recipe.decide(0.3, rule, (0.31, 0.4)).action == recipe.PANEL
    with pytest.raises(ValueError):
        recipe.decide(float("nan"), rule)


def test_tokens_per_call_and_option_costs():
    calls = pd.DataFrame(
        {
            "model": ["m-a"] * 4 + ["m-b"] * 3,
            "kind": [
                "holistic",
                "holistic",
                "dimension",
                "dimension",
                "holistic",
                "dimension",
                "dimension",
            ],
            "status": ["ok", "ok", "ok", "failed", "ok", "ok", "ok"],
            "prompt_tokens": [1000, 1200, 2000, 5000, 800, 1500, 1500],
            "completion_tokens": [10, 30, 50, 0, 20, 40, 60],
        }
    )
    tok = recipe.tokens_per_call(calls).set_index(["model", "kind"])
    assert tok.loc[("m-a", "holistic"), "prompt_tokens"] == 1100
    assert tok.loc[("m-a", "dimension"), "calls"] == 1  # the failed call is not counted
    prices = {"m-a": Price(1.0, 10.0), "m-b": Price(0.5, 1.0)}
    fams = {"a": "m-a", "b": "m-b"}
    costs = recipe.option_costs(
        recipe.tokens_per_call(calls),
        fams,
        best_family="b",
        predeclared=["a", "b"],
        k=25,
        r=3,
        price=prices.__getitem__,
    )
    c = costs.set_index("option")
    assert c.loc["best single", "calls_per_image"] == 25
    assert c.loc["pre-declared panel", "calls_per_image"] == 2 * (25 + 15)
    assert c.loc["pre-declared panel", "calls_vs_single"] == pytest.approx(80 / 25)
    assert c.loc["probe", "calls_per_image"] == 2 * 5
    hol_b = (800 * 0.5 + 20 * 1.0) / 1e6
    assert c.loc["best single", "usd_per_image"] == pytest.approx(25 * hol_b)
    hol_a = (1100 * 1.0 + 20 * 10.0) / 1e6
    dim_a = (2000 * 1.0 + 50 * 10.0) / 1e6
    dim_b = (1500 * 0.5 + 50 * 1.0) / 1e6
    panel = 25 * (hol_a + hol_b) + 15 * (dim_a + dim_b)
    assert c.loc["pre-declared panel", "usd_per_image"] == pytest.approx(panel)
    assert c.loc["pre-declared panel", "usd_per_1000"] == pytest.approx(1000 * panel)


def test_costs_of_an_unobserved_kind_are_nan():
    calls = pd.DataFrame(
        {
            "model": ["m"],
            "kind": ["holistic"],
            "status": ["ok"],
            "prompt_tokens": [100],
            "completion_tokens": [5],
        }
    )
    costs = recipe.option_costs(
        recipe.tokens_per_call(calls),
        {"a": "m"},
        best_family="a",
        predeclared=["a"],
        k=5,
        r=3,
        price=lambda m: Price(1, 1),
    )
    c = costs.set_index("option")
    assert np.isfinite(c.loc["best single", "usd_per_image"])
    assert np.isnan(c.loc["pre-declared panel", "usd_per_image"])
    with pytest.raises(ValueError, match="no successful"):
        recipe.tokens_per_call(calls.assign(status="failed"))


def test_held_out_rule_is_tested_on_each_dataset_it_was_not_learnt_from():
    # a and b pay above headroom 0.5; c pays above 0.2: the rule learnt from a and b
    # misses c's trios in between, the rules learnt with c in them do not
    trios = pd.DataFrame(
        {
            "dataset": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
            "headroom": [0.1, 0.3, 0.6, 0.8, 0.2, 0.4, 0.7, 0.9, 0.1, 0.3, 0.4, 0.6],
            "pays": [False, False, True, True] * 2 + [False, True, True, True],
        }
    )
    table = recipe.held_out_rule(trios)
    assert table["held_out"].tolist() == ["a", "b", "c"]
    c = table.set_index("held_out").loc["c"]
    assert c["learnt_from"] == "a, b" and 0.4 < c["threshold"] < 0.6
    assert (c["n_paid"], c["n_predicted"], c["n_right"], c["n_right_constant"]) == (3, 1, 2, 3)
    a = table.set_index("held_out").loc["a"]
    rule = recipe.derive_threshold(trios["headroom"][4:], trios["pays"][4:])
    expected = int(((trios["headroom"][:4] >= rule.threshold) == trios["pays"][:4]).sum())
    assert a["threshold"] == rule.threshold == 0.25 and a["n_right"] == expected == 3
    text = recipe.describe_held_out(table)
    assert "2 of 4 predictions are right" in text and wording.prose_problems(text) == []
    # a constant rule predicts nothing or everything, never a NaN comparison
    never = trios.assign(pays=trios["dataset"] == "c")
    table = recipe.held_out_rule(never).set_index("held_out")
    assert table.loc["c", "rule"] == "never a panel, whatever the headroom"
    assert table.loc["c", "n_predicted"] == 0 and table.loc["c", "n_right"] == 0
    with pytest.raises(ValueError, match="at least three datasets"):
        recipe.held_out_rule(trios[trios["dataset"] != "c"])
