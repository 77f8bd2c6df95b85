"""The fused arm on expected scores (09 and 04's recipe): its features, its costs, the
closest sampled design and the cheaper design the recipe offers by a stated margin."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from judgepanel.core.config import Price, load_config
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.report.steps import data_keys, read_keys
from judgepanel.studies.fusion import logprob_designs as lpd
from judgepanel.studies.fusion import logprob_fused as lpf
from judgepanel.studies.fusion import recipe

FAMS = ["aurora", "basalt"]
COST = {"holistic": 1e-4, "dimension": 2e-4, "holistic_logprob": 3e-4, "dimension_logprob": 5e-4}
TOKENS = {"holistic": 900, "dimension": 1000, "holistic_logprob": 1100, "dimension_logprob": 1200}


def _calls(
    n_images: int = 40, k: int = 5, r: int = 2, seed: int = 0
) -> tuple[pd.DataFrame, pd.Series]:
    """Sampled and logprob calls of two families whose scores follow a latent quality."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n_images)
    items = [f"img{i:03d}" for i in range(n_images)]
    rows = []

    def add(kind, family, item, q, rep, dimension=None, expected=False):
        value = 5.5 + 1.5 * q + (0.3 if expected else 1.2) * rng.normal()
        value = value if expected else float(np.clip(np.round(value), 1, 10))
        rows.append(
            {
                "dataset": "d",
                "item": item,
                "family": family,
                "kind": kind,
                "dimension": dimension,
                "repetition": rep,
                "temperature": 0.3,
                "value": value,
                "status": "ok",
                "cost": COST[kind],
                "prompt_tokens": TOKENS[kind] - 10,
                "completion_tokens": 10,
            }
        )

    for family in FAMS:
        for item, q in zip(items, quality, strict=True):
            for rep in range(k):
                add("holistic", family, item, q, rep)
            add("holistic_logprob", family, item, q, 0, expected=True)
            for dim in DIMENSIONS:
                for rep in range(r):
                    add("dimension", family, item, q, rep, dim)
                add("dimension_logprob", family, item, q, 0, dim, expected=True)
    human = pd.Series(5 + quality + 0.3 * rng.normal(size=n_images), index=items)
    return pd.DataFrame(rows), human


def test_sampled_features_average_the_first_k_answers_capped_at_r_per_dimension() -> None:
    calls, _ = _calls(n_images=12, k=5, r=2)
    x = lpf.fused_features(calls, FAMS, k=5, dimension_r=2, temperature=0.3)
    assert list(x.columns[:2]) == FAMS and x.shape == (12, 2 + 2 * len(DIMENSIONS))
    sub = calls[(calls["family"] == "basalt") & (calls["item"] == "img003")]
    hol = sub[sub["kind"] == "holistic"]["value"].mean()
    dim = sub[(sub["kind"] == "dimension") & (sub["dimension"] == DIMENSIONS[1])]["value"].mean()
    assert x.loc["img003", "basalt"] == pytest.approx(hol)
    assert x.loc["img003", f"basalt:{DIMENSIONS[1]}"] == pytest.approx(dim)
    one = lpf.fused_features(calls, FAMS, k=1, dimension_r=2, temperature=0.3)
    first = sub[(sub["kind"] == "holistic") & (sub["repetition"] == 0)]["value"].iloc[0]
    assert one.loc["img003", "basalt"] == first


def test_a_failed_sample_leaves_its_image_without_that_design() -> None:
    calls, _ = _calls(n_images=12)
    hit = (calls["item"] == "img002") & (calls["kind"] == "holistic") & (calls["repetition"] == 3)
    calls.loc[hit & (calls["family"] == "aurora"), "status"] = "failed"
    x = lpf.fused_features(calls, FAMS, k=5, dimension_r=2, temperature=0.3)
    assert math.isnan(x.loc["img002", "aurora"])
    x2 = lpf.fused_features(calls, FAMS, k=2, dimension_r=2, temperature=0.3)
    assert not math.isnan(x2.loc["img002", "aurora"])  # only the first two are read


