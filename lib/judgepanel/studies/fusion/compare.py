"""Paired comparisons of many arms at once, on shared bootstrap resamples.

The ablation and trio notebooks compare a dozen arms with two comparators under two
metrics. Each arm's resampled metric is computed once (``stats.bootstrap_arms``, same
seed, hence the same resampled images for every arm), and every difference is read off
those columns, so all rows of a table are paired with each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.claims.rows import Claim
from judgepanel.stats import BootstrapResult, bootstrap_arms, summarize_paired
from judgepanel.stats.correlation import correlate as correlate_metric
from judgepanel.studies.common.combiners import FOLD_SEED

METRICS: tuple[str, ...] = ("spearman", "kendall_b")
COLUMNS: tuple[str, ...] = (
    "arm",
    "comparator",
    "metric",
    "value",
    "comparator_value",
    "delta",
    "ci_low",
    "ci_high",
    "p",
    "n",
)
"""The columns of a comparison table, in order."""


def compare_pairs(
    y: np.ndarray,
    arms: Mapping[str, np.ndarray],
    pairs: Sequence[tuple[str, str]],
    *,
    metrics: Sequence[str] = METRICS,
    n_resamples: int = 10_000,
    seed: int = 0,
    alternative: str = "greater",
) -> pd.DataFrame:
    """Chosen pairs of arms under every metric, by paired bootstrap on shared resamples.

    Each arm named in ``pairs`` is bootstrapped once per metric (one seed, so every row is
    paired with every other), and each pair's difference is read off those columns.

    Args:
        y: the human mean (n,).
        arms: name -> scores (n,).
        pairs: (arm, comparator) names from ``arms``; delta = arm - comparator.
        metrics: ``spearman`` and/or ``kendall_b``.
        n_resamples: bootstrap resamples over images.
        seed: resampling seed.
        alternative: the stated direction (``greater``: the arm beats the comparator).

    Returns:
        One row per (metric, pair), pairs in the order given: ``arm``, ``comparator``,
        ``metric`` and the columns of :func:`comparison_row`.
    """
    y = np.asarray(y, float)
    unknown = sorted({name for pair in pairs for name in pair} - set(arms))
    if unknown:
        raise ValueError(f"pairs name arms that were not given: {unknown}")
    names = list(dict.fromkeys(name for pair in pairs for name in pair))
    rows = []
    for metric in metrics if pairs else ():
        samples = bootstrap_arms(
            y, {k: arms[k] for k in names}, metric, n_resamples=n_resamples, seed=seed
        )
        col = {k: samples[:, i] for i, k in enumerate(names)}
        full = {k: correlate_metric(y, arms[k], metric) for k in names}
        for aname, cname in pairs:
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
    return pd.DataFrame(rows, columns=COLUMNS)


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
        comparators: name -> scores (n,) of the comparators (best single, panel mean...); a
            comparator may also be an arm, under the same name and with the same scores.
        metrics: ``spearman`` and/or ``kendall_b``.
        n_resamples: bootstrap resamples over images.
        seed: resampling seed, shared by all arms so every row is paired.
        alternative: the stated direction (``greater``: the arm beats the comparator).
        skip_self: leave out an arm compared with an identical comparator.

    Returns:
        One row per (comparator, arm, metric), ordered by metric, then comparator, then
        arm: ``arm``, ``comparator``, ``metric``, ``value`` (the arm's metric),
        ``comparator_value``, ``delta``, ``ci_low``, ``ci_high``, ``p``, ``n``. q-values
        are added by the caller over the family of comparisons it declares
        (``stats.add_q``).
    """
    clash = [k for k in comparators if k in arms and not np.array_equal(arms[k], comparators[k])]
    if clash:
        raise ValueError(f"comparator(s) {clash} share an arm's name but not its scores")
    pairs = [
        (aname, cname)
        for cname, cvals in comparators.items()
        for aname, avals in arms.items()
        if not (skip_self and (aname == cname or np.array_equal(avals, cvals)))
    ]
    return compare_pairs(
        y,
        {**arms, **comparators},
        pairs,
        metrics=metrics,
        n_resamples=n_resamples,
        seed=seed,
        alternative=alternative,
    )


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


def stack_datasets(
    frames: Mapping[str, pd.DataFrame], *, key: str = "dataset", first: bool = True
) -> pd.DataFrame:
    """Each dataset's table stacked into one, with a ``key`` column naming its dataset.

    The key column comes first (``first``) or last, the other columns in their order.
    """
    out = pd.concat([f.assign(**{key: name}) for name, f in frames.items()], ignore_index=True)
    return out[[key, *[c for c in out.columns if c != key]]] if first else out


def plain_arm(arm: str) -> str:
    """An arm's name for prose: ``H+P_gb`` in brackets after the words that say what it is."""
    if arm == "H+P_gb":
        return "the fused score (H+P_gb)"
    if arm.startswith("H+P_gb (") and arm.endswith(")"):
        return f"the fused score of the {arm[len('H+P_gb (') : -1]} block (H+P_gb)"
    return arm


def gain_claim(
    row: Any,
    *,
    id: str,
    a: str,
    b: str,
    dataset: str,
    scope: str,
    family: str,
    alpha: float = 0.05,
) -> Claim:
    """One out-of-fold comparison row as a ledger claim: a one-sided test for ``a`` being
    better, over images, on the fixed fold partition, corrected in ``family``."""
    return Claim.of_row(
        row,
        id=id,
        a=a,
        b=b,
        dataset=dataset,
        scope=scope,
        metric=str(row["metric"]),
        unit="images",
        alternative="greater",
        family=family,
        alpha=alpha,
        note=f"fold partition seed {FOLD_SEED}",
    )
