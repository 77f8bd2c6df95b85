"""The figures of the VAB page (notebook 05), drawn from the tables the page shows.

Each function returns the figure; the page places its legend and saves it
(``Notebook.figure``), so the figure and the table it draws come from one call each. Not
imported by the package (``judgepanel.studies.vab``): only a page draws, and the command
line need not load matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from judgepanel.studies.common.heatmaps import heatmaps_drawn_once
from judgepanel.studies.vab.summary import slot_matrix
from judgepanel.studies.vab.verdicts import METRIC_NAMES

INK = "#1f4e79"
"""The colour of a single-series plot."""
SLOT_ROWS = (("vab_top1", "best", "Top-1 best pick"), ("vab_bot1", "worst", "Bot-1 worst pick"))
"""The rows of the slot heat map: (prompt, the answer's field, title)."""


def _errors(frame: pd.DataFrame, stat: str) -> np.ndarray:
    """The two arms of ``stat``'s interval (``<stat>_ci_low``/``_ci_high``) as error bars."""
    return np.vstack(
        [frame[stat] - frame[f"{stat}_ci_low"], frame[f"{stat}_ci_high"] - frame[stat]]
    )


def accuracy_figure(acc: pd.DataFrame, families: Sequence[str], dataset: str) -> plt.Figure:
    """Per prompt (Top-1, Bot-1, TB-1), every family's ap@1 (filled) and pass^3 (open) with
    their intervals, against the chance of one answer (dashed) and of all orders (dotted).

    Args:
        acc: :func:`~judgepanel.studies.vab.summary.accuracy_wide` rows of ``families``.
    """
    families = list(families)
    fig, axes = plt.subplots(1, 3, figsize=(12, 0.45 * len(families) + 1.8), sharey=True)
    y = np.arange(len(families))[::-1]
    for ax, metric in zip(axes, ("top1", "bot1", "tb1"), strict=True):
        sub = acc.loc[acc["metric"] == metric].set_index("judge").loc[families]
        for stat, style, dy in (("ap1", "o", 0.12), ("pass3", "s", -0.12)):
            ax.errorbar(
                sub[stat],
                y + dy,
                xerr=_errors(sub, stat),
                fmt=style,
                capsize=3,
                lw=1.2,
                color=INK,
                mfc=INK if stat == "ap1" else "white",
                label="averaged over orders (ap@1)"
                if stat == "ap1"
                else "right in all three orders (pass^3)",
            )
        ax.axvline(
            sub["ap1_chance"].iloc[0], color="0.35", ls="--", lw=1, label="chance, one answer"
        )
        ax.axvline(
            sub["pass3_chance"].iloc[0],
            color="0.35",
            ls=":",
            lw=1,
            label="chance, all orders right",
        )
        ax.set_title(METRIC_NAMES[metric])
        ax.set_xlabel("accuracy (share of tasks)")
        ax.set_xlim(-0.02, 1.02)
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(families)
    axes[0].set_ylabel("family (direct judge)")
    fig.suptitle(f"Direct comparison per family, 95% bootstrap CIs over tasks ({dataset})")
    fig.tight_layout()
    return fig


def size_figure(
    size: pd.DataFrame, families: Sequence[str], dataset: str, palette: Mapping[str, str]
) -> plt.Figure:
    """Top-1 and TB-1, ap@1 and pass^3, against the number of images k: each family with
    its intervals (nudged apart on k) and the random judge as a black dashed line.

    Args:
        size: :func:`~judgepanel.studies.vab.summary.accuracy_wide` rows by ``k``.
        palette: each family's colour in the report (others, such as a judge imported
            from the harness's files, take matplotlib's cycle).
    """
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colours = {f: palette.get(f, cycle[i % len(cycle)]) for i, f in enumerate(families)}
    ks = sorted(size["k"].unique())
    offsets = np.linspace(-0.16, 0.16, len(families))
    for col, metric in enumerate(("top1", "tb1")):
        for row, stat in enumerate(("ap1", "pass3")):
            ax = axes[row, col]
            sub = size.loc[size["metric"] == metric]
            for off, family in zip(offsets, families, strict=True):
                s = sub.loc[sub["judge"] == family].sort_values("k")
                ax.errorbar(
                    s["k"] + off,
                    s[stat],
                    yerr=_errors(s, stat),
                    fmt="-o",
                    ms=4,
                    lw=1.2,
                    capsize=2,
                    color=colours[family],
                    label=family,
                )
            base = sub.drop_duplicates("k").sort_values("k")
            ax.plot(base["k"], base[f"{stat}_chance"], "k--", lw=1.2, label="random judge")
            ax.set_title(f"{METRIC_NAMES[metric]} {'ap@1' if stat == 'ap1' else 'pass^3'}")
            ax.set_ylim(-0.03, 1.03)
            ax.set_ylabel("accuracy (share of tasks)")
            ax.set_xticks(ks)
    for ax in axes[1]:
        ax.set_xlabel("images in the set (k)")
    fig.suptitle(f"Accuracy by set size ({dataset}; 95% bootstrap CIs over tasks)")
    fig.tight_layout()
    return fig


def slot_figure(by_slot: pd.DataFrame, families: Sequence[str], title: str) -> plt.Figure:
    """Heat maps of the picks' excess over the position-blind share 1/k, in percentage
    points, per set size (rows) and slot shown (columns): one per family, Top-1's best
    pick above and Bot-1's worst pick below, on one colour scale (at least ±10 points).

    Args:
        by_slot: :func:`~judgepanel.studies.vab.position.position_by_slot` rows.
        title: the figure's title.
    """
    families = list(families)
    mats = {
        (prompt, f): 100 * slot_matrix(by_slot, f, prompt, field)
        for prompt, field, _ in SLOT_ROWS
        for f in families
    }
    lim = max([10.0, *(float(np.nanmax(np.abs(m.to_numpy()))) for m in mats.values() if m.size)])
    fig, axes = plt.subplots(
        2, len(families), figsize=(2.6 * len(families) + 1.2, 6.2), squeeze=False
    )
    cbar_ax = fig.add_axes([0.92, 0.2, 0.012, 0.6])
    with heatmaps_drawn_once(fig):  # one draw for the ten maps' labels, not ten
        for r, (prompt, _, label) in enumerate(SLOT_ROWS):
            for c, f in enumerate(families):
                ax, m = axes[r, c], mats[(prompt, f)]
                if m.empty:
                    ax.set_axis_off()
                    continue
                sns.heatmap(
                    m,
                    ax=ax,
                    cmap="vlag",
                    center=0,
                    vmin=-lim,
                    vmax=lim,
                    annot=True,
                    fmt=".0f",
                    annot_kws={"size": 7},
                    cbar=(r == 0 and c == 0),
                    cbar_ax=cbar_ax,
                    cbar_kws={"label": "picked − position-blind share (percentage points)"},
                )
                ax.set_title(f"{f} · {label}", fontsize=9)
                ax.set_xlabel("slot shown" if r == 1 else "")
                ax.set_ylabel("images in the set (k)" if c == 0 else "")
    fig.suptitle(title)
    fig.subplots_adjust(left=0.06, right=0.9, top=0.9, bottom=0.08, wspace=0.35, hspace=0.35)
    return fig
