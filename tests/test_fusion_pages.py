"""The page helpers of the fusion notebooks (00-04, 07, 09), on small synthetic input.

Each helper turns a table the page shows into the sentence, count words or figure the page
puts beside it; these tests pin the words and numbers and every branch a page can take.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from test_trios import FAMILIES, synthetic_scores

from judgepanel.claims.rows import Claim, claims_frame
from judgepanel.claims.wording import prose_problems
from judgepanel.core.calls import KEY_FIELDS
from judgepanel.core.config import ScoringDesign
from judgepanel.core.paths import project_root
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.core.rubric import load_rubric
from judgepanel.core.store import CallResult, Store
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel.studies.fusion import (
    ablation,
    ablation_page,
    headroom_page,
    logprob_designs,
    logprob_page,
    mtmm,
    mtmm_page,
    scoring_page,
    temperature,
    temperature_page,
    trios_page,
)
from judgepanel.studies.fusion.blocks import build_blocks
from judgepanel.studies.fusion.temperature import RuleResult
from judgepanel.studies.fusion.trios import TrioSummary

matplotlib.use("Agg")


def quote(claim: Claim | str) -> str:
    """A stand-in for the page's quote: the row's id in brackets."""
    return f"[{claim if isinstance(claim, str) else claim.id}]"


def claim(id: str, **fields: object) -> Claim:
    """A tested row with the fields a helper reads."""
    base = {"id": id, "a": "a", "b": "b", "dataset": "w", "scope": "s", "metric": "spearman",
            "unit": "images", "estimate": 0.1, "ci_low": 0.05, "ci_high": 0.2, "p": 0.01,
            "q": 0.02, "family": "fam", "alternative": "greater"}  # fmt: skip
    return Claim(**{**base, **fields})


# ------------------------------------------------------------------ 00 scoring


def small_plan() -> list:
    images = pd.DataFrame({"image_id": ["a", "b"], "path": ["a.jpg", "b.jpg"]})
    families = {"aurora": "sim-aurora-v1", "basalt": "sim-basalt-v1"}
    design = ScoringDesign(holistic_k=2, dimension_r=1, temperature=0.3)
    return plan_images(images, families, design, dataset="eva")


def calls_of(plan: list, *, extra: int = 0, samples: int = 1) -> pd.DataFrame:
    """Stored rows of every planned key, and ``extra`` rows of another temperature."""
    keys = [s.key for s in plan] + [replace(plan[0].key, temperature=0.7)] * extra
    calls = pd.DataFrame([k.as_tuple() for k in keys], columns=list(KEY_FIELDS))
    calls["samples_per_request"] = samples
    return calls


def test_describe_design_counts_the_calls_per_image() -> None:
    rubric = load_rubric()
    design = ScoringDesign(holistic_k=4, dimension_r=2, temperature=0.3)
    said = scoring_page.describe_design("eva", 60, ["a", "b"], rubric, design, 1)
    per_image = 4 + 2 * len(rubric.dimensions)
    assert said.startswith("eva: 60 images, families a, b; k=4 holistic + R=2 x ")
    assert f"calls = {per_image} per image and family at T=0.3; 1 sample(s)" in said
    no_holistic = scoring_page.describe_design("eva", 60, ["a"], replace(rubric, holistic=None),
                                               design, 1)  # fmt: skip
    assert "k=0 holistic" in no_holistic and f"= {2 * len(rubric.dimensions)} per" in no_holistic


def test_coverage_sentence_and_headline_count_the_plan() -> None:
    cover = pd.DataFrame({"planned": [10, 10], "ok": [9, 8], "failed": [1, 0], "missing": [0, 2]})
    said = scoring_page.coverage_sentence(cover)
    assert said == ("17 of 20 planned calls (85.00%) are answered; 1 are recorded as failures "
                    "and 2 were never sent.")  # fmt: skip
    share, text = scoring_page.coverage_headline(cover, "eva")
    assert share == pytest.approx(0.85)
    assert text == ("eva: 17 of 20 planned calls answered by the judges (85.0%); 1 failed and "
                    "2 were never sent")  # fmt: skip


def costs_table(cost: float, reported: float = float("nan")) -> pd.DataFrame:
    return pd.DataFrame({"family": ["aurora", "basalt", "all"], "cost_usd": [cost / 2] * 2 + [cost],
                         "reported_usd": [np.nan, np.nan, reported]})  # fmt: skip


def test_cost_sentences_name_the_calls_outside_the_plan_and_the_providers_charge() -> None:
    plan = small_plan()
    models = {"sim-aurora-v1", "sim-basalt-v1"}
    kw = {"dataset": "eva", "n_images": 2, "n_families": 2, "models": models}
    (only,) = scoring_page.cost_sentences(costs_table(1.0), calls_of(plan), plan, **kw)
    assert only.startswith("The scoring of eva cost $1.00 in all as billed")
    assert "$0.5000 per image for 2 families. The cost counts the same calls" in only
    said = scoring_page.cost_sentences(costs_table(1.0, 0.9), calls_of(plan, extra=3), plan, **kw)
    assert f"besides the {len(plan)} planned calls" in said[0]
    assert "3 calls of other runs over the same images (3 holistic at temperature 0.7)." in said[0]
    assert said[1] == ("The provider reported $0.90 for the calls that carried its own charge, "
                       "against $1.00 estimated for all of them.")  # fmt: skip
    mixed = calls_of(plan)
    mixed.loc[: len(mixed) // 2, "samples_per_request"] = 2
    said = scoring_page.cost_sentences(costs_table(1.0), mixed, plan, **kw)
    assert len(said) == 2 and "drawn 2 to a request" in said[1]
    unpriced = costs_table(1.0).assign(cost_usd=[np.nan, 0.5, np.nan])
    said = scoring_page.cost_sentences(unpriced, calls_of(plan), plan, **kw)
    assert said[0].startswith("The cost of eva's answers is not known")


def holistic_scores() -> pd.DataFrame:
    return pd.DataFrame({
        "family": ["a"] * 4 + ["b"] * 4,
        "prompt": ["holistic"] * 8,
        "value": [6.0, 6.0, 6.0, 7.0, 3.0, 4.0, 4.0, 5.0],
    })  # fmt: skip


def test_score_distribution_shares_and_the_modal_answer() -> None:
    scores = holistic_scores()
    dist = scoring_page.score_distribution(scores)
    assert dist[["family", "prompt", "n"]].values.tolist() == [["a", "holistic", 4],
                                                                ["b", "holistic", 4]]  # fmt: skip
    assert dist["mean"].tolist() == pytest.approx([6.25, 4.0])
    shares = scoring_page.scale_shares(scores)
    assert shares["value"].dtype.kind == "i"
    assert shares.groupby("family")["share"].sum().tolist() == pytest.approx([1.0, 1.0])
    assert scoring_page.modal_sentence(shares) == (
        "Each family's most frequent holistic answer: a 6 (75%); b 4 (50%)."
    )
    scale = load_rubric().holistic.scale
    fig = scoring_page.scale_use_figure(shares, scale, {"a": "#000000", "b": "#ffffff"})
    (ax,) = fig.axes
    assert ax.get_xlabel() == f"holistic score ({scale.min}-{scale.max})"
    assert ax.get_title() == "How each family uses the holistic scale"


def test_repeatability_sentence_and_figure() -> None:
    agree = pd.DataFrame({"family": ["a", "b", "a"],
                          "prompt": ["holistic", "holistic", "tech"],
                          "reliability_sb": [0.9, 0.7, 0.5],
                          "within_sd": [0.5, 1.0, 0.2]})  # fmt: skip
    said = scoring_page.repeatability_sentence(agree, "r")
    assert said == ("Holistic repetition means are reliable from 0.700 (b) to 0.900 (a); a single "
                    "holistic call differs from the image's other calls by 0.75 scale points on "
                    "average.")  # fmt: skip
    once = agree.assign(reliability_sb=np.nan)
    assert "asks no holistic question (or it was asked once)" in (
        scoring_page.repeatability_sentence(once, "r")
    )
    (ax,) = scoring_page.reliability_figure(agree, {"a": "#000000", "b": "#ffffff"}).axes
    assert ax.get_ylim() == (0, 1) and ax.get_title() == "Repeatability of the repetition mean"


# ------------------------------------------------------------------ 01 MTMM


def test_scope_of_each_case() -> None:
    no_overall = mtmm_page.scope("d", "r", overall=False, attributes=["tech"], validated=["tech"])
    assert no_overall.attributes == no_overall.validated == []
    assert no_overall.sentence == no_overall.not_computed
    assert "has no overall human rating" in no_overall.not_computed
    no_holistic = mtmm_page.scope("d", "r", overall=True, attributes=[], validated=[])
    assert "the rubric of r asks no holistic question" in no_holistic.not_computed
    rated = mtmm_page.scope("d", "r", overall=True, attributes=["tech", "comp"], validated=["tech"])
    assert rated.validated == ["tech"] and rated.sentence.startswith("d has human ratings of tech:")
    assert rated.not_computed.startswith("Not computed: d has no human rating of tech or comp")
    overall_only = mtmm_page.scope("d", "r", overall=True, attributes=["tech"], validated=[])
    assert "rates the overall impression only" in overall_only.sentence


def mtmm_cells() -> pd.DataFrame:
    return pd.DataFrame({
        "family": ["a", "b"], "attribute": ["tech", "tech"],
        "raw_holistic": [0.6, 0.3], "raw_dimension": [0.5, 0.4],
        "partial_holistic": [0.1, 0.2], "partial_dimension": [0.3, 0.1],
        "ci_low": [0.05, -0.2], "ci_high": [0.3, 0.05], "won": [True, False],
    })  # fmt: skip


def test_cells_sentences_count_by_point_estimate_and_list_the_lost() -> None:
    cells = mtmm_cells()
    assert mtmm_page.raw_holistic_wins(cells) == 1
    first, lost = mtmm_page.cells_sentences(cells, "d")
    assert "holistic prompt is above the dimension prompt of the same attribute in 1 of 2" in first
    assert "the larger in 1 of 2 cells by point estimate" in first
    assert lost == ("Cells where the dimension prompt's partial is the smaller by point estimate: "
                    "tech for b (+0.100 against +0.200, CI [−0.200, +0.050]).")  # fmt: skip
    _, every = mtmm_page.cells_sentences(cells.assign(won=True), "d")
    assert every == "The dimension prompt's partial is the larger in every cell by point estimate."


def test_pooled_sentence_lead_and_words() -> None:
    one = mtmm_page.pooled_sentence("d", ["d"], 4, 4, "[pooled]", "[own]", "p")
    assert one.endswith("the 4 cells of d and q_pooled equals q_dataset: [own].")
    two = mtmm_page.pooled_sentence("d", ["d", "e"], 8, 4, "[pooled]", "[own]", "p")
    assert two == ("Corrected as one family over the 8 cells of d, e, as the paper does: "
                   "[pooled]. On d: [own].")  # fmt: skip
    assert mtmm_page.pooled_words(["d", "e"], 8)["over"] == "the 8 cells, one-sided, BH (q_pooled)"
    assert "larger in 3 of 4 cells" in mtmm_page.cells_won_lead("d", 3, 4)


def test_dataset_and_fourth_counts_count_the_selected_rows() -> None:
    rows = [claim(f"r.mtmm:{d}:{i}", dataset=d, family="r.mtmm", q=q)
            for d, i, q in (("d", 0, 0.01), ("d", 1, 0.2), ("e", 0, 0.01))]  # fmt: skip
    count = mtmm_page.dataset_count(rows, "d", ["d", "e"], 3)
    assert count.id == "mtmm:cells-won:d" and count.scope == mtmm.FAMILY
    assert int(count.estimate) == 1 and count.extra["n"] == 2
    assert "of d where" in count.a and "the 3 cells of d, e" in count.b
    fourth = [claim(f"r.fourth:{p}:{f}", family="r.fourth", q=0.01)
              for p in ("emotion", "distinctiveness") for f in "ab"]  # fmt: skip
    emotion = mtmm_page.fourth_count(fourth, "emotion", 4)
    assert emotion.id == "fourth:emotion:validated" and int(emotion.estimate) == 2
    assert emotion.extra["n"] == 2


def test_mtmm_figures_and_ranges() -> None:
    rho = pd.DataFrame([[0.5, 0.1], [0.2, 0.4]], index=["a:tech", "a:comp"],
                       columns=["tech", "comp"])  # fmt: skip
    (ax, _) = mtmm_page.convergent_figure(rho, "d").axes  # the heatmap and its colour bar
    assert ax.get_title() == "Dimension prompts against the human attributes (d)"
    partial = pd.DataFrame([[0.3, -0.05], [0.02, 0.1]], index=["a · tech", "a · holistic"],
                           columns=["tech", "comp"])  # fmt: skip
    fig = mtmm_page.matrix_figure(partial * 2, partial, "d")
    assert [ax.get_title() for ax in fig.axes] == ["raw Spearman ρ", "partial ρ given overall"]
    assert mtmm_page.holistic_range(partial) == (
        "Given the overall score, the holistic prompt's partial correlations range from "
        "+0.020 to +0.100."
    )
    validity = pd.DataFrame({"rho_own": [0.3, 0.71]})
    assert mtmm_page.own_range(validity).endswith(
        "between 0.30 and 0.71 over 2 family × prompt rows"
    )
    resid = pd.DataFrame({"attribute": ["tech"], "residual_rank_variance": [0.25],
                          "rho_with_overall": [0.87]})  # fmt: skip
    assert mtmm_page.residual_sentence(resid) == (
        "Once the overall score is known, tech keeps 25.0% of its rank variance (ρ with overall "
        "0.87)."
    )


# ------------------------------------------------------------------ 02 input ablation


@pytest.fixture(scope="module")
def blocks():
    scores, y = synthetic_scores(n=60)
    return build_blocks(scores, y, FAMILIES)


def test_inputs_and_blocks_of_3_sentences(blocks) -> None:
    said = ablation_page.inputs_sentence(blocks)
    assert f"H has one column per family ({len(FAMILIES)})" in said
    assert f"P one per family and dimension ({len(FAMILIES) * len(DIMENSIONS)})" in said
    few = ablation_page.blocks_of_3_sentence(blocks, 5, len(FAMILIES), "w")
    assert blocks.H_blocks3 is None  # five holistic runs cannot make five blocks of three
    assert f"({len(DIMENSIONS)} blocks, one per column of P); w was scored with k = 5" in few
    enough = replace(blocks, H_blocks3=blocks.P.copy())
    assert ablation_page.blocks_of_3_sentence(enough, 15, len(FAMILIES), "w").startswith(
        "Blocks of 3 (the paper's Table 2 control): each family's first 15 of its 15"
    )


def test_the_headline_rows_their_words_and_the_sentences_that_quote_them() -> None:
    primary, vs_best = ablation_page.headline_ids()
    assert primary == ablation.claim_id("pre-declared", "H+P_gb", "panel mean")
    rows = [claim(primary), claim(vs_best)]
    words = ablation_page.table2_words(rows)
    assert words[primary]["b"] == "the plain average of their holistic scores (panel mean)"
    assert words[vs_best] == {"a": "the same fusion (H+P_gb)", "b": "the best single model"}
    assert ablation_page.block_table_name("pre-declared") == "table2_pre_declared"
    assert ablation_page.block_table_name("all families") == "table2_all_families"
    said = ablation_page.per_block_sentence(["pre-declared", "all"], quote)
    assert said.count("[") == 2 and said.endswith("].")
    picked = [claim("x", metric="spearman"), claim("y", metric="kendall_b")]
    assert ablation_page.best_of_sentence(picked, quote).endswith("families: [x].")
    repeated = ablation_page.repeated_sentence("w", "strong trio", "pre-declared", ["a", "b"],
                                               quote)  # fmt: skip
    assert "the strong trio (a, b) is the pre-declared block's families" in repeated


def ablation_long() -> pd.DataFrame:
    rows = []
    for arm in ("H+P_gb", "H_gb", "panel mean"):
        for comp in ("panel mean", "best single"):
            for metric in ("spearman", "kendall_b"):
                rows.append({"block": "pre-declared", "arm": arm, "comparator": comp,
                             "metric": metric, "value": 0.6, "comparator_value": 0.5,
                             "delta": 0.1 if arm == "H_gb" else 0.05})  # fmt: skip
    return pd.DataFrame(rows)


def test_primary_sentence_and_forest_rows() -> None:
    long = ablation_long()
    said = ablation_page.primary_sentence(long, quote)
    assert said.startswith("Primary test (pre-declared families, H+P_gb against their panel "
                           "mean, ρ 0.600 against 0.500): [")  # fmt: skip
    assert said.count("[") == 7 and "on the fold partition of seed" in said
    rows = ablation_page.forest_rows(long)
    assert len(rows) == 3 and set(rows["label"]) == {ablation.ARM_LABELS[a] for a in rows["arm"]}


def test_within_singles_sham_and_comparator_sentences() -> None:
    within = pd.DataFrame({"family": ["a", "b", "a"], "metric": ["spearman", "spearman", "x"],
                           "delta": [0.02, -0.01, 9.0]})  # fmt: skip
    assert ablation_page.within_sentence(within) == (
        "Within one model, decomposition changes ρ by -0.010 (b) to +0.020 (a)."
    )
    singles = pd.DataFrame({"family": ["a", "b"], "rho": [0.5, 0.2], "tau_b": [0.4, 0.1]})
    assert ablation_page.singles_sentence(singles, "a", "w").endswith("lowest is b at ρ = 0.200.")
    assert "[sham:h+p_sham_gb-vs-h+p_gb:spearman]" in ablation_page.sham_sentence("w", quote)
    versus = pd.DataFrame({"metric": ["spearman", "kendall_b"], "n_images": [50, 50],
                           "comparator": ["m1", "m1"], "comparator_value": [0.3, 0.2]})  # fmt: skip
    rows = [claim("c1", metric="spearman"), claim("c2", metric="kendall_b")]
    assert ablation_page.comparators_sentence(versus, rows, quote).endswith(
        "imported models: m1 has ρ 0.300, and [c1]."
    )
    assert ablation_page.stand_in(["imagestat-a", "imagestat-b"])
    assert not ablation_page.stand_in(["imagestat-a", "nima"])
    tested, repeats = ablation_page.blocks_used(
        {"pre-declared": ["a", "b", "c"], "strong": ["c", "b", "a"], "all": list("abcd")}
    )
    assert tested == ["pre-declared", "all"] and repeats == {"strong": "pre-declared"}


# ------------------------------------------------------------------ 03 trio sweep


def trio_summary(verdict_trio: str = "a+b+c") -> TrioSummary:
    return TrioSummary(
        n_trios=10, n_tested=9, beats_best_point=5, beats_best_q=3, beats_panel_point=6,
        beats_panel_q=4, fused_min=0.41, fused_max=0.62, worst_trio="c+d+e", best_trio="a+b+c",
        smallest_gain=-0.02, smallest_gain_ci=(-0.05, 0.01), strongest="a", weakest="e",
        top_k=3, top_with_strongest=3, top_with_weakest=0, verdict_trio=verdict_trio,
        verdict_rank=1, alpha=0.05,
    )  # fmt: skip


def test_trio_count_words_and_sentences() -> None:
    words = trios_page.count_words("best member", "kendall_b", 9)
    assert words["claim_id"] == "trios:gains-vs-best_member:kendall_b"
    assert "(τ_b), one-sided, BH over the 9 trios" in words["over"]
    counts = {key: f"<{key[0]} {key[1]}>" for key in trios_page.COUNTED}
    cite = lambda dataset, claim_id, text: f"{{{dataset}:{text}}}"  # noqa: E731
    said = trios_page.sweep_sentence(trio_summary(), counts, dataset="w",
                                     predeclared=["a", "b", "c"], cite=cite)  # fmt: skip
    assert said.startswith("The pre-declared trio (a+b+c) is 02's Table 2 block")
    assert "{w:against its best member} and {w:against its panel mean}" in said
    assert "<best member spearman> (smallest difference −0.020 [−0.050, +0.010]); " in said
    assert said.endswith("Fused ρ spans 0.410 (c+d+e) to 0.620 (a+b+c).")
    same = trios_page.verdict_sentence(trio_summary(), same=True, stated="[row]")
    assert same.endswith("ranked 1 of 10 by fused ρ — it is the pre-declared trio: [row].")
    other = trios_page.verdict_sentence(trio_summary(), same=False, stated="[row]")
    assert other.endswith("by fused ρ; exploratory: [row].")
    assert trios_page.beats_best_lead(trio_summary(), "w").endswith("over the 10 trios): ")
    assert prose_problems(trios_page.verdict_headline(trio_summary(), "w")) == []


# ------------------------------------------------------------------ 04 headroom


def test_headroom_figures_and_caption(blocks) -> None:
    retest_trios = pd.DataFrame({"dataset": ["x", "x", "y"], "headroom": [0.1, 0.3, 0.2],
                                 "agreement": [0.5, 0.4, 0.6], "gain": [0.01, -0.02, 0.03],
                                 "pays": [True, False, False]})  # fmt: skip
    fig = headroom_page.retest_figure(retest_trios, 5)
    assert [ax.get_xlabel() for ax in fig.axes] == ["trio headroom (probe, k=5)",
                                                    "trio agreement (probe, k=5)"]  # fmt: skip
    caption = headroom_page.retest_caption(retest_trios, ["[x]", "[y]"])
    assert "a positive point gain (2 of 3 trios)" in caption and caption.endswith("[x]; [y].")
    partitions = pd.DataFrame({"dataset": ["x"] * 3 + ["y"] * 3, "block": ["pre"] * 6,
                               "delta_rho": [0.01, 0.02, 0.03, 0.0, 0.01, 0.02],
                               "reference": [False, False, True] * 2})  # fmt: skip
    before = np.random.get_state()[1].copy()
    fig, keys = headroom_page.partitions_figure(partitions, ["x", "y"], 2)
    again, _ = headroom_page.partitions_figure(partitions, ["x", "y"], 2)
    assert [ax.get_title() for ax in fig.axes] == ["x", "y"]
    first, second = ([c.get_offsets().tolist() for ax in f.axes for c in ax.collections]
                     for f in (fig, again))  # fmt: skip
    assert first == second and first[0] != [[0.0, 0.01], [0.0, 0.02]]  # jittered, alike
    assert (np.random.get_state()[1] == before).all()  # the global state left as it was
    assert [k.get_label() for k in keys] == ["a random partition"]
    gran = pd.DataFrame([{"dataset": d, "metric": m, "family": f, "k": k, "mean": 0.1 * k,
                          "rounded": 0.05 * k} for d in ("x",) for m in ("spearman", "kendall_b")
                         for f in ("a", "b") for k in (1, 3)])  # fmt: skip
    fig, keys = headroom_page.granularity_figure(gran, ["x"], {"a": "#000000", "b": "#ffffff"})
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 4
    assert [k.get_label() for k in keys] == ["k-run mean", "rounded to the scale"]
    said = headroom_page.combiner_sentence({"x": blocks})
    assert said.startswith("The combiner: on x, ") and said.endswith(".")
    assert headroom_page.f11_sentence(3, {"x": blocks}).startswith(
        "F11 is 3 image statistics; the label-matched arms train on the same folds as H+P_gb: "
        "on x, "
    )


# ------------------------------------------------------------------ 07 temperature


@pytest.fixture(scope="module")
def rule():
    return temperature.load_rule(project_root() / "rubric" / "prereg" / "temperature_rule.yaml")


def test_provenance_orders_the_rule_and_the_scores(rule) -> None:
    assert temperature_page.rule_order("2026-01-01", "2026-02-01") == "before"
    assert temperature_page.rule_order("2026-03-01", "2026-02-01") == "AFTER"
    assert temperature_page.rule_order(None, "2026-02-01").startswith("unknown (the project")
    assert temperature_page.rule_order("2026-01-01", None).startswith("unknown (the grid")
    table = temperature_page.provenance_table(rule, "2026-01-01", "2026-02-01")
    assert table.iloc[0]["rule_first"] == "before" and table.iloc[0]["sha256"] == rule.sha256
    said = temperature_page.provenance_sentence(rule, "2026-01-01", "2026-02-01")
    assert said.endswith("first grid score was written at 2026-02-01: the rule came before the "
                         "scores.")  # fmt: skip
    unknown = temperature_page.provenance_sentence(rule, None, None)
    assert "has no commit time here" in unknown and "not written yet" in unknown
    assert unknown.endswith("which came first is unknown (the project is not a git checkout).")
    quoted = temperature_page.claims_sentence(rule)
    assert all(f"> **{key}**: " in quoted for key in rule.claims)


def rule_result(confident: list[bool]) -> RuleResult:
    dims = pd.DataFrame({
        "dimension": DIMENSIONS[: len(confident)], "rho_low": 0.4, "rho_base": 0.5,
        "rho_high": 0.45, "confident": confident, "delta": 0.05, "ci_low": -0.01, "ci_high": 0.1,
    })  # fmt: skip
    return RuleResult("para", dims, pd.DataFrame(), tolerates_high=True, inverted_beats=False)


def test_grid_figure_and_confident_sentence(rule) -> None:
    results = {rule.exploratory: rule_result([True, False]),
               rule.confirmatory: rule_result([False, True])}  # fmt: skip
    fig, keys = temperature_page.grid_figure(results, rule, "aurora")
    titles = [f"{rule.exploratory} (exploratory)", f"{rule.confirmatory} (confirmatory)"]
    assert [ax.get_title() for ax in fig.axes] == titles
    assert [line.get_linestyle() for line in fig.axes[0].lines[:2]] == ["-", "--"]
    assert len(keys) == len(DIMENSIONS) + 3
    said = temperature_page.confident_sentence(results[rule.confirmatory], "para", "aurora")
    assert said == (f"On para, aurora is confident on 1 of {len(DIMENSIONS)} dimensions: "
                    f"{DIMENSIONS[1]} (ρ 0.500; high − low +0.050 [−0.010, +0.100]).")  # fmt: skip
    none = temperature_page.confident_sentence(rule_result([False]), "para", "aurora")
    assert none == f"On para, aurora is confident on 0 of {len(DIMENSIONS)} dimensions."
    assert "registered without an equivalence margin" in temperature_page.tolerates_lead("para")
    assert temperature_page.inverted_lead("para").startswith("para, the rule's second")


# ------------------------------------------------------------------ 09 logprob


def test_fallback_sentence_names_the_families_that_fell_back() -> None:
    shares = pd.Series({"a": 0.0, "b": 0.25})
    assert logprob_page.fallback_sentence(shares, "processed") == (
        "Fell back to one sample: b (25% of its calls); logprobs were declared `processed`."
    )
    assert logprob_page.fallback_sentence(shares * 0, "raw") == (
        "Every logprob call used its distribution."
    )


def design_accuracy() -> pd.DataFrame:
    rows = []
    for family in ("b", "a"):
        for design, estimate in ((logprob_designs.mean_of(1), 0.3),
                                 (logprob_designs.mean_of(5), 0.4),
                                 (logprob_designs.EXPECTED, 0.45)):  # fmt: skip
            rows.append({"family": family, "design": design, "metric": "spearman",
                         "estimate": estimate, "ci_low": estimate - 0.1,
                         "ci_high": estimate + 0.1, "calls_per_image": 1,
                         "usd_per_1000_images": 1.0 + estimate,
                         "delta": 0.45 - estimate, "delta_low": -0.05,
                         "delta_high": 0.2, "p": 0.03})  # fmt: skip
    return pd.DataFrame(rows)


def test_versus_rows_count_words_and_the_frontier() -> None:
    accuracy = design_accuracy()
    claims, table = logprob_page.versus_rows(accuracy, "w")
    assert table["family"].tolist()[0] == "a" and set(table["family"]) == {"a", "b"}
    assert not table["design"].str.contains(" on ").any()
    assert claims_frame(claims)["id"].is_unique
    most = logprob_page.against_design(claims, logprob_designs.mean_of(5))
    assert sorted(c.scope for c in most) == ["a", "b"]
    beats, falls = logprob_page.count_words("a", table)
    assert beats["claim_id"] == "count-beats:a" and falls["claim_id"] == "count-falls-below:a"
    assert falls["what"] == "a's expected score falls below a sampled design"
    n_designs = int((table["family"] == "a").sum())
    assert beats["over"] == f"a's {n_designs} sampled designs"
    fig = logprob_page.frontier_figure(accuracy, {"a": "#000000", "b": "#ffffff"})
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_legend().get_title().get_text() == "family"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]


def test_fused_and_granularity_sentences() -> None:
    said = logprob_page.fused_sentence("w", "k=5", {"s": "[s]", "o1": "[o1]", "o2": "[o2]"}, "s")
    assert said.endswith(
        "study's design (k=5): [s]. Against the other sampled designs: [o1]; [o2]."
    )
    assert logprob_page.fused_lead("w", "k=5").endswith("against the study's design (k=5): ")
    gran = pd.DataFrame({"family": ["a", "a", "b"], "metric": ["spearman"] * 3,
                         "design": ["mean", "expected", "mean"], "delta": [0.02, 0.0, -0.01],
                         "ci_low": [0.0, -0.01, -0.03], "ci_high": [0.04, 0.01, 0.01]})  # fmt: skip
    said = logprob_page.granularity_sentence(gran)
    assert said.startswith("a: as it is minus rounded, Δρ = +0.020 [+0.000, +0.040] for the mean "
                           "and Δρ = ")  # fmt: skip
    assert "b: as it is minus rounded, Δρ = −0.010" in said


def test_page_calls_reads_the_logprob_and_the_sampled_rows(tmp_path: Path) -> None:
    plan = small_plan()
    with Store(tmp_path / "s.sqlite") as store:
        for spec in plan[:3]:
            store.record(spec.key, CallResult(status="ok", parsed={"score": 6}, value=6.0))
        logprob = replace(plan[0].key, call_type="holistic_logprob")
        store.record(logprob, CallResult(status="ok", parsed={"score": 6}, value=6.0))
    calls = logprob_page.page_calls(tmp_path / "s.sqlite", "eva", "eva", ["aurora"])
    assert set(calls["kind"]) <= {"holistic", "dimension", "holistic_logprob"}
    assert (calls["family"] == "aurora").all() and "holistic_logprob" in set(calls["kind"])
    assert logprob_page.page_calls(tmp_path / "s.sqlite", "eva", "eva", ["none"]).empty
