"""Feature blocks, out-of-fold combiners, paired comparisons and the MTMM cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from statsmodels.stats.multitest import multipletests

from judgepanel.core.frames import score_table
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.stats import add_q, paired_bootstrap
from judgepanel.studies.common.combiners import gb_combiner, make_folds, oof_predict
from judgepanel.studies.common.features import holistic_means
from judgepanel.studies.fusion import ablation, mtmm
from judgepanel.studies.fusion.blocks import (
    BestColumn,
    build_blocks,
    holistic_block_split,
    holistic_blocks_of,
    panel_mean,
)
from judgepanel.studies.fusion.compare import COLUMNS, compare_arms, compare_pairs


def _fake_calls(n_items=60, families=("a", "b", "c"), k=6, r=3, seed=0):
    """A store frame whose holistic and dimension answers follow a known latent."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n_items, len(DIMENSIONS)))
    rows = []
    for fi, fam in enumerate(families):
        for i in range(n_items):
            item = f"img{i:03d}"
            overall = latent[i].mean()
            for rep in range(k):
                v = float(np.clip(np.round(5.5 + 2 * overall + rng.normal(0, 0.5 + fi)), 1, 10))
                rows.append((item, fam, "holistic", "", rep, v))
            for d, dim in enumerate(DIMENSIONS):
                for rep in range(r):
                    v = float(np.clip(np.round(5.5 + 2 * latent[i, d] + rng.normal(0, 1)), 1, 10))
                    rows.append((item, fam, "dimension", dim, rep, v))
    df = pd.DataFrame(rows, columns=["item", "family", "kind", "dimension", "repetition", "value"])
    df["dataset"] = "toy"
    df["rubric_sha"] = "r1"
    df["temperature"] = 0.3
    df["status"] = "ok"
    target = pd.Series(latent.mean(axis=1), index=[f"img{i:03d}" for i in range(n_items)])
    return df, target, latent


def test_holistic_means_and_blocks_are_the_stated_averages():
    calls, _, _ = _fake_calls(n_items=8, k=6)
    scores = score_table(calls, "toy")
    H = holistic_means(scores, ["a", "b"])
    manual = (
        calls[(calls.kind == "holistic") & (calls.family == "a")].groupby("item")["value"].mean()
    )
    pd.testing.assert_series_equal(H["a"], manual, check_names=False)
    first3 = holistic_means(scores, ["a"], k=3)["a"]
    manual3 = (
        calls[(calls.kind == "holistic") & (calls.family == "a") & (calls.repetition < 3)]
        .groupby("item")["value"]
        .mean()
    )
    pd.testing.assert_series_equal(first3, manual3, check_names=False)
    split = holistic_block_split(scores, ["a", "b"], n_blocks=5)
    assert split.shape[1] == 10  # five blocks per family even when k=6 (sizes 2,1,1,1,1)


def test_blocks_of_3_match_p_in_columns_and_averaging():
    """The fusion paper's control: as many holistic columns as P has, each a mean of 3 runs (it
    once made k // 3 blocks: 8 per family at k=25, against P's 5)."""
    calls, target, _ = _fake_calls(n_items=8, k=25)
    scores = score_table(calls, "toy")
    b3 = holistic_blocks_of(scores, ["a", "b"])
    blocks = build_blocks(scores, target, ["a", "b"])
    assert b3.shape[1] == blocks.P.shape[1] == 2 * len(DIMENSIONS)
    assert list(b3.columns[:5]) == [f"a:h{b}" for b in range(5)]
    hol = calls[(calls.kind == "holistic") & (calls.family == "b")]
    for b in range(5):
        runs = hol[hol.repetition.between(3 * b, 3 * b + 2)].groupby("item")["value"]
        assert (runs.size() == 3).all()
        pd.testing.assert_series_equal(b3[f"b:h{b}"], runs.mean(), check_names=False)
    assert blocks.H_blocks3 is not None and blocks.H_blocks3.shape == (8, 10)
    # With k=5 (PARA's design) five blocks of 3 cannot be built: the arm is left out.
    few, target5, _ = _fake_calls(n_items=8, k=5)
    few_scores = score_table(few, "toy")
    with pytest.raises(ValueError, match="has 5 holistic runs; 5 blocks of 3 need 15"):
        holistic_blocks_of(few_scores, ["a"])
    assert build_blocks(few_scores, target5, ["a"]).H_blocks3 is None


