"""Paired comparisons of many arms at once, on shared bootstrap resamples.

The ablation and trio notebooks compare a dozen arms with two comparators under two
metrics. Each arm's resampled metric is computed once (``stats.bootstrap_arms``, same
seed, hence the same resampled images for every arm), and every difference is read off
those columns, so all rows of a table are paired with each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgepanel.stats import BootstrapResult, bootstrap_arms, summarize_paired
from judgepanel.stats.correlation import correlate as correlate_metric

METRICS: tuple[str, ...] = ("spearman", "kendall_b")
METRIC_LABEL = {"spearman": "ρ", "kendall_b": "τ_b"}


def arm_metrics(
    y: np.ndarray, arms: Mapping[str, np.ndarray], metrics: Sequence[str] = METRICS
) -> pd.DataFrame:
    """Each arm's metrics on the full sample: one row per arm, one column per metric."""
    rows = [
        {"arm": name, **{m: correlate_metric(y, a, m) for m in metrics}} for name, a in arms.items()
    ]
    return pd.DataFrame(rows)


def compare_arms(
    y: np.ndarray,
    arms: Mapping[str, np.ndarray],
    comparators: Mapping[str, np.ndarray],
    *,
    metrics: Sequence[str] = METRICS,
    n_resamples: int = 10_000,
    seed: int = 0,
    alternative: str = "greater",
    skip_self: bool = True,
) -> pd.DataFrame:
    """Every arm against every comparator under every metric, by paired bootstrap.

    Args:
        y: the human mean (n,).
        arms: name -> scores (n,) of the arms under test.
        comparators: name -> scores (n,) of the comparators (best single, panel mean...).
        metrics: ``spearman`` and/or ``kendall_b``.
        n_resamples: bootstrap resamples over images.
        seed: resampling seed, shared by all arms so every row is paired.
        alternative: the stated direction (``greater``: the arm beats the comparator).
        skip_self: leave out an arm compared with an identical comparator.

    Returns:
        One row per (comparator, arm, metric): ``arm``, ``comparator``, ``metric``,
        ``value`` (the arm's metric), ``comparator_value``, ``delta``, ``ci_low``,
        ``ci_high``, ``p``, ``n``. q-values are added by the caller over the family of
        comparisons it declares (``stats.add_q``).
    """
    y = np.asarray(y, float)
    names = list(arms) + [c for c in comparators if c not in arms]
    pool = {**arms, **comparators}
    rows = []
    for metric in metrics:
        samples = bootstrap_arms(
            y, {k: pool[k] for k in names}, metric, n_resamples=n_resamples, seed=seed
        )
        col = {k: samples[:, i] for i, k in enumerate(names)}
        full = {k: correlate_metric(y, pool[k], metric) for k in names}
        for cname, cvals in comparators.items():
            for aname, avals in arms.items():
                if skip_self and (aname == cname or np.array_equal(avals, cvals)):
                    continue
                res = summarize_paired(
                    col[aname],
                    col[cname],
                    full[aname],
                    full[cname],
                    metric=metric,
                    n=y.size,
                    alternative=alternative,
                )
                rows.append(
                    {"arm": aname, "comparator": cname, "metric": metric, **comparison_row(res)}
                )
    return pd.DataFrame(rows)


def comparison_row(res: BootstrapResult) -> dict[str, float | int]:
    """A paired result in the columns every comparison table of the report uses."""
    return {
        "value": res.estimate_a,
        "comparator_value": res.estimate_b,
        "delta": res.delta,
        "ci_low": res.ci_low,
        "ci_high": res.ci_high,
        "p": res.p,
        "n": res.n,
    }
