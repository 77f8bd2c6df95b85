"""What the calibration page (notebook 08) computes between its tables and its sentences.

The page keeps the call that makes each table and figure and the sentences that read them;
these helpers select the rows each section reads from the replicates' summary
(:mod:`judgepanel.studies.fusion.calibration`), word a rate against its nominal value and
draw the power and coverage figures. Not imported by the package: only a page draws.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgepanel.claims import wording
from judgepanel.studies.fusion.calibration import (
    HP,
    HP_AVG,
    METRICS,
    PANEL_MEAN,
    PANEL_RESELECT,
    TESTS,
    Pool,
    StudyPlan,
    misses,
    summarize,
)

DEFAULTS = (PANEL_MEAN, PANEL_RESELECT, HP, HP_AVG)
"""The tests in the order the type-I table lists them."""
OPTIONS = (HP_AVG, PANEL_RESELECT)
"""The options beside the defaults, left out of the power curve and the coverage table."""
OPTION_PAIRS = ((PANEL_MEAN, PANEL_RESELECT), (HP, HP_AVG))
"""Each default test and the option aimed at the way it can miss."""


def _rate(name: str) -> list[str]:
    """A rate's columns: the rate and its interval's ends."""
    return [name, f"{name}_low", f"{name}_high"]


TYPE1_COLUMNS = [
    "test", "metric", "truth", "mean_delta", "n", *_rate("reject"), *_rate("reject_at_truth"),
    "truth_heldout", *_rate("bias"), *_rate("reject_at_heldout"),
]  # fmt: skip
POWER_COLUMNS = ["world", "dimension_evidence", "test", "metric", "truth", "n", *_rate("reject")]
COVERAGE_COLUMNS = [
    "world", "test", "metric", "truth", "n", *_rate("coverage"), "miss_low", "miss_high",
]  # fmt: skip
PARTITION_COLUMNS = [
    "test", "metric", "truth", "n", *_rate("coverage"), *_rate("reject_at_truth"), "half_width",
]  # fmt: skip
OPTION_COLUMNS = [
    "world", "test", "metric", "truth", "n", *_rate("coverage"), *_rate("reject_at_truth"),
]  # fmt: skip
RULE_COLUMNS = ["fold", "statement", "threshold", "accuracy", "majority_accuracy", "n", "n_pays"]
"""The columns of the recipe's rules learned on each half."""
ARMS = ((PANEL_MEAN, "#888888"), (HP, "#1f4e79"))
"""The two default tests the figures draw, with their colours."""


def study_plan(params: Any) -> StudyPlan:
    """The replicates the run's parameters ask for (``params``: the run's values by
    attribute, as ``NotebookRun.params`` gives them)."""
    return StudyPlan(
        n=params.n_images,
        null_replicates=params.null_replicates,
        curve_replicates=params.curve_replicates,
        side_replicates=params.side_replicates,
        partitions=params.partitions,
        partition_replicates=params.partition_replicates,
        n_resamples=params.n_resamples,
        seed=params.seed,
    )


def world_table(pool: Pool) -> pd.DataFrame:
    """One row per calibration world of ``pool``: its label and its knobs."""
    return pd.DataFrame([{"world": w.label, **w.knobs} for w in pool.worlds.values()])


def delta_name(metric: str) -> str:
    """How a page names a difference in ``metric``: Δρ or Δτ_b."""
    return "Δρ" if metric == "spearman" else "Δτ_b"


def null_rows(summary: pd.DataFrame, null: str) -> pd.DataFrame:
    """The null world's rows of the summary, by test (in :data:`DEFAULTS` order) and metric."""
    rows = summary[summary["world"] == null].copy()
    rows["test"] = pd.Categorical(rows["test"], list(DEFAULTS), ordered=True)
    return rows.sort_values(["test", "metric"])


