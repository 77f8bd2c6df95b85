"""What every notebook does the same way: banner, style, tables, figures, headline numbers.

A notebook calls :func:`setup` once, right after its parameters cell, and then shows every
table through :meth:`Notebook.table` (which also writes it as CSV, so a reviewer can check a
number without running anything) and every figure through :meth:`Notebook.figure`.
Headline numbers go to ``headlines.json`` beside the tables; the report's index page reads
them from there. A comparison the page states goes through :meth:`Notebook.claim`, which
records it in the run's claims ledger (:mod:`judgepanel.report.ledger`) and returns its
sentence linked to its row.
"""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.legend import Legend
from matplotlib.lines import Line2D

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim, Family, count_claim
from judgepanel.core.config import Config
from judgepanel.report import ledger
from judgepanel.report.jsonfile import update_json
from judgepanel.report.manifest import write_table

SIMULATED_BANNER = (
    "<div class='jp-sim-banner' "
    "style='border:2px solid #b45309;background:#fffbeb;padding:10px 14px;"
    "margin:6px 0 12px 0;border-radius:6px;font-family:sans-serif'>"
    "<b>Simulated data.</b> The judges in this notebook are simulated models served by the "
    "project's judge simulator, and the images and human ratings come from its synthetic "
    "world. The numbers exercise the method; they are not a claim about any real model or "
    "dataset, and nothing in the simulation was tuned to reproduce a published figure."
    "</div>"
)


FLAT_ROWS = 15
"""A table longer than this is shown paged, sortable and filterable (offline), not flat."""
PAGE_ROWS = 10
MISSING = "\u2013"
"""How a missing value is shown in a table: an en dash, never ``nan``."""
MISSING_NOTE = "no value: too few items to compute it, or the quantity does not apply"

FAMILY_ORDER = (
    "aurora", "basalt", "cobalt", "dune", "ember",
    "gemini", "qwen25", "mistral", "gemma", "qwen3",
)  # fmt: skip
"""Known families in a fixed order: the palette gives each the same colour in every figure."""
_PALETTE = (
    "#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc",
    "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9",
)  # fmt: skip


_EXTRA = ("#7f3c8d", "#11a579", "#3969ac", "#f2b701", "#e73f74", "#80ba5a", "#008695")
"""Colours for families the report does not know, distinct from the known families'."""


def family_palette(families: list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """One colour per family name, the same in every figure of the report.

    Known families keep their place in :data:`FAMILY_ORDER`; others take the next free
    colours in the order given. Names that are not families (``panel``, ``fused``) get grey.
    """
    colours = {f: _PALETTE[i % len(_PALETTE)] for i, f in enumerate(FAMILY_ORDER)}
    free = list(_EXTRA)
    for i, f in enumerate(f for f in families if f not in colours):
        colours[f] = free[i % len(free)]
    return colours


def integer_ticks(ax: plt.Axes, axis: str = "y") -> None:
    """Ticks 1, 2, ... 10 on a 1-10 rating axis (not 2.0, 3.0, ...)."""
    from matplotlib.ticker import MaxNLocator

    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_locator(MaxNLocator(integer=True))


def _plots(fig: plt.Figure) -> list[plt.Axes]:
    """The visible plots of ``fig`` (not colour bars)."""
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def _renderer(fig: plt.Figure) -> RendererBase:
    """A renderer to measure ``fig`` with, also once the figure is closed (no canvas left)."""
    canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)
    return canvas.get_renderer()


def _entries(legend: Legend) -> tuple[list[Artist], list[str]]:
    return list(legend.legend_handles), [t.get_text() for t in legend.get_texts()]


def _legend_outside(fig: plt.Figure) -> None:
    """Move the legend of a one-plot figure to the right of the plot, so it covers no data."""
    plots = _plots(fig)
    if len(plots) != 1:
        return
    legend = plots[0].get_legend()
    if legend is None or not legend.get_visible():
        return
    handles, labels = _entries(legend)
    title = legend.get_title().get_text()
    legend.remove()
    plots[0].legend(
        handles, labels, title=title or None, loc="upper left",
        bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False,
    )  # fmt: skip