def test_expected_features_are_the_logprob_values_and_a_missing_family_is_named() -> None:
    calls, _ = _calls(n_images=12)
    x = lpf.fused_features(calls, FAMS, k=None, dimension_r=2, temperature=0.3)
    row = calls[
        (calls["kind"] == "dimension_logprob")
        & (calls["family"] == "aurora")
        & (calls["item"] == "img005")
        & (calls["dimension"] == DIMENSIONS[0])
    ]
    assert x.loc["img005", f"aurora:{DIMENSIONS[0]}"] == row["value"].iloc[0]
    with pytest.raises(ValueError, match="cobalt"):
        lpf.fused_features(calls, [*FAMS, "cobalt"], k=None, dimension_r=2, temperature=0.3)


def test_fused_accuracy_pairs_every_design_and_costs_the_whole_panel() -> None:
    calls, human = _calls(n_images=60)
    fused = lpf.fused_designs(calls, human, FAMS, k_max=5, dimension_r=2, temperature=0.3)
    acc = lpf.fused_accuracy(fused, calls, FAMS, dimension_r=2, n_resamples=300, seed=1)
    rho = acc[acc["metric"] == "spearman"].set_index("design")
    assert list(rho.index) == [
        "1 holistic, 1 per dimension",
        "2 holistic, 2 per dimension",
        "5 holistic, 2 per dimension",
        lpd.EXPECTED,
    ]
    # calls per image: families x (k + 5 min(k, R)); the expected design one call per prompt
    assert rho["calls_per_image"].tolist() == [2 * 6, 2 * 12, 2 * 15, 2 * 6]
    usd = 1000 * 2 * (5 * COST["holistic"] + 10 * COST["dimension"])
    assert rho.loc["5 holistic, 2 per dimension", "usd_per_1000_images"] == pytest.approx(usd)
    tokens = 1000 * 2 * (5 * TOKENS["holistic"] + 10 * TOKENS["dimension"])
    assert rho.loc["5 holistic, 2 per dimension", "tokens_per_1000_images"] == pytest.approx(tokens)
    costs = lpd.design_costs(calls, lpd.design_scores(calls, 5, 0.3)).set_index(
        ["family", "design"]
    )
    assert costs.loc[("aurora", "mean of 5"), "tokens_per_1000_images"] == 5000 * TOKENS["holistic"]
    assert costs.loc[("aurora", lpd.EXPECTED), "usd_per_1000_images"] == pytest.approx(
        1000 * COST["holistic_logprob"]
    )
    assert rho.loc[lpd.EXPECTED, "usd_per_1000_images"] == pytest.approx(
        1000 * 2 * (COST["holistic_logprob"] + 5 * COST["dimension_logprob"])
    )
    expected = fused.arms[lpd.EXPECTED]
    assert rho.loc[lpd.EXPECTED, "estimate"] == pytest.approx(
        spearmanr(fused.y, expected).statistic
    )
    one = rho.loc["1 holistic, 1 per dimension"]
    assert one["delta"] == pytest.approx(rho.loc[lpd.EXPECTED, "estimate"] - one["estimate"])
    assert one["delta_low"] <= one["delta"] <= one["delta_high"]
    assert math.isnan(rho.loc[lpd.EXPECTED, "delta"])


