"""No legend covers data: every figure through ``Notebook.figure`` keeps its legends outside
the plots, and the check that says so sees a legend that does cover one."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import seaborn as sns

from judgepanel.report import nbtools

matplotlib.use("Agg")
RNG = np.random.default_rng(0)


def _notebook(tmp: Path) -> nbtools.Notebook:
    nbtools.set_style()
    return nbtools.Notebook("r", "n", tmp / "tables", tmp / "figures", simulated=False)


def _lines(ax: plt.Axes, n: int = 5) -> None:
    for i in range(n):
        ax.plot(range(10), RNG.random(10) + i, marker="o", label=f"family {i}")


def one_plot_legend_inside() -> plt.Figure:
    fig, ax = plt.subplots()
    _lines(ax)
    ax.legend(loc="center")
    return fig


def every_panel_its_own_legend() -> plt.Figure:
    """Two panels, each with the same legend inside (the partitions figure before)."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax in axes:
        ax.scatter(RNG.random(20), RNG.random(20), color="0.45")
        ax.scatter([0.5], [0.5], marker="D", label="seed 42")
        ax.legend(loc="best")
    fig.tight_layout()
    return fig


def seaborn_hue_and_style() -> plt.Figure:
    """Seaborn's legends with hue and style in both panels (the retest scatter before)."""
    df = pd.DataFrame({"x": RNG.random(40), "gain": RNG.normal(size=40),
                       "dataset": ["eva", "para"] * 20,
                       "paid": ["yes", "no", "no", "no"] * 10})  # fmt: skip
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax in axes:
        sns.scatterplot(data=df, x="x", y="gain", hue="dataset", style="paid", ax=ax, s=60)
    fig.tight_layout()
    return fig


def grid_one_legend() -> plt.Figure:
    """A 2x2 grid whose first panel holds the legend (the granularity figure before)."""
    fig, axes = plt.subplots(2, 2, figsize=(10, 6.6))
    for ax in axes.flat:
        _lines(ax)
        ax.set_title("a panel title as long as the granularity figure's")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def shared_below_with_keys() -> plt.Figure:
    """Three wide panels with a shared legend under them, plus what a line style means."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), sharey=True)
    for ax in axes:
        ax.errorbar(RNG.random(5), range(5), xerr=0.1, fmt="o", label="averaged over orders")
        ax.axvline(0.3, ls="--", color="0.35", label="chance")
    fig.suptitle("a title")
    fig.tight_layout()
    nbtools.shared_legend(
        fig, where="below", extra=[nbtools.legend_key("threshold", color="0.5", ls=":")]
    )
    return fig


def shared_right_with_colorbar() -> plt.Figure:
    """Heatmaps with a colour bar beside them and labelled lines in a third panel."""
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.5))
    for ax in axes[:2]:
        sns.heatmap(RNG.random((4, 4)), ax=ax, cbar=ax is axes[1])
    _lines(axes[2], 3)
    fig.tight_layout()
    nbtools.shared_legend(fig)
    return fig


BUILDERS: list[Callable[[], plt.Figure]] = [
    one_plot_legend_inside,
    every_panel_its_own_legend,
    seaborn_hue_and_style,
    grid_one_legend,
    shared_below_with_keys,
    shared_right_with_colorbar,
]


def _legends(fig: plt.Figure) -> list:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]


def test_the_check_sees_a_legend_over_the_data() -> None:
    for build in (one_plot_legend_inside, every_panel_its_own_legend, seaborn_hue_and_style,
                  grid_one_legend):  # fmt: skip
        fig = build()
        assert nbtools.legends_covering(fig), build.__name__
        plt.close(fig)


def test_a_figure_legend_left_over_the_data_is_reported(tmp_path: Path) -> None:
    fig, axes = plt.subplots(1, 2)
    for ax in axes:
        _lines(ax, 2)
    fig.legend(loc="center")  # placed by hand over both plots
    with pytest.warns(UserWarning, match="figure f: the legend .* covers the data of plot"):
        _notebook(tmp_path).figure(fig, "f")


@pytest.mark.parametrize("build", BUILDERS, ids=[b.__name__ for b in BUILDERS])
def test_no_legend_of_a_shown_figure_covers_data(tmp_path: Path, build) -> None:
    fig = build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _notebook(tmp_path).figure(fig, "f")
    assert nbtools.legends_covering(fig) == []
    legends = _legends(fig)
    assert len(legends) == 1  # the panels' legends became one
    labels = [t.get_text() for t in legends[0].get_texts()]
    assert len(labels) == len(set(labels)) and labels
    assert (tmp_path / "figures" / "f.png").exists()


def test_the_shared_legend_keeps_every_entry_once() -> None:
    fig = seaborn_hue_and_style()
    legend = nbtools.shared_legend(fig, extra=[nbtools.legend_key("zero gain", ls="--")])
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["dataset", "eva", "para", "paid", "yes", "no", "zero gain"]
    assert all(ax.get_legend() is None for ax in fig.axes)
    with pytest.raises(ValueError, match="where must be"):
        nbtools.shared_legend(fig, where="inside")
    plt.close(fig)
