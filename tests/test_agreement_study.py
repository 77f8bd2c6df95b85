"""The agreement study's tables against the statistics they are made of, on small synthetic
data: every number is the stats module's, laid out per judge; the alt-test's ledger claim
passes exactly when the test does (before the correction over judges)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgepanel.claims.rows import DOES_NOT_PASS, PASSES, Family
from judgepanel.datasets import Dataset
from judgepanel.stats import alpha_interval, alt_test, icc_table, judge_agreement
from judgepanel.stats.panel_size import panel_size
from judgepanel.stats.scale_map import LinearMap
from judgepanel.studies import agreement
from judgepanel.studies.agreement.data import MEAN_RATER
from judgepanel.studies.agreement.measures import alt_table, complete_block

FAMILIES = ("aurora", "basalt", "cobalt")
N_IMAGES, N_RATERS, K = 40, 6, 4
B = 200


def _world(seed: int = 0, judge_noise: float = 0.6) -> tuple[pd.DataFrame, pd.DataFrame]:
    """People on 1-5 (every rater every image, one rating missing) and judges on 1-10."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1.5, 4.5, N_IMAGES)
    images = [f"img{i:02d}" for i in range(N_IMAGES)]
    rows = [
        (img, f"r{j}", float(np.clip(np.round(t + rng.normal(0, 0.6)), 1, 5)))
        for j in range(N_RATERS)
        for img, t in zip(images, truth, strict=True)
    ]
    humans = pd.DataFrame(rows[1:], columns=["image_id", "rater", "score"])
    on_rubric = 1 + (truth - 1) * 9 / 4
    reps = [
        (img, fam, r, float(np.clip(np.round(t + rng.normal(0, judge_noise * 2)), 1, 10)))
        for fam in FAMILIES
        for r in range(K)
        for img, t in zip(images, on_rubric, strict=True)
    ]
    judges = pd.DataFrame(reps, columns=["image_id", "family", "repetition", "score"])
    return humans, judges


def _data(
    humans: pd.DataFrame | None, judges: pd.DataFrame, reason: str = ""
) -> agreement.AgreementData:
    source = humans if humans is not None else _world()[0]
    means = source.groupby("image_id", as_index=False)["score"].mean().assign(rater=MEAN_RATER)
    cost = pd.DataFrame({"usd": [0.2, 0.1, 0.05], "n_images": [N_IMAGES] * 3}, index=list(FAMILIES))
    return agreement.AgreementData(
        dataset="synthetic",
        humans=humans,
        means=means[["image_id", "rater", "score"]],
        repetitions=judges,
        scale=(1, 5),
        mapping=LinearMap((1, 10), (1, 5)),
        cost=cost,
        reason=reason,
    )


@pytest.fixture(scope="module")
def data() -> agreement.AgreementData:
    return _data(*_world())


def test_judges_against_humans_are_judge_agreement_per_family(data):
    table = agreement.judges_vs_humans(data, n_resamples=B, seed=3)
    assert set(table["metric"]) == {"qwk", "alpha_interval", "spearman", "bias"}
    assert list(dict.fromkeys(table["family"])) == list(FAMILIES)
    means = data.judge_means()
    own = means[means["rater"] == "basalt"][["image_id", "score"]]
    direct = judge_agreement(
        own, data.humans, scale=(1, 5), mapping=data.mapping, n_resamples=B, seed=3
    ).set_index("metric")
    got = table[table["family"] == "basalt"].set_index("metric")
    for metric in ("qwk", "alpha_interval", "spearman", "bias"):
        assert got.loc[metric, "estimate"] == direct.loc[metric, "estimate"]
        assert got.loc[metric, "ci_low"] == direct.loc[metric, "ci_low"]
    assert (got.loc[["qwk", "alpha_interval", "bias"], "mapping"] == "linear 1-10 -> 1-5").all()


def test_repeatability_is_alpha_over_the_repetitions(data):
    table = agreement.repeatability(data, n_resamples=B, seed=0).set_index("family")
    reps = data.repetitions[data.repetitions["family"] == "cobalt"]
    tidy = reps.rename(columns={"repetition": "rater"})[["image_id", "rater", "score"]]
    alpha = alpha_interval(tidy, "interval", n_resamples=B, seed=0)
    icc = icc_table(tidy).set_index("type").loc["ICC(1,1)"]
    row = table.loc["cobalt"]
    assert row["k"] == K and row["alpha"] == alpha.estimate
    assert (row["alpha_ci_low"], row["alpha_ci_high"]) == (alpha.ci_low, alpha.ci_high)
    assert row["icc_1_1"] == pytest.approx(icc["estimate"])