def rate_sentence(row: pd.Series, column: str, nominal: float, what: str) -> str:
    """A rate with its Wilson interval against its ``nominal`` value: consistent with it, or
    missing it beyond the replicates' noise and in which direction."""
    rate = row[column]
    ci = wording.interval(row[column + "_low"], row[column + "_high"])
    if not misses(row, column, nominal):
        return f"{what}: {rate:.3f} {ci}, consistent with the nominal {nominal:.3f}"
    plain = (
        "the test is anti-conservative: it rejects a true null more often than it claims"
        if rate > nominal
        else "the test is conservative: it rejects a true null less often than it claims, "
        "and so loses power"
    )
    return (
        f"{what}: {rate:.3f} {ci}, which misses the nominal {nominal:.3f} beyond the "
        f"replicates' noise; {plain}"
    )


def raw_rate(row: pd.Series) -> str:
    """The share of replicates rejecting at p < 0.05, read as a type-I error only where the
    true difference is zero (within 0.005); otherwise as power or as no error at all."""
    if abs(row["truth"]) < 0.005:
        return rate_sentence(row, "reject", 0.05, "rejects at p < 0.05")
    rate = f"{row['reject']:.3f} {wording.interval(row['reject_low'], row['reject_high'])}"
    kind = (
        "power, not a type-I error, since the true difference is above zero"
        if row["truth"] > 0
        else "no type-I error either: the true difference lies below zero, so the test may "
        "reject less than 5% without being miscalibrated"
    )
    return f"rejects at p < 0.05 in {rate} of replicates; this is {kind}"


def nominal_verdict(row: pd.Series, column: str, nominal: float) -> str:
    """Whether a stated rate holds: within the replicates' noise of ``nominal``, or which
    way the test errs."""
    if not misses(row, column, nominal):
        return "is within the replicates' noise of it"
    if row[column] > nominal:
        return "does not hold: the test is anti-conservative (it rejects true nulls too often)"
    return "does not hold: the test is conservative (it rejects true nulls too rarely)"


def short_coverage(rows: pd.DataFrame, exact: float) -> pd.DataFrame:
    """The rows whose coverage falls below ``exact`` beyond the replicates' noise."""
    return rows[
        [misses(r, "coverage", exact) and r["coverage"] < exact for _, r in rows.iterrows()]
    ]


def n_missing(rows: pd.DataFrame, exact: float) -> int:
    """How many rows' coverage misses ``exact`` beyond the noise, either way."""
    return sum(misses(r, "coverage", exact) for _, r in rows.iterrows())