def shared_legend(
    fig: plt.Figure,
    *,
    where: str = "right",
    extra: Sequence[Artist] = (),
    title: str | None = None,
    fontsize: float = 9,
) -> Legend | None:
    """One legend for every plot of ``fig``, outside them all, so it covers no data.

    The entries are those of the plots' own legends (which go), or, if no plot has one,
    every labelled line, marker and bar of the plots; the same label shows once. ``extra``
    adds entries, such as what a line style means (:func:`legend_key`). ``where`` is
    ``"right"`` (beside the plots) or ``"below"`` (under the whole figure, in rows).
    """
    if where not in ("right", "below"):
        raise ValueError(f"shared_legend: where must be 'right' or 'below', not {where!r}")
    found: dict[str, Artist] = {}
    legends = [ax.get_legend() for ax in _plots(fig) if ax.get_legend() is not None]
    for ax in _plots(fig):
        legend = ax.get_legend()
        if legend is not None:
            h, lab = _entries(legend)
            title = title or legend.get_title().get_text() or None
            legend.remove()
        elif legends:
            continue
        else:
            h, lab = ax.get_legend_handles_labels()
        for handle, label in zip(h, lab, strict=True):
            if label and not label.startswith("_"):
                found.setdefault(label, handle)
    for handle in extra:
        found.setdefault(handle.get_label(), handle)
    if not found:
        return None
    renderer = _renderer(fig)
    box = (
        fig.get_tightbbox(renderer)
        .transformed(fig.dpi_scale_trans)
        .transformed(fig.transFigure.inverted())
    )
    if where == "right":
        place = {"loc": "center left", "bbox_to_anchor": (box.x1 + 0.01, 0.5), "ncol": 1}
    else:
        place = {"loc": "upper center", "bbox_to_anchor": (0.5, box.y0 - 0.01),
                 "ncol": min(len(found), 6)}  # fmt: skip
    return fig.legend(
        list(found.values()), list(found), title=title, fontsize=fontsize,
        title_fontsize=fontsize, frameon=False, borderaxespad=0.0, **place,
    )  # fmt: skip


def legend_key(label: str, **style: Any) -> Line2D:
    """A legend entry drawn like a line or marker of ``style`` (``ls="--"``, ``marker="o"``)."""
    return Line2D([], [], label=label, **style)


def place_legends(fig: plt.Figure) -> None:
    """Put every legend of ``fig`` where it covers no data.

    A one-plot figure keeps its legend, beside the plot; the legends of a figure with
    several plots become one :func:`shared_legend` beside them all.
    """
    plots = _plots(fig)
    if len(plots) == 1:
        _legend_outside(fig)
    elif any(ax.get_legend() is not None for ax in plots):
        shared_legend(fig)


def legends_covering(fig: plt.Figure) -> list[tuple[str, str]]:
    """The (legend, plot) pairs of ``fig`` whose drawn boxes overlap: a legend over data.

    A plot is the axes' data area (its window extent, without ticks or titles); a legend is
    named by its first entry, a plot by its title or its position.
    """
    renderer = _renderer(fig)
    plots = _plots(fig)
    legends = [*fig.legends, *(ax.get_legend() for ax in plots if ax.get_legend() is not None)]
    covering = []
    for legend in legends:
        if not legend.get_visible():
            continue
        box = legend.get_window_extent(renderer)
        for i, ax in enumerate(plots):
            area = ax.get_window_extent(renderer)
            w = min(box.x1, area.x1) - max(box.x0, area.x0)
            h = min(box.y1, area.y1) - max(box.y0, area.y0)
            if w > 1 and h > 1:  # more than a pixel each way
                first = legend.get_texts()[0].get_text() if legend.get_texts() else "?"
                covering.append((first, ax.get_title() or f"plot {i + 1}"))
    return covering


def _display(obj: Any) -> None:
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - outside IPython
        print(obj)
        return
    display(obj)


