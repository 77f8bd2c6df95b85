"""Several seaborn heat maps in one figure, the figure drawn once to place their labels.

``seaborn.heatmap`` draws the whole figure after each map, to see whether that map's tick
labels overlap (and turns them if they do). A figure of k maps is so drawn k times, each time
with every map made so far: the VAB page's ten-map figure spent four of its five seconds
there. Here the maps are made with that draw left out and the overlap test deferred; one
draw at the end serves every map's test, and each map's labels are turned as seaborn would
have turned them. A map's labels sit where the figure's layout puts its axes, which the
other maps do not move, so the figure is the one seaborn makes
(``tests/test_heatmaps.py`` compares the PNG bytes).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import matplotlib.pyplot as plt
from matplotlib.text import Text


@contextmanager
def heatmaps_drawn_once(fig: plt.Figure) -> Iterator[None]:
    """Make ``sns.heatmap`` calls on the axes of ``fig`` inside the block; at its end the
    figure is drawn once and each map's overlapping tick labels are turned.

    Outside seaborn 0.13's layout (no ``_draw_figure`` or ``axis_ticklabels_overlap`` in
    ``seaborn.matrix``) the block runs the maps as seaborn makes them.
    """
    from seaborn import matrix, utils

    draw = getattr(matrix, "_draw_figure", None)
    overlap = getattr(matrix, "axis_ticklabels_overlap", None)
    if draw is None or overlap is None:
        yield
        return
    asked: list[list[Text]] = []

    def record(labels: list[Text]) -> bool:
        asked.append(list(labels))
        return False

    matrix._draw_figure = lambda _fig: None
    matrix.axis_ticklabels_overlap = record
    try:
        yield
    finally:
        matrix._draw_figure = draw
        matrix.axis_ticklabels_overlap = overlap
    if len(asked) % 2:  # seaborn asks of x then of y labels, for each map
        raise RuntimeError("seaborn.heatmap asked an odd number of label tests")
    utils._draw_figure(fig)
    for i in range(0, len(asked), 2):
        xtl, ytl = asked[i], asked[i + 1]
        if overlap(xtl):
            plt.setp(xtl, rotation="vertical")
        if overlap(ytl):
            plt.setp(ytl, rotation="horizontal")
