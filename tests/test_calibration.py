"""The calibration study: its rates and truths, its pool errors, and notebook 08 end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_checks import assert_reads_well
from statsmodels.stats.proportion import proportion_confint

from judgepanel.core.config import load_config
from judgepanel.report.execute import execute_notebook
from judgepanel.report.index import write_index
from judgepanel.studies.fusion import calibration as cal
from judgepanel_sim.pool import build_pool
from judgepanel_sim.world.mechanism import Mechanism

ROOT = Path(__file__).resolve().parent.parent


# The module's fixtures are built once, by the one worker that runs every test here
# (spread over two workers, each built them).
pytestmark = pytest.mark.xdist_group("calibration")


@pytest.fixture(scope="module")
def tiny_pool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 60-image pool with the null world and the fully planted one."""
    out = tmp_path_factory.mktemp("pool")
    worlds = (Mechanism(dimension_evidence=0.0), Mechanism(dimension_evidence=1.0))
    return build_pool(out, n_images=60, seed=3, worlds=worlds, n_jobs=1, log=lambda _: None)


def test_rate_table_uses_wilson_intervals():
    reps = pd.DataFrame({"g": ["a"] * 10 + ["b"] * 4, "hit": [True] * 3 + [False] * 7 + [True] * 4})
    table = cal.rate_table(reps, "hit", ["g"]).set_index("g")
    low, high = proportion_confint(3, 10, alpha=0.05, method="wilson")
    assert table.loc["a", "rate"] == pytest.approx(0.3)
    assert (table.loc["a", "ci_low"], table.loc["a", "ci_high"]) == pytest.approx((low, high))
    assert table.loc["b", "rate"] == 1.0 and table.loc["b", "ci_high"] == pytest.approx(1.0)


def test_exact_coverage_of_a_finite_pool():
    assert cal.exact_coverage(500, 10**9) == pytest.approx(0.95, abs=1e-6)
    assert 0.95 < cal.exact_coverage(500, 3000) < cal.exact_coverage(500, 1000) < 1.0


def test_draws_are_without_replacement_and_checked():
    rows = cal.draw_rows(100, 30, 5, seed=1)
    assert all(len(np.unique(r)) == 30 for r in rows)
    assert not np.array_equal(rows[0], rows[1])
    with pytest.raises(ValueError, match="replicate size 200"):
        cal.draw_rows(100, 200, 1, seed=1)


def test_misses_reads_the_interval():
    row = pd.Series({"coverage": 0.9, "coverage_low": 0.86, "coverage_high": 0.93})
    assert cal.misses(row, "coverage", 0.95)
    assert not cal.misses(row, "coverage", 0.92)


