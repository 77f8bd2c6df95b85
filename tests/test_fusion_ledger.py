"""The fusion pages' ledger rows: each family holds exactly the rows its q was corrected
over, rows equal by construction stay out, and each test is worded by its kind."""

from __future__ import annotations

from dataclasses import asdict, replace

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests
from test_comparators import _blocks

from judgepanel.claims.rows import (
    HIGHEST_ONLY,
    LEADS,
    NOT_TESTED,
    Family,
    claims_frame,
    family_problems,
)
from judgepanel.stats import add_q
from judgepanel.studies.fusion import ablation, convergent, fourth_attribute, mtmm, sham, trios
from judgepanel.studies.fusion.comparators import (
    comparator_claims,
    compare_with_vlms,
    correction_families,
)


def _problems(claims, families: list[Family]) -> list[str]:
    return family_problems(claims_frame(claims), [asdict(f) for f in families])


def test_repeated_blocks_name_the_earlier_block_with_the_same_families():
    sets = {"pre-declared": ["a", "b", "c"], "strong trio": ["c", "a", "b"], "all 4": list("abcd")}
    assert ablation.repeated_blocks(sets) == {"strong trio": "pre-declared"}
    assert ablation.repeated_blocks({"x": ["a"], "y": ["b"]}) == {}


@pytest.fixture(scope="module")
def table2():
    blocks = _blocks()
    # a block-split H of its own (the helper's is H itself, which would make two equal arms)
    noise = np.random.default_rng(2).normal(size=(len(blocks.items), 2))
    split = pd.DataFrame({f"{f}:{j}": blocks.H[f] + noise[:, j] for f in blocks.H for j in (0, 1)},
                         index=blocks.items)  # fmt: skip
    blocks = replace(blocks, H_split=split)
    sets = {"pre-declared": ["a", "b", "c"], "strong trio": ["a", "b", "c"]}
    return ablation.ablate_inputs(blocks, sets, n_resamples=200, seed=0, n_jobs=1)


def test_a_repeated_block_is_not_tested_again(table2):
    pre = table2[table2["block"] == "pre-declared"].reset_index(drop=True)
    rep = table2[table2["block"] == "strong trio"].reset_index(drop=True)
    np.testing.assert_array_equal(rep["delta"], pre["delta"])
    assert rep["q"].isna().all() and (rep["same_as"] == "pre-declared").all()
    assert (rep["excluded"] == ablation.same_families("pre-declared")).all()


def test_every_table2_family_is_its_rows_and_the_selected_model_is_a_best_of_row(table2):
    claims = ablation.table2_claims(table2, dataset="d", headline=("x",))
    assert len(claims) == len(table2)
    assert _problems(claims, ablation.correction_families(["pre-declared"])) == []
    selected = [c for c in claims if c.a == "best single" and c.b == "panel mean"]
    assert selected and all(c.verdict == NOT_TESTED and not c.family for c in selected)
    assert all(c.verdict == NOT_TESTED for c in claims if c.scope.startswith("strong trio"))
    # the q of a family is BH over every arm of the block against that comparator
    fam = [c for c in claims if c.family == ablation.family_name("pre-declared", "best single",
                                                                  "spearman")]  # fmt: skip
    np.testing.assert_allclose([c.q for c in fam],
                               multipletests([c.p for c in fam], method="fdr_bh")[1])  # fmt: skip
    best = ablation.best_of_table(table2)
    assert set(best["block"]) == {"pre-declared"}  # the repeated block is not there again
    rows = ablation.best_of_claims(best, dataset="d")
    assert all(c.kind == "best-of" for c in rows)
    assert [c.p for c in rows] == best["p_max"].tolist()
    assert all(c.verdict in (LEADS, HIGHEST_ONLY) for c in rows)


def test_comparators_are_best_of_rows_corrected_over_the_models():
    blocks = _blocks()
    rng = np.random.default_rng(1)
    imported = pd.DataFrame(
        {"good": blocks.y + rng.normal(scale=0.3, size=len(blocks.y)),
         "noise": rng.normal(size=len(blocks.y))}, index=blocks.items
    )  # fmt: skip
    res = compare_with_vlms(blocks, imported, n_resamples=300)
    for _, g in res.groupby("metric"):
        np.testing.assert_allclose(g["q"], multipletests(g["p_max"], method="fdr_bh")[1])
    claims = comparator_claims(res, dataset="d")
    assert _problems(claims, correction_families()) == []
    verdicts = {c.b: c.verdict for c in claims if c.metric == "spearman"}
    assert verdicts["noise"] == LEADS and all(c.kind == "best-of" for c in claims)


