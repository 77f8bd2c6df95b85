"""Heat maps made with one draw of their figure are the figures seaborn makes (PNG bytes)."""

from __future__ import annotations

import contextlib
import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import seaborn as sns

from judgepanel.studies.common import heatmaps
from judgepanel.studies.fusion import mtmm_page
from judgepanel.studies.vab import figures


def _png(fig: plt.Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return buf.getvalue()


def _grid(drawn_once: bool, wide_labels: bool) -> tuple[bytes, list[float]]:
    """Six maps, the first three with column labels long enough to overlap when
    ``wide_labels``: the PNG and every map's x label rotations."""
    rng = np.random.default_rng(3)
    fig, axes = plt.subplots(2, 3, figsize=(7, 5))
    block = heatmaps.heatmaps_drawn_once(fig) if drawn_once else contextlib.nullcontext()
    with block:
        for i, ax in enumerate(axes.flat):
            cols = [f"{'a very long column name ' if wide_labels and i < 3 else ''}{j}"
                    for j in range(6)]  # fmt: skip
            frame = pd.DataFrame(rng.normal(size=(4, 6)), columns=cols,
                                 index=[f"row {j}" for j in range(4)])  # fmt: skip
            sns.heatmap(frame, ax=ax, annot=True, fmt=".1f", cbar=i == 0)
            ax.set_title(f"map {i}")
    turned = [t.get_rotation() for ax in axes.flat for t in ax.get_xticklabels()]
    return _png(fig), turned


@pytest.mark.parametrize("wide_labels", [False, True])
def test_six_maps_drawn_once_are_the_maps_seaborn_draws(wide_labels):
    plain, plain_turned = _grid(False, wide_labels)
    once, once_turned = _grid(True, wide_labels)
    assert once_turned == plain_turned
    # the long labels were turned, the short ones not: the deferred test decided both ways
    assert (90.0 in once_turned) == wide_labels
    assert once == plain


def _slot_rows() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = [
        dict(
            judge=judge,
            kind=kind,
            field=field,
            k=k,
            slot=slot,
            picked=rng.uniform(0, 2 / k),
            expected=1 / k,
        )
        for judge in ("aurora", "basalt", "cobalt")
        for kind, field, _ in figures.SLOT_ROWS
        for k in (2, 3, 4)
        for slot in range(k)
    ]
    return pd.DataFrame(rows)


def test_the_vab_slot_figure_is_the_one_seaborn_draws(monkeypatch):
    by_slot = _slot_rows()
    once = _png(figures.slot_figure(by_slot, ["aurora", "basalt", "cobalt"], "t"))
    monkeypatch.setattr(figures, "heatmaps_drawn_once", lambda fig: contextlib.nullcontext())
    plain = _png(figures.slot_figure(by_slot, ["aurora", "basalt", "cobalt"], "t"))
    assert once == plain


def test_the_mtmm_matrix_figure_is_the_one_seaborn_draws(monkeypatch):
    rng = np.random.default_rng(9)
    index = [f"{f} · {p}" for f in ("aurora", "basalt") for p in ("holistic", "color", "light")]
    partial = pd.DataFrame(rng.uniform(-1, 1, (6, 3)), index=index,
                           columns=["color", "light", "composition"])  # fmt: skip
    once = _png(mtmm_page.matrix_figure(partial * 0.5, partial, "d"))
    monkeypatch.setattr(mtmm_page, "heatmaps_drawn_once", lambda fig: contextlib.nullcontext())
    plain = _png(mtmm_page.matrix_figure(partial * 0.5, partial, "d"))
    assert once == plain


def test_seaborn_is_restored_after_the_block_even_when_it_fails():
    from seaborn import matrix

    draw, overlap = matrix._draw_figure, matrix.axis_ticklabels_overlap
    fig, _ = plt.subplots()
    with pytest.raises(KeyError), heatmaps.heatmaps_drawn_once(fig):
        sns.heatmap(pd.DataFrame({"a": [1.0]}))
        raise KeyError("a map failed")
    plt.close(fig)
    assert (matrix._draw_figure, matrix.axis_ticklabels_overlap) == (draw, overlap)