def figure_png(fig: plt.Figure) -> bytes:
    """``fig`` drawn once as a PNG, at ``savefig.dpi`` and cropped to what it shows."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def shown_png(png: bytes, fig: plt.Figure) -> Any:
    """The saved PNG to show inline, at the size the figure's own dpi gives it on screen.

    The file and the page then hold the same drawing, made once: shown as a figure, it would
    be drawn a second time by the inline backend (at ``figure.dpi``), which costs as much as
    the first. The saved file is drawn at the higher ``savefig.dpi``, so it is shown scaled
    down to the width the screen drawing had, and reads sharper.
    """
    saved = matplotlib.rcParams["savefig.dpi"]
    dpi = fig.dpi if saved == "figure" else float(saved)
    width = int.from_bytes(png[16:20], "big")  # the PNG header's width, in pixels
    try:
        from IPython.display import Image
    except ImportError:  # pragma: no cover - outside IPython
        return f"<figure, {width} px wide>"
    return Image(data=png, format="png", width=max(1, round(width * fig.dpi / dpi)))


def set_style() -> None:
    """One plotting style for the whole report (seaborn's, set once here)."""
    import seaborn as sns  # only notebooks draw; the library never needs it

    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    matplotlib.rcParams.update(
        {"figure.dpi": 110, "savefig.dpi": 130, "figure.figsize": (7.0, 4.2)}
    )


@dataclass
class Notebook:
    """The output context of one executed notebook."""

    run: str
    name: str
    tables_dir: Path
    figures_dir: Path
    simulated: bool
    headlines: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: dict[str, tuple[Claim, str]] = field(default_factory=dict)
    families: dict[str, Family] = field(default_factory=dict)
    judges: tuple[str, ...] = ()
    """The run's judge families: a study's own judges get colours of their own too."""
    _recorded_families: set[str] = field(default_factory=set, repr=False)

    @property
    def palette(self) -> dict[str, str]:
        """The report's colour of each family (``hue="family"`` takes ``palette=nb.palette``)."""
        return family_palette(self.judges)

    def table(
        self,
        df: pd.DataFrame,
        name: str,
        caption: str | None = None,
        index: bool = False,
        digits: int = 3,
        missing: str = MISSING_NOTE,
    ) -> None:
        """Write ``df`` to ``tables/<name>.csv`` and show it, rounded for reading only.

        It returns nothing: a cell ending in ``nb.table(...)`` would otherwise show the
        frame a second time, unrounded and unpaged, below the table.

        The CSV holds floats to six significant digits (`judgepanel.report.manifest`), the
        precision at which the report's manifest promises the same table on every machine.

        A table longer than :data:`FLAT_ROWS` is shown paged, sortable and filterable; a wide
        one scrolls sideways; a missing value shows as "–" with ``missing`` saying why.
        """
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        write_table(df, self.tables_dir / f"{name}.csv", index=index)
        _display(_TableHTML(table_html(df, name, self.tables_dir.name, caption, index, digits,
                                       missing)))  # fmt: skip

    def figure(self, fig: plt.Figure, name: str, caption: str | None = None) -> None:
        """Save ``fig`` to ``figures/<name>.png`` and show it inline, with what to look at.

        Legends move outside the plots (:func:`place_legends`) so they never cover data; a
        legend that still does is reported as a warning naming the figure.
        """
        self.figures_dir.mkdir(parents=True, exist_ok=True)
        place_legends(fig)
        for legend, plot in legends_covering(fig):
            warnings.warn(
                f"figure {name}: the legend ({legend}, ...) covers the data of {plot}",
                stacklevel=2,
            )
        png = figure_png(fig)
        (self.figures_dir / f"{name}.png").write_bytes(png)
        _display(shown_png(png, fig))
        plt.close(fig)
        if caption:
            self.say(f"*Figure ({self.figures_dir.name}/{name}.png).* {caption}")

    def say(self, markdown: str) -> None:
        """Show a sentence computed from the numbers."""
        from IPython.display import Markdown

        _display(Markdown(wording.true_minus(markdown)))

    def claim(
        self, claim: Claim, *, anchor: str = "", text: str | None = None, **words: Any
    ) -> str:
        """Record ``claim`` in the run's ledger and return the clause that states it.

        The clause (``claim.words(**words)``, or ``text`` when the page words the numbers
        itself, which must then carry the claim's verdict) is wrapped in a link to the
        claim's row of ``claims.html``, marked ``data-claim`` with its id. The claim's id
        becomes ``<run>.<NN>.<id>``; ``anchor`` names the table or figure it comes from.

        Raises:
            ValueError: ``text`` does not state the claim's verdict, or uses a form the
                wording conventions forbid.
        """
        recorded, said, family = self._prepared(claim, anchor, text, words)
        self._record([(claim.id, recorded, said)], [family] if family else [])
        return ledger.claim_link(recorded, said)

    def _prepared(
        self, claim: Claim, anchor: str, text: str | None, words: dict[str, Any]
    ) -> tuple[Claim, str, Family | None]:
        """``claim`` as the ledger records it, its clause, and its family when this is the
        family's first row (the ledger lists a family with its first row); checked, not yet
        recorded."""
        if claim.family and claim.family not in self.families:
            known = ", ".join(self.families) or "none"
            raise ValueError(
                f"claim {claim.id!r} names family {claim.family!r}, which this page did not "
                f"declare before its results (declared: {known})"
            )
        if claim.family and claim.alpha != self.families[claim.family].alpha:
            raise ValueError(f"claim {claim.id!r}: its alpha is not its family's")
        recorded = replace(
            claim,
            id=ledger.full_id(self.run, self.name, claim.id),
            family=ledger.full_id(self.run, self.name, claim.family) if claim.family else "",
            page=f"{self.run}/{self.name}",
            anchor=anchor or claim.anchor,
        )
        family = None
        if recorded.family and recorded.family not in self._recorded_families:
            # the ledger lists the sets its q values were corrected over, none without rows
            family = replace(self.families[claim.family], name=recorded.family)
        if claim.kind == "count" and claim.scope in self.families:
            recorded = replace(recorded, scope=ledger.full_id(self.run, self.name, claim.scope))
        said = text if text is not None else recorded.words(**words)
        if recorded.verdict not in said:
            raise ValueError(
                f"claim {recorded.id}: the text does not state its verdict "
                f"{recorded.verdict!r}: {said!r}"
            )
        problems = wording.prose_problems(said)
        if problems:
            raise ValueError(f"claim {recorded.id}: " + "; ".join(problems))
        return recorded, said, family

    def _record(self, rows: list[tuple[str, Claim, str]], families: list[Family]) -> None:
        """Write prepared rows (own id, recorded claim, clause) and first-seen families to
        the run's ledger in one update, then remember them."""
        ledger.record(self.tables_dir.parent, self.name, claims=[r for _, r, _ in rows],
                      families=families)  # fmt: skip
        self._recorded_families.update(f.name for f in families)
        for own, recorded, said in rows:
            self.claims[own] = (recorded, said)

    def claims_table(
        self,
        df: pd.DataFrame,
        claims: Sequence[Claim],
        name: str,
        caption: str | None = None,
        *,
        words: dict[str, dict[str, Any]] | None = None,
        **common: Any,
    ) -> list[Claim]:
        """Show a table together with its ledger rows: one claim per row of ``df``, in its
        order. Each claim is recorded (anchored to the table; ``words`` by claim id and
        ``common`` go to its sentence), the table gains the ``verdict`` and ``claim`` (its
        ledger id) columns, and the recorded claims come back for the page's sentences
        (:meth:`quote` states one with its link).

        Raises:
            ValueError: the table and the claims do not have one row each.
        """
        if len(claims) != len(df):
            raise ValueError(f"table {name}: {len(df)} rows but {len(claims)} claims")
        words = words or {}
        rows: list[tuple[str, Claim, str]] = []
        families: dict[str, Family] = {}
        for c in claims:
            if c.id in self.claims or c.id in {own for own, _, _ in rows}:
                raise ValueError(f"claim {c.id!r} is recorded twice by {self.name}")
            said_as = {**common, **words.get(c.id, {})}
            got, said, family = self._prepared(c, name, said_as.pop("text", None), said_as)
            if family is not None:
                families.setdefault(family.name, family)
            rows.append((c.id, got, said))
        self._record(rows, list(families.values()))  # the table's rows in one write
        recorded = [got for _, got, _ in rows]
        shown = df.reset_index(drop=True).assign(
            verdict=[c.verdict for c in recorded], claim=[c.id for c in recorded]
        )
        self.table(shown, name, caption)
        return recorded

    def count(
        self,
        claim_id: str,
        family: str,
        *,
        what: str,
        over: str,
        verdict: str = wording.BEATS,
        anchor: str = "",
        **fields: Any,
    ) -> str:
        """Record "k of n with q < alpha" over the rows this page recorded in ``family`` as
        a row of its own (it names the family) and return its linked clause."""
        full = ledger.full_id(self.run, self.name, family)
        members = [c for c, _ in self.claims.values() if c.family == full]
        row = count_claim(claim_id, members, full, what=what, over=over, verdict=verdict,
                          **fields)  # fmt: skip
        return self.claim(replace(row, scope=family), anchor=anchor)

    def quote(self, claim: Claim | str) -> str:
        """A claim this page recorded, stated with its recorded words and linked to its row;
        by its own id or by its ledger id (what :meth:`claims_table` returns)."""
        key = claim if isinstance(claim, str) else claim.id
        if key not in self.claims:
            full = {c.id: k for k, (c, _) in self.claims.items()}
            key = full.get(key, key)
        return ledger.claim_link(*self.claims[key])

    def cite(self, run: str | None, notebook: str, claim_id: str, text: str) -> str:
        """``text`` linked to the ledger row ``claim_id`` that ``notebook`` of ``run`` owns
        (plain text when no run of the report owns it): a comparison another page tests is
        named here, not worded again."""
        if run is None:
            return text
        return ledger.reference_link(ledger.full_id(run, notebook, claim_id), text)

    def citer(self, config: Config, notebook: str) -> Callable[[str, str, str], str]:
        """:meth:`cite` for the rows ``notebook`` owns, the run found per dataset: the run of
        this page's profile that executes ``notebook`` on that dataset alone."""
        runs: dict[str, str | None] = {}

        def cite(dataset: str, claim_id: str, text: str) -> str:
            if dataset not in runs:
                runs[dataset] = ledger.owner_run(config, self.run, notebook, dataset)
            return self.cite(runs[dataset], notebook, claim_id, text)

        return cite

    def declare(self, *families: Family) -> None:
        """Declare the page's correction families, before any result is computed. Each goes
        to the ledger (``claims.html`` lists it) under ``<run>.<NN>.<name>`` with its first
        row, so the ledger's families are the sets its q values were corrected over."""
        for fam in families:
            if fam.name in self.families:
                raise ValueError(f"family {fam.name!r} is declared twice on {self.name}")
            self.families[fam.name] = fam

    def headline(
        self, key: str, value: float | int | str, text: str, *, claim: str | None = None
    ) -> None:
        """Record a headline number for the report index (``headlines.json``).

        With ``claim`` (the id of a claim this page recorded), ``text`` is the lead-in and
        the claim's own words follow it: the index quotes the ledger row, and links it, and
        the row becomes one of the index's key claims (``role`` ``headline``).

        Raises:
            ValueError: the text uses a form the wording conventions forbid
                (:func:`judgepanel.claims.wording.prose_problems`): a headline is quoted
                alone, so one that claims more than its numbers fails loudly instead.
        """
        entry: dict[str, Any] = {}
        if claim is not None:
            if claim not in self.claims:
                raise KeyError(f"headline {key!r} quotes claim {claim!r}, not recorded here")
            recorded, words = self.claims[claim]
            if recorded.role != "headline":
                ledger.mark_headline(self.tables_dir.parent, self.name, recorded.id)
                recorded = replace(recorded, role="headline")
                self.claims[claim] = (recorded, words)
            text = wording.true_minus(text)
            entry = {"claim": recorded.id, "verdict": recorded.verdict, "lead": text}
            text = text + words
        text = wording.true_minus(text)
        problems = wording.prose_problems(text)
        if problems:
            raise ValueError(f"headline {key!r} of {self.name}: " + "; ".join(problems))
        if isinstance(value, float | np.floating):
            value = float(value)
        elif isinstance(value, np.integer):
            value = int(value)
        self.headlines[key] = {"value": value, "text": text, **entry}
        _store_headlines(self.tables_dir, self.name, self.headlines)


def _store_headlines(tables_dir: Path, name: str, headlines: dict[str, Any] | None) -> None:
    """Set (or with ``None`` remove) one notebook's entry in the run's ``headlines.json``.

    The notebooks of a run may execute at the same time, so the update is locked.
    """

    def change(data: dict[str, Any]) -> bool:
        if headlines is None:
            return data.pop(name, None) is not None
        data[name] = headlines
        # Notebooks in name order; a notebook's headlines in the order it states them.
        ordered = {k: data.pop(k) for k in sorted(data)}
        data.update(ordered)
        return True

    update_json(tables_dir.parent / "headlines.json", change, sort_keys=False)


class _TableHTML:
    """A table as rich output: HTML for the page, plain text for a terminal."""

    def __init__(self, html: str) -> None:
        self.html = html

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return "(table)"


def _is_missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float | np.floating) and math.isnan(v))


