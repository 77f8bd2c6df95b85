"""The figures and label-matched inputs of notebook 04 (headroom, robustness and the recipe).

Page-only helpers. A figure with several plots returns the figure and the legend entries
it needs beside its plots' own (what a line style or marker means), which the page puts in
one legend outside the plots.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D

from judgepanel.datasets.comparators import load_scores, wide_scores
from judgepanel.studies.common.combiners import FOLD_SEED, describe_combiner
from judgepanel.studies.fusion import imagestats, retest, robustness
from judgepanel.studies.fusion.blocks import Blocks
from judgepanel.studies.fusion.compare import stack_datasets
from judgepanel.studies.fusion.run import RatedData


def combiner_sentence(blocks: Mapping[str, Blocks]) -> str:
    """The combiner on each dataset (its folds follow from the number of images)."""
    return (
        "The combiner: "
        + "; ".join(f"on {n}, {describe_combiner(len(b.items))}" for n, b in blocks.items())
        + "."
    )


def retest_figure(retest_trios: pd.DataFrame, probe_k: int) -> plt.Figure:
    """Each trio's fusion gain against its headroom and its agreement, marked where it paid."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    paid = retest_trios["pays"].map({True: "yes", False: "no"})
    shown = retest_trios.assign(**{"fusion paid": paid})
    for ax, predictor in zip(axes, ("headroom", "agreement"), strict=True):
        sns.scatterplot(data=shown, x=predictor, y="gain", hue="dataset", style="fusion paid",
                        ax=ax, s=60)  # fmt: skip
        ax.axhline(0, color="0.4", ls="--", lw=1)
        ax.set_xlabel(f"trio {predictor} (probe, k={probe_k})")
    axes[0].set_ylabel("fusion gain: H+P_gb ρ − best member ρ")
    fig.suptitle("Does the probe predict which trios gain from fusion?")
    fig.tight_layout()
    return fig


def retest_caption(retest_trios: pd.DataFrame, paid: Sequence[str]) -> str:
    """What to look at in :func:`retest_figure`, with the count rows of the trios that paid."""
    n_above = int((retest_trios["gain"] > 0).sum())
    return (
        "If the probe predicts the gain, the points rise from left to right. Points "
        f"above the dashed line have a positive point gain ({n_above} of "
        f"{len(retest_trios)} trios). The marker shows where fusion paid: a positive "
        f"gain with q below {retest.ALPHA} over the dataset's trios (the trio table's "
        "pays column, from its ledger rows); " + "; ".join(paid) + "."
    )


@contextmanager
def seeded_global_random(seed: int) -> Iterator[None]:
    """numpy's global random state seeded for a block, and put back after it: a figure that
    draws from it (seaborn's jitter) is the same on every run, and the kernel's state is
    left as it was."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def partitions_figure(
    partitions: pd.DataFrame, names: Sequence[str], n_partitions: int
) -> tuple[plt.Figure, list[Line2D]]:
    """The margin over the best single model on each random fold partition, per dataset and
    block, with the fixed partition marked; and the legend entry of a random partition."""
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 3.6), sharey=False)
    for ax, name in zip(np.atleast_1d(axes), names, strict=True):
        sub = partitions[partitions["dataset"] == name]
        with seeded_global_random(FOLD_SEED):  # seaborn jitters from numpy's global state
            sns.stripplot(data=sub[~sub["reference"]], x="block", y="delta_rho", ax=ax,
                          color="0.45", size=5, jitter=0.15)  # fmt: skip
        ref = sub[sub["reference"]]
        ax.scatter(range(len(ref)), ref["delta_rho"], marker="D", color="#b45309", s=50,
                   zorder=3, label=f"the fixed partition (seed {FOLD_SEED})")  # fmt: skip
        ax.axhline(0, color="0.4", ls="--", lw=1)
        ax.set(title=name, xlabel="family block", ylabel="Δρ, H+P_gb − best single")
    fig.suptitle(f"{n_partitions} random fold partitions and the fixed one")
    fig.tight_layout()
    return fig, [Line2D([], [], label="a random partition", marker="o", ls="", color="0.45")]


def f11_sentence(n_statistics: int, blocks: Mapping[str, Blocks]) -> str:
    """What F11 is, and the folds the label-matched arms train on."""
    return (
        f"F11 is {n_statistics} image statistics; the label-matched arms train on the "
        "same folds as H+P_gb: "
        + "; ".join(
            f"on {n}, {describe_combiner(len(b.items)).split('; ')[-1]}" for n, b in blocks.items()
        )
        + "."
    )


def label_matched(
    rated: Mapping[str, RatedData],
    predeclared: Sequence[str],
    comparators: Mapping[str, str],
    *,
    cache_dir: str | Path | None,
    n_resamples: int,
    seed: int,
    n_jobs: int | None,
) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """The label-matched baselines of every dataset, stacked, and the imported models of
    each dataset that has comparator scores (``comparators``: their file per dataset)."""
    labelled, imported_models = {}, {}
    for name, data in rated.items():
        items = data.blocks.items
        f11 = imagestats.stats_of(data.data.images, items, cache_dir=cache_dir, n_jobs=n_jobs)
        imported = (
            wide_scores(load_scores(comparators[name]), items) if name in comparators else None
        )
        if imported is not None:
            imported_models[name] = list(imported.columns)
        labelled[name] = robustness.compare_label_matched(
            data.blocks, predeclared, f11, imported=imported, n_resamples=n_resamples,
            seed=seed, n_jobs=n_jobs,
        )  # fmt: skip
    return stack_datasets(labelled), imported_models


def granularity_figure(
    gran: pd.DataFrame, names: Sequence[str], palette: Mapping[str, str]
) -> tuple[plt.Figure, list[Line2D]]:
    """ρ and τ_b of each family's k-run mean and of the same mean rounded, against k; and
    the legend entries of the two line styles."""
    fig, axes = plt.subplots(len(names), 2, figsize=(10, 3.3 * len(names)), squeeze=False)
    for i, name in enumerate(names):
        g = gran[gran["dataset"] == name]
        for j, (metric, sym) in enumerate(robustness.granularity.SYMBOLS.items()):
            ax = axes[i, j]
            for fam, sub in g[g["metric"] == metric].groupby("family"):
                (line,) = ax.plot(sub["k"], sub["mean"], marker="o", label=fam,
                                  color=palette[fam])  # fmt: skip
                ax.plot(sub["k"], sub["rounded"], ls="--", color=line.get_color())
            ax.set(title=f"{name}: {sym} of the k-run mean (solid) and rounded (dashed)",
                   xlabel="holistic runs averaged (k)", ylabel=sym)  # fmt: skip
    fig.tight_layout()
    return fig, [
        Line2D([], [], label="k-run mean", color="0.3"),
        Line2D([], [], label="rounded to the scale", color="0.3", ls="--"),
    ]
