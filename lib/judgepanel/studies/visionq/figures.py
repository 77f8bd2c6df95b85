"""The figures of the VisionQ page (notebook 06), drawn from the tables the page shows.

Each function returns the figure; the page places its legend and saves it
(``Notebook.figure``). Not imported by the package (``judgepanel.studies.visionq``): only
a page draws, and the command line need not load matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgepanel.studies.visionq.position import UNPARSED

INK = "#1f4e79"
"""The colour of a single-series plot."""


def axis_figure(overall: pd.DataFrame, axis: pd.DataFrame) -> plt.Figure:
    """One panel overall and one per taxonomy axis (most questions first): each judge's
    accuracy with its paper-bootstrap interval, in the overall order (best on top), the
    panel's chance accuracy dashed, questions / papers in each title.

    Args:
        overall: :func:`~judgepanel.studies.visionq.accuracy.accuracy_table` rows, sorted.
        axis: :func:`~judgepanel.studies.visionq.accuracy.per_axis_accuracy` rows.
    """
    order = overall["judge"].tolist()
    counts = axis.groupby("axis", sort=False)[["n", "n_papers"]].first()
    axes_order = counts.sort_values(["n", "n_papers"], ascending=False, kind="stable").index
    panels = [("Overall", overall)] + [(a, axis[axis["axis"] == a]) for a in axes_order]
    ncols = min(4, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axs = plt.subplots(
        nrows,
        ncols,
        figsize=(3.1 * ncols, 0.32 * len(order) * nrows + 1.3 * nrows),
        sharex=True,
        squeeze=False,
    )
    y = np.arange(len(order))[::-1]
    for ax, (title, table) in zip(axs.flat, panels, strict=False):
        rows = table.set_index("judge").loc[order]
        est = rows["accuracy"].to_numpy()
        # A Wilson or percentile bound can sit a rounding error beyond the estimate: clip at 0.
        err = np.clip(np.vstack([est - rows["ci_low"], rows["ci_high"] - est]), 0.0, None)
        ax.errorbar(est, y, xerr=err, fmt="o", color=INK, capsize=3, lw=1.3, ms=4)
        ax.axvline(float(rows["chance"].iloc[0]), color="0.4", ls="--", lw=1)
        ax.set_yticks(y)
        ax.set_yticklabels(order)
        n, papers = int(rows["n"].iloc[0]), int(rows["n_papers"].iloc[0])
        ax.set_title(f"{title}\n{n} questions / {papers} papers", fontsize=9)
        ax.set_xlim(0, 1)
    for ax in list(axs.flat)[len(panels) :]:
        ax.set_visible(False)
    for ax in axs[-1]:
        ax.set_xlabel("accuracy (share of all questions)")
    fig.suptitle(
        "Accuracy per judge and taxonomy axis, 95% paper-bootstrap CI (dashed: chance)",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


def letter_figure(letters: pd.DataFrame, palette: Mapping[str, str]) -> plt.Figure:
    """One panel per number of choices: each judge's share of answers per shown letter
    (Wilson 95% CI) against the gold share (black ticks); "no letter" only where it occurs.

    Args:
        letters: :func:`~judgepanel.studies.visionq.position.letter_frequencies` rows.
        palette: the report's colour of each family (others take matplotlib's cycle).
    """
    judges = list(dict.fromkeys(letters["judge"]))
    choice_counts = sorted(letters["n_choices"].unique())
    fig, axs = plt.subplots(
        1, len(choice_counts), figsize=(4.2 * len(choice_counts), 3.6), squeeze=False, sharey=True
    )
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / max(1, len(judges))
    for ax, n_choices in zip(axs[0], choice_counts, strict=True):
        sub = letters[letters["n_choices"] == n_choices]
        shown = [x for x in dict.fromkeys(sub["letter"]) if x != UNPARSED]
        if sub.loc[sub["letter"] == UNPARSED, "pred_n"].sum() > 0:
            shown.append(UNPARSED)
        x = np.arange(len(shown))
        for i, j in enumerate(judges):
            rows = sub[sub["judge"] == j].set_index("letter").loc[shown]
            share = rows["pred_share"].to_numpy()
            err = np.vstack([share - rows["pred_share_ci_low"], rows["pred_share_ci_high"] - share])
            ax.bar(
                x - 0.4 + width * (i + 0.5),
                share,
                width,
                yerr=np.clip(err, 0.0, None),
                capsize=2,
                label=str(j),
                color=palette.get(str(j), colours[i % len(colours)]),
                error_kw={"lw": 0.8},
            )
        gold = sub.drop_duplicates("letter").set_index("letter").loc[shown, "gold_share"]
        ax.hlines(gold.to_numpy(), x - 0.42, x + 0.42, color="black", lw=2, label="gold")
        n_questions = int(sub["n_questions"].iloc[0])
        ax.set_title(f"{n_choices} choices ({n_questions} questions)", fontsize=10)
        ax.set_xticks(x)
        ax.set_xticklabels([f"({c})" if c != UNPARSED else "no letter" for c in shown])
        ax.set_xlabel("letter shown")
    axs[0][0].set_ylabel("share of questions (Wilson 95% CI)")
    fig.tight_layout()
    return fig
