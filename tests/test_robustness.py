"""Robustness estimators on data where the answer is known, and leakage tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LinearRegression

from judgepanel.core.prompts import DIMENSIONS
from judgepanel.stats import spearman
from judgepanel.stats.multitest import bh
from judgepanel.studies.common.combiners import gb_combiner, make_folds, oof_predict
from judgepanel.studies.fusion import ablation
from judgepanel.studies.fusion import robustness as rb
from judgepanel.studies.fusion.blocks import build_blocks, hp_design

FAMILIES = ["f0", "f1", "f2"]


def scores_and_target(n: int = 120, k: int = 6, seed: int = 0, flip: bool = False):
    """Three families; dimension scores of f0 carry the target, holistic runs weakly."""
    rng = np.random.default_rng(seed)
    items = [f"img{i:04d}" for i in range(n)]
    latent = rng.normal(size=n)
    y = pd.Series(latent + rng.normal(scale=0.3, size=n), index=items)
    sign = -1.0 if flip else 1.0
    rows = []
    for f, (hs, ds) in {"f0": (0.5, 2.0), "f1": (0.8, 0.0), "f2": (0.3, 0.0)}.items():
        for rep in range(k):
            v = np.clip(np.rint(5.5 + hs * latent + rng.normal(scale=1.2, size=n)), 1, 10)
            rows += [(it, f, "holistic", "", rep, x) for it, x in zip(items, v, strict=True)]
        for d in DIMENSIONS:
            for rep in range(3):
                v = np.clip(np.rint(5.5 + sign * ds * latent + rng.normal(size=n)), 1, 10)
                rows += [(it, f, "dimension", d, rep, x) for it, x in zip(items, v, strict=True)]
    scores = pd.DataFrame(
        rows, columns=["item", "family", "kind", "dimension", "repetition", "value"]
    )
    return scores, y


@pytest.fixture(scope="module")
def world():
    scores, y = scores_and_target()
    return scores, y, build_blocks(scores, y, FAMILIES)


# ------------------------------------------------------------------------- partitions


def test_partition_sweep_rows_and_reference(world):
    _, _, blocks = world
    sweep = rb.sweep_partitions(blocks, {"trio": FAMILIES}, seeds=(0, 1, 2), n_jobs=1)
    assert len(sweep) == 4 and sweep["reference"].sum() == 1
    assert sweep.loc[sweep["reference"], "seed"].item() == 42
    np.testing.assert_allclose(sweep["delta_rho"], sweep["rho"] - sweep["best_rho"])
    assert sweep["best_family"].nunique() == 1
    ref = oof_predict(gb_combiner(), hp_design(blocks, FAMILIES), blocks.y, seed=1)
    assert sweep.loc[sweep["seed"] == 1, "rho"].item() == pytest.approx(
        spearman(blocks.y.to_numpy(), ref)
    )
    assert sweep["rho"].nunique() > 1  # the partition does move the fused arm
    with pytest.raises(ValueError, match="reference seed"):
        rb.sweep_partitions(blocks, {"trio": FAMILIES}, seeds=(1, 42))


def test_headline_margins_and_their_spread_match_table_2(world):
    """The reference partition's margins are Table 2's fixed-partition estimates, so the
    spread printed beside a headline is the spread of that very number."""
    _, _, blocks = world
    sweep = rb.sweep_partitions(blocks, {"pre-declared": FAMILIES}, seeds=(0, 1, 2), n_jobs=1)
    long = ablation.ablate_inputs(blocks, {"pre-declared": FAMILIES}, n_resamples=200, n_jobs=1)
    ref = sweep[sweep["reference"]].iloc[0]
    for comparator in ("panel mean", "best single"):
        for metric in ("spearman", "kendall_b"):
            row = ablation.ablation_row(long, "pre-declared", "H+P_gb", comparator, metric)
            column = rb.partitions.MARGINS[(comparator, metric)]
            assert ref[column] == pytest.approx(row["delta"], abs=1e-12), (comparator, metric)
            margins = rb.random_margins(sweep, "pre-declared", comparator, metric)
            assert len(margins) == 3 and not np.isin(ref[column], margins).all()
    claim = ablation.ablation_claim(
        long, "pre-declared", "H+P_gb", "panel mean", dataset="d",
        spread=rb.random_margins(sweep, "pre-declared", "panel mean"),
    )  # fmt: skip
    assert claim.spread_n == 3 and claim.estimate == pytest.approx(ref["delta_rho_panel"])
    assert claim.spread_p05 <= claim.spread_mean <= claim.spread_p95
    assert "over 3 random fold partitions" in claim.words()
    with pytest.raises(ValueError, match="no margin over"):
        rb.random_margins(sweep, "pre-declared", "F11_gb")
    with pytest.raises(ValueError, match="no random partition"):
        rb.random_margins(sweep, "all five", "panel mean")


def test_partition_summary_rank_and_percentile():
    sweep = pd.DataFrame(
        {
            "block": "b",
            "seed": [0, 1, 2, 3, 42],
            "reference": [False] * 4 + [True],
            "rho": [0.5, 0.6, 0.7, 0.8, 0.75],
            "tau_b": 0.4,
            "best_family": "x",
            "best_rho": 0.5,
            "best_tau_b": 0.3,
            "delta_rho": [-0.01, 0.1, 0.2, 0.3, 0.25],
            "delta_tau_b": [0.0, 0.1, 0.1, 0.1, 0.1],
        }
    )
    s = rb.summarize_partitions(sweep).iloc[0]
    assert s["delta_rho_reference_rank"] == 2
    assert s["delta_rho_reference_percentile"] == pytest.approx(0.75)
    assert s["delta_rho_n_positive"] == 3
    assert s["delta_rho_mean"] == pytest.approx(np.mean([-0.01, 0.1, 0.2, 0.3]))
    assert s["delta_rho_sd"] == pytest.approx(np.std([-0.01, 0.1, 0.2, 0.3], ddof=1))
    assert s["n_partitions"] == 4


# ------------------------------------------------------------------ leakage: in the fold


class Recorder(RegressorMixin, BaseEstimator):
    """Predicts the training mean and records the targets it was fitted on."""

    fitted: list[np.ndarray] = []  # noqa: RUF012 - shared across clones on purpose

    def fit(self, X, y):
        Recorder.fitted.append(np.asarray(y, float).copy())
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.mean_)


class RecordingSelector(rb.PerGroupSelector):
    """The honest selector, also recording the targets its choice saw."""

    seen: list[np.ndarray] = []  # noqa: RUF012

    def fit(self, X, y):
        RecordingSelector.seen.append(np.asarray(y, float).copy())
        return super().fit(X, y)


def test_selection_and_combiner_never_see_the_test_fold():
    rng = np.random.default_rng(0)
    n = 50
    y = np.arange(n, dtype=float) + rng.uniform(0, 0.1, n)  # every target unique: an id
    X = rng.normal(size=(n, 6))
    groups = [[0, 1, 2], [3, 4, 5]]
    Recorder.fitted.clear()
    RecordingSelector.seen.clear()
    from sklearn.pipeline import make_pipeline

    oof_predict(make_pipeline(RecordingSelector(groups), Recorder()), X, y)
    splits = list(make_folds().split(X))
    assert len(RecordingSelector.seen) == len(Recorder.fitted) == len(splits)
    for (train, test), seen, fitted in zip(
        splits, RecordingSelector.seen, Recorder.fitted, strict=True
    ):
        assert not set(seen) & set(y[test])
        assert set(seen) == set(y[train]) == set(fitted)


def test_recalibration_is_refitted_inside_each_fold():
    rng = np.random.default_rng(1)
    n = 80
    x = rng.normal(size=n)
    y = x + rng.normal(scale=0.8, size=n)
    oof = oof_predict(rb.recalibrator(), x[:, None], y)
    manual = np.empty(n)
    for train, test in make_folds().split(x):
        iso = IsotonicRegression(out_of_bounds="clip", increasing=True).fit(x[train], y[train])
        manual[test] = iso.predict(x[test])
    np.testing.assert_allclose(oof, manual)
    leaky = IsotonicRegression(out_of_bounds="clip").fit(x, y).predict(x)
    assert not np.allclose(oof, leaky)  # fitting outside the fold is a different estimator
    assert spearman(y, leaky) > spearman(y, oof)  # and an optimistic one


def test_a_feature_equal_to_the_target_is_selected_in_every_fold():
    rng = np.random.default_rng(2)
    n = 100
    y = rng.normal(size=n)
    X = rng.normal(size=(n, 6))
    X[:, 4] = y  # group 2's second column is the target itself
    groups = [[0, 1, 2], [3, 4, 5]]
    for cols in rb.honest_choices(X, y, groups):
        assert cols[1] == 4
    _, oracle = rb.oracle_oof(X, y, groups, estimator=LinearRegression())
    assert all(c[1] == 4 for c in oracle)


def test_selection_outside_the_fold_is_optimistic():
    """On pure noise, choosing on all images (or on the test fold) beats honest selection."""
    outside, honest, oracle = [], [], []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        n, per = 60, 12
        y = rng.normal(size=n)
        X = rng.normal(size=(n, 2 * per))
        groups = [list(range(per)), list(range(per, 2 * per))]
        chosen = rb.PerGroupSelector(groups).fit(X, y).chosen_
        outside.append(spearman(y, oof_predict(LinearRegression(), X[:, chosen], y)))
        honest.append(
            spearman(y, oof_predict(rb.selecting_combiner(groups, LinearRegression()), X, y))
        )
        oracle.append(spearman(y, rb.oracle_oof(X, y, groups, estimator=LinearRegression())[0]))
    assert np.mean(outside) > np.mean(honest) + 0.15
    assert np.mean(oracle) > np.mean(honest) + 0.15


def test_feature_selection_on_blocks(world):
    _, _, blocks = world
    fs = rb.compare_feature_selection(blocks, FAMILIES, n_resamples=200, n_jobs=1)
    assert set(fs.choices["honest"]) == {"f0"}  # only f0's dimensions carry the target
    assert len(fs.choices) == 5 * len(DIMENSIONS)
    c = fs.comparisons
    row = c[
        (c["arm"] == "oracle selection")
        & (c["comparator"] == "honest selection")
        & (c["metric"] == "spearman")
    ]
    assert len(row) == 1
    assert {"all features", "honest selection", "oracle selection"} <= set(c["arm"])


# --------------------------------------------------------------------------- top decile


def test_precision_of_perfect_random_reversed_and_constant_predictors():
    rng = np.random.default_rng(0)
    y = rng.normal(size=500)
    assert rb.precision_at_top(y, y) == 1.0
    assert rb.precision_at_top(y, -y) == 0.0
    assert rb.precision_at_top(y, np.zeros(500)) == pytest.approx(0.1)  # ties shared fairly
    rand = [rb.precision_at_top(y, rng.normal(size=500)) for _ in range(300)]
    assert np.mean(rand) == pytest.approx(0.1, abs=0.01)


def test_top_weights_share_ties():
    w = rb.top_weights(np.array([[5.0, 4, 4, 4, 1]]), 2)
    np.testing.assert_allclose(w, [[1, 1 / 3, 1 / 3, 1 / 3, 0]])
    with pytest.raises(ValueError):
        rb.top_weights(np.ones((1, 3)), 4)


def test_top_decile_table():
    rng = np.random.default_rng(1)
    y = rng.normal(size=300)
    arms = {
        "best single": y + rng.normal(scale=2.0, size=300),
        "good": y + rng.normal(scale=0.2, size=300),
    }
    t = rb.compare_top_decile(y, arms, n_resamples=300).set_index("arm")
    assert t.loc["good", "precision"] > t.loc["best single", "precision"]
    assert t.loc["good", "delta"] > 0 and t.loc["good", "p"] < 0.05
    assert t.loc["good", "precision_ci_low"] <= t.loc["good", "precision"] <= 1
    assert np.isnan(t.loc["best single", "delta"])
    assert t.loc["good", "top_size"] == 30


# ---------------------------------------------------------------------------- granularity


def test_rounding_a_fine_mean_lowers_rho_on_tie_heavy_data():
    rng = np.random.default_rng(0)
    n, k = 300, 20
    items = [f"i{i}" for i in range(n)]
    latent = rng.normal(size=n)
    y = pd.Series(latent + rng.normal(scale=0.2, size=n), index=items)
    rows = []
    for rep in range(k):  # coarse integer answers on a narrow band: many ties
        v = np.rint(6 + 0.6 * latent + rng.normal(scale=0.8, size=n))
        rows += [(it, "a", "holistic", "", rep, x) for it, x in zip(items, v, strict=True)]
    scores = pd.DataFrame(
        rows, columns=["item", "family", "kind", "dimension", "repetition", "value"]
    )
    g = rb.compare_granularity(scores, y, ["a"], n_resamples=500)
    assert sorted(g["k"].unique()) == [1, 3, 5, 10, 15, 20]
    top = g[(g["k"] == 20)].set_index("metric")
    assert top.loc["spearman", "delta"] > 0
    assert top.loc["spearman", "ci_low"] > 0 and top.loc["spearman", "p"] < 0.05
    assert top.loc["spearman", "tied_rounded"] > top.loc["spearman", "tied_mean"]
    k1 = g[(g["k"] == 1) & (g["metric"] == "spearman")].iloc[0]
    assert k1["delta"] == pytest.approx(0.0)  # one integer run is already rounded
    assert np.isnan(g[g["k"] == 5]["ci_low"]).all()


def test_round_half_up_and_default_ks():
    np.testing.assert_array_equal(rb.round_half_up([6.5, 7.5, 2.49]), [7, 8, 2])
    assert rb.default_ks(25) == [1, 3, 5, 10, 15, 20, 25]
    assert rb.default_ks(5) == [1, 3, 5]
    assert rb.default_ks(12) == [1, 3, 5, 10, 12]


# ---------------------------------------------------------- label-matched and transfer


def test_label_matched_arms_use_the_image_statistics(world):
    _, y, blocks = world
    rng = np.random.default_rng(3)
    stats = pd.DataFrame(
        rng.normal(size=(len(y), 11)), index=y.index, columns=[f"s{i}" for i in range(11)]
    )
    stats["s0"] = y + rng.normal(scale=0.1, size=len(y))  # one statistic knows the answer
    res = rb.compare_label_matched(blocks, FAMILIES, stats, n_resamples=200, n_jobs=1)
    sp = res[(res["metric"] == "spearman") & (res["comparator"] == "best single")]
    sp = sp.set_index("arm")
    assert sp.loc["F11_ridge", "value"] > 0.9 and sp.loc["F11_ridge", "delta"] > 0
    assert {"F11_gb", "best single, isotonic", "H+P_gb", "panel mean"} <= set(sp.index)
    # Table 2's comparisons are 02's: named with its row id, out of this table's correction
    owned = res[res["owner"] != ""]
    pairs = {frozenset((a, c)) for a, c in zip(owned["arm"], owned["comparator"], strict=True)}
    assert pairs == {frozenset(("H+P_gb", "best single")), frozenset(("panel mean", "best single")),
                     frozenset(("panel mean", "H+P_gb"))}  # fmt: skip
    assert owned["q"].isna().all() and set(owned["owner"]) == {ablation.OWNER}
    back = owned[(owned["arm"] == "panel mean") & (owned["comparator"] == "H+P_gb")]
    assert set(back["owner_claim"]) == {
        ablation.claim_id("pre-declared", "H+P_gb", "panel mean", m) for m in back["metric"]
    }
    own = res[
        (res["owner"] == "") & (res["comparator"] == "best single") & (res["metric"] == "spearman")
    ]
    np.testing.assert_allclose(own["q"], bh(own["p"].to_numpy()))
    said = rb.describe_against_fused(res.assign(dataset="d"), cite=lambda n, i, t: f"<{i}|{t}>")
    assert "<pre-declared:h+p_gb-vs-panel_mean:spearman|" in said
    with pytest.raises(ValueError, match="no image statistics"):
        rb.compare_label_matched(blocks, FAMILIES, stats.iloc[5:], n_resamples=50, n_jobs=1)


def test_transfer_keeps_a_shared_relation_and_breaks_a_reversed_one():
    s1, y1 = scores_and_target(seed=1)
    s2, y2 = scores_and_target(seed=2)
    s3, y3 = scores_and_target(seed=3, flip=True)
    b1, b2, b3 = (build_blocks(s, y, FAMILIES) for s, y in ((s1, y1), (s2, y2), (s3, y3)))
    same = rb.transfer_combiner(b1, b2, FAMILIES, metrics=("spearman",), n_resamples=200).iloc[0]
    assert same["transfer"] > 0.7 and same["delta"] > 0
    assert same["in_domain"] > 0.7
    flipped = rb.transfer_combiner(b1, b3, FAMILIES, metrics=("spearman",), n_resamples=200).iloc[0]
    assert flipped["transfer"] < same["transfer"] - 0.3
    assert flipped["delta"] < 0


def test_granularity_summary_shares():
    gran = pd.DataFrame(
        {
            "family": "a",
            "metric": "spearman",
            "k": [1, 5, 25],
            "mean": [0.40, 0.45, 0.50],
            "rounded": [0.40, 0.41, 0.42],
        }
    )
    s = rb.summarize_granularity(gran).iloc[0]
    assert (s["k_first"], s["k_max"]) == (1, 25)
    assert s["averaging_gain"] == pytest.approx(0.10)
    assert s["rounding_loss"] == pytest.approx(0.08)
    assert s["share_detying"] == pytest.approx(0.8)
    flat = rb.summarize_granularity(gran.assign(mean=[0.5, 0.5, 0.5])).iloc[0]
    assert np.isnan(flat["share_detying"])