def test_human_reliability_alpha_over_raters_and_icc_on_the_complete_block(data):
    table = agreement.human_reliability(data, n_resamples=B, seed=0).set_index("measure")
    alpha = alpha_interval(data.humans, "interval", n_resamples=B, seed=0)
    assert table.loc["alpha_interval", "estimate"] == alpha.estimate
    assert table.loc["alpha_interval", "n_raters"] == N_RATERS
    # the rater missing one image rates another set: the block is the other five
    assert table.loc["ICC(2,1)", "n_raters"] == N_RATERS - 1
    assert table.loc["ICC(2,1)", "n_images"] == N_IMAGES
    block = complete_block(data.humans)
    direct = icc_table(block).set_index("type")
    assert table.loc["ICC(2,k)", "estimate"] == pytest.approx(direct.loc["ICC(2,k)", "estimate"])


def test_complete_block_is_empty_when_no_two_raters_share_images():
    frame = pd.DataFrame(
        {"image_id": ["a", "b", "c"], "rater": ["x", "y", "z"], "score": [1.0, 2, 3]}
    )
    assert complete_block(frame).empty


def test_alt_tests_per_family_and_for_the_panel_mean(data):
    results = agreement.alt_tests(data, epsilon=0.2, metric="neg_rmse", q=0.05, min_items=10)
    assert list(results) == [*FAMILIES, agreement.PANEL]
    means = data.judge_means()
    own = means[means["rater"] == "aurora"].set_index("image_id")["score"]
    direct = alt_test(
        data.humans, own, epsilon=0.2, mapping=data.mapping, min_items_per_annotator=10
    )
    got = results["aurora"]
    assert (got.winning_rate, got.advantage_probability) == (
        direct.winning_rate,
        direct.advantage_probability,
    )
    panel = means.pivot(index="image_id", columns="rater", values="score").mean(axis=1)
    pd.testing.assert_series_equal(data.panel_mean(), panel.rename("score"), check_names=False)
    table = alt_table(results)
    assert {"adv_ci_low", "adv_ci_high", "passed", "epsilon", "metric"} <= set(table.columns)
    assert (table["adv_ci_low"] <= table["advantage_probability"]).all()
    too_many = agreement.alt_tests(data, epsilon=0.2, min_items=N_IMAGES + 1)
    assert all(isinstance(v, str) and "no annotator" in v for v in too_many.values())


@pytest.mark.parametrize(("noise", "epsilon"), [(0.05, 0.3), (0.6, 0.2), (2.5, 0.05)])
def test_a_claim_passes_the_decisive_annotator_exactly_when_the_test_passes(noise, epsilon):
    data = _data(*_world(seed=1, judge_noise=noise))
    results = agreement.alt_tests(data, epsilon=epsilon, min_items=10)
    # a family of one judge: the correction over judges changes nothing
    fam = Family("one", "one judge", method="fdr_by")
    for name, res in results.items():
        (claim,) = agreement.alt_claims({name: res}, dataset="synthetic", family=fam)
        assert claim.alternative == "greater" and claim.extra["passed"] == res.passed
        assert claim.kind == "alt-test"
        assert (claim.p <= res.q) == res.passed
        if res.passed and claim.p < res.q:
            assert claim.verdict == PASSES
        else:
            assert claim.verdict == DOES_NOT_PASS


def test_the_correction_over_judges_is_never_looser_than_the_test(data):
    results = agreement.alt_tests(data, epsilon=0.3, min_items=10)
    claims = agreement.alt_claims(results, dataset="synthetic", family=agreement.alt_family())
    assert len(claims) == len(FAMILIES) + 1
    for c in claims:
        assert c.q >= c.p
        if c.verdict == PASSES:
            assert c.extra["passed"]


