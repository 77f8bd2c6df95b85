"""The sentences and words of notebook 02 (the input ablation, Table 2).

Page-only helpers. A sentence that states a ledger row takes ``quote``, the page's way of
stating a recorded row by its id (``Notebook.quote``), so the words and the link stay the
ledger's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from judgepanel.claims.rows import Claim
from judgepanel.studies.common.combiners import FOLD_SEED, describe_combiner
from judgepanel.studies.fusion import ablation, robustness
from judgepanel.studies.fusion.blocks import BLOCK_RUNS, Blocks, blocks_of_3_runs
from judgepanel.studies.fusion.robustness.baselines import STAND_IN_PREFIX

Quote = Callable[[Claim | str], str]
"""States a recorded ledger row, by the row or its id."""

PRE = "pre-declared"
"""The block of the pre-declared families, the primary test's."""


def inputs_sentence(blocks: Blocks) -> str:
    """The combiner and the width of each input block."""
    return (
        f"The combiner: {describe_combiner(len(blocks.items))}. H has one column per family "
        f"({blocks.H.shape[1]}), P one per family and dimension ({blocks.P.shape[1]}), and "
        f"H block-split {blocks.H_split.shape[1]}."
    )


def blocks_of_3_sentence(blocks: Blocks, k_runs: int, n_families: int, dataset: str) -> str:
    """Whether the blocks-of-3 control runs on this dataset (it needs enough holistic runs)."""
    n_dims = blocks.P.shape[1] // n_families
    if blocks.H_blocks3 is not None:
        return (
            f"Blocks of {BLOCK_RUNS} (the paper's Table 2 control): each family's first "
            f"{blocks_of_3_runs()} of its {k_runs} holistic runs cut into {n_dims} blocks of "
            f"{BLOCK_RUNS}, so the arm has {blocks.H_blocks3.shape[1]} columns, as many as P, "
            f"each averaging {BLOCK_RUNS} runs as each column of P does."
        )
    return (
        f"Blocks of {BLOCK_RUNS} need {blocks_of_3_runs()} holistic runs per family "
        f"({n_dims} blocks, one per column of P); {dataset} was scored with k = {k_runs}, "
        f"so that arm is left out of Table 2 here, as the paper leaves it out of PARA."
    )


def singles_sentence(singles: pd.DataFrame, best_name: str, dataset: str) -> str:
    """The best and the worst single family by holistic ρ."""
    return (
        f"The best single model on {dataset}, the family with the highest holistic ρ by point "
        f"estimate, is {best_name}, at ρ = {singles.loc[0, 'rho']:.3f} (τ_b = "
        f"{singles.loc[0, 'tau_b']:.3f}); the lowest is {singles.iloc[-1]['family']} at ρ = "
        f"{singles.iloc[-1]['rho']:.3f}."
    )


def headline_ids() -> tuple[str, str]:
    """The ids of the two headline rows: H+P_gb of the pre-declared block against the panel
    mean (the primary test) and against the best single model."""
    return ablation.claim_id(PRE, "H+P_gb", "panel mean"), ablation.claim_id(
        PRE, "H+P_gb", "best single"
    )


def headline_spreads(sweep: pd.DataFrame) -> dict[str, Any]:
    """The margins over random fold partitions that ride beside each headline row of the
    pre-declared block (per comparator and metric), from a partition sweep."""
    return {
        ablation.claim_id(PRE, "H+P_gb", comp, m): robustness.random_margins(sweep, PRE, comp, m)
        for comp in ("panel mean", "best single")
        for m in ("spearman", "kendall_b")
    }


def table2_words(rows: Sequence[Claim]) -> dict[str, dict[str, Any]]:
    """The words of Table 2's rows: each block's, and the headline rows' own."""
    primary_id, vs_best_id = headline_ids()
    words = ablation.block_words(rows)
    words[primary_id] = {
        "a": "the fusion (H+P_gb)",
        "b": "the plain average of their holistic scores (panel mean)",
    }
    words[vs_best_id] = {"a": "the same fusion (H+P_gb)", "b": "the best single model"}
    return words


def block_table_name(block: str) -> str:
    """The file name of a block's wide table (``table2_pre_declared``)."""
    return "table2_" + block.replace(" ", "_").replace("-", "_")


def repeated_sentence(
    dataset: str, block: str, source: str, families: Sequence[str], quote: Quote
) -> str:
    """Why a block whose families repeat an earlier block's is not tested again."""
    return (
        f"On {dataset} the {block} ({', '.join(families)}) is the {source} block's "
        f"families, so its rows are the {source} block's, equal by construction: they stay "
        f"out of every correction family and are not counted again (the table marks them "
        f"not tested: {quote(ablation.claim_id(block, 'H+P_gb', 'best single'))})."
    )


