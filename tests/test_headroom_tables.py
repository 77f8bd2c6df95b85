"""The library functions behind notebook 04's tables and sentences, on small synthetic input."""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from test_headroom import retest_frame, world
from test_trios import FAMILIES, synthetic_scores

from judgepanel.claims.rows import claims_frame, count_claim, family_problems
from judgepanel.claims.wording import prose_problems
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.report.glossary import unbracketed_jargon
from judgepanel.report.verdict_check import VERDICT_WORDS
from judgepanel.studies.fusion import ablation, deploy, headroom, recipe, retest, robustness, trios
from judgepanel.studies.fusion.blocks import build_blocks
from judgepanel.studies.fusion.compare import plain_arm, stack_datasets


def reads_well(text: str) -> bool:
    """The report's checks of a computed sentence: wording conventions and bracketed jargon."""
    return prose_problems(text) == [] and unbracketed_jargon(text) == []


# ------------------------------------------------------------------- the panel-pays rule


def test_panel_pays_at_its_edges() -> None:
    gain = np.array([0.0, 0.1, 0.1, 0.1, -0.1, 0.1])
    q = np.array([0.01, 0.05, np.nan, 0.049, 0.01, 0.0])
    assert retest.panel_pays(gain, q, 0.05).tolist() == [False, False, False, True, False, True]


def test_panel_pays_keeps_a_series_and_refuses_a_meaningless_alpha() -> None:
    pays = retest.panel_pays(pd.Series([0.2, 0.2]), pd.Series([0.03, 0.07]), alpha=0.1)
    assert isinstance(pays, pd.Series) and pays.tolist() == [True, True]
    for alpha in (0.0, 1.0, -0.1):
        with pytest.raises(ValueError, match="alpha"):
            retest.panel_pays(np.array([1.0]), np.array([0.0]), alpha)


# The module's fixtures are built once, by the one worker that runs every test here
# (spread over two workers, each built them).
pytestmark = pytest.mark.xdist_group("headroom-tables")


@pytest.fixture(scope="module")
def trio_world():
    scores, y = synthetic_scores(n=120)
    blocks = build_blocks(scores, y, FAMILIES)
    probe_H = headroom.probe_means(scores, FAMILIES, 5).reindex(y.index)
    fused = trios.fit_trios(blocks, trios.trios_of(FAMILIES))
    return blocks, probe_H, fused


@pytest.mark.slow
def test_retest_table_rows_and_a_stricter_alpha(trio_world) -> None:
    blocks, probe_H, fused = trio_world
    kw = {"fused": fused, "n_resamples": 200, "seed": 0, "dataset": "w"}
    table = retest.retest_table(blocks, probe_H, 0.9, FAMILIES, **kw)
    assert len(table) == 10 and (table["dataset"] == "w").all()
    assert list(table.columns[:2]) == ["dataset", "trio"]
    assert table["gain"].to_numpy() == pytest.approx(
        (table["fused_rho"] - table["best_member_rho"]).to_numpy()
    )
    assert (table["pays"] == ((table["gain"] > 0) & (table["q"] < 0.05))).all()
    assert table["pays"].any()  # the star family's dimension scores make fusion pay
    # a bootstrap p never falls below 1/(B+1), so no q can pass an alpha below it
    strict = retest.retest_table(blocks, probe_H, 0.9, FAMILIES, alpha=1e-3, **kw)
    assert not strict["pays"].any()
    pd.testing.assert_frame_equal(strict.drop(columns="pays"), table.drop(columns="pays"))
    # each trio is a ledger row of the dataset's family, whose q is its rows' own BH
    claims = retest.retest_claims(table)
    assert [c.family for c in claims] == [retest.family_name("w")] * 10
    assert len({c.id for c in claims}) == 10 and all(c.scope.startswith("retest") for c in claims)
    frame = claims_frame(claims)
    assert not family_problems(frame, [asdict(f) for f in retest.correction_families(["w"])])
    # the count row says how many trios paid, as the pays column does
    paid = count_claim("paid", claims, retest.family_name("w"), what="w", over="10 trios")
    assert int(paid.estimate) == int(table["pays"].sum()) and paid.extra["n"] == 10