def table_html(
    df: pd.DataFrame,
    name: str,
    folder: str = "tables",
    caption: str | None = None,
    index: bool = False,
    digits: int = 3,
    missing: str = MISSING_NOTE,
) -> str:
    """The HTML of one report table: rounded, "–" for missing values, scrolling, paged if long."""
    import html as _html

    shown = df.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda v: _fmt(v, digits))
    has_missing = bool(df.isna().to_numpy().any())
    styler = shown.style.format(na_rep=MISSING)
    if not index:
        styler = styler.hide(axis="index")
    link = f"<a href='{folder}/{name}.csv'>{folder}/{name}.csv</a>"
    text = _html.escape(caption) if caption else "Table"
    styler = styler.set_caption(f"{text} ({len(df):,} rows; {link})")
    long = len(df) > FLAT_ROWS
    classes = "jp-table jp-long" if long else "jp-table"
    note = f"<div class='jp-note'>{MISSING} {_html.escape(missing)}</div>" if has_missing else ""
    return (
        f"<div class='{classes}' data-page-size='{PAGE_ROWS}' "
        f"style='overflow-x:auto;max-width:100%'>{styler.to_html()}{note}</div>"
    )


def _fmt(v: Any, digits: int) -> str:
    if _is_missing(v):
        return MISSING
    if isinstance(v, float) and v != 0 and abs(v) < 10 ** (-digits):
        return f"{v:.1e}"
    return f"{v:.{digits}f}"