def test_score_table_keeps_one_rubric_and_temperature_and_only_ok_rows():
    calls, _, _ = _fake_calls(n_items=5)
    extra = calls.iloc[:10].copy()
    extra["rubric_sha"] = "old"
    failed = calls.iloc[10:12].copy()
    failed["status"] = "failed"
    failed["value"] = np.nan
    both = pd.concat([calls.drop(calls.index[10:12]), extra, failed])
    scores = score_table(both, "toy", rubric_sha="r1")
    assert len(scores) == len(calls) - 2
    with pytest.raises(ValueError, match="no scores for families"):
        score_table(calls, "toy", families=["a", "zzz"])


def test_build_blocks_drops_items_missing_a_feature_from_every_block():
    calls, target, _ = _fake_calls(n_items=20)
    gone = calls[
        (calls["item"] == "img003")
        & (calls["kind"] == "dimension")
        & (calls["family"] == "b")
        & (calls["dimension"] == "colour")
    ]
    scores = score_table(calls.drop(gone.index), "toy")
    blocks = build_blocks(scores, target, ["a", "b", "c"])
    assert "img003" not in blocks.items
    assert len(blocks.items) == 19
    assert list(blocks.P.index) == list(blocks.H.index) == list(blocks.y.index)


def test_oof_prediction_does_not_leak_the_target():
    # A 1-nearest-neighbour memoriser fits its training rows perfectly; out of fold, on
    # features that are pure noise, it must know nothing about the target.
    from sklearn.neighbors import KNeighborsRegressor

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    y = rng.normal(size=300)
    inside = KNeighborsRegressor(n_neighbors=1).fit(X, y).predict(X)
    assert spearmanr(inside, y).statistic > 0.99
    oof = oof_predict(KNeighborsRegressor(n_neighbors=1), X, y)
    assert abs(spearmanr(oof, y).statistic) < 0.2


def test_selection_inside_the_fold_is_honest_and_outside_it_is_optimistic():
    rng = np.random.default_rng(2)
    n, m = 100, 300
    X = rng.normal(size=(n, m))
    y = rng.normal(size=n)
    # Outside the fold: pick the best of 300 noise columns on all rows, then evaluate.
    rhos = [spearmanr(X[:, j], y).statistic for j in range(m)]
    leaked = spearmanr(X[:, int(np.argmax(rhos))], y).statistic
    honest = spearmanr(oof_predict(BestColumn(), X, y), y).statistic
    assert leaked > 0.2
    assert honest < leaked - 0.15


def test_fold_partition_is_the_fixed_one():
    a = [test.tolist() for _, test in make_folds().split(np.zeros(50))]
    b = [test.tolist() for _, test in make_folds(42).split(np.zeros(50))]
    assert a == b
    assert gb_combiner().get_params()["n_estimators"] == 100
    assert gb_combiner().get_params()["max_depth"] == 3


def test_compare_arms_equals_paired_bootstrap_and_bh_is_within_groups():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 10, 120).astype(float)
    a = y + rng.normal(0, 2, 120)
    b = y + rng.normal(0, 4, 120)
    res = compare_arms(y, {"a": a}, {"b": b}, n_resamples=500, seed=7)
    for metric in ("spearman", "kendall_b"):
        row = res[res["metric"] == metric].iloc[0]
        ref = paired_bootstrap(y, a, b, metric, n_resamples=500, seed=7)
        assert row["delta"] == pytest.approx(ref.delta)
        assert row["ci_low"] == pytest.approx(ref.ci_low)
        assert row["p"] == pytest.approx(ref.p)
    with_q = add_q(res, by="metric")
    assert (with_q["q"] == with_q["p"]).all()  # one test per group: q equals p


def test_compare_pairs_reads_each_pair_off_shared_resamples():
    rng = np.random.default_rng(8)
    y = rng.normal(size=90)
    arms = {name: y + rng.normal(0, sd, 90) for name, sd in (("a", 1.0), ("b", 2.0), ("c", 3.0))}
    res = compare_pairs(y, arms, [("c", "a"), ("a", "b")], n_resamples=300, seed=2)
    assert list(res.columns) == list(COLUMNS)
    assert list(zip(res["metric"], res["arm"], res["comparator"], strict=True)) == [
        ("spearman", "c", "a"),
        ("spearman", "a", "b"),
        ("kendall_b", "c", "a"),
        ("kendall_b", "a", "b"),
    ]
    for row in res.itertuples():
        ref = paired_bootstrap(
            y, arms[row.arm], arms[row.comparator], row.metric, n_resamples=300, seed=2
        )
        assert (row.delta, row.ci_low, row.ci_high, row.p) == pytest.approx(
            (ref.delta, ref.ci_low, ref.ci_high, ref.p)
        )
    with pytest.raises(ValueError, match="'z'"):
        compare_pairs(y, arms, [("a", "z")])
    empty = compare_pairs(y, arms, [])
    assert empty.empty and list(empty.columns) == list(COLUMNS)