def test_retest_sentences_read_well() -> None:
    frame = retest_frame()
    by_gain = headroom.retest_predictors(frame, n_permutations=199)
    text = retest.describe_retest(by_gain, ["A", "B"])
    assert text.startswith("Descriptive correlations (the trios share families")
    assert "Headroom against gain — A: ρ = " in text
    assert "pooled, within dataset: ρ = " in text and reads_well(text)
    between = retest.describe_between(frame, by_gain, headroom.correlate_predictors(frame))
    share = headroom.between_dataset_share(frame, "headroom")
    assert f"{share:.0%} of the variance of headroom" in between
    assert "mostly compare the datasets" in between and reads_well(between)
    assert "10 distinct values among the 10 trios of A" in between


def test_coupling_sentence_says_undefined_for_a_constant_headroom() -> None:
    frame = retest_frame().assign(fused_rho=lambda d: d["gain"] + 0.5)
    frame["best_member_rho"] = 1 - frame["headroom"]
    frame.loc[frame["dataset"] == "B", "headroom"] = 0.2
    coupling = headroom.built_in_coupling(frame)
    fused = headroom.retest_predictors(frame, outcome="fused_rho", n_permutations=99)
    text = retest.describe_coupling(coupling, fused)
    assert "−1.00 on A, undefined on B" in text and "B: undefined" in text
    assert reads_well(text)


# --------------------------------------------------------------------------- the probe


@pytest.fixture(scope="module")
def probed():
    scores, y, ratings = world(n=80, raters=8)
    fams = ["good", "fair", "poor"]
    out = {}
    for name in ("a", "b"):
        out[name] = headroom.probe_dataset(
            scores, y, ratings, fams, fams, k=5, n_splits=20, n_resamples=200, dataset=name
        )
    return out


def test_probe_dataset_and_its_tables(probed) -> None:
    H, probe, interval = probed["a"]
    assert list(H.columns) == ["good", "fair", "poor"] and probe.best == "good"
    assert interval.family == "good"
    assert interval.headroom_low <= probe.headroom <= interval.headroom_high
    probes = {n: p[1] for n, p in probed.items()}
    intervals = {n: p[2] for n, p in probed.items()}
    head = headroom.probe_table(probes, intervals)
    assert list(head["dataset"]) == ["a", "b"]
    assert head.loc[0, "headroom_high"] == interval.headroom_high
    fam = headroom.family_table(probes)
    assert list(fam.columns) == ["dataset", "family", "rho", "tau_b", "fraction", "headroom"]
    assert len(fam) == 6


def test_probe_sentences_read_well(probed) -> None:
    probes = {n: p[1] for n, p in probed.items()}
    intervals = {n: p[2] for n, p in probed.items()}
    text = headroom.describe_probes(probes, intervals)
    assert text.count("On ") == 2 and reads_well(text)
    line = headroom.headroom_headline(probes["a"], intervals["a"])
    assert line.startswith("a: in a cheap first pass (5 holistic runs per family")
    assert f"a headroom of {probes['a'].headroom:.1%}" in line and reads_well(line)


# ---------------------------------------------------------------- robustness sections


@pytest.fixture(scope="module")
def two_blocks(trio_world):
    scores, y = synthetic_scores(n=120, seed=1)
    return {"a": trio_world[0], "b": build_blocks(scores, y, FAMILIES)}


def test_stack_datasets_puts_the_key_first_or_last() -> None:
    frames = {"a": pd.DataFrame({"x": [1]}), "b": pd.DataFrame({"x": [2, 3]})}
    first = stack_datasets(frames)
    assert list(first.columns) == ["dataset", "x"] and list(first["dataset"]) == ["a", "b", "b"]
    assert list(stack_datasets(frames, first=False).columns) == ["x", "dataset"]


