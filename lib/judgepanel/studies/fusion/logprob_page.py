"""The data, tables, figure and sentences of notebook 09 (scores from log-probabilities).

Page-only helpers around :mod:`judgepanel.studies.fusion.logprob_designs` and
:mod:`judgepanel.studies.fusion.logprob_fused`: the calls the page reads, the per-family
rows against every sampled design, the cost-accuracy frontier and the sentences.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim
from judgepanel.core.frames import read_calls
from judgepanel.studies.common.rubric_plan import LOGPROB_CALL_TYPES
from judgepanel.studies.fusion import logprob_designs, logprob_fused

SAMPLED_CALL_TYPES: tuple[str, ...] = ("holistic", "dimension")
"""The call types of the sampled answers the logprob calls are set against."""


def page_calls(
    store: str | Path, dataset: str, sampled_from: str, families: Sequence[str]
) -> pd.DataFrame:
    """The run's logprob calls of ``dataset`` and the sampled answers of ``sampled_from``
    (the same images, perhaps another dataset's), for ``families`` only."""
    calls = pd.concat(
        [
            read_calls(store, dataset, call_types=list(LOGPROB_CALL_TYPES)),
            read_calls(store, sampled_from, call_types=list(SAMPLED_CALL_TYPES)),
        ],
        ignore_index=True,
    )
    return calls[calls["family"].isin(list(families))]


def fallback_sentence(shares: pd.Series, logprobs_mode: str) -> str:
    """Which families fell back to one sample, and on what share of their calls."""
    fell = {f: s for f, s in shares.items() if s > 0}
    if not fell:
        return "Every logprob call used its distribution."
    return (
        "Fell back to one sample: "
        + ", ".join(f"{f} ({s:.0%} of its calls)" for f, s in fell.items())
        + f"; logprobs were declared `{logprobs_mode}`."
    )


def frontier_figure(table: pd.DataFrame, palette: Mapping[str, str]) -> plt.Figure:
    """Each family's ρ against the cost of its holistic designs: the means of k samples
    (a line) and the expected score of one logprob call (a star), with 95% intervals."""
    rho = table[table["metric"] == "spearman"]
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for family, g in rho.groupby("family", sort=True):
        for part, marker in (
            (g[g["design"] != logprob_designs.EXPECTED], "o"),
            (g[g["design"] == logprob_designs.EXPECTED], "*"),
        ):
            part = part.sort_values("usd_per_1000_images")
            err = [part["estimate"] - part["ci_low"], part["ci_high"] - part["estimate"]]
            ax.errorbar(
                part["usd_per_1000_images"], part["estimate"], yerr=err, marker=marker,
                ls="-" if marker == "o" else "", ms=12 if marker == "*" else 5, capsize=2,
                color=palette.get(family), label=family if marker == "o" else None,
            )  # fmt: skip
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("$%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("cost of the holistic scores (USD per 1,000 images, log scale)")
    ax.set_ylabel("Spearman ρ with the human mean")
    ax.legend(title="family", fontsize=8)
    return fig


def fused_sentence(dataset: str, study: str, said: Mapping[str, str], lead: str) -> str:
    """The fused arm on expected scores against the study's design (``said[lead]``) and
    against the other sampled designs (``said``: each design's stated row)."""
    return (
        f"{dataset}, fusing the pre-declared families' holistic and rubric scores (H+P_gb), the "
        f"expected scores against the study's design ({study}): {said[lead]}. Against the "
        "other sampled designs: " + "; ".join(text for b, text in said.items() if b != lead) + "."
    )


def fused_lead(dataset: str, study: str) -> str:
    """The lead-in of the index's headline on the fused arm against the study's design."""
    return (
        f"{dataset}: fusing the pre-declared families' holistic and rubric scores (H+P_gb), one "
        f"logprob call per prompt against the study's design ({study}): "
    )


def versus_rows(accuracy: pd.DataFrame, dataset: str) -> tuple[list[Claim], pd.DataFrame]:
    """Each family's expected score against every one of its sampled designs: the rows
    (q within the family's designs) and their table."""
    claims: list[Claim] = []
    for family in sorted(accuracy["family"].unique()):
        claims += logprob_fused.design_claims(
            accuracy[accuracy["family"] == family], dataset=dataset, scope=family, a=family
        )
    table = pd.DataFrame([
        {"family": c.scope, "design": c.b.removeprefix(f"{c.scope} on "), "delta": c.estimate,
         "ci_low": c.ci_low, "ci_high": c.ci_high, "p": c.p, "q": c.q}
        for c in claims
    ])  # fmt: skip
    return claims, table


def against_design(claims: Sequence[Claim], design: str) -> list[Claim]:
    """The rows of each family against ``design`` (the mean of the most samples)."""
    return [c for c in claims if c.b.removeprefix(f"{c.scope} on ") == design]


def count_words(family: str, table: pd.DataFrame) -> list[dict[str, str]]:
    """The two count rows of ``family``'s expected score against its sampled designs (it
    beats one, it falls below one), as keywords of ``Notebook.count``: id, correction
    family, what each counts over which rows, and the verdict counted."""
    over = f"{family}'s {int((table['family'] == family).sum())} sampled designs"
    name = logprob_fused.versus_family(family).name
    return [
        {"claim_id": f"count-{slug}:{family}", "family": name, "over": over,
         "what": f"{family}'s expected score {verdict} a sampled design", "verdict": verdict}
        for slug, verdict in (("beats", wording.BEATS), ("falls-below", wording.FALLS_BELOW))
    ]  # fmt: skip


def granularity_sentence(gran: pd.DataFrame) -> str:
    """Each family's designs as they are minus rounded (ρ), with their intervals."""
    rho = gran[gran["metric"] == "spearman"]
    return (
        " ".join(
            f"{family}: as it is minus rounded, "
            + " and ".join(
                f"Δρ = {wording.number(r.delta, signed=True)} "
                f"{wording.interval(r.ci_low, r.ci_high, signed=True)} for the {r.design}"
                for r in g.itertuples()
            )
            + "."
            for family, g in rho.groupby("family", sort=True)
        )
        + " A family whose model sent no logprobs has an expected score equal to its one "
        "sample, already on the integer scale, so rounding leaves it as it is."
    )
