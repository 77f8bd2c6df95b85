"""The pairwise budget curve on a small synthetic run: comparisons and scores at 1 .. c
calls per image, the subsample's rule and the cost billed per image."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgepanel.studies.pairwise import analysis as pw
from judgepanel.studies.pairwise import sample_pairs
from judgepanel.studies.pairwise.budget import PANEL, budget_long, budget_table, calls_at
from judgepanel.studies.pairwise.choices import choices_from_calls

N_IMAGES, PAIRS_PER_IMAGE, ORDERS = 24, 4, 2
C = pw.equal_calls(ORDERS, PAIRS_PER_IMAGE)
JUDGES = {"sharp": 0.4, "noisy": 1.5}


def _run(seed: int = 3):
    """Pairs, the pairwise calls (both orders), the score calls and the human means."""
    rng = np.random.default_rng(seed)
    ids = [f"img{i:02d}" for i in range(N_IMAGES)]
    truth = pd.Series(rng.normal(size=N_IMAGES), index=ids)
    pairs = sample_pairs(ids, PAIRS_PER_IMAGE, seed=seed)
    calls, scored = [], []
    for judge, noise in JUDGES.items():
        for pair in pairs.itertuples():
            for order in range(ORDERS):
                gap = truth[pair.image_a] - truth[pair.image_b] + rng.normal(0, noise)
                winner = "a" if gap > 0 else "b"
                shown = "A" if (winner == "a") == (order == 0) else "B"
                parsed = json.dumps({"winner": winner, "shown": shown})
                calls.append((judge, "pair_holistic", pair.pair_id, order, "ok", 0.002, parsed))
        for image in ids:
            for rep in range(C + 1):
                value = truth[image] + rng.normal(0, noise)
                scored.append((judge, "holistic", image, rep, "ok", 0.001, value))
    columns = ["family", "kind", "item", "repetition", "status", "cost"]
    calls = pd.DataFrame(calls, columns=[*columns, "parsed"]).assign(dimension=None)
    scored = pd.DataFrame(scored, columns=[*columns, "value"])
    human = truth.rename_axis("image_id")
    return pairs, choices_from_calls(calls, pairs), calls, scored, human


@pytest.fixture(scope="module")
def run():
    return _run()


@pytest.fixture(scope="module")
def table(run):
    pairs, choices, calls, scored, human = run
    return budget_table(choices, scored, human, pairs, calls, scored, C, n_resamples=200, seed=0)


def test_at_c_calls_the_curve_is_the_equal_calls_and_panel_tables(run, table):
    _, choices, calls, scored, human = run
    costs = pw.billed(calls, scored, C, list(human.index))
    equal = pw.equal_calls_table(choices, scored, human, C, costs, n_resamples=200, seed=0)
    at_c = table[table["calls_per_image"] == C].set_index("judge")
    for r in equal.itertuples():
        assert at_c.loc[r.judge, "rho_pairs"] == pytest.approx(r.rho_pairs, abs=1e-12)
        assert at_c.loc[r.judge, "rho_scores"] == pytest.approx(r.rho_scores, abs=1e-12)
        billed = at_c.loc[r.judge, ["usd_pairs_per_1000", "usd_scores_per_1000"]] * N_IMAGES
        assert billed.to_numpy() / 1000 == pytest.approx([r.usd_pairs, r.usd_scores])
    panel = pw.panel_table(choices, scored, human, C, n_resamples=200, seed=0).iloc[0]
    assert at_c.loc[PANEL, "rho_pairs"] == pytest.approx(panel["rho_pairs"], abs=1e-12)
    assert at_c.loc[PANEL, "rho_scores"] == pytest.approx(panel["rho_scores"], abs=1e-12)


def test_scores_are_billed_over_the_compared_images_only(run):
    """A scored dataset holding more images than the pairs compare (the demo's 500 against
    200) bills the score arm for the compared ones only, as the budget curve does."""
    _, _, calls, scored, human = run
    ids = list(human.index)
    extra = scored[scored["item"] == ids[0]].assign(item="not-compared")
    both = pw.billed(calls, pd.concat([scored, extra], ignore_index=True), C, ids)
    assert both.equals(pw.billed(calls, scored, C, ids))
    fewer = pw.billed(calls, scored, C, ids[1:])
    assert (fewer["usd_scores"] < both["usd_scores"]).all()


def test_the_curve_has_every_k_with_intervals_and_growing_cost(run, table):
    assert sorted(table["calls_per_image"].unique()) == list(range(1, C + 1))
    assert set(table["judge"]) == {*JUDGES, PANEL}
    for arm in ("pairs", "scores"):
        assert (table[f"{arm}_low"] <= table[f"rho_{arm}"]).all()
        assert (table[f"rho_{arm}"] <= table[f"{arm}_high"]).all()
    sharp = table[table["judge"] == "sharp"].set_index("calls_per_image")
    # per 1000 images: k score calls at $0.001 each; about k pairwise calls at $0.002
    assert sharp["usd_scores_per_1000"].to_numpy() == pytest.approx(np.arange(1, C + 1))
    assert sharp["usd_pairs_per_1000"].is_monotonic_increasing
    pairs = run[0]  # a pair drawn twice is asked once: a little under c calls per image
    assert sharp.loc[C, "usd_pairs_per_1000"] == pytest.approx(2 * ORDERS * len(pairs) / N_IMAGES)
    long = budget_long(table)
    assert len(long) == 2 * len(table) and set(long["arm"]) == {"pairs", "scores"}


def test_the_subsample_holds_each_image_to_its_share(run):
    pairs, choices, *_ = run
    one = choices[(choices["judge"] == "sharp") & (choices["question"] == "holistic")]
    for k in range(1, C):
        kept = calls_at(one, pairs["pair_id"].tolist(), k, C)
        shown = pd.concat([kept["image_a"], kept["image_b"]]).value_counts()
        assert shown.max() <= 2 * k
        assert k * N_IMAGES * 0.8 <= len(kept) <= k * N_IMAGES
    assert len(calls_at(one, pairs["pair_id"].tolist(), C, C)) == len(one)
    with pytest.raises(ValueError, match=r"calls per image must be in 1\.\.4, got 0"):
        calls_at(one, pairs["pair_id"].tolist(), 0, C)