def test_plain_arm_brackets_the_fused_arm() -> None:
    assert plain_arm("H+P_gb") == "the fused score (H+P_gb)"
    assert plain_arm("H+P_gb (all 5)") == "the fused score of the all 5 block (H+P_gb)"
    assert plain_arm("panel mean") == "panel mean"
    assert unbracketed_jargon(plain_arm("H+P_gb (strong trio)")) == []


@pytest.mark.slow
def test_partition_sweep_of_named_blocks(two_blocks) -> None:
    sets = {n: {"pre-declared": FAMILIES[:3], "all 5": FAMILIES} for n in two_blocks}
    assert robustness.blocks_named(sets["a"], ["pre"]) == {"pre-declared": FAMILIES[:3]}
    parts, robust = robustness.sweep_datasets(two_blocks, sets, ["pre"], seeds=(0, 1))
    assert parts.groupby(["dataset", "block"]).size().to_dict() == {
        ("a", "pre-declared"): 3,
        ("b", "pre-declared"): 3,
    }
    assert list(robust.columns[:2]) == ["dataset", "block"]
    text = robustness.describe_partitions(robust, reference_seed=42)
    assert text.count("seed 42 gives") == 2 and "rank" in text and reads_well(text)


def test_decile_arms_take_a_fitted_trio_in_any_order(trio_world) -> None:
    blocks, _, fused = trio_world
    trio = next(iter(fused))
    sets = {"reversed trio": list(reversed(trio)), "all 5": FAMILIES}
    best, arms = robustness.decile_arms(blocks, FAMILIES[:3], sets, fused)
    assert best in FAMILIES
    assert arms["H+P_gb (reversed trio)"] is fused[trio]
    assert list(arms) == [
        "best single",
        "panel mean (pre-declared)",
        "H+P_gb (reversed trio)",
        "H+P_gb (all 5)",
    ]


def test_top_decile_table_caps_resamples_and_names_the_leaders(two_blocks) -> None:
    sets = {n: {"all 5": FAMILIES} for n in two_blocks}
    fused: dict[str, dict] = {n: {} for n in two_blocks}
    top = robustness.top_decile_table(two_blocks, FAMILIES[:3], sets, fused, n_resamples=10**6)
    capped = robustness.top_decile_table(
        two_blocks, FAMILIES[:3], sets, fused, n_resamples=robustness.top_decile.MAX_RESAMPLES
    )
    pd.testing.assert_frame_equal(top, capped)
    assert list(top.columns[:2]) == ["dataset", "arm"] and top.columns[-1] == "best_family"
    text = robustness.shortlist_sentence(top, "a")
    assert text.startswith("On a, precision@10% is ") and reads_well(text)
    tied = top.assign(precision=0.5)
    assert "every arm has the same precision@10%" in robustness.shortlist_sentence(tied, "b")
    # one arm ahead by point estimate is described as such, never named "the best"
    ahead = top.assign(precision=[0.9] + [0.5] * (len(top) - 1))
    said = robustness.shortlist_sentence(ahead, str(ahead["dataset"].iloc[0]))
    assert "the highest precision@10% by point estimate is that of" in said
    assert not VERDICT_WORDS.search(said)


def test_detying_is_the_median_share_where_averaging_gained() -> None:
    summary = pd.DataFrame(
        {
            "metric": ["spearman"] * 3 + ["kendall_b"],
            "share_detying": [0.2, 0.6, np.nan, np.nan],
        }
    )
    assert robustness.detying(summary, "spearman") == (
        f"a median of {np.median([0.2, 0.6]):.0%} under ρ (2 cells)"
    )
    assert robustness.detying(summary, "kendall_b") == (
        "under τ_b averaging raised the metric in no cell"
    )


def test_granularity_sentence(trio_world) -> None:
    scores, y = synthetic_scores(n=80, k=5)
    gran = robustness.compare_granularity(scores, y, FAMILIES[:2], n_resamples=100)
    gran = stack_datasets({"a": gran})
    summary = robustness.summarize_granularity(gran)
    text = robustness.describe_granularity(gran, summary)
    at_max = gran[gran["ci_low"].notna()]
    piv = at_max.pivot_table(index=["dataset", "family"], columns="metric", values="relative_delta")
    larger = int((piv["spearman"] > piv["kendall_b"]).sum())
    assert f"in {larger} of 2 family × dataset cells" in text and reads_well(text)


