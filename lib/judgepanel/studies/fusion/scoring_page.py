"""The sentences and figures of notebook 00 (scoring: coverage, cost and repeatability).

Page-only helpers: each takes the tables the page already shows (coverage, cost, score
distributions, repetition agreement) and returns the sentence or figure the page puts
beside them, so the notebook keeps the call that makes each table and what it says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from judgepanel.core import coverage
from judgepanel.core.calls import CallSpec
from judgepanel.core.config import ScoringDesign
from judgepanel.core.rubric import Rubric, Scale


def describe_design(
    dataset: str,
    n_images: int,
    families: Sequence[str],
    rubric: Rubric,
    design: ScoringDesign,
    samples_per_request: int,
) -> str:
    """The run's scoring design in one line: images, families and calls per image."""
    holistic_k = design.holistic_k if rubric.holistic is not None else 0
    per_image = holistic_k + design.dimension_r * len(rubric.dimensions)
    return (
        f"{dataset}: {n_images} images, families {', '.join(families)}; "
        f"k={holistic_k} holistic + R={design.dimension_r} x {len(rubric.dimensions)} dimension "
        f"calls = {per_image} per image and family at T={design.temperature}; "
        f"{samples_per_request} sample(s) per request"
    )


def coverage_sentence(cover: pd.DataFrame) -> str:
    """How many planned calls of a :func:`coverage.coverage` table are answered."""
    planned, ok = int(cover["planned"].sum()), int(cover["ok"].sum())
    return (
        f"{ok:,} of {planned:,} planned calls ({ok / planned:.2%}) are "
        f"answered; {int(cover['failed'].sum()):,} are recorded as failures and "
        f"{int(cover['missing'].sum()):,} were never sent."
    )


def coverage_headline(cover: pd.DataFrame, dataset: str) -> tuple[float, str]:
    """The index's coverage headline: the answered share and its text."""
    planned, ok = int(cover["planned"].sum()), int(cover["ok"].sum())
    return ok / planned, (
        f"{dataset}: {ok:,} of {planned:,} planned calls answered by the judges "
        f"({ok / planned:.1%}); {int(cover['failed'].sum()):,} failed and "
        f"{int(cover['missing'].sum()):,} were never sent"
    )


def _total_sentence(
    total_cost: float, dataset: str, n_images: int, n_families: int, n_planned: int,
    extra: pd.DataFrame,
) -> str:  # fmt: skip
    """What the scoring cost in all, and which calls the cost counts."""
    counted = (
        "The cost counts the same calls as the coverage above."
        if extra.empty
        else f"The cost counts every call the store holds for {dataset}: besides the "
        f"{n_planned:,} planned calls that coverage counts, it includes "
        f"{int(extra['calls'].sum()):,} calls of other runs over the same images ("
        + ", ".join(
            f"{int(r.calls):,} {r.kind} at temperature {r.temperature:g}"
            for r in extra.itertuples()
        )
        + ")."
    )
    return (
        f"The scoring of {dataset} cost ${total_cost:,.2f} in all as billed (each call at "
        "the price table's rate for the way it was sent: a batch call at its batch price), "
        f"${total_cost / n_images:.4f} per image for {n_families} families. " + counted
    )


def cost_sentences(
    costs: pd.DataFrame,
    calls: pd.DataFrame,
    plan: Sequence[CallSpec],
    *,
    dataset: str,
    n_images: int,
    n_families: int,
    models: set[str],
) -> list[str]:
    """The page's sentences on what the scoring cost.

    ``costs`` is :func:`coverage.cost_summary`'s table of ``calls``, ``plan`` the run's
    planned calls and ``models`` its planned models: the cost in all (or why it is not
    known) with the calls outside the plan it counts, the provider's own charge where it
    reported one, and a note when the run's rows mix ways of sending (repetitions drawn in
    one request share it).
    """
    extra = coverage.outside_plan(calls, plan)
    total = costs.loc[costs["family"] == "all"].iloc[0]
    total_cost = float(total["cost_usd"])
    unpriced = coverage.cost_sentence(costs, dataset)  # imported answers carry no price
    said = [
        unpriced or _total_sentence(total_cost, dataset, n_images, n_families, len(plan), extra)
    ]
    if pd.notna(total["reported_usd"]):
        said.append(
            f"The provider reported ${total['reported_usd']:,.2f} for the calls that carried "
            f"its own charge, against {coverage.usd_words(total_cost)} estimated for all of them."
        )
    mix = coverage.samples_per_request_mix(calls[calls["model"].isin(models)])
    if len(mix) > 1:
        said.append(
            f"This store holds {coverage.describe_mix(mix)} for these families: repetitions "
            "drawn in one request share its prompt, so they may agree more than separate calls."
        )
    return said


def score_distribution(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean, SD and count of the answers per family and prompt (``prompt`` column)."""
    return (
        scores.groupby(["family", "prompt"])["value"]
        .agg(mean="mean", sd="std", n="size")
        .reset_index()
    )


def scale_shares(holistic: pd.DataFrame) -> pd.DataFrame:
    """Each family's share of holistic answers at each scale point (integer ``value``)."""
    shares = (
        holistic.groupby("family")["value"]
        .value_counts(normalize=True)
        .rename("share")
        .reset_index()
    )
    shares["value"] = shares["value"].round().astype(int)  # integer ticks on the scale
    return shares


def scale_use_figure(shares: pd.DataFrame, scale: Scale, palette: Mapping[str, str]) -> plt.Figure:
    """Bars of each family's share of answers at each point of the holistic scale."""
    fig, ax = plt.subplots(figsize=(8, 4))
    sns.barplot(data=shares, x="value", y="share", hue="family", palette=palette, ax=ax)
    ax.set_xlabel(f"holistic score ({scale.min}-{scale.max})")
    ax.set_ylabel("share of answers")
    ax.set_title("How each family uses the holistic scale")
    return fig


def modal_sentence(shares: pd.DataFrame) -> str:
    """Each family's most frequent holistic answer and its share."""
    modal = shares.loc[shares.groupby("family")["share"].idxmax()]
    return (
        "Each family's most frequent holistic answer: "
        + "; ".join(f"{r.family} {int(r.value)} ({r.share:.0%})" for r in modal.itertuples())
        + "."
    )


def reliability_figure(agree: pd.DataFrame, palette: Mapping[str, str]) -> plt.Figure:
    """Bars of each family's split-half reliability per prompt."""
    fig, ax = plt.subplots(figsize=(8, 3.8))
    sns.barplot(data=agree, x="prompt", y="reliability_sb", hue="family", palette=palette, ax=ax)
    ax.set_ylabel("split-half reliability (Spearman–Brown)")
    ax.set_xlabel("")
    ax.set_ylim(0, 1)
    ax.set_title("Repeatability of the repetition mean")
    return fig


def repeatability_sentence(agree: pd.DataFrame, run: str) -> str:
    """The range of the holistic prompt's reliability over the families, and its SD."""
    holistic = agree[agree["prompt"] == "holistic"]
    if not holistic["reliability_sb"].notna().any():
        return (
            f"The rubric of {run} asks no holistic question (or it was asked once): no holistic "
            "repeatability to report."
        )
    low = holistic.loc[holistic["reliability_sb"].idxmin()]
    high = holistic.loc[holistic["reliability_sb"].idxmax()]
    return (
        f"Holistic repetition means are reliable from {low.reliability_sb:.3f} ({low.family}) "
        f"to {high.reliability_sb:.3f} ({high.family}); a single holistic call differs from the "
        f"image's other calls by {holistic['within_sd'].mean():.2f} scale points on average."
    )