def partition_conditioning(reps: pd.DataFrame, null: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The null world's replicates of H+P_gb that also fitted the partition-averaged option,
    each arm held against its own truth (the mean of its estimates), and their summary with
    the intervals' mean half-width.

    Returns:
        (replicate rows with truth, covered, rejected_at_truth; summary per test and metric).
    """
    part = reps[(reps["world"] == null) & reps["partition_sd"].notna()]
    part = part[part["test"].isin([HP, HP_AVG])].copy()
    part["truth"] = part.groupby(["test", "metric"])["delta"].transform("mean")
    part["covered"] = (part["ci_low"] <= part["truth"]) & (part["truth"] <= part["ci_high"])
    part["rejected_at_truth"] = part["q05"] > part["truth"]
    side = summarize(part)
    side["half_width"] = (
        part.groupby(["test", "metric"], sort=False)
        .apply(lambda g: float(((g["ci_high"] - g["ci_low"]) / 2).mean()), include_groups=False)
        .to_numpy()
    )
    return part, side


@dataclass(frozen=True)
class PartitionSpread:
    """How far H+P_gb's Δρ moves, against what its interval assumes.

    Attributes:
        partitions: sd over fold partitions within one replicate (mean over replicates).
        standard_error: the bootstrap standard error (a 95% interval's width / 3.92).
        replicates: sd of the estimate over replicates.
    """

    partitions: float
    standard_error: float
    replicates: float


def partition_spread(part: pd.DataFrame) -> PartitionSpread:
    """The spreads of H+P_gb's Δρ in :func:`partition_conditioning`'s replicate rows."""
    rho = part[(part["metric"] == "spearman") & (part["test"] == HP)]
    return PartitionSpread(
        partitions=float(rho["partition_sd"].mean()),
        standard_error=float(((rho["ci_high"] - rho["ci_low"]) / 3.92).mean()),
        replicates=float(rho["delta"].std()),
    )


def options_beside(summary: pd.DataFrame, curve: Sequence[str]) -> pd.DataFrame:
    """Each option's summary rows and its default's, in the worlds where an option ran and
    those of the power curve."""
    beside = summary[summary["test"].isin([t for p in OPTION_PAIRS for t in p])]
    ran = set(summary.loc[summary["test"] == HP_AVG, "world"]) | set(curve)
    return beside[beside["world"].isin(ran)]


def default_beside_option(
    reps: pd.DataFrame, beside: pd.DataFrame, default: str, option: str, metric: str
) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The default's summary on the very replicates the option ran on (held against its own
    truth), and the option's rows of ``beside``; None where the option did not run."""
    option_rows = beside[(beside["test"] == option) & (beside["metric"] == metric)]
    if option_rows.empty:
        return None
    ran = reps.loc[
        (reps["test"] == option)
        & (reps["metric"] == metric)
        & reps["world"].isin(option_rows["world"]),
        ["world", "replicate"],
    ]
    same = reps[(reps["test"] == default) & (reps["metric"] == metric)].merge(ran.drop_duplicates())
    return summarize(same), option_rows


def _arm_errors(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A rate's Wilson interval as error bars (never negative)."""
    arms = [frame[column] - frame[f"{column}_low"], frame[f"{column}_high"] - frame[column]]
    return np.clip(np.vstack(arms), 0, None)


def _arms(
    axes: Sequence[plt.Axes], frame: pd.DataFrame
) -> Iterator[tuple[plt.Axes, int, str, str, pd.DataFrame]]:
    """Each metric's plot (titled) with each default arm: (plot, arm's place, test, colour,
    the arm's rows of ``frame`` in that metric)."""
    for ax, metric in zip(axes, METRICS, strict=True):
        ax.set_title(delta_name(metric))
        for k, (test, colour) in enumerate(ARMS):
            yield ax, k, test, colour, frame[(frame["test"] == test) & (frame["metric"] == metric)]


def power_figure(curve_rows: pd.DataFrame) -> plt.Figure:
    """The share of replicates rejecting at p < 0.05 against the planted dimension evidence,
    per metric, for the panel mean and H+P_gb, with the 0.05 line dashed."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, _, test, colour, d in _arms(axes, curve_rows):
        ax.errorbar(d["dimension_evidence"], d["reject"], yerr=_arm_errors(d, "reject"),
                    fmt="o-", capsize=3, color=colour, label=TESTS[test])  # fmt: skip
    for ax in axes:
        ax.axhline(0.05, color="0.5", ls="--", lw=1)
        ax.set_xlabel("planted dimension evidence s")
    axes[0].set_ylabel("share rejecting at p < 0.05\n(Wilson 95% CI)")
    fig.tight_layout()
    return fig


def coverage_figure(coverage: pd.DataFrame, worlds: Sequence[str], exact: float) -> plt.Figure:
    """Each world's coverage of the 95% intervals, per metric, for the panel mean and
    H+P_gb, against 0.95 (dashed) and what an exact interval covers here (dotted)."""
    labels = list(worlds)
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.35 * len(labels) + 1.8), sharey=True)
    for ax, k, test, colour, d in _arms(axes, coverage):
        d = d.set_index("world").loc[labels]
        y = np.arange(len(labels))[::-1] + (0.15 if k == 0 else -0.15)
        ax.errorbar(d["coverage"], y, xerr=_arm_errors(d, "coverage"), fmt="o", capsize=3,
                    color=colour, label=TESTS[test])  # fmt: skip
    for ax in axes:
        ax.axvline(0.95, color="0.4", ls="--", lw=1)
        ax.axvline(exact, color="0.7", ls=":", lw=1)
        ax.set_yticks(np.arange(len(labels))[::-1])
        ax.set_yticklabels(labels)
        ax.set_xlabel("coverage (Wilson 95% CI)")
    fig.tight_layout()
    return fig
