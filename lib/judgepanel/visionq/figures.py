"""Figures of the VisionQ report, one message each, intervals drawn.

They take the tidy tables of :mod:`judgepanel.visionq.metrics` and only draw them; the
style is the report's (set once by :func:`judgepanel.nbtools.setup`).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from judgepanel.visionq.metrics import UNPARSED, judge_column


def _judges(table: pd.DataFrame) -> tuple[str, list[str]]:
    judge = judge_column(table)
    if judge is None:
        raise ValueError("the table needs a judge (or family) column")
    return judge, list(dict.fromkeys(table[judge]))


def _bars(est: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Error-bar lengths; clipped at 0, since a Wilson bound at a share of 0 or 1 (or a
    percentile bound of a ratio) can sit a rounding error beyond the estimate."""
    return np.clip(np.vstack([est - low, high - est]), 0.0, None)


def axis_forest(overall: pd.DataFrame, per_axis: pd.DataFrame, *, ncols: int = 4) -> plt.Figure:
    """Accuracy per judge with its 95% paper-bootstrap CI: one panel overall, one per axis.

    Judges keep the row order of ``overall`` sorted by accuracy (best on top) in every
    panel; the dashed line is the panel's chance accuracy (mean of 1/n_choices). Panel
    titles give questions / papers, so a reader sees which intervals rest on few papers.
    """
    judge, _ = _judges(overall)
    order = overall.sort_values("accuracy", ascending=False, kind="stable")[judge].tolist()
    counts = per_axis.groupby("axis", sort=False)[["n", "n_papers"]].first()
    axes_order = counts.sort_values(["n", "n_papers"], ascending=False, kind="stable").index
    panels = [("Overall", overall)] + [(a, per_axis[per_axis["axis"] == a]) for a in axes_order]
    ncols = min(ncols, len(panels))
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
        rows = table.set_index(judge).loc[order]
        est = rows["accuracy"].to_numpy()
        err = _bars(est, rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy())
        ax.errorbar(est, y, xerr=err, fmt="o", color="#1f4e79", capsize=3, lw=1.3, ms=4)
        chance = float(rows["chance"].iloc[0])
        ax.axvline(chance, color="0.4", ls="--", lw=1)
        ax.set_yticks(y)
        ax.set_yticklabels(order)
        n, n_papers = int(rows["n"].iloc[0]), int(rows["n_papers"].iloc[0])
        ax.set_title(f"{title}\n{n} questions / {n_papers} papers", fontsize=9)
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


def letter_bars(freqs: pd.DataFrame) -> plt.Figure:
    """Share of questions answered with each shown letter, per judge, against the gold share.

    One panel per number of choices; bars are the judges' shares with Wilson 95% CIs, the
    black ticks the share of questions whose gold answer sits in that slot. A
    "no letter" bar (unreadable, failed or missing answers) appears only when there are any.
    """
    judge, judges = _judges(freqs)
    panels = sorted(freqs["n_choices"].unique())
    fig, axs = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False, sharey=True
    )
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / max(1, len(judges))
    for ax, n_choices in zip(axs[0], panels, strict=True):
        sub = freqs[freqs["n_choices"] == n_choices]
        letters = [x for x in dict.fromkeys(sub["letter"]) if x != UNPARSED]
        if sub.loc[sub["letter"] == UNPARSED, "pred_n"].sum() > 0:
            letters.append(UNPARSED)
        x = np.arange(len(letters))
        for i, j in enumerate(judges):
            rows = sub[sub[judge] == j].set_index("letter").loc[letters]
            share = rows["pred_share"].to_numpy()
            err = _bars(share, rows["pred_low"].to_numpy(), rows["pred_high"].to_numpy())
            ax.bar(
                x - 0.4 + width * (i + 0.5),
                share,
                width,
                yerr=err,
                capsize=2,
                label=str(j),
                color=colours[i % len(colours)],
                error_kw={"lw": 0.8},
            )
        gold = sub.drop_duplicates("letter").set_index("letter").loc[letters, "gold_share"]
        ax.hlines(gold.to_numpy(), x - 0.42, x + 0.42, color="black", lw=2, label="gold")
        n_q = int(sub["n_questions"].iloc[0])
        ax.set_title(f"{n_choices} choices ({n_q} questions)", fontsize=10)
        ax.set_xticks(x)
        ax.set_xticklabels([f"({c})" if c != UNPARSED else "no letter" for c in letters])
        ax.set_xlabel("letter shown")
    axs[0][0].set_ylabel("share of questions (Wilson 95% CI)")
    handles, labels = axs[0][0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="upper center",
        ncol=len(labels),
        fontsize=8,
        bbox_to_anchor=(0.5, 1.06),
        frameon=False,
    )
    fig.tight_layout()
    return fig
