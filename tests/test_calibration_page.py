"""The calibration page's helpers (notebook 08): its rates in words, the rows each section
reads and its figures, on small hand-made summaries and replicates."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from judgepanel.report.notebook_run import RunValues
from judgepanel.studies.fusion import calibration as cal
from judgepanel.studies.fusion import calibration_page as page


def _rate(column: str, rate: float, low: float, high: float, **more: float) -> pd.Series:
    return pd.Series({column: rate, f"{column}_low": low, f"{column}_high": high, **more})


def test_a_rate_is_worded_against_its_nominal_value():
    held = page.rate_sentence(_rate("reject", 0.06, 0.02, 0.11), "reject", 0.05, "rejects")
    assert held == "rejects: 0.060 [0.020, 0.110], consistent with the nominal 0.050"
    high = page.rate_sentence(_rate("reject", 0.2, 0.12, 0.3), "reject", 0.05, "rejects")
    assert "misses the nominal 0.050" in high and "anti-conservative" in high
    low = page.rate_sentence(_rate("reject", 0.0, 0.0, 0.01), "reject", 0.05, "rejects")
    assert "the test is conservative" in low and "loses power" in low
    assert page.nominal_verdict(_rate("x", 0.06, 0.02, 0.11), "x", 0.05).startswith("is within")
    assert "anti-conservative" in page.nominal_verdict(_rate("x", 0.2, 0.12, 0.3), "x", 0.05)
    assert "too rarely" in page.nominal_verdict(_rate("x", 0.0, 0.0, 0.01), "x", 0.05)


def test_a_raw_rate_is_a_type_one_error_only_at_a_zero_truth():
    at_zero = page.raw_rate(_rate("reject", 0.05, 0.02, 0.1, truth=0.001))
    assert at_zero.startswith("rejects at p < 0.05: 0.050")
    above = page.raw_rate(_rate("reject", 0.5, 0.4, 0.6, truth=0.02))
    assert above == (
        "rejects at p < 0.05 in 0.500 [0.400, 0.600] of replicates; this is "
        "power, not a type-I error, since the true difference is above zero"
    )
    assert "no type-I error either" in page.raw_rate(_rate("reject", 0.0, 0.0, 0.1, truth=-0.02))


def test_coverage_short_of_the_exact_rate_counts_only_misses_below():
    rows = pd.DataFrame(
        {
            "coverage": [0.80, 0.95, 1.0],
            "coverage_low": [0.7, 0.9, 0.97],
            "coverage_high": [0.88, 0.98, 1.0],
        }
    )
    assert page.short_coverage(rows, 0.95).index.tolist() == [0]
    assert page.n_missing(rows, 0.95) == 2  # too rarely and too often both miss


def test_the_null_rows_follow_the_tests_order_and_the_plan_reads_the_run():
    summary = pd.DataFrame(
        {
            "world": ["null"] * 4 + ["s1"],
            "metric": "spearman",
            "test": [cal.HP_AVG, cal.HP, cal.PANEL_MEAN, cal.PANEL_RESELECT, cal.HP],
        }
    )
    rows = page.null_rows(summary, "null")
    assert list(rows["test"]) == list(page.DEFAULTS)
    params = RunValues(
        {
            "n_images": 40,
            "null_replicates": 4,
            "curve_replicates": 3,
            "side_replicates": 2,
            "partitions": 2,
            "partition_replicates": 3,
            "n_resamples": 200,
            "seed": 7,
        }
    )
    plan = page.study_plan(params)
    assert (plan.n, plan.partitions, plan.seed) == (40, 2, 7)
    assert page.delta_name("spearman") == "Δρ" and page.delta_name("kendall_b") == "Δτ_b"


def _reps(n: int = 6) -> pd.DataFrame:
    """Replicates of H+P_gb and its partition-averaged option in the null world."""
    rng = np.random.default_rng(0)
    rows = []
    for test in (cal.HP, cal.HP_AVG):
        for metric in cal.METRICS:
            for r in range(n):
                delta = float(rng.normal(0, 0.02))
                rows.append(
                    {
                        "world": "null",
                        "test": test,
                        "metric": metric,
                        "replicate": r,
                        "delta": delta,
                        "ci_low": delta - 0.04,
                        "ci_high": delta + 0.04,
                        "q05": delta - 0.03,
                        "p": 0.5,
                        "truth": 0.0,
                        "truth_heldout": 0.0,
                        "heldout_delta": 0.0,
                        "partition_sd": 0.01,
                        "dimension_evidence": 0.0,
                        "rater_noise": 1.0,
                        "shared_error": 0.0,
                        "rejected": False,
                        "covered": True,
                        "rejected_at_truth": False,
                        "rejected_at_heldout": False,
                        "covered_heldout": True,
                    }
                )
    return pd.DataFrame(rows)


def test_partition_conditioning_holds_each_arm_against_its_own_mean():
    part, side = page.partition_conditioning(_reps(), "null")
    mean = part.groupby(["test", "metric"])["delta"].transform("mean")
    np.testing.assert_allclose(part["truth"], mean)
    assert part["covered"].all()  # every interval is ±0.04 around a spread of 0.02
    assert side["half_width"].to_numpy() == pytest.approx(0.04)
    spread = page.partition_spread(part)
    assert spread.partitions == pytest.approx(0.01)
    assert spread.standard_error == pytest.approx(0.08 / 3.92)


def test_the_default_is_summarised_on_the_replicates_its_option_ran_on():
    reps = _reps()
    reps = reps[~((reps["test"] == cal.HP_AVG) & (reps["replicate"] >= 3))]  # option: 3 of 6
    summary = cal.summarize(reps)
    beside = page.options_beside(summary, ["null"])
    pair = page.default_beside_option(reps, beside, cal.HP, cal.HP_AVG, "spearman")
    assert pair is not None
    default, option = pair
    assert int(default["n"].iloc[0]) == 3 and int(option["n"].iloc[0]) == 3
    assert (
        page.default_beside_option(reps, beside, cal.PANEL_MEAN, cal.PANEL_RESELECT, "spearman")
        is None
    )


def test_the_figures_draw_both_metrics():
    summary = pd.DataFrame(
        [
            {
                "world": w,
                "dimension_evidence": s,
                "test": t,
                "metric": m,
                "reject": 0.1,
                "reject_low": 0.05,
                "reject_high": 0.2,
                "coverage": 0.94,
                "coverage_low": 0.9,
                "coverage_high": 0.97,
            }
            for w, s in (("null", 0.0), ("s1", 1.0))
            for t in (cal.PANEL_MEAN, cal.HP)
            for m in cal.METRICS
        ]
    )
    fig = page.power_figure(summary)
    assert [ax.get_title() for ax in fig.axes] == ["Δρ", "Δτ_b"]
    assert len(fig.axes[0].get_legend_handles_labels()[1]) == 2
    fig = page.coverage_figure(summary, ["null", "s1"], 0.96)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["null", "s1"]
