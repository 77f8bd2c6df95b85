"""The sentences, count rows and figures of notebook 01 (do the dimension prompts measure
their dimensions?).

Page-only helpers: what the page can test on a dataset, the sentences beside its MTMM
tables, the count rows it states from the recorded cells, and its two heatmaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim
from judgepanel.studies.common.heatmaps import heatmaps_drawn_once
from judgepanel.studies.fusion import fourth_attribute, mtmm


@dataclass(frozen=True)
class Scope:
    """What the page tests on a dataset.

    Attributes:
        attributes: the rubric attributes a cell could compare (none without an overall
            rating to partial out).
        validated: those the dataset rates, each a cell per family.
        not_computed: the sentence of a section that cannot be computed.
        sentence: the page's sentence on what it tests.
    """

    attributes: list[str]
    validated: list[str]
    not_computed: str
    sentence: str


def scope(
    dataset: str, run: str, *, overall: bool, attributes: Sequence[str], validated: Sequence[str]
) -> Scope:
    """What the page can test on ``dataset``: its cells need an overall human rating to
    partial out, a holistic question (``attributes`` is empty without one) and a human
    rating of an attribute (``validated``)."""
    not_computed = (
        f"Not computed: {dataset} has no human rating of "
        f"{wording.join(attributes, 'or')}, so no dimension prompt can be "
        "validated on it."
    )
    if not overall:
        not_computed = (
            f"Not computed: {dataset} has no overall human rating, which each cell partials out."
        )
        return Scope([], [], not_computed, not_computed)
    if not attributes:
        not_computed = (
            f"Not computed: the rubric of {run} asks no holistic question, which "
            "each cell compares a dimension prompt with."
        )
        return Scope([], list(validated), not_computed, not_computed)
    if validated:
        said = (
            f"{dataset} has human ratings of {wording.join(validated, 'and')}: the cells below "
            "test the dimension prompts of these attributes."
        )
    else:
        said = (
            f"{dataset} rates the overall impression only, with no human rating of "
            f"{wording.join(attributes, 'or')}, so this notebook has no cell to test on "
            "it; the pooled table below still shows the profile's other datasets."
        )
    return Scope(list(attributes), list(validated), not_computed, said)


def convergent_figure(rho: pd.DataFrame, dataset: str) -> plt.Figure:
    """Heatmap of each family's dimension prompts against every human attribute."""
    fig, ax = plt.subplots(figsize=(1.4 * rho.shape[1] + 2.5, 0.32 * len(rho) + 1.2))
    sns.heatmap(rho, annot=True, fmt=".2f", cmap="RdBu_r", vmin=-1, vmax=1, ax=ax,
                cbar_kws={"label": "Spearman ρ"})  # fmt: skip
    ax.set(xlabel="human attribute", ylabel="family:prompt",
           title=f"Dimension prompts against the human attributes ({dataset})")  # fmt: skip
    return fig


def own_range(validity: pd.DataFrame) -> str:
    """The range of each prompt's ρ with its own attribute (a clause, no full stop)."""
    low, high = validity["rho_own"].min(), validity["rho_own"].max()
    return (
        f"Each prompt's Spearman ρ with its own attribute lies between {low:.2f} and "
        f"{high:.2f} over {len(validity)} family × prompt rows"
    )


def residual_sentence(resid: pd.DataFrame) -> str:
    """How much of each attribute's rank variance the overall score leaves."""
    return (
        "Once the overall score is known, "
        + ", ".join(
            f"{r.attribute} keeps {r.residual_rank_variance:.1%} of its rank variance "
            f"(ρ with overall {r.rho_with_overall:.2f})"
            for r in resid.itertuples()
        )
        + "."
    )


def raw_holistic_wins(cells: pd.DataFrame) -> int:
    """Cells whose holistic prompt has the larger raw correlation."""
    return int((cells["raw_holistic"] > cells["raw_dimension"]).sum())


def cells_sentences(cells: pd.DataFrame, dataset: str) -> list[str]:
    """The cells by point estimate, raw and partial, and the cells the dimension prompt
    loses."""
    n, won = len(cells), int(cells["won"].sum())
    said = [
        f"In raw correlations the holistic prompt is above the dimension prompt of the same "
        f"attribute in {raw_holistic_wins(cells)} of {n} cells by point estimate (raw "
        f"correlations are not tested here). With the overall score partialled out, the "
        f"dimension prompt's partial is the larger in {won} of {n} cells by point estimate; "
        f"each cell is tested in the next section, corrected over every rated dataset's "
        f"cells (q_dataset, the correction within {dataset} alone, is shown for reference "
        f"and decides nothing)."
    ]
    lost = cells[~cells["won"]]
    if len(lost):
        said.append(
            "Cells where the dimension prompt's partial is the smaller by point estimate: "
            + "; ".join(
                f"{r.attribute} for {r.family} ({wording.number(r.partial_dimension, signed=True)}"
                f" against {wording.number(r.partial_holistic, signed=True)}, "
                f"CI {wording.interval(r.ci_low, r.ci_high, signed=True)})"
                for r in lost.itertuples()
            )
            + "."
        )
    else:
        said.append("The dimension prompt's partial is the larger in every cell by point estimate.")
    return said