def test_compare_arms_refuses_a_comparator_that_shadows_an_arm():
    y = np.arange(20.0)
    with pytest.raises(ValueError, match="share an arm's name"):
        compare_arms(y, {"x": y, "w": -y}, {"x": y[::-1].copy()}, n_resamples=50)
    only_self = compare_arms(y, {"x": y}, {"x": y}, n_resamples=50)
    assert only_self.empty and "p" in only_self.columns


@pytest.mark.slow
def test_fusion_of_dimensions_beats_holistic_verdicts_when_the_signal_is_in_the_dimensions():
    # Humans weight the dimensions unevenly; the families' holistic verdicts do not. Fused
    # dimension scores can recover the human weighting, fused verdicts cannot.
    rng = np.random.default_rng(4)
    n = 400
    latent = rng.normal(size=(n, 5))
    target = pd.Series(
        latent @ np.array([2.0, 1.0, 0.0, 0.0, -1.0]), index=[f"i{i}" for i in range(n)]
    )
    rows = []
    for fam in ("a", "b", "c"):
        for i in range(n):
            for rep in range(3):
                rows.append(
                    (f"i{i}", fam, "holistic", "", rep, float(latent[i].sum() + rng.normal(0, 0.5)))
                )
            for d, dim in enumerate(DIMENSIONS):
                for rep in range(3):
                    rows.append(
                        (
                            f"i{i}",
                            fam,
                            "dimension",
                            dim,
                            rep,
                            float(latent[i, d] + rng.normal(0, 0.5)),
                        )
                    )
    calls = pd.DataFrame(
        rows, columns=["item", "family", "kind", "dimension", "repetition", "value"]
    )
    calls = calls.assign(dataset="toy", rubric_sha="r", temperature=0.3, status="ok")
    blocks = build_blocks(score_table(calls, "toy"), target, ["a", "b", "c"])
    long = ablation.ablate_inputs(blocks, {"trio": ["a", "b", "c"]}, n_resamples=300, seed=0)
    sel = long[
        (long.arm == "P_gb") & (long.comparator == "panel mean") & (long.metric == "spearman")
    ].iloc[0]
    assert sel["delta"] > 0.2 and sel["ci_low"] > 0
    assert sel["q"] < 0.01
    pm = panel_mean(blocks.H)
    assert np.allclose(pm, blocks.H.mean(axis=1))


def test_mtmm_dimension_prompt_wins_when_it_tracks_its_attribute():
    rng = np.random.default_rng(5)
    n = 300
    overall = rng.normal(size=n)
    attrs = {
        d: 0.7 * overall + 0.7 * rng.normal(size=n) for d in ("quality", "composition", "colour")
    }
    idx = [f"i{i}" for i in range(n)]
    human = pd.DataFrame({"mean_score": overall, **attrs}, index=idx)
    P = pd.DataFrame(
        {
            f"f:{d}": (attrs[d] if d in attrs else rng.normal(size=n)) + rng.normal(0, 0.5, n)
            for d in DIMENSIONS
        },
        index=idx,
    )
    H = pd.DataFrame({"f": overall + rng.normal(0, 0.3, n)}, index=idx)
    cells = mtmm.mtmm_cells(P, H, human, ["f"], n_resamples=400, seed=0)
    assert cells["won"].all()
    assert (cells["q_dataset"] < 0.01).all()
    assert (~cells["raw_won"]).sum() >= 1 or (cells["raw_holistic"] > 0.5).all()
    best = mtmm.best_columns(P, human, ["f"])
    assert best["matched"].all()
    resid = mtmm.residual_variance(human)
    assert ((resid["residual_rank_variance"] > 0.2) & (resid["residual_rank_variance"] < 0.9)).all()


