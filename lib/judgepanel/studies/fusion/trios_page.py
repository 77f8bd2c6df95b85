"""The count rows and sentences of notebook 03 (every three-family panel: the trio sweep).

Page-only helpers: the words of the sweep's count rows, and the sentences and headlines
built from :class:`~judgepanel.studies.fusion.trios.TrioSummary`. A sentence that cites
notebook 02's rows takes ``cite`` (``Notebook.citer``), which links a row another page owns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from judgepanel.claims import wording
from judgepanel.studies.fusion import ablation, trios
from judgepanel.studies.fusion.trios import TrioSummary

SYMBOLS = {"spearman": "ρ", "kendall_b": "τ_b"}
"""The symbol of each metric in the page's words."""

COUNTED: tuple[tuple[str, str], ...] = (
    ("best member", "spearman"),
    ("panel mean", "spearman"),
    ("best member", "kendall_b"),
)
"""The (comparator, metric) families whose gains the page counts."""


def count_words(comparator: str, metric: str, n_tested: int) -> dict[str, str]:
    """The count row of the trios whose fusion beats ``comparator`` under ``metric``: its
    id, family, and what it counts over which family (keywords of ``Notebook.count``)."""
    symbol = SYMBOLS[metric]
    return {
        "claim_id": f"trios:gains-vs-{comparator.replace(' ', '_')}:{metric}",
        "family": trios.family_name(comparator, metric),
        "what": (
            f"trios where fusing the three families' holistic and rubric scores (H+P_gb) "
            f"beats the trio's {comparator} ({symbol}), the pre-declared trio left to 02"
        ),
        "over": (
            f"the fused score (H+P_gb) against each trio's {comparator} ({symbol}), one-sided, "
            f"BH over the {n_tested} trios"
        ),
    }


def sweep_sentence(
    summary: TrioSummary,
    counts: Mapping[tuple[str, str], str],
    *,
    dataset: str,
    predeclared: Sequence[str],
    cite: Callable[[str, str, str], str],
) -> str:
    """The pre-declared trio's rows (02's, cited) and the other trios' counts under ρ."""
    return (
        f"The pre-declared trio ({'+'.join(predeclared)}) is 02's Table 2 block, so its "
        "comparisons are tested there once: "
        + cite(dataset, ablation.claim_id("pre-declared", "H+P_gb", "best single"),
               "against its best member")
        + " and " + cite(dataset, ablation.claim_id("pre-declared", "H+P_gb", "panel mean"),
                         "against its panel mean")
        + f". Of the other {summary.n_tested} trios (one-sided tests, q over them): "
        + counts["best member", "spearman"]
        + " (smallest difference "
        + wording.estimate(summary.smallest_gain, *summary.smallest_gain_ci) + "); "
        + counts["panel mean", "spearman"]
        + f". Fused ρ spans {summary.fused_min:.3f} ({summary.worst_trio}) to "
        f"{summary.fused_max:.3f} ({summary.best_trio})."
    )  # fmt: skip


def beats_best_lead(summary: TrioSummary, dataset: str) -> str:
    """The lead-in of the index's headline on the trios that beat their best member."""
    return (
        f"{dataset} (fused correlation with the human mean, ρ, from {summary.fused_min:.3f} to "
        f"{summary.fused_max:.3f} over the {summary.n_trios} trios): "
    )


def verdict_sentence(summary: TrioSummary, *, same: bool, stated: str) -> str:
    """Where the trio of the highest holistic ρ ranks by fused ρ, with its row against the
    pre-declared trio (``stated``; ``same``: it is the pre-declared trio)."""
    return (
        f"The family with the highest holistic ρ by point estimate ({summary.strongest}) is in "
        f"{summary.top_with_strongest}, and the one with the lowest ({summary.weakest}) in "
        f"{summary.top_with_weakest}, of the {summary.top_k} trios with the highest fused ρ by "
        f"point estimate. The three families with the highest holistic ρ by point estimate "
        f"({summary.verdict_trio}) make the trio ranked {summary.verdict_rank} of "
        f"{summary.n_trios} by fused ρ"
        + (" — it is the pre-declared trio: " if same else "; exploratory: ")
        + stated
        + "."
    )


def verdict_headline(summary: TrioSummary, dataset: str) -> str:
    """The index's headline on the rank of the trio chosen by holistic ρ."""
    return (
        f"{dataset}: the three families with the highest holistic ρ by point estimate "
        f"make the trio ranked {summary.verdict_rank} of {summary.n_trios} by fused correlation "
        f"with the human mean (ρ)"
    )
