"""The tables, figure and sentences of notebook 07 (a pre-registered temperature rule).

Page-only helpers around :mod:`judgepanel.studies.fusion.temperature`: the rule's claims
as the page quotes them, when the rule was written against the first grid score, the
rule evaluated on each of its datasets, and the grid's figure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D

from judgepanel.claims import wording
from judgepanel.core.config import Config
from judgepanel.core.frames import scored_dataset
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.studies.fusion import temperature
from judgepanel.studies.fusion.temperature import RuleResult, TemperatureRule


def claims_sentence(rule: TemperatureRule) -> str:
    """The rule's claims, quoted unchanged from its file."""
    return (
        "The claims as the rule file states them, quoted unchanged (the verdicts below use "
        "words that claim no more than each test):\n\n"
        + "\n".join(f"> **{key}**: {text}" for key, text in rule.claims.items())
    )


def rule_order(committed: str | None, first_score: str | None) -> str:
    """Whether the rule was committed before the first grid score ("before", "AFTER"), or
    why that is unknown."""
    if committed is None:
        return "unknown (the project is not a git checkout)"
    if first_score is None:
        return "unknown (the grid has not been scored)"
    return "before" if pd.Timestamp(committed) < pd.Timestamp(first_score) else "AFTER"


def provenance_table(
    rule: TemperatureRule, committed: str | None, first_score: str | None
) -> pd.DataFrame:
    """The rule's identity (file, hash, first commit) against its first grid score."""
    return pd.DataFrame([{
        "rule": rule.path.name, "sha256": rule.sha256, "committed": committed,
        "first_grid_score": first_score, "rule_first": rule_order(committed, first_score),
    }])  # fmt: skip


def provenance_sentence(
    rule: TemperatureRule, committed: str | None, first_score: str | None
) -> str:
    """When the rule was committed and the grid first scored, and which came first."""
    order = rule_order(committed, first_score)
    return (
        f"The rule file (SHA-256 `{rule.sha256[:16]}…`) "
        + (
            f"was first committed at {committed}"
            if committed
            else "has no commit time here (the project is not a git checkout)"
        )
        + "; the first grid score was "
        + (f"written at {first_score}" if first_score else "not written yet")
        + (
            f": the rule came {order} the scores."
            if committed and first_score
            else f": which came first is {order}."
        )
    )


def evaluate_datasets(
    calls: pd.DataFrame,
    rule: TemperatureRule,
    *,
    family: str,
    datasets: Mapping[str, Mapping[str, Any]],
    config: Config,
    loader_keys: Callable[[str], Mapping[str, Any]],
    rubric_sha: str,
    seed: int,
) -> dict[str, RuleResult]:
    """The rule evaluated on its exploratory and its confirmatory dataset, in that order.

    Each dataset's grid means are taken on the rule's stratified subset of its images
    (``datasets``: each dataset's ``kind`` and ``root``; ``loader_keys``: the keys it is
    read with) against their human mean.
    """
    results = {}
    for name in (rule.exploratory, rule.confirmatory):
        ref = datasets[name]
        data = scored_dataset(ref["kind"], ref["root"], config.design(ref["kind"]),
                              **loader_keys(name))  # fmt: skip
        subset = data.sample(rule.n_images, rule.sample_seed).images
        grid = temperature.grid_means(
            calls, name, family=family, temperatures=rule.grid(), rubric_sha=rubric_sha,
            images=subset["image_id"].astype(str),
        )  # fmt: skip
        y = subset.set_index("image_id")["mean_score"]
        results[name] = temperature.evaluate_rule(grid, y, rule, dataset=name, seed=seed)
    return results


def grid_figure(
    results: Mapping[str, RuleResult], rule: TemperatureRule, family: str
) -> tuple[plt.Figure, list[Line2D]]:
    """Each dimension's ρ across the grid on each dataset (solid where confident), and the
    legend entries of the dimensions and line styles."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    temps = list(rule.grid())
    colour = {d: f"C{i}" for i, d in enumerate(DIMENSIONS)}
    for ax, (name, res) in zip(axes, results.items(), strict=True):
        for row in res.dimensions.itertuples():
            ax.plot(temps, [row.rho_low, row.rho_base, row.rho_high], marker="o",
                    ls="-" if row.confident else "--", color=colour[row.dimension])  # fmt: skip
        ax.axhline(rule.confident_rho, color="0.5", lw=1, ls=":")
        role = "confirmatory" if name == rule.confirmatory else "exploratory"
        ax.set_title(f"{name} ({role})")
        ax.set_xlabel("sampling temperature")
        ax.set_xticks(temps)
    axes[0].set_ylabel("ρ of the dimension mean\nwith the human mean")
    fig.suptitle(f"Accuracy of each of {family}'s dimensions across the temperature grid")
    fig.tight_layout()
    keys = [
        *(Line2D([], [], label=d, color=c, marker="o") for d, c in colour.items()),
        Line2D([], [], label="confident on this dataset", color="0.3"),
        Line2D([], [], label="not confident", color="0.3", ls="--"),
        Line2D([], [], label="confidence threshold", color="0.5", ls=":"),
    ]
    return fig, keys


def confident_sentence(result: RuleResult, dataset: str, family: str) -> str:
    """The dimensions the family is confident on, with their high − low difference."""
    dims = result.dimensions
    confident = dims[dims["confident"]]
    listed = "; ".join(
        f"{r.dimension} (ρ {r.rho_base:.3f}; high − low "
        f"{wording.estimate(r.delta, r.ci_low, r.ci_high)})"
        for r in confident.itertuples()
    )
    return (
        f"On {dataset}, {family} is confident on {len(confident)} of {len(DIMENSIONS)} "
        "dimensions" + (": " + listed if len(confident) else "") + "."
    )


def tolerates_lead(dataset: str) -> str:
    """The lead-in of the index's headline on the rule's first claim."""
    return (
        f"{dataset}, the rule's first pre-registered claim, that a high sampling "
        "temperature costs no ρ against a low one on any dimension the judge is confident "
        "on (registered without an equivalence margin: a count of 0 would show only that "
        "the tests found none): "
    )


def inverted_lead(dataset: str) -> str:
    """The lead-in of the index's headline on the rule's second claim."""
    return (
        f"{dataset}, the rule's second pre-registered claim, about low temperature "
        "on the confident dimensions and high on the others: "
    )