def test_the_recipe_s_one_metric_gives_the_rows_of_every_metric_bit_for_bit() -> None:
    """The recipe reads Spearman alone, so it asks for it alone; its rows are the rows the
    two-metric tables give (Kendall's bootstrap changes nothing else)."""
    calls, human = _calls(n_images=50, seed=3)
    fused = lpf.fused_designs(calls, human, FAMS, k_max=5, dimension_r=2, temperature=0.3)
    args = {"dimension_r": 2, "n_resamples": 150, "seed": 2, "margin": 0.05}
    both = lpf.fused_accuracy(fused, calls, FAMS, **args)
    assert set(both["metric"]) == {"spearman", "kendall_b"}
    one = lpf.fused_accuracy(fused, calls, FAMS, metrics=(lpf.CHEAPER_METRIC,), **args)
    want = both[both["metric"] == lpf.CHEAPER_METRIC].reset_index(drop=True)
    pd.testing.assert_frame_equal(one, want, check_exact=True)
    scores = lpd.design_scores(calls, 5, 0.3)
    both = lpd.design_accuracy(scores, human, n_resamples=150, seed=2, margin=0.05)
    one = lpd.design_accuracy(scores, human, n_resamples=150, seed=2, margin=0.05,
                              metrics=("spearman",))  # fmt: skip
    want = both[both["metric"] == "spearman"].reset_index(drop=True)
    pd.testing.assert_frame_equal(one, want, check_exact=True)
    with pytest.raises(ValueError, match=r"metrics must be among .*\['pearson'\]"):
        lpd.design_accuracy(scores, human, n_resamples=10, seed=0, metrics=("pearson",))


def test_too_few_common_images_is_a_clear_error() -> None:
    calls, human = _calls(n_images=12)
    logprob = calls["kind"].str.endswith("logprob")
    with pytest.raises(ValueError, match="the expected score design has no scores of"):
        lpf.fused_designs(calls[~logprob], human, FAMS, k_max=5, dimension_r=2, temperature=0.3)
    with pytest.raises(ValueError, match="only 8 images have every design"):
        lpf.fused_designs(calls, human.iloc[:8], FAMS, k_max=5, dimension_r=2, temperature=0.3)


def _table(
    deltas: dict[str, float], calls: dict[str, int], p_noninferior: float = 0.01
) -> pd.DataFrame:
    rows = [
        {
            "design": d,
            "metric": "spearman",
            "delta": x,
            "delta_low": x - 0.05,
            "delta_high": x + 0.05,
            "p": 0.5,
            "p_noninferior": p_noninferior,
            "calls_per_image": calls[d],
            "usd_per_1000_images": float(calls[d]),
        }
        for d, x in deltas.items()
    ]
    rows.append(
        {
            "design": lpd.EXPECTED,
            "metric": "spearman",
            "delta": math.nan,
            "delta_low": math.nan,
            "delta_high": math.nan,
            "p": math.nan,
            "p_noninferior": math.nan,
            "calls_per_image": 1,
            "usd_per_1000_images": 1.0,
        }
    )
    return pd.DataFrame(rows)


def test_every_design_is_tested_and_the_study_design_leads() -> None:
    """No search for the nearest design: each one is a claim with its q over the designs."""
    from statsmodels.stats.multitest import multipletests

    table = _table(
        {"one sample": 0.08, "mean of 2": -0.02, "mean of 5": 0.02},
        {"one sample": 1, "mean of 2": 2, "mean of 5": 5},
    )
    table["k"] = table["design"].map({"one sample": 1, "mean of 2": 2, "mean of 5": 5})
    table["p"] = table["design"].map({"one sample": 0.01, "mean of 2": 0.04, "mean of 5": 0.3})
    study = lpf.study_design_name(table)
    assert study == "mean of 5"
    claims = lpf.design_claims(table, dataset="d", scope="fused", a="H+P_gb", study_design=study)
    assert [c.b for c in claims] == ["H+P_gb on one sample", "H+P_gb on mean of 2",
                                     "H+P_gb on mean of 5"]  # fmt: skip
    ps = [c.p for c in claims]
    assert [c.q for c in claims] == pytest.approx(list(multipletests(ps, method="fdr_bh")[1]))
    assert [c.role for c in claims] == ["", "", "headline"]
    assert all(c.family == "expected-vs-sampled:fused:spearman" for c in claims)


