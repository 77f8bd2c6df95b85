"""Probe, ceiling interval and the trio retest on data where the answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgepanel.stats import noise_ceiling, partial_spearman, spearman, split_halves
from judgepanel.studies.fusion import headroom


def world(n: int = 200, raters: int = 12, k: int = 5, seed: int = 0):
    """Latent quality, noisy raters, and three judges of decreasing skill (k holistic runs)."""
    rng = np.random.default_rng(seed)
    items = [f"i{i:03d}" for i in range(n)]
    latent = rng.normal(size=n)
    ratings = pd.DataFrame(
        [
            (it, f"r{j}", latent[i] + rng.normal(scale=1.0))
            for i, it in enumerate(items)
            for j in range(raters)
        ],
        columns=["image_id", "rater_id", "score"],
    )
    y = ratings.groupby("image_id")["score"].mean().loc[items]
    skill = {"good": 0.3, "fair": 1.0, "poor": 2.5}
    rows = []
    for fam, noise in skill.items():
        for rep in range(k):
            v = np.rint(5 + 1.5 * latent + rng.normal(scale=noise * 1.5, size=n))
            rows += [(it, fam, "holistic", "", rep, x) for it, x in zip(items, v, strict=True)]
    scores = pd.DataFrame(
        rows, columns=["item", "family", "kind", "dimension", "repetition", "value"]
    )
    return scores, y, ratings


@pytest.fixture(scope="module")
def probe_world():
    scores, y, ratings = world()
    probe = headroom.holistic_probe(
        scores,
        y,
        ratings,
        ["good", "fair", "poor"],
        ["good", "fair", "poor"],
        k=5,
        n_splits=50,
        dataset="w",
    )
    return scores, y, ratings, probe


def test_probe_fraction_headroom_and_best(probe_world):
    scores, y, ratings, probe = probe_world
    assert probe.best == "good"
    assert list(probe.table["family"]) == ["good", "fair", "poor"]
    ref = noise_ceiling(ratings, n_splits=50, seed=0)
    assert probe.ceiling.ceiling == pytest.approx(ref.ceiling)
    best_rho = spearman(
        y.to_numpy(), headroom.probe_means(scores, ["good"], 5)["good"].loc[y.index]
    )
    assert probe.fraction == pytest.approx(best_rho / ref.ceiling)
    assert probe.headroom == pytest.approx(1 - probe.fraction)
    assert 0 < probe.headroom < 0.3


def test_probe_restricts_ratings_to_scored_images(probe_world):
    scores, y, ratings, _ = probe_world
    extra = pd.DataFrame({"image_id": ["zz"] * 4, "rater_id": list("abcd"), "score": [9.0] * 4})
    p = headroom.holistic_probe(
        scores, y, pd.concat([ratings, extra]), ["good", "fair"], ["good", "fair"], n_splits=50
    )
    assert p.ceiling.n_images == len(y)


def test_probe_refuses_fewer_runs_than_k(probe_world):
    scores, *_ = probe_world
    with pytest.raises(ValueError, match="needs 6"):
        headroom.probe_means(scores, ["good"], k=6)


def test_agreement_of_identical_and_reversed_judges():
    H = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.0, 2, 3, 4], "c": [4.0, 3, 2, 1]})
    assert headroom.pairwise_agreement(H[["a", "b"]]) == pytest.approx(1.0)
    assert headroom.pairwise_agreement(H) == pytest.approx((1 - 1 - 1) / 3)
    with pytest.raises(ValueError):
        headroom.pairwise_agreement(H[["a"]])


def test_split_halves_reproduce_the_ceiling(probe_world):
    _, y, ratings, _ = probe_world
    a, b = split_halves(ratings, y.index, n_splits=100, seed=1)
    assert a.shape == b.shape == (100, len(y))
    # Every split's halves average back to the full mean.
    np.testing.assert_allclose((a[0] * 6 + b[0] * 6) / 12, y.to_numpy())
    r = np.mean([spearman(a[s], b[s]) for s in range(100)])
    assert r == pytest.approx(noise_ceiling(ratings, n_splits=100, seed=1).split_half_r, abs=0.01)


def test_headroom_interval_brackets_the_estimate_and_narrows_with_n(probe_world):
    scores, y, ratings, probe = probe_world
    x = headroom.probe_means(scores, [probe.best], 5)[probe.best]
    iv = headroom.headroom_interval(probe, x, y, ratings, n_resamples=300, n_splits=10)
    assert iv.headroom_low <= probe.headroom <= iv.headroom_high
    assert iv.fraction_low <= probe.fraction <= iv.fraction_high
    assert iv.headroom_low == pytest.approx(1 - iv.fraction_high)
    s2, y2, r2 = world(n=800, seed=1)
    p2 = headroom.holistic_probe(s2, y2, r2, ["good", "fair"], ["good", "fair"], n_splits=20)
    x2 = headroom.probe_means(s2, [p2.best], 5)[p2.best]
    iv2 = headroom.headroom_interval(p2, x2, y2, r2, n_resamples=300, n_splits=10)
    assert (iv2.headroom_high - iv2.headroom_low) < (iv.headroom_high - iv.headroom_low)


def test_trio_predictors_headroom_follows_the_best_member():
    y = pd.Series(np.arange(20.0))
    rng = np.random.default_rng(0)
    H = pd.DataFrame(
        {
            f: y + rng.normal(scale=s, size=20)
            for f, s in (("a", 1.0), ("b", 5.0), ("c", 10.0), ("d", 20.0))
        }
    )
    t = headroom.trio_predictors(H, y, 0.9, [("a", "b", "c"), ("a", "c", "d"), ("b", "c", "d")])
    assert list(t["probe_best"]) == ["a", "a", "b"]
    assert t["headroom"].iloc[0] == t["headroom"].iloc[1]  # same best member, same headroom
    rho_b = spearman(y.to_numpy(), H["b"].to_numpy())
    assert t["headroom"].iloc[2] == pytest.approx(1 - rho_b / 0.9)


def retest_frame(seed: int = 0) -> pd.DataFrame:
    """Two datasets of ten trios; within each, gain falls exactly with headroom, and
    agreement is noise. The datasets differ in level."""
    rng = np.random.default_rng(seed)
    rows = []
    for d, (h0, g0) in {"A": (0.4, 0.08), "B": (0.15, 0.0)}.items():
        h = h0 + rng.uniform(0, 0.05, 10)
        for i in range(10):
            rows.append(
                {
                    "dataset": d,
                    "trio": f"t{i}",
                    "headroom": h[i],
                    "gain": g0 - 0.5 * (h[i] - h0),
                    "agreement": rng.uniform(0.6, 0.9),
                }
            )
    return pd.DataFrame(rows)


def test_retest_within_pooled_and_partial():
    df = retest_frame()
    res = headroom.retest_predictors(df, n_permutations=2000).set_index(["scope", "predictor"])
    assert res.loc[("A", "headroom"), "rho"] == pytest.approx(-1.0)
    assert res.loc[("A", "headroom"), "p"] < 0.01
    assert res.loc[("B", "headroom"), "rho"] == pytest.approx(-1.0)
    # Pooled, the dataset difference dominates: between datasets gain rises with headroom.
    assert res.loc[("pooled", "headroom"), "rho"] > 0.4
    # Within datasets (the partial given the dataset) the true negative relation returns.
    partial = res.loc[("pooled, within dataset", "headroom"), "rho"]
    dummy = (df["dataset"] == "B").astype(float).to_numpy()
    assert partial == pytest.approx(partial_spearman(df["headroom"], df["gain"], dummy))
    assert partial < -0.9
    assert res.loc[("A", "agreement"), "p"] > 0.01 or abs(res.loc[("A", "agreement"), "rho"]) < 0.8
    assert res.loc[("A", "headroom"), "n"] == 10 and res.loc[("pooled", "headroom"), "n"] == 20


def test_retest_reports_nan_for_a_constant_predictor():
    df = retest_frame()
    df.loc[df["dataset"] == "A", "headroom"] = 0.4
    res = headroom.retest_predictors(df, n_permutations=200).set_index(["scope", "predictor"])
    assert np.isnan(res.loc[("A", "headroom"), "rho"])
    assert res.loc[("A", "headroom"), "distinct"] == 1


def test_collinearity_pooled_reflects_the_dataset_difference():
    df = retest_frame()
    df["agreement"] = np.where(df["dataset"] == "A", 0.7, 0.9) + np.random.default_rng(1).normal(
        scale=0.01, size=len(df)
    )
    c = headroom.correlate_predictors(df).set_index("scope")
    assert c.loc["pooled", "r"] < -0.9
    assert abs(c.loc["A", "r"]) < 0.8


def test_between_dataset_share():
    df = pd.DataFrame(
        {"dataset": ["A", "A", "B", "B"], "x": [1.0, 1.0, 3.0, 3.0], "z": [1.0, 3.0, 1.0, 3.0]}
    )
    assert headroom.between_dataset_share(df, "x") == pytest.approx(1.0)
    assert headroom.between_dataset_share(df, "z") == pytest.approx(0.0)
    assert np.isnan(headroom.between_dataset_share(df.assign(x=2.0), "x"))


def test_built_in_coupling_exposes_a_predictor_that_is_the_best_member() -> None:
    trios = pd.DataFrame(
        {
            "dataset": ["a"] * 4 + ["b"] * 4,
            "best_member_rho": [0.2, 0.3, 0.4, 0.5, 0.3, 0.3, 0.3, 0.3],
            "headroom": [0.8, 0.7, 0.6, 0.5, 0.1, 0.2, 0.3, 0.4],
        }
    )
    out = headroom.built_in_coupling(trios).set_index("dataset")
    assert out.loc["a", "rho"] == pytest.approx(-1.0)
    assert np.isnan(out.loc["b", "rho"]) and out.loc["b", "n"] == 4