def test_mtmm_cells_of_two_datasets_are_one_family():
    """The fusion paper corrects the 30 cells of EVA and PARA together; each dataset's own q
    stays, labelled q_dataset, and q_pooled is BH over every cell of both."""
    rng = np.random.default_rng(8)
    cells = {
        name: pd.DataFrame(
            {
                "family": np.repeat([f"f{j}" for j in range(5)], 3),
                "attribute": ["quality", "composition", "colour"] * 5,
                "p": rng.uniform(0, scale, 15) ** 2,
            }
        ).assign(q_dataset=lambda t: multipletests(t["p"], method="fdr_bh")[1])
        for name, scale in (("eva", 0.3), ("para", 1.0))
    }
    pooled = mtmm.pool_cells(cells)
    assert len(pooled) == 30 and pooled.columns[0] == "dataset"
    assert pooled["dataset"].tolist() == ["eva"] * 15 + ["para"] * 15
    expected = multipletests(pooled["p"], method="fdr_bh")[1]
    np.testing.assert_allclose(pooled["q_pooled"], expected, rtol=0, atol=1e-15)
    for name, table in cells.items():
        kept = pooled.loc[pooled["dataset"] == name, "q_dataset"].to_numpy()
        np.testing.assert_array_equal(kept, table["q_dataset"].to_numpy())
    # The families differ: pooling moves q for the dataset with the larger p-values.
    para = pooled[pooled["dataset"] == "para"]
    assert not np.allclose(para["q_pooled"], para["q_dataset"])
    with pytest.raises(ValueError, match="no MTMM cells"):
        mtmm.pool_cells({})


def test_mtmm_runs_on_the_attributes_a_dataset_rates_and_skips_one_without():
    """A dataset is tested on the rubric attributes it holds; one that rates the overall
    impression only (AVA) adds no cell, so the pooled family is the other datasets'."""
    rng = np.random.default_rng(9)
    n = 120
    idx = [f"i{i}" for i in range(n)]
    overall = rng.normal(size=n)
    quality = 0.6 * overall + 0.8 * rng.normal(size=n)
    P = pd.DataFrame({f"f:{d}": rng.normal(size=n) for d in DIMENSIONS}, index=idx)
    P["f:quality"] = quality + rng.normal(0, 0.5, n)
    H = pd.DataFrame({"f": overall + rng.normal(0, 0.3, n)}, index=idx)
    one = pd.DataFrame({"mean_score": overall, "quality": quality, "colour": np.nan}, index=idx)
    none = pd.DataFrame({"mean_score": overall, "tag1": 3}, index=idx)
    assert mtmm.validated_attributes(one) == ["quality"]
    assert mtmm.validated_attributes(none) == []
    cells = mtmm.profile_cells(
        {"rated": (P, H, one), "votes": (P, H, none)}, ["f"], n_resamples=200, seed=0
    )
    assert list(cells) == ["rated"] and cells["rated"]["attribute"].tolist() == ["quality"]
    direct = mtmm.mtmm_cells(
        P, H, one[["mean_score", "quality"]], ["f"], attributes=["quality"], n_resamples=200
    )
    pd.testing.assert_frame_equal(cells["rated"], direct)
    # a table already computed is used as it is
    kept = mtmm.profile_cells({"rated": (P, H, one)}, ["f"], done={"rated": direct.head(0)})
    assert kept["rated"].empty


def test_ablation_row_finds_the_one_row_and_names_a_missing_one():
    long = pd.DataFrame(
        {
            "block": ["b", "b", "b"],
            "arm": ["H+P_gb", "H+P_gb", "H_gb"],
            "comparator": ["panel mean", "panel mean", "best single"],
            "metric": ["spearman", "kendall_b", "spearman"],
            "delta": [0.1, 0.2, 0.3],
        }
    )
    assert ablation.ablation_row(long, "b", "H+P_gb", "panel mean")["delta"] == 0.1
    assert ablation.ablation_row(long, "b", "H+P_gb", "panel mean", "kendall_b")["delta"] == 0.2
    with pytest.raises(KeyError, match="arm 'H_gb', comparator 'panel mean'"):
        ablation.ablation_row(long, "b", "H_gb", "panel mean")
    with pytest.raises(KeyError, match="has 2 rows"):
        ablation.ablation_row(pd.concat([long, long]), "b", "H_gb", "best single")


def test_the_same_judges_named_in_another_order_give_the_same_numbers():
    """A set of judges is put in one canonical order before any sum, fit or rank: the
    ablation's arms of a trio named in every order are identical to the last bit."""
    from itertools import permutations

    from judgepanel.studies.fusion.ablation import block_arms

    calls, target, _ = _fake_calls(n_items=40, families=("a", "b", "c"), k=3, r=2, seed=3)
    blocks = build_blocks(score_table(calls, "toy"), target, ["a", "b", "c"])
    want, best = block_arms(blocks, ["a", "b", "c"], n_jobs=1)
    for order in permutations(["a", "b", "c"]):
        got, best_got = block_arms(blocks, list(order), n_jobs=1)
        assert best_got == best and list(got) == list(want)
        for arm in want:
            np.testing.assert_array_equal(got[arm], want[arm], err_msg=f"{order} {arm}")
    assert list(blocks.H_of(["c", "a", "b"]).columns) == ["a", "b", "c"]