def test_selection_tables_rows_and_sentences(two_blocks) -> None:
    comparisons, choices = robustness.selection_tables(two_blocks, FAMILIES[:3], n_resamples=100)
    assert comparisons.columns[0] == "dataset" and choices.columns[-1] == "dataset"
    row = robustness.selection_row(comparisons, "b", "oracle selection", "honest selection")
    assert row["dataset"] == "b" and row["metric"] == "spearman"
    with pytest.raises(KeyError):
        robustness.selection_row(comparisons, "c", "oracle selection", "honest selection")
    assert "3^5 = 243 configurations" in robustness.describe_configurations(
        two_blocks["a"], FAMILIES[:3]
    )
    text = robustness.describe_selection(comparisons)
    assert text.count("(its optimism)") == 2 and reads_well(text)


def test_transfer_table_both_directions(two_blocks) -> None:
    table = robustness.transfer_table(two_blocks, FAMILIES[:3], n_resamples=100)
    assert list(table[["source", "target"]].drop_duplicates().itertuples(index=False)) == [
        ("a", "b"),
        ("b", "a"),
    ]
    text = robustness.describe_transfer(table)
    assert text.count("the fused score (H+P_gb) reaches") == 2 and reads_well(text)


ROW = {"metric": "spearman", "value": 0.4, "delta": -0.1, "ci_low": -0.2, "ci_high": 0.05}
ROW |= {"p": 0.9, "q": 0.9}


def _baselines() -> pd.DataFrame:
    rows = []
    for d in ("a", "b"):
        for comp in ("best single", "H+P_gb"):
            for arm in ("F11_gb", "H+P_gb", "panel mean"):
                if arm != comp:
                    rows.append(
                        {
                            "dataset": d,
                            "arm": arm,
                            "comparator": comp,
                            "metric": "spearman",
                            "value": 0.4,
                            "delta": -0.1,
                            "ci_low": -0.2,
                            "ci_high": 0.05,
                            "p": 0.9,
                            "q": 0.9,
                            "best_family": "f1",
                        }
                    )
    table = pd.DataFrame(rows)
    # as compare_label_matched marks them: the comparisons Table 2 owns are 02's
    owned = [
        ablation.owned_claim_id("pre-declared", a, c, m)
        for a, c, m in zip(table["arm"], table["comparator"], table["metric"], strict=True)
    ]
    return table.assign(
        owner=[ablation.OWNER if o else "" for o in owned], owner_claim=[o or "" for o in owned]
    )


def test_label_matched_sentences_name_the_stand_in_files() -> None:
    table = _baselines()
    fused = robustness.describe_against_fused(table)
    assert fused.count("on a,") == 2 and reads_well(fused)
    # the panel mean against H+P_gb is 02's: named, not worded again
    assert "panel mean against the fused score (H+P_gb) is tested once, in 02's Table 2" in fused
    plain = robustness.describe_label_matched(table, {})
    assert "panel mean" not in plain  # an arm the sentence does not show
    assert "the fused score (H+P_gb) ρ = 0.400 (the fused score (H+P_gb) against the best" in plain
    assert reads_well(plain)
    # every test the sentence states is its ledger row's (state quotes it), no q by hand
    quoted = robustness.describe_label_matched(table, {}, state=lambda c: f"<{c.id}>")
    own = [c for c in robustness.baseline_claims(table)
           if c.b == "best single" and c.metric == "spearman"]  # fmt: skip
    assert own and all(f"<{c.id}>" in quoted for c in own) and "q = " not in quoted
    stand_in = robustness.describe_label_matched(table, {"a": ["imagestat-exposure"]})
    assert "stand-in script, not aesthetics models" in stand_in
    real = robustness.describe_label_matched(table, {"a": ["imagestat-x", "nima"]})
    assert "(a: imagestat-x, nima)." in real and "stand-in" not in real


# -------------------------------------------------------------------------- the recipe