@pytest.mark.parametrize(("delta", "offered"), [(0.0, False), (0.04, True), (0.031, True)])
def test_the_cheaper_design_is_offered_only_inside_the_stated_margin(delta, offered) -> None:
    # the interval is delta ± 0.05, so its lower end clears −0.02 only when delta > 0.03
    table = _table({"mean of 5": delta}, {"mean of 5": 5})
    choice = lpf.cheaper_design(table, option="best single", sampled="mean of 5", margin=0.02)
    assert choice.offered is offered
    row = choice.claim("d", "ni")
    # the decision is the non-inferiority row's, with its margin in the row
    assert (row.kind, row.margin, row.alternative) == ("non-inferiority", 0.02, "greater")
    assert row.verdict.startswith("not worse by more than 0.02") is offered
    assert ("recipe offers" in choice.decision) is offered
    assert "1 call per image" in choice.cost and "instead of 5" in choice.cost
    assert choice.as_row()["offered"] is offered and choice.as_row()["p"] == 0.01


def test_the_cheaper_design_needs_its_one_sided_test_not_only_the_interval() -> None:
    table = _table({"mean of 5": 0.04}, {"mean of 5": 5}, p_noninferior=0.2)
    choice = lpf.cheaper_design(table, option="x", sampled="mean of 5", margin=0.02)
    assert not choice.offered
    assert choice.claim("d", "ni").verdict == "a loss of 0.02 not ruled out"


def test_the_noninferiority_p_is_the_share_of_resamples_at_or_below_minus_the_margin() -> None:
    boot = np.array([[0.0, 0.0]] * 4 + [[0.0, 0.03]] * 6)  # expected − sampled: 0 ×4, −0.03 ×6
    arms, y = np.zeros((2, 3)), np.zeros(3)
    out = lpd.versus(boot, arms, y, lambda a, b: 0.0, 0, 1, margin=0.02)
    assert out["p_noninferior"] == pytest.approx((1 + 6) / 11)
    assert "p_noninferior" not in lpd.versus(boot, arms, y, lambda a, b: 0.0, 0, 1)


def test_an_undefined_interval_never_offers_the_cheaper_design() -> None:
    table = _table({"mean of 5": 0.5}, {"mean of 5": 5})
    table.loc[0, "delta_low"] = math.nan
    assert not lpf.cheaper_design(table, option="x", sampled="mean of 5", margin=0.02).offered
    with pytest.raises(ValueError, match="mean of 9"):
        lpf.cheaper_design(table, option="x", sampled="mean of 9", margin=0.02)
    with pytest.raises(ValueError, match="without the margin"):
        lpf.cheaper_design(table.drop(columns="p_noninferior"), option="x", sampled="mean of 5",
                           margin=0.02)  # fmt: skip


def test_granularity_sets_each_design_beside_itself_rounded() -> None:
    calls, human = _calls(n_images=50)
    scores = lpd.design_scores(calls, 5, 0.3)
    gran = lpd.granularity(scores, human, 5, n_resamples=300, seed=0)
    assert set(gran["design"]) == {"mean of 5", lpd.EXPECTED}
    rho = gran[(gran["metric"] == "spearman")].set_index(["family", "design"])
    row = rho.loc[("aurora", lpd.EXPECTED)]
    wide = scores[(scores["family"] == "aurora")].pivot(
        index="item", columns="design", values="score"
    )
    x = wide[lpd.EXPECTED].loc[human.index]
    assert row["as_is"] == pytest.approx(spearmanr(human, x).statistic)
    assert row["rounded"] == pytest.approx(spearmanr(human, np.floor(x + 0.5)).statistic)
    assert row["tied_as_is"] == 0.0 < row["tied_rounded"]  # continuous, then on the grid


