"""Grouped ratios with cluster-bootstrap intervals: a slow loop, the seeding rule, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgepanel.stats import cluster_bootstrap, group_seed, grouped_draws, grouped_ratios


def _frame(seed: int = 0, n: int = 240) -> pd.DataFrame:
    """Rows of three judges x two metrics, clustered in tasks of unequal size."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "judge": rng.choice(["aurora", "basalt", "cobalt"], n),
            "metric": rng.choice(["top1", "tb1"], n),
            "task": [f"t{int(t):02d}" for t in rng.integers(0, 30, n)],
            "correct": (rng.random(n) < 0.6).astype(float),
            "num": rng.random(n) / 3.0,
            "den": rng.integers(1, 4, n).astype(float),
        }
    )


def _slow(frame, by, cluster, num, den, n_resamples, seed, confidence=0.95):
    """The reference: materialise every resample of every group, one at a time."""
    rows = {}
    for key, sub in frame.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        labels = np.unique(sub[cluster].to_numpy())
        parts = {lab: sub[sub[cluster] == lab] for lab in labels}
        rng = np.random.default_rng(group_seed(key, seed))
        draws = rng.integers(0, labels.size, size=(n_resamples, labels.size))
        ratios = []
        for row in draws:
            sample = pd.concat([parts[labels[j]] for j in row])
            d = sample[den].sum() if den else len(sample)
            ratios.append(sample[num].sum() / d)
        ratios = np.asarray(ratios)
        alpha = (1 - confidence) / 2
        lo, hi = np.quantile(ratios, [alpha, 1 - alpha])
        total_den = sub[den].sum() if den else len(sub)
        p = min(
            1.0, 2 * min((1 + (ratios <= 0).sum()), (1 + (ratios >= 0).sum())) / (1 + len(ratios))
        )
        rows[key] = (sub[num].sum() / total_den, lo, hi, p, len(sub), labels.size)
    return rows


@pytest.mark.parametrize("den", [None, "den"])
def test_grouped_ratios_equal_a_slow_loop(den):
    frame = _frame(1)
    num = "correct" if den is None else "num"
    got = grouped_ratios(
        frame, ["judge", "metric"], "task", num, den, n_resamples=300, seed=7, p_value=True
    )
    ref = _slow(frame, ["judge", "metric"], "task", num, den, 300, 7)
    assert len(got) == len(ref) == 6
    for row in got.itertuples(index=False):
        est, lo, hi, p, n, k = ref[(row.judge, row.metric)]
        assert row.estimate == pytest.approx(est, abs=1e-12)
        assert row.ci_low == pytest.approx(lo, abs=1e-12)
        assert row.ci_high == pytest.approx(hi, abs=1e-12)
        assert row.p == pytest.approx(p, abs=1e-12)
        assert (row.n, row.n_clusters) == (n, k)


def test_one_group_draws_what_cluster_bootstrap_draws_with_the_group_seed():
    frame = _frame(2)
    frame = frame[frame["judge"] == "aurora"]
    got = grouped_ratios(frame, ["judge"], "task", "correct", n_resamples=500, seed=3).iloc[0]
    ref = cluster_bootstrap(
        frame["correct"], frame["task"], n_resamples=500, seed=group_seed(("aurora",), 3)
    )
    assert got.ci_low == pytest.approx(ref.ci_low, abs=1e-12)
    assert got.ci_high == pytest.approx(ref.ci_high, abs=1e-12)
    assert got.estimate == pytest.approx(ref.estimate, abs=1e-15)
    assert got.n_clusters == ref.n_clusters


def _row(table: pd.DataFrame, judge: str, metric: str) -> pd.Series:
    return table.set_index(["judge", "metric"]).loc[(judge, metric)]


@pytest.mark.parametrize("num,den", [("correct", None), ("num", "den")])
def test_a_group_interval_does_not_depend_on_the_other_groups_or_the_row_order(num, den):
    frame = _frame(3)

    def table(f):
        return grouped_ratios(f, ["judge", "metric"], "task", num, den, n_resamples=400, seed=5)

    base = _row(table(frame), "basalt", "tb1")
    without = frame[frame["judge"] != "aurora"]
    added = pd.concat([frame, frame.assign(judge="aardvark")])
    shuffled = frame.sample(frac=1.0, random_state=11)
    reversed_groups = frame.sort_values(["judge", "metric"], ascending=False)
    for other in (without, added, shuffled, reversed_groups):
        row = _row(table(other), "basalt", "tb1")
        # bit-identical, not merely close
        assert (row.ci_low, row.ci_high, row.n, row.n_clusters) == (
            base.ci_low,
            base.ci_high,
            base.n,
            base.n_clusters,
        )
    # other keys draw other resamples; the same key the same ones
    assert group_seed(("basalt", "tb1"), 5) != group_seed(("basalt", "top1"), 5)
    assert group_seed(("basalt", "tb1"), 5) != group_seed(("basalt", "tb1"), 6)
    assert group_seed((np.int64(3), np.str_("x")), 5) == group_seed((3, "x"), 5)