def _rule_and_decisions() -> tuple[recipe.ThresholdRule, dict[str, recipe.Decision]]:
    rule = recipe.derive_threshold([0.1, 0.2, 0.5, 0.6], [False, False, True, True])
    decided = {
        "a": recipe.decide(0.55, rule, (0.52, 0.7), dataset="a"),
        "b": recipe.decide(0.3, rule, (0.2, 0.4), dataset="b"),
    }
    return rule, decided


def _costs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "option": ["probe", "best single", "pre-declared panel", "all 5 families"],
            "calls_per_image": [25, 5, 45, 75],
            "calls_vs_single": [5.0, 1.0, 9.0, 15.0],
            "usd_per_1000": [0.4, 0.1, 2.0, 3.0],
        }
    )


def test_recipe_table_and_sentences() -> None:
    rule, decided = _rule_and_decisions()
    costs = {"a": _costs(), "b": _costs()}
    table = recipe.recipe_table(decided, costs)
    assert list(table["action"]) == [recipe.PANEL, recipe.SINGLE]
    assert table.loc[0, "calls pre-declared panel"] == 45
    assert table.loc[1, "USD/1000 probe"] == 0.4
    text = recipe.describe_rule(rule, list(decided.values()), simulated=True)
    assert text.startswith("Rule: a panel if headroom >= 0.350") and "simulated" in text
    assert "what the retest learnt" not in text and reads_well(text)
    # the tally of paying trios names the count rows it sums
    linked = recipe.describe_rule(rule, list(decided.values()), simulated=True,
                                  counted=["<a's count>", "<b's count>"])  # fmt: skip
    assert f"of {rule.n} trios paid (<a's count>; <b's count>);" in linked
    costs_text = recipe.describe_costs(costs)
    assert costs_text.endswith(f"Dollars at the {recipe.PRICE_BASIS}.")
    assert "the pre-declared panel 45 calls ($2.00, 9.0× the calls)" in costs_text
    assert reads_well(costs_text)


def test_decision_headline_says_uncertain_when_the_interval_reaches_the_band() -> None:
    rule, decided = _rule_and_decisions()
    value, text = recipe.decision_headline(decided["a"], rule)
    assert (value, decided["a"].uncertain) == (recipe.PANEL, False)
    assert "score a panel of families" in text and reads_well(text)
    wide = recipe.decide(0.3, rule, (0.1, 0.45), dataset="c")
    value, text = recipe.decision_headline(wide, rule)
    assert value == "uncertain" and "the decision is uncertain" in text


def test_costs_of_reads_k_and_r_from_the_design() -> None:
    calls = pd.DataFrame(
        {
            "model": "m",
            "kind": ["holistic", "dimension"],
            "status": "ok",
            "prompt_tokens": [100, 200],
            "completion_tokens": [10, 20],
        }
    )
    design = ScoringDesign(holistic_k=4, dimension_r=2, temperature=1.0)
    price = Price(input=1.0, output=2.0)
    costs = recipe.costs_of(
        calls, {"f": "m"}, design, best_family="f", predeclared=["f"], price=lambda m: price
    )
    calls_of = costs.set_index("option")["calls_per_image"]
    assert calls_of["best single"] == 4 and calls_of["pre-declared panel"] == 4 + 5 * 2


# ------------------------------------------------------------------------- the rehearsal


def test_rehearsal_dataset_is_the_runs_first_whatever_its_kind() -> None:
    assert deploy.rehearsal_dataset(["ava", "eva"]) == "ava"
    with pytest.raises(ValueError, match="no dataset"):
        deploy.rehearsal_dataset([])
    text = deploy.describe_rehearsal_choice("ava")
    assert "ava, the run's first dataset" in text and reads_well(text)


def test_spearman_of_the_retest_agrees_with_scipy() -> None:
    frame = retest_frame()
    row = headroom.retest_predictors(frame, n_permutations=99).iloc[0]
    sub = frame[frame["dataset"] == "A"]
    ref = spearmanr(sub["headroom"], sub["gain"]).statistic
    assert math.isclose(row["rho"], ref, rel_tol=1e-9)