def test_the_sham_table_is_recorded_whole():
    table = pd.DataFrame(
        {
            "families": "a, b, c",
            "arm": ["P_sham_gb", "H+P_sham_gb"] * 4,
            "comparator": ["H+P_gb"] * 4 + ["best single"] * 4,
            "metric": (["spearman"] * 2 + ["kendall_b"] * 2) * 2,
            "delta": np.linspace(-0.1, 0.1, 8),
            "ci_low": -0.2,
            "ci_high": 0.2,
            "p": [0.01, 0.2, 0.03, 0.5, 0.04, 0.9, 0.6, 0.02],
        }
    )
    table = add_q(table, by=["comparator", "metric"])
    cost = "sham:h+p_sham_gb-vs-h+p_gb:spearman"
    claims = sham.sham_claims(table, dataset="d", headline=(cost,))
    assert len(claims) == 8 and {c.id for c in claims if c.role == "headline"} == {cost}
    assert _problems(claims, sham.correction_families()) == []


def test_a_trio_is_not_tested_against_itself():
    same = trios.versus_claims(None, ["b", "a", "c"], ["a", "b", "c"], dataset="d")
    assert len(same) == 1 and same[0].verdict == NOT_TESTED and not same[0].family
    versus = pd.DataFrame({"metric": ["spearman"], "delta": [0.1], "ci_low": [0.02],
                           "ci_high": [0.2], "p": [0.01]})  # fmt: skip
    other = trios.versus_claims(versus, ["a", "b", "d"], ["a", "b", "c"], dataset="d")
    assert other[0].alternative == "two-sided" and other[0].verdict == "beats"
    with pytest.raises(ValueError, match="two different trios"):
        trios.versus_claims(None, ["a", "b", "d"], ["a", "b", "c"], dataset="d")


def test_mtmm_cells_are_one_family_and_a_dataset_count_counts_its_own_cells():
    rng = np.random.default_rng(3)
    cells = {
        name: pd.DataFrame(
            {
                "family": np.repeat([f"f{j}" for j in range(5)], 3),
                "attribute": ["quality", "composition", "colour"] * 5,
                "delta": rng.uniform(0.05, 0.2, 15),
                "ci_low": 0.01,  # a gain needs q < alpha and the interval above zero
                "ci_high": 0.3,
                "p": rng.uniform(0, scale, 15) ** 2,
            }
        ).assign(q_dataset=lambda t: multipletests(t["p"], method="fdr_bh")[1])
        for name, scale in (("eva", 0.2), ("para", 1.0))
    }
    pooled = mtmm.pool_cells(cells)
    claims = mtmm.cell_claims(pooled)
    assert _problems(claims, [mtmm.correction_family(["eva", "para"])]) == []
    count = mtmm.count_of(claims, lambda c: c.dataset == "eva", id="n", family="fam",
                          what="cells", over="the 30 cells")  # fmt: skip
    expected = int(((pooled["q_pooled"] < 0.05) & (pooled["dataset"] == "eva")).sum())
    assert count.kind == "count" and count.extra["n"] == 15 and count.scope == "fam"
    assert count.estimate == expected and count.verdict.startswith(f"{expected} of 15 with q")
    with pytest.raises(ValueError, match="no recorded row"):
        mtmm.count_of(claims, lambda c: False, id="n", family="fam", what="x", over="y")


def test_convergent_rows_without_a_test_stay_out_of_the_family():
    rng = np.random.default_rng(0)
    n = 120
    human = pd.DataFrame(rng.normal(size=(n, 2)), columns=["a", "b"])
    P = pd.DataFrame({"f:a": human["a"] + rng.normal(0, 0.5, n),
                      "f:b": human["b"] + rng.normal(0, 0.5, n), "g:a": 1.0,
                      "g:b": human["a"] + rng.normal(0, 0.5, n)})  # fmt: skip
    table = convergent.validity_table(P, human, ["f", "g"], ["a", "b"], n_resamples=200)
    claims = convergent.validity_claims(table, dataset="d")
    untested = [c for c in claims if c.excluded]
    assert [c.id for c in untested] == ["convergent:g:a"] and untested[0].verdict == NOT_TESTED
    assert _problems(claims, [convergent.correction_family()]) == []


def test_fourth_attribute_cells_are_one_family():
    cells = pd.DataFrame(
        {
            "family": ["f", "f", "g", "g"],
            "prompt": ["distinctiveness", "emotion"] * 2,
            "attribute": "semantic",
            "delta": [0.1, -0.1, 0.2, 0.0],
            "ci_low": -0.1,
            "ci_high": 0.3,
            "p": [0.01, 0.8, 0.02, 0.5],
        }
    ).assign(q=lambda t: multipletests(t["p"], method="fdr_bh")[1])
    claims = fourth_attribute.cell_claims(cells, dataset="d")
    assert [c.id for c in claims][:2] == ["fourth:distinctiveness:f", "fourth:emotion:f"]
    assert _problems(claims, [fourth_attribute.correction_family()]) == []