def primary_sentence(long: pd.DataFrame, quote: Quote) -> str:
    """The primary test and its companions under ρ and τ_b, each quoted from the ledger."""
    primary_id, vs_best_id = headline_ids()
    fused = ablation.ablation_row(long, PRE, "H+P_gb", "panel mean")

    def row(arm: str, comparator: str, metric: str) -> str:
        return quote(ablation.claim_id(PRE, arm, comparator, metric))

    return (
        f"Primary test (pre-declared families, H+P_gb against their panel mean, ρ "
        f"{fused.value:.3f} against {fused.comparator_value:.3f}): "
        + quote(primary_id) + "; under τ_b, " + row("H+P_gb", "panel mean", "kendall_b")
        + ". Against the best single model: " + quote(vs_best_id)
        + "; for fused holistic verdicts, " + row("H_gb", "best single", "spearman")
        + "; for the panel mean, " + row("panel mean", "best single", "spearman")
        + ". Under τ_b, against the best single model: the fusion, "
        + row("H+P_gb", "best single", "kendall_b")
        + "; the panel mean, " + row("panel mean", "best single", "kendall_b")
        + ". Each test is one-sided (the first named is better), with q over the arms of the "
        f"block against the same comparator, on the fold partition of seed {FOLD_SEED}."
    )  # fmt: skip


def per_block_sentence(blocks: Sequence[str], quote: Quote) -> str:
    """H+P_gb against each block's best single model, quoted from the ledger."""
    return (
        "H+P_gb against the block's best single model, per block: "
        + "; ".join(
            f"{block}: {quote(ablation.claim_id(block, 'H+P_gb', 'best single'))}"
            for block in blocks
        )
        + "."
    )


def best_of_sentence(picked: Sequence[Claim], quote: Quote) -> str:
    """The best single model against the panel mean, each block's max-statistic row."""
    return (
        "Is the best single model above the panel mean? Its plain test does not count: the "
        "model was picked on these images, so each block's test is the max-statistic p over "
        "the block's families: "
        + "; ".join(quote(c) for c in picked if c.metric == "spearman")
        + "."
    )


def forest_rows(long: pd.DataFrame) -> pd.DataFrame:
    """The pre-declared block's arms against the best single model under ρ, labelled."""
    rows = long[
        (long["block"] == PRE)
        & (long["comparator"] == "best single")
        & (long["metric"] == "spearman")
    ].copy()
    rows["label"] = rows["arm"].map(ablation.ARM_LABELS)
    return rows


def within_sentence(within: pd.DataFrame) -> str:
    """The range of the within-model change in ρ over the families."""
    rho = within[within["metric"] == "spearman"].sort_values("delta")
    return (
        f"Within one model, decomposition changes ρ by {rho['delta'].min():+.3f} "
        f"({rho.iloc[0]['family']}) to {rho['delta'].max():+.3f} ({rho.iloc[-1]['family']})."
    )


SHAM_COST_ID = "sham:h+p_sham_gb-vs-h+p_gb:spearman"
"""The sham rubric against the real one (the section's headline row)."""
SHAM_VS_BEST_ID = "sham:h+p_sham_gb-vs-best_single:spearman"
"""The sham rubric against the best single model."""
SHAM_WORDS: dict[str, dict[str, str]] = {
    SHAM_COST_ID: {"a": "the sham rubric (H+P_sham_gb)", "b": "the real one (H+P_gb)"},
    SHAM_VS_BEST_ID: {"b": "the best single model"},
}
"""The words the sham table's two rows are stated in."""


def sham_sentence(dataset: str, quote: Quote) -> str:
    """The sham rubric against the real one and against the best single model."""
    return (
        f"On {dataset}, with the pre-declared families, against the real rubric "
        f"(two-sided): {quote(SHAM_COST_ID)}; against the best single model (one-sided): "
        f"{quote(SHAM_VS_BEST_ID)}."
    )


def comparators_sentence(versus: pd.DataFrame, rows: Sequence[Claim], quote: Quote) -> str:
    """Each imported model's ρ and its row against the best single VLM."""
    rho = versus[versus["metric"] == "spearman"]
    stated = [c for c in rows if c.metric == "spearman"]
    return (
        f"On the {int(rho['n_images'].iloc[0])} images every model scored, with the "
        "max-statistic p over the families (the VLM is the family with the highest ρ by point "
        "estimate, picked on these images) and q over the imported models: "
        + "; ".join(
            f"{row.comparator} has ρ {row.comparator_value:.3f}, and {quote(claim)}"
            for row, claim in zip(rho.itertuples(), stated, strict=True)
        )
        + "."
    )


def stand_in(models: Sequence[str]) -> bool:
    """Whether every imported model is an image statistic of the synthetic world's
    stand-in script (not an aesthetics model)."""
    return all(m.startswith(STAND_IN_PREFIX) for m in models)


def blocks_used(family_sets: Mapping[str, Sequence[str]]) -> tuple[list[str], dict[str, str]]:
    """The blocks tested, and those whose families repeat an earlier block's (with it)."""
    repeats = ablation.repeated_blocks(family_sets)
    return [b for b in family_sets if b not in repeats], repeats