def test_tests_equal_by_construction_are_not_made():
    """The panel mean of one family is that family; the pool of one dimension is that
    dimension: neither is tested again."""
    humans, judges = _world(seed=2)
    data = _data(humans, judges[judges["family"] == "aurora"])
    results = agreement.alt_tests(data, epsilon=0.2, min_items=10)
    assert list(results) == ["aurora", "panel mean"]
    assert isinstance(results["panel mean"], str) and "one family" in results["panel mean"]
    assert not isinstance(results["aurora"], str)
    one_dim = dataclasses.replace(data, question="quality")
    assert agreement.pooled_alt_tests([one_dim], epsilon=0.2, min_items=10) == {}
    two = [one_dim, dataclasses.replace(data, question="colour")]
    pooled = agreement.pooled_alt_tests(two, epsilon=0.2, min_items=10)
    assert not isinstance(pooled["aurora"], str) and isinstance(pooled["panel mean"], str)


def test_without_rater_ids_the_rater_statistics_are_skipped():
    _, judges = _world()
    data = _data(None, judges, reason="votes only")
    assert agreement.human_reliability(data).empty
    assert agreement.alt_tests(data, epsilon=0.1) == {}
    table = agreement.judges_vs_humans(data, n_resamples=B)
    assert len(table) == 4 * len(FAMILIES)
    size = agreement.panel_effective_size(data, n_resamples=B)
    direct = panel_size(data.judge_means(), data.means, mapping=data.mapping, n_resamples=B)
    assert size.n_eff == direct.n_eff
    card = agreement.card_rows(data, table, agreement.repeatability(data, n_resamples=B), {})
    assert set(card["alt_test"]) == {"not run: no rater ids"}


def test_the_card_has_one_row_per_family_and_round_trips(data, tmp_path: Path):
    agree = agreement.judges_vs_humans(data, n_resamples=B)
    repeat = agreement.repeatability(data, n_resamples=B)
    results = agreement.alt_tests(data, epsilon=0.3, min_items=10)
    claims = agreement.alt_claims(results, dataset="synthetic", family=agreement.alt_family())
    verdicts = {c.a: (c, f"run.10.{c.id}") for c in claims}
    card = agreement.card_rows(data, agree, repeat, verdicts)
    assert list(card["judge"]) == list(FAMILIES)
    assert card.loc[0, "usd_per_1000"] == pytest.approx(0.2 / N_IMAGES * 1000)
    assert set(card["alt_test"]) <= {PASSES, DOES_NOT_PASS}
    # each verdict is its ledger row's, and the row's id goes with it for the index's link
    by_judge = {c.a: c for c in claims}
    for row in card.itertuples():
        assert row.alt_test == by_judge[row.judge].verdict
        assert row.claim == f"run.10.{by_judge[row.judge].id}"
    (tmp_path / "tables").mkdir()
    card.to_csv(tmp_path / "tables" / agreement.CARD_FILE, index=False)
    rows = agreement.read_card(tmp_path)
    assert [r["judge"] for r in rows] == list(FAMILIES)
    assert agreement.read_card(tmp_path / "nothing") == []


def test_agreement_data_from_a_dataset_and_calls():
    humans, judges = _world()
    images = pd.DataFrame({"image_id": sorted(humans["image_id"].unique())})
    images["mean_score"] = humans.groupby("image_id")["score"].mean().to_numpy()
    ratings = humans.rename(columns={"rater": "rater_id"})
    ds = Dataset("synth", Path("."), images, ratings, (1.0, 5.0))
    calls = judges.rename(columns={"image_id": "item", "score": "value"}).assign(
        dataset="synth",
        kind="holistic",
        dimension="",
        status="ok",
        temperature=0.3,
        rubric_sha=agreement.data.load_rubric().sha256,
        cost=0.001,
    )
    data = agreement.agreement_data(ds, calls, "synth")
    assert data.scale == (1, 5) and data.mapping.name == "linear 1-10 -> 1-5"
    assert data.families == list(FAMILIES) and not data.reason
    assert data.cost.loc["aurora", "usd"] == pytest.approx(0.001 * K * N_IMAGES)
    empty = Dataset("votes", Path("."), images, ratings.iloc[:0], (1.0, 5.0))
    assert (
        "without rater ids"
        in agreement.agreement_data(empty, calls.assign(dataset="votes"), "votes").reason
    )
    assert math.isclose(data.means["score"].mean(), images["mean_score"].mean())