def test_a_run_reads_the_datasets_its_parameters_name(tmp_path) -> None:
    config = load_config()
    headroom = config.run("demo-headroom")
    assert ("demo", "eva-logprob") in read_keys(headroom) - data_keys(headroom)
    assert ("demo", "para-logprob") in read_keys(headroom)
    logprob = config.run("demo-logprob")
    assert read_keys(logprob) == {("demo", "eva-logprob"), ("demo", "eva")}
    assert read_keys(config.run("demo-eva")) == data_keys(config.run("demo-eva"))


def test_one_price_basis_for_the_recipe_and_the_logprob_designs() -> None:
    """Priced from the price table, a design costs what the recipe's option of the same
    calls costs, whatever the store recorded as billed (a batch at half price here)."""
    calls, _ = _calls(n_images=20)
    calls = calls.assign(model="m-" + calls["family"], cost=calls["cost"] / 2)
    table = {f"m-{f}": Price(input=2.0 + i, output=8.0) for i, f in enumerate(FAMS)}
    scores = lpd.design_scores(calls, 5, 0.3)
    listed = lpd.design_costs(calls, scores, table.__getitem__).set_index(["family", "design"])
    billed = lpd.design_costs(calls, scores).set_index(["family", "design"])
    tokens = recipe.tokens_per_call(calls)
    options = recipe.option_costs(
        tokens, {f: f"m-{f}" for f in FAMS}, best_family="aurora", predeclared=FAMS, k=5, r=2,
        price=table.__getitem__,
    ).set_index("option")  # fmt: skip
    single = listed.loc[("aurora", "mean of 5"), "usd_per_1000_images"]
    assert single == pytest.approx(options.loc["best single", "usd_per_1000"])
    per_call = table["m-aurora"].cost(TOKENS["holistic"] - 10, 10)
    assert single == pytest.approx(5000 * per_call)
    assert billed.loc[("aurora", "mean of 5"), "usd_per_1000_images"] == pytest.approx(
        5000 * COST["holistic"] / 2
    )


def test_the_recipe_quotes_one_noninferiority_row_per_option() -> None:
    from judgepanel.studies.fusion import recipe_logprob as rlp

    single = lpf.cheaper_design(
        _table({"mean of 5": 0.04}, {"mean of 5": 5}), option="best single (aurora)",
        sampled="mean of 5", margin=0.02,
    )  # fmt: skip
    panel = lpf.cheaper_design(
        _table({"mean of 5": 0.0}, {"mean of 5": 5}), option="pre-declared panel",
        sampled="mean of 5", margin=0.02,
    )  # fmt: skip
    table = pd.DataFrame(
        [{"dataset": "eva", "logprob_dataset": "eva-lp", **o.as_row()} for o in (single, panel)]
    )
    claims = rlp.claims(table)
    assert [c.id for c in claims] == ["logprob-noninferior:eva:single",
                                      "logprob-noninferior:eva:panel"]  # fmt: skip
    assert all(c.kind == "non-inferiority" and c.margin == 0.02 for c in claims)
    assert [c.verdict.startswith("not worse") for c in claims] == list(table["offered"])
    heads = rlp.headlines(table)
    assert [(k, v, cid) for k, v, _, cid in heads] == [
        ("recipe_logprob_eva_single", "offered", claims[0].id),
        ("recipe_logprob_eva_panel", "not offered", claims[1].id),
    ]
    cited = []
    text = rlp.describe_cheaper(
        table, ["ava: none"], quote=lambda cid: f"<{cid}>",
        cite=lambda ds, cid, t: cited.append((ds, cid)) or f"[{t}]",
    )  # fmt: skip
    assert (
        "eva, best single (aurora): <logprob-noninferior:eva:single>; so the recipe offers" in text
    )
    assert "so the recipe keeps the sampled design (mean of 5)" in text
    assert cited == [("eva-lp", lpf.versus_claim_id("mean of 5", "aurora")),
                     ("eva-lp", lpf.versus_claim_id("mean of 5", "fused"))]  # fmt: skip
    assert text.endswith("ava: none.")