def test_no_keys_is_one_group_and_extra_columns_are_aggregated():
    frame = _frame(4)
    out = grouped_ratios(
        frame,
        [],
        "task",
        "correct",
        n_resamples=100,
        extra={"mean_den": ("den", np.mean), "judges": ("judge", lambda v: len(set(v)))},
    )
    assert len(out) == 1
    row = out.iloc[0]
    assert row.estimate == frame["correct"].mean()
    assert row.mean_den == pytest.approx(frame["den"].mean())
    assert row.judges == 3 and row.n == len(frame)
    assert row.sum_numerator == frame["correct"].sum() and row.sum_denominator == len(frame)
    empty = grouped_ratios(frame.iloc[:0], ["judge"], "task", "correct", n_resamples=10)
    assert empty.empty and list(empty.columns[:4]) == ["judge", "estimate", "ci_low", "ci_high"]


def test_grouped_draws_give_the_same_resamples_as_the_table():
    frame = _frame(5)
    table = grouped_ratios(frame, ["judge"], "task", "correct", n_resamples=200, seed=9)
    for (labels, sub, draws), row in zip(
        grouped_draws(frame, ["judge"], "task", n_resamples=200, seed=9),
        table.itertuples(index=False),
        strict=True,
    ):
        assert labels["judge"] == row.judge
        lo, hi = np.quantile(draws.ratios(sub["correct"]), [0.025, 0.975])
        assert (lo, hi) == (row.ci_low, row.ci_high)


def test_an_empty_resampled_denominator_is_left_out_of_the_interval():
    frame = pd.DataFrame(
        {"task": ["a", "a", "b", "c"], "num": [1.0, 0.0, 0.0, 0.0], "den": [1.0, 1.0, 0.0, 0.0]}
    )
    row = grouped_ratios(frame, [], "task", "num", "den", n_resamples=300).iloc[0]
    assert row.estimate == 0.5
    assert 0.0 <= row.ci_low <= row.ci_high <= 1.0


def test_bad_input_is_named():
    frame = _frame(6)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['paper'\]"):
        grouped_ratios(frame, ["judge"], "paper", "correct")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['axis', 'hits'\]"):
        grouped_ratios(frame, ["axis"], "task", "hits")
    with pytest.raises(ValueError, match="missing labels"):
        grouped_ratios(frame.assign(task=None), ["judge"], "task", "correct")
    with pytest.raises(ValueError, match="correct contains 1 NaN"):
        bad = frame.copy()
        bad.loc[0, "correct"] = np.nan
        grouped_ratios(bad, [], "task", "correct")
    with pytest.raises(ValueError, match="n_resamples must be at least 1"):
        grouped_ratios(frame, ["judge"], "task", "correct", n_resamples=0)
    with pytest.raises(ValueError, match="confidence"):
        grouped_ratios(frame, ["judge"], "task", "correct", confidence=95)
    with pytest.raises(ValueError, match="non-negative"):
        group_seed(("a",), -1)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['axis'\]"):
        grouped_draws(frame, ["axis"], "task", n_resamples=10, seed=0)  # before any draw


def test_a_difference_zero_in_exact_arithmetic_is_zero_on_every_resample():
    # each task's excesses cancel (1 - 1/3 - 1/3 - 1/3 per task), but in floating point
    # their sum depends on the order of the terms; the interval must be [0, 0] and p = 1
    third = 1.0 / 3.0
    excess = [1 - third, -third, -third, -third, 1 - third, -third] * 20
    tasks = np.repeat(np.arange(40), 3)
    frame = pd.DataFrame({"task": tasks, "excess": excess})
    assert frame.groupby("task")["excess"].sum().abs().max() < 1e-15
    row = grouped_ratios(frame, [], "task", "excess", n_resamples=500, p_value=True).iloc[0]
    assert (row.ci_low, row.ci_high, row.p) == (0.0, 0.0, 1.0)