@pytest.mark.slow
def test_pool_errors_name_the_file(tiny_pool: Path, tmp_path: Path):
    with pytest.raises(cal.PoolError, match=r"pool\.json"):
        cal.load_pool(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in tiny_pool.glob("*.*"):
        (broken / f.name).write_bytes(f.read_bytes())
    scores = next(broken.glob("scores-*.csv"))
    table = pd.read_csv(scores).drop(columns=["cobalt:colour"])
    table.to_csv(scores, index=False)
    with pytest.raises(cal.PoolError, match=rf"{scores.name}: missing column\(s\) cobalt:colour"):
        cal.load_pool(broken)


@pytest.mark.slow
def test_truth_and_rates_of_replicates(tiny_pool: Path):
    pool = cal.load_pool(tiny_pool)
    null, planted = cal.curve_worlds(pool)
    assert pool.worlds[planted].knobs["dimension_evidence"] == 1.0
    assert pool.worlds[null].knobs["dimension_evidence"] == 0.0
    reps = cal.run_world(pool, null, n=40, n_replicates=3, n_resamples=200, partitions=2, n_jobs=1)
    again = cal.run_world(pool, null, n=40, n_replicates=3, n_resamples=200, partitions=2, n_jobs=2)
    pd.testing.assert_frame_equal(reps, again)  # the same table whatever the workers
    assert set(reps["test"]) == {cal.PANEL_MEAN, cal.PANEL_RESELECT, cal.HP, cal.HP_AVG}
    assert ((reps["ci_low"] <= reps["q05"]) & (reps["q05"] <= reps["ci_high"])).all()
    # re-choosing the best on every resample can only lower the panel's interval
    key = ["replicate", "metric"]
    fixed = reps[reps["test"] == cal.PANEL_MEAN].set_index(key)
    again_best = reps[reps["test"] == cal.PANEL_RESELECT].set_index(key)
    assert (again_best["ci_low"] <= fixed["ci_low"] + 1e-12).all()
    assert (again_best["delta"] == fixed["delta"]).all()
    reps = cal.add_truth(reps, pool)
    panel = reps[(reps["test"] == cal.PANEL_MEAN) & (reps["metric"] == "spearman")]
    assert panel["truth"].nunique() == 1
    assert panel["truth"].iloc[0] == pytest.approx(cal.pool_values(pool, null)["spearman"])
    fused = reps[(reps["test"] == cal.HP) & (reps["metric"] == "kendall_b")]
    assert fused["truth"].iloc[0] == pytest.approx(fused["delta"].mean())
    summary = cal.summarize(reps)
    row = summary[(summary["test"] == cal.HP) & (summary["metric"] == "spearman")].iloc[0]
    assert row["n"] == 3
    assert row["coverage_low"] <= row["coverage"] <= row["coverage_high"]


@pytest.mark.slow
def test_notebook_08_runs_and_the_index_links_it(tiny_pool: Path, tmp_path: Path):
    config = load_config(ROOT / "papermill_runs.yaml")
    run = config.run("calibration")
    assert run.profile.name == "calibration"
    assert all(r.name != "calibration" for r in config.runs_of("demo"))  # not in `make report`
    overrides = {  # what a person would set in the notebook's overrides
        "pool_dir": str(tiny_pool),
        "n_images": 40,
        "null_replicates": 4,
        "curve_replicates": 3,
        "side_replicates": 2,
        "partitions": 2,
        "partition_replicates": 3,
        "n_resamples": 200,
        "n_jobs": 1,
    }
    outputs = tmp_path / "outputs"
    result = execute_notebook(config, run, "08_calibration", outputs, overrides=overrides)
    assert result.ok, result.error
    tables = outputs / "calibration" / "tables"
    for name in (
        "type1_error",
        "power_curve",
        "coverage",
        "partition_conditioning",
        "recipe_confusion",
        "summary",
        "replicates",
    ):
        assert (tables / f"{name}.csv").exists(), name
    type1 = pd.read_csv(tables / "type1_error.csv")
    assert (type1["reject_low"] <= type1["reject"] + 1e-12).all()
    assert set(type1.loc[type1["test"] == cal.HP, "n"]) == {4}
    assert set(type1.loc[type1["test"] == cal.HP_AVG, "n"]) == {3}  # the partition replicates
    heads = json.loads((outputs / "calibration" / "headlines.json").read_text())
    assert "type1_primary" in heads["08_calibration"]
    assert_reads_well(outputs / "calibration", "08_calibration")
    index = write_index(outputs, [result], config).read_text()
    assert 'href="calibration/08_calibration.html"' in index


@pytest.mark.slow
def test_the_heldout_truth_scores_each_replicate_on_the_images_it_did_not_use(tiny_pool: Path):
    from judgepanel.core.prompts import DIMENSIONS
    from judgepanel.stats.correlation import correlate
    from judgepanel.studies.common.combiners import gb_combiner

    pool = cal.load_pool(tiny_pool)
    null, _ = cal.curve_worlds(pool)
    reps = cal.add_truth(
        cal.run_world(pool, null, n=40, n_replicates=2, n_resamples=200, n_jobs=1), pool
    )
    # recompute replicate 0's held-out H+P_gb difference by hand: fit on its 40, score the rest
    world = pool.worlds[null]
    rows = cal.draw_rows(pool.n_images, 40, 2, 0)[0]
    rest = np.setdiff1d(np.arange(pool.n_images), rows)
    fams = list(pool.predeclared)
    cols = [f"h:{f}" for f in fams] + [f"{f}:{d}" for f in fams for d in DIMENSIONS]
    y = world.humans["y"].to_numpy(float)
    X = world.scores[cols].to_numpy(float)
    fused = gb_combiner().fit(X[rows], y[rows]).predict(X[rest])
    rhos = {
        f: correlate(y[rows], world.scores[f"h:{f}"].to_numpy(float)[rows], "spearman")
        for f in fams
    }
    best = max(rhos, key=rhos.__getitem__)
    expected = correlate(y[rest], fused, "spearman") - correlate(
        y[rest], world.scores[f"h:{best}"].to_numpy(float)[rest], "spearman"
    )
    got = reps[
        (reps["test"] == cal.HP) & (reps["metric"] == "spearman") & (reps["replicate"] == 0)
    ]["heldout_delta"].iloc[0]
    assert got == pytest.approx(expected, abs=1e-12)
    hp = reps[(reps["test"] == cal.HP) & (reps["metric"] == "spearman")]
    assert hp["truth_heldout"].iloc[0] == pytest.approx(hp["heldout_delta"].mean())
    # unlike the replicates' own mean, the held-out truth is not the mean estimate
    assert hp["truth_heldout"].iloc[0] != pytest.approx(hp["delta"].mean())
    summary = cal.summarize(reps)
    row = summary[(summary["test"] == cal.HP) & (summary["metric"] == "spearman")].iloc[0]
    assert row["bias"] == pytest.approx(row["mean_delta"] - row["truth_heldout"])
    assert row["bias_low"] <= row["bias"] <= row["bias_high"]
    assert 0 <= row["reject_at_heldout"] <= 1 and 0 <= row["coverage_heldout"] <= 1
