"""Refitting over random fold partitions: how much the partition moves the margin.

The paired bootstrap holds one fold partition fixed, so its intervals are conditional
on it; refitting over many random partitions shows how much the partition moves the
margin of H+P_gb over the best single model, and where the reference partition falls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgepanel.stats import (
    kendall_b,
    spearman,
)
from judgepanel.studies.common.combiners import FOLD_SEED, gb_combiner, oof_predict_many
from judgepanel.studies.fusion.blocks import Blocks, best_single, hp_design, panel_mean
from judgepanel.studies.fusion.compare import stack_datasets

PARTITION_SEEDS: tuple[int, ...] = tuple(range(20))
"""The random fold partitions of the robustness check (42, the reference, is not among them)."""


def sweep_partitions(
    blocks: Blocks,
    family_sets: Mapping[str, Sequence[str]],
    *,
    seeds: Sequence[int] = PARTITION_SEEDS,
    reference_seed: int = FOLD_SEED,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """H+P_gb minus the best single model under many random fold partitions.

    The (block, partition) fits are shared by ``n_jobs`` workers (None: one). The best
    single model does not depend on the folds, so all movement is the combiner's.

    Returns:
        One row per (block, seed): ``block``, ``seed``, ``reference`` (True for
        ``reference_seed``), ``rho``, ``tau_b`` (H+P_gb), ``best_family``, ``best_rho``,
        ``best_tau_b``, ``delta_rho``, ``delta_tau_b``, and the margin over the block's
        panel mean (which no fold touches either), ``panel_rho``, ``panel_tau_b``,
        ``delta_rho_panel``, ``delta_tau_b_panel``.
    """
    if reference_seed in seeds:
        raise ValueError(f"the reference seed {reference_seed} must not be among the random seeds")
    all_seeds = [*seeds, reference_seed]
    tasks = [(b, s) for b in family_sets for s in all_seeds]
    designs = {b: hp_design(blocks, fams) for b, fams in family_sets.items()}
    preds = oof_predict_many(
        [(gb_combiner(), designs[b], blocks.y, s) for b, s in tasks], n_jobs=n_jobs
    )
    y = blocks.y.to_numpy(float)
    best = {b: best_single(blocks.H_of(f), blocks.y) for b, f in family_sets.items()}
    panel = {b: panel_mean(blocks.H_of(f)).to_numpy(float) for b, f in family_sets.items()}
    panel_fit = {b: (spearman(y, m), kendall_b(y, m)) for b, m in panel.items()}
    rows = []
    for (b, s), pred in zip(tasks, preds, strict=True):
        name, table = best[b]
        best_rho, best_tau = float(table.iloc[0]["rho"]), float(table.iloc[0]["tau_b"])
        rho, tau = spearman(y, pred), kendall_b(y, pred)
        panel_rho, panel_tau = panel_fit[b]
        rows.append(
            {
                "block": b,
                "seed": s,
                "reference": s == reference_seed,
                "rho": rho,
                "tau_b": tau,
                "best_family": name,
                "best_rho": best_rho,
                "best_tau_b": best_tau,
                "delta_rho": rho - best_rho,
                "delta_tau_b": tau - best_tau,
                "panel_rho": panel_rho,
                "panel_tau_b": panel_tau,
                "delta_rho_panel": rho - panel_rho,
                "delta_tau_b_panel": tau - panel_tau,
            }
        )
    return pd.DataFrame(rows)


MARGINS = {
    ("best single", "spearman"): "delta_rho",
    ("best single", "kendall_b"): "delta_tau_b",
    ("panel mean", "spearman"): "delta_rho_panel",
    ("panel mean", "kendall_b"): "delta_tau_b_panel",
}
"""The sweep's column of H+P_gb's margin over each comparator, per metric."""


def random_margins(
    sweep: pd.DataFrame, block: str, comparator: str, metric: str = "spearman"
) -> np.ndarray:
    """H+P_gb's margin over ``comparator`` under each random partition of ``block`` (the
    reference partition left out): the spread a headline margin carries beside it."""
    try:
        column = MARGINS[(comparator, metric)]
    except KeyError:
        raise ValueError(
            f"the partition sweep has no margin over {comparator!r} in {metric!r}; it has "
            f"{sorted(MARGINS)}"
        ) from None
    rows = sweep[(sweep["block"] == block) & ~sweep["reference"]]
    if rows.empty:
        raise ValueError(f"the partition sweep has no random partition of block {block!r}")
    return rows[column].to_numpy(float)


def summarize_partitions(sweep: pd.DataFrame) -> pd.DataFrame:
    """Per block: mean, sd, min and max of the margin over the random partitions, and
    where the reference partition falls.

    ``reference_rank`` is the reference's rank among all partitions (1 = largest margin);
    ``reference_percentile`` the share of random partitions whose margin is at or below
    the reference's; ``n_positive`` how many random partitions have a positive margin.
    """
    rows = []
    for block, sub in sweep.groupby("block", sort=False):
        rand = sub[~sub["reference"]]
        ref = sub[sub["reference"]].iloc[0]
        row: dict[str, object] = {
            "block": block,
            "n_partitions": len(rand),
            "best_family": ref["best_family"],
        }
        for col in ("delta_rho", "delta_tau_b"):
            v = rand[col].to_numpy(float)
            row[f"{col}_mean"] = v.mean()
            row[f"{col}_sd"] = v.std(ddof=1) if v.size > 1 else np.nan
            row[f"{col}_min"] = v.min()
            row[f"{col}_max"] = v.max()
            row[f"{col}_p05"] = float(np.percentile(v, 5))
            row[f"{col}_p95"] = float(np.percentile(v, 95))
            row[f"{col}_n_positive"] = int((v > 0).sum())
            row[f"{col}_reference"] = float(ref[col])
            row[f"{col}_reference_rank"] = int(1 + (v > ref[col]).sum())
            row[f"{col}_reference_percentile"] = float((v <= ref[col]).mean())
        row["rho_mean"] = rand["rho"].mean()
        row["rho_max"] = rand["rho"].max()
        row["rho_reference"] = float(ref["rho"])
        rows.append(row)
    return pd.DataFrame(rows)


def blocks_named(
    family_sets: Mapping[str, Sequence[str]], prefixes: Sequence[str]
) -> dict[str, Sequence[str]]:
    """The family blocks whose name starts with one of ``prefixes`` (the runs file's
    ``partition_blocks``), in their order."""
    return {b: f for b, f in family_sets.items() if any(b.startswith(p) for p in prefixes)}


def sweep_datasets(
    blocks: Mapping[str, Blocks],
    family_sets: Mapping[str, Mapping[str, Sequence[str]]],
    prefixes: Sequence[str],
    *,
    seeds: Sequence[int] = PARTITION_SEEDS,
    n_jobs: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`sweep_partitions` and :func:`summarize_partitions` of every dataset's blocks
    named by ``prefixes``: the per-partition table and the per-block summary."""
    sweeps = {
        n: sweep_partitions(b, blocks_named(family_sets[n], prefixes), seeds=seeds, n_jobs=n_jobs)
        for n, b in blocks.items()
    }
    summaries = {n: summarize_partitions(s) for n, s in sweeps.items()}
    return stack_datasets(sweeps), stack_datasets(summaries)


def describe_partitions(robust: pd.DataFrame, reference_seed: int = FOLD_SEED) -> str:
    """The margin over the best single model across partitions, and where the reference
    partition falls among them (rank 1 = the largest margin)."""
    return (
        "Across partitions, the fused score (H+P_gb) minus the best single model (ρ): "
        + "; ".join(
            f"{row.dataset} {row.block} {row.delta_rho_mean:+.3f} ± {row.delta_rho_sd:.3f} "
            f"(5th to 95th percentile {row.delta_rho_p05:+.3f} to {row.delta_rho_p95:+.3f}, "
            f"range {row.delta_rho_min:+.3f} to {row.delta_rho_max:+.3f}, positive in "
            f"{row.delta_rho_n_positive} of {row.n_partitions}; seed {reference_seed} gives "
            f"{row.delta_rho_reference:+.3f}, rank {row.delta_rho_reference_rank} of "
            f"{row.n_partitions + 1})"
            for row in robust.itertuples()
        )
        + "."
    )