def pooled_words(datasets: Sequence[str], n_cells: int) -> dict[str, str]:
    """What the pooled count row counts and over which family (``what``, ``over``)."""
    return {
        "what": f"MTMM cells of {', '.join(datasets)} where the dimension prompt's partial "
        "correlation with its attribute is larger than the holistic prompt's",
        "over": f"the {n_cells} cells, one-sided, BH (q_pooled)",
    }


def dataset_count(
    recorded: Sequence[Claim], dataset: str, datasets: Sequence[str], n_cells: int
) -> Claim:
    """The count row of ``dataset``'s cells won, over the family pooled over ``datasets``."""
    return mtmm.count_of(
        recorded,
        lambda c: c.dataset == dataset,
        id=f"mtmm:cells-won:{dataset}",
        family=mtmm.FAMILY,
        what=(
            f"family × attribute pairs (MTMM cells) of {dataset} where, beyond the overall "
            "human score, a prompt about one rubric dimension tracks the human rating of "
            "that attribute better than the overall (holistic) prompt"
        ),
        over=f"the {n_cells} cells of {', '.join(datasets)}, one-sided, BH (q_pooled)",
    )


def pooled_sentence(
    dataset: str, datasets: Sequence[str], n_pooled: int, n_own: int, pooled: str, own: str,
    profile: str,
) -> str:  # fmt: skip
    """The pooled family's count and the dataset's own (``pooled``, ``own``: their
    stated rows)."""
    if len(datasets) > 1:
        return (
            f"Corrected as one family over the {n_pooled} cells of "
            f"{', '.join(datasets)}, as the paper does: {pooled}. On {dataset}: "
            f"{own}."
        )
    return (
        f"The store holds no other rated dataset of profile {profile}, so the family is "
        f"the {n_own} cells of {dataset} and q_pooled equals q_dataset: {own}."
    )


def cells_won_lead(dataset: str, raw_wins: int, n_cells: int) -> str:
    """The lead-in of the index's headline on the cells won."""
    return (
        f"{dataset} (without removing the overall score, the holistic prompt's raw "
        f"correlation is the larger in {raw_wins} of {n_cells} cells by point estimate): "
    )


def matrix_figure(raw: pd.DataFrame, partial: pd.DataFrame, dataset: str) -> plt.Figure:
    """The raw and the partial MTMM matrices side by side."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 0.28 * len(partial) + 1.5), sharey=True)
    with heatmaps_drawn_once(fig):
        for ax, m, title in (
            (axes[0], raw, "raw Spearman ρ"),
            (axes[1], partial, "partial ρ given overall"),
        ):
            sns.heatmap(m, annot=True, fmt=".2f", cmap="vlag", center=0, ax=ax, cbar=False,
                        annot_kws={"size": 7})  # fmt: skip
            ax.set_title(title)
            ax.set_xlabel("human attribute")
    axes[0].set_ylabel("family · prompt")
    fig.suptitle(f"Multitrait–multimethod matrix ({dataset})")
    fig.tight_layout()
    return fig


def holistic_range(partial: pd.DataFrame) -> str:
    """The range of the holistic prompt's partial correlations."""
    rows = partial[partial.index.str.endswith("holistic")]
    return (
        f"Given the overall score, the holistic prompt's partial correlations range from "
        f"{rows.min().min():+.3f} to {rows.max().max():+.3f}."
    )


def fourth_count(recorded: Sequence[Claim], prompt: str, n_cells: int) -> Claim:
    """The count row of the families whose ``prompt`` validates on the held-out attribute."""
    attr = fourth_attribute.ATTRIBUTE
    return mtmm.count_of(
        recorded,
        lambda c: f".fourth:{prompt}:" in c.id,
        id=f"fourth:{prompt}:validated",
        family=fourth_attribute.FAMILY,
        what=(
            f"families where the {prompt} prompt tracks the held-out human {attr} "
            "rating, beyond the overall score, better than the holistic prompt"
        ),
        over=f"the {n_cells} prompt × family cells of {attr}, one-sided, BH",
    )
