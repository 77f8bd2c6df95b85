"""The trio sweep on synthetic scores where the answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgepanel.core.prompts import DIMENSIONS
from judgepanel.stats import bh, paired_bootstrap
from judgepanel.studies.common.combiners import gb_combiner, oof_predict
from judgepanel.studies.fusion import ablation, trios
from judgepanel.studies.fusion.blocks import best_single, build_blocks

FAMILIES = ["f0", "f1", "f2", "f3", "f4"]


def synthetic_scores(
    n: int = 160,
    *,
    star: str = "f2",
    k: int = 5,
    r: int = 3,
    seed: int = 0,
    holistic_signal: dict[str, float] | None = None,
) -> tuple[pd.DataFrame, pd.Series]:
    """A score table where only ``star``'s dimension scores carry the human mean.

    Holistic runs of every family are weakly informative (``holistic_signal`` sets how
    much); dimension scores of the other families are pure noise.
    """
    rng = np.random.default_rng(seed)
    items = [f"img{i:04d}" for i in range(n)]
    latent = rng.normal(size=n)
    y = pd.Series(5 + 1.5 * latent + rng.normal(scale=0.3, size=n), index=items)
    signal = holistic_signal or dict.fromkeys(FAMILIES, 0.3)
    rows = []
    for fam in FAMILIES:
        for rep in range(k):
            vals = np.clip(
                np.rint(5.5 + signal[fam] * latent + rng.normal(scale=1.5, size=n)), 1, 10
            )
            rows += [(it, fam, "holistic", "", rep, v) for it, v in zip(items, vals, strict=True)]
        for dim in DIMENSIONS:
            for rep in range(r):
                base = 2.0 * latent if fam == star else 0.0
                vals = np.clip(np.rint(5.5 + base + rng.normal(scale=1.0, size=n)), 1, 10)
                rows += [
                    (it, fam, "dimension", dim, rep, v) for it, v in zip(items, vals, strict=True)
                ]
    scores = pd.DataFrame(
        rows, columns=["item", "family", "kind", "dimension", "repetition", "value"]
    )
    return scores, y


@pytest.fixture(scope="module")
def blocks():
    scores, y = synthetic_scores()
    return build_blocks(scores, y, FAMILIES)


@pytest.fixture(scope="module")
def fused(blocks):
    return trios.fit_trios(blocks, trios.trios_of(FAMILIES), n_jobs=1)


@pytest.fixture(scope="module")
def sweep(blocks, fused):
    return trios.sweep_trios(blocks, FAMILIES, fused=fused, n_resamples=400, seed=3)


def test_trios_of_counts_and_rejects_too_few():
    assert len(trios.trios_of(FAMILIES)) == 10
    assert trios.trios_of(["a", "b", "c"]) == [("a", "b", "c")]
    with pytest.raises(ValueError, match="at least 3"):
        trios.trios_of(["a", "b"])


def test_fit_trios_equals_direct_oof_and_parallel_equals_serial(blocks, fused):
    trio = ("f0", "f2", "f4")
    X = pd.concat([blocks.H_of(trio), blocks.P_of(trio)], axis=1)
    direct = oof_predict(gb_combiner(), X, blocks.y)
    np.testing.assert_allclose(fused[trio], direct)
    parallel = trios.fit_trios(blocks, [trio, ("f0", "f1", "f3")], n_jobs=2)
    np.testing.assert_allclose(parallel[trio], direct)


def test_signal_family_ranks_trios_correctly(sweep):
    table = trios.tabulate_trios(sweep)
    with_star = table["trio"].str.contains("f2")
    # The six trios that hold the only informative dimension scores fuse best, all six.
    assert with_star.iloc[:6].all() and not with_star.iloc[6:].any()
    # And they beat their best member and their panel mean, surviving correction.
    assert table.loc[with_star, "beats_best"].all()
    assert table.loc[with_star, "beats_panel"].all()
    assert not table.loc[~with_star, "beats_best"].any()


def test_rows_are_paired_on_shared_resamples(blocks, fused, sweep):
    row = sweep[
        (sweep["trio"] == "f0+f1+f2")
        & (sweep["comparator"] == "best member")
        & (sweep["metric"] == "spearman")
    ].iloc[0]
    ref = paired_bootstrap(
        blocks.y,
        fused[("f0", "f1", "f2")],
        blocks.H[row["best_member"]],
        "spearman",
        n_resamples=400,
        seed=3,
    )
    assert row["delta"] == pytest.approx(ref.delta)
    assert row["ci_low"] == pytest.approx(ref.ci_low)
    assert row["ci_high"] == pytest.approx(ref.ci_high)
    assert row["p"] == pytest.approx(ref.p)


def test_q_is_bh_within_comparator_and_metric(sweep):
    for _, g in sweep.groupby(["comparator", "metric"]):
        assert len(g) == 10
        np.testing.assert_allclose(g["q"].to_numpy(), bh(g["p"].to_numpy()))


def test_summary_counts_verdict_rank_and_members(sweep, blocks):
    from judgepanel.studies.fusion.blocks import best_single

    table = trios.tabulate_trios(sweep)
    _, singles = best_single(blocks.H, blocks.y)
    s = trios.summarize_trios(table, singles)
    assert s.n_trios == 10
    assert s.beats_best_q == int(table["beats_best"].sum())
    assert s.fused_max == pytest.approx(table["fused_rho"].max())
    assert s.best_trio == table.loc[0, "trio"]
    verdict = set(singles["family"].head(3))
    row = table[table["trio"].str.split("+").map(set) == verdict].iloc[0]
    assert s.verdict_rank == row["rank"]
    assert s.top_with_strongest == sum(singles.loc[0, "family"] in t for t in table["trio"].head(3))


def test_summary_on_hand_made_table():
    table = pd.DataFrame(
        {
            "trio": ["a+b+c", "a+b+d", "b+c+d", "a+c+d"],
            "fused_rho": [0.7, 0.6, 0.5, 0.4],
            "delta_best_rho": [0.1, 0.05, -0.01, 0.02],
            "delta_best_rho_ci_low": [0.05, 0.0, -0.05, -0.02],
            "delta_best_rho_ci_high": [0.15, 0.1, 0.03, 0.06],
            "q_best_rho": [0.01, 0.04, 0.6, 0.2],
            "delta_panel_rho": [0.2, 0.1, 0.0, -0.1],
            "q_panel_rho": [0.001, 0.2, 0.5, 0.9],
        }
    )
    table.insert(0, "rank", [1, 2, 3, 4])
    singles = pd.DataFrame({"family": ["d", "c", "b", "a"], "rho": [0.6, 0.5, 0.4, 0.3]})
    s = trios.summarize_trios(table, singles, top_k=2)
    assert (s.beats_best_point, s.beats_best_q) == (3, 2)
    assert (s.beats_panel_point, s.beats_panel_q) == (2, 1)
    assert s.strongest == "d" and s.weakest == "a"
    assert s.top_with_strongest == 1 and s.top_with_weakest == 2
    assert s.verdict_trio == "b+c+d" and s.verdict_rank == 3
    assert s.smallest_gain == pytest.approx(-0.01)
    assert s.worst_trio == "a+c+d"


def test_compare_two_trios_is_antisymmetric(blocks, fused):
    ab = trios.compare_two_trios(
        blocks,
        fused,
        ("f0", "f1", "f2"),
        ("f0", "f1", "f3"),
        metrics=("spearman",),
        n_resamples=300,
    )
    ba = trios.compare_two_trios(
        blocks,
        fused,
        ("f0", "f1", "f3"),
        ("f0", "f1", "f2"),
        metrics=("spearman",),
        n_resamples=300,
    )
    assert ab["delta"].iloc[0] == pytest.approx(-ba["delta"].iloc[0])
    assert ab["delta"].iloc[0] > 0  # the trio holding f2 fuses better
    with pytest.raises(KeyError):
        trios.compare_two_trios(blocks, fused, ("f0", "f1", "x"), ("f0", "f1", "f3"))


def test_interval_sides_counts_intervals_wholly_above_and_below_zero():
    table = pd.DataFrame(
        {
            "delta_best_rho_ci_low": [0.01, -0.2, -0.3, 0.0],
            "delta_best_rho_ci_high": [0.2, -0.01, 0.1, 0.1],
            "delta_panel_rho_ci_low": [-0.1, -0.1, -0.1, -0.1],
            "delta_panel_rho_ci_high": [0.1, 0.1, 0.1, 0.1],
        }
    )
    assert trios.interval_sides(table, "best") == (1, 1)  # an end at exactly zero is neither
    assert trios.interval_sides(table, "panel") == (0, 0)


def test_the_predeclared_trio_is_02s_and_the_rest_are_corrected_without_it(blocks, fused, sweep):
    owned = trios.sweep_trios(
        blocks, FAMILIES, fused=fused, n_resamples=400, seed=3, owned=["f4", "f0", "f2"]
    )
    mine = owned[owned["owner"] == ""]
    theirs = owned[owned["owner"] != ""]
    assert set(theirs["trio"]) == {"f0+f2+f4"} and theirs["q"].isna().all()
    assert set(theirs["owner_claim"]) == {
        ablation.claim_id("pre-declared", "H+P_gb", comp, m)
        for comp in ("best single", "panel mean")
        for m in ("spearman", "kendall_b")
    }
    # the same estimates; q over the nine other trios alone
    np.testing.assert_allclose(owned["delta"], sweep["delta"])
    for _, g in mine.groupby(["comparator", "metric"]):
        np.testing.assert_allclose(g["q"], bh(g["p"].to_numpy()))
    claims = trios.trio_claims(owned, dataset="d")
    assert len(claims) == len(mine) and len({c.id for c in claims}) == len(claims)
    assert all(c.family in {f.name for f in trios.correction_families()} for c in claims)
    s = trios.summarize_trios(trios.tabulate_trios(owned), best_single(blocks.H, blocks.y)[1])
    assert (s.n_trios, s.n_tested) == (10, 9)