def setup(
    *,
    run: str,
    name: str,
    tables_dir: str | Path,
    simulated: bool,
    figures_dir: str | Path | None = None,
    judges: tuple[str, ...] = (),
) -> Notebook:
    """Start a notebook: style, pandas display, the simulated-data banner, the output folders;
    ``judges`` are the run's families, which the palette colours."""
    from IPython.display import HTML

    set_style()
    pd.set_option("display.precision", 3)
    pd.set_option("display.max_columns", 40)
    tables = Path(tables_dir)
    figures = Path(figures_dir) if figures_dir else tables.parent / "figures"
    tables.mkdir(parents=True, exist_ok=True)
    # A previous execution's headlines go, so a run that fails before its own are written
    # shows none on the index rather than stale numbers.
    _store_headlines(tables, name, None)
    ledger.record(tables.parent, name, None)  # and its claims
    if simulated:
        _display(HTML(SIMULATED_BANNER))
    return Notebook(
        run=run,
        name=name,
        tables_dir=tables,
        figures_dir=figures,
        simulated=simulated,
        judges=tuple(judges),
    )


def forest(
    df: pd.DataFrame,
    label: str,
    *,
    estimate: str = "delta",
    low: str = "ci_low",
    high: str = "ci_high",
    xlabel: str = "Δ Spearman ρ (95% paired-bootstrap CI)",
    title: str | None = None,
    ax: plt.Axes | None = None,
    reference: float = 0.0,
) -> plt.Figure:
    """A forest plot: one row per comparison, point estimate with its interval."""
    rows = df.reset_index(drop=True)
    if ax is None:
        fig, ax = plt.subplots(figsize=(7.0, 0.42 * len(rows) + 1.2))
    else:
        fig = ax.figure
    y = np.arange(len(rows))[::-1]
    # A percentile interval need not contain the full-sample estimate; draw what exists.
    err = np.clip(np.vstack([rows[estimate] - rows[low], rows[high] - rows[estimate]]), 0, None)
    ax.errorbar(rows[estimate], y, xerr=err, fmt="o", color="#1f4e79", capsize=3, lw=1.4)
    ax.axvline(reference, color="0.4", ls="--", lw=1)
    ax.set_yticks(y)
    ax.set_yticklabels(rows[label])
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
