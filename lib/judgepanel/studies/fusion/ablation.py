"""The input ablation (the fusion paper, Table 2): same families, same combiner, same folds.

Only the feature set changes between arms, so a difference between two fused arms is a
difference in what the panel was fed. Every arm is compared with the family block's best
single model and with its panel mean by paired bootstrap over images.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.claims.rows import SYMBOLS, Claim, Family, slug
from judgepanel.stats import add_q, max_statistic_p
from judgepanel.studies.common.combiners import gb_combiner, oof_predict
from judgepanel.studies.fusion.blocks import (
    Blocks,
    best_single,
    canonical,
    fused_arms,
    hp_design,
    panel_mean,
)
from judgepanel.studies.fusion.compare import compare_arms, plain_arm

ARM_ORDER: tuple[str, ...] = (
    "best single",
    "panel mean",
    "H_gb",
    "P_gb",
    "H+P_gb",
    "H_split_gb",
    "H_blocks3_gb",
    "H_ridge",
    "P_ridge",
    "P_validated_gb",
)

ARM_LABELS: dict[str, str] = {
    "best single": "best single model (raw holistic mean)",
    "panel mean": "panel mean of holistic means",
    "H_gb": "H: holistic means, GB",
    "P_gb": "P: dimension means, GB",
    "H+P_gb": "H+P: both, GB",
    "H_split_gb": "H block-split (5 blocks per family), GB",
    "H_blocks3_gb": "H blocks of 3 runs (as many as P's columns), GB",
    "H_ridge": "H, ridge (penalty chosen in fold)",
    "P_ridge": "P, ridge (penalty chosen in fold)",
    "P_validated_gb": "P validated dimensions only, GB",
}


def family_blocks(
    H: pd.DataFrame, y: pd.Series, predeclared: Sequence[str], families: Sequence[str]
) -> dict[str, list[str]]:
    """The three family blocks: the pre-declared trio, the strong trio and all families.

    The strong trio is the three families with the highest holistic rho on all images, a
    choice that looks at the target: results for it are exploratory.
    """
    _, table = best_single(H[list(families)], y)
    return {
        "pre-declared": list(predeclared),
        "strong trio": table["family"].head(3).tolist(),
        f"all {len(families)}": list(families),
    }


def block_arms(
    blocks: Blocks, families: Sequence[str], *, n_jobs: int | None = None, seed: int = 42
) -> tuple[dict[str, np.ndarray], str]:
    """Every arm's predictions for one family block, and the name of its best single model."""
    H = blocks.H_of(families)
    best, _ = best_single(H, blocks.y)
    arms = {"best single": H[best].to_numpy(float), "panel mean": panel_mean(H).to_numpy(float)}
    arms.update(fused_arms(blocks, families, n_jobs=n_jobs, seed=seed))
    return {k: arms[k] for k in ARM_ORDER if k in arms}, best


def repeated_blocks(family_sets: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each block whose families equal an earlier block's, with the earlier block's name.

    The strong trio is often the pre-declared trio itself: its rows would then be the
    pre-declared block's, equal by construction, and counted twice as separate evidence.
    """
    seen: dict[frozenset[str], str] = {}
    out: dict[str, str] = {}
    for block, fams in family_sets.items():
        key = frozenset(fams)
        if key in seen:
            out[block] = seen[key]
        else:
            seen[key] = block
    return out


def same_families(block: str) -> str:
    """Why a repeated block's rows stay out of every correction family."""
    return f"same families as the {block} block"


SELECTED = (
    "the best single model is the best of the block's families on these images: its test "
    "against the panel mean is the max-statistic row"
)
"""Why the best single model's plain test against the panel mean stays out of its family:
it was picked as the best, so only the selection-adjusted (max-statistic) test decides."""


def ablate_inputs(
    blocks: Blocks,
    family_sets: Mapping[str, Sequence[str]],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """Table 2 in long form: every arm of every block against both comparators.

    q-values are Benjamini–Hochberg within each (block, comparator, metric), over the rows
    of the table that carry no ``excluded`` reason; the rows a family holds are exactly
    the rows it was corrected over. Two rows stay out, with the reason in ``excluded``:

    * the best single model against the panel mean (the model was picked as the best of
      the block's families, so its test is ``p_max``, the max-statistic p of "the best of
      the block's models beats the panel mean", see :func:`best_of_table`);
    * every row of a block whose families repeat an earlier block's
      (:func:`repeated_blocks`): it is not fitted again, its rows are the earlier block's
      numbers, named ``same_as`` that block.
    """
    y = blocks.y.to_numpy(float)
    repeats = repeated_blocks(family_sets)
    frames: dict[str, pd.DataFrame] = {}
    for block, fams in family_sets.items():
        if block in repeats:
            source = frames[repeats[block]]
            res = source.assign(block=block, same_as=repeats[block],
                                excluded=same_families(repeats[block]))  # fmt: skip
            frames[block] = res
            continue
        arms, best = block_arms(blocks, fams, n_jobs=n_jobs)
        comparators = {"best single": arms["best single"], "panel mean": arms["panel mean"]}
        res = compare_arms(y, arms, comparators, n_resamples=n_resamples, seed=seed)
        res.insert(0, "block", block)
        res.insert(1, "families", ", ".join(fams))
        res.insert(2, "best_family", best)
        res["p_max"] = np.nan
        H = blocks.H_of(fams)
        for metric in res["metric"].unique():
            ms = max_statistic_p(
                y,
                {f: H[f].to_numpy(float) for f in fams},
                arms["panel mean"],
                metric,
                n_resamples=n_resamples,
                seed=seed,
            )
            sel = (
                (res["arm"] == "best single")
                & (res["comparator"] == "panel mean")
                & (res["metric"] == metric)
            )
            res.loc[sel, "p_max"] = ms.p
        selected = (res["arm"] == "best single") & (res["comparator"] == "panel mean")
        res["same_as"] = ""
        res["excluded"] = np.where(selected, SELECTED, "")
        frames[block] = res
    out = pd.concat(frames.values(), ignore_index=True)
    tested = out["excluded"] == ""
    out["q"] = np.nan
    out.loc[tested, "q"] = add_q(out[tested], by=["block", "comparator", "metric"])["q"]
    return out


def compare_within_model(
    blocks: Blocks,
    families: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """Within-model decomposition: each family's own H+P fused, against its holistic score.

    The nearest baseline to cross-family fusion: the same combiner, labels and folds, fed
    one family's holistic mean and dimension means, so it asks whether decomposing one
    model's judgement already pays before any second family is involved.
    """
    y = blocks.y.to_numpy(float)
    rows = []
    for fam in families:
        own = oof_predict(gb_combiner(), hp_design(blocks, [fam]), blocks.y, n_jobs=n_jobs)
        res = compare_arms(
            y,
            {"own H+P_gb": own},
            {"holistic": blocks.H[fam].to_numpy(float)},
            n_resamples=n_resamples,
            seed=seed,
        )
        res.insert(0, "family", fam)
        rows.append(res)
    return add_q(pd.concat(rows, ignore_index=True), by="metric")


def format_ablation_table(long: pd.DataFrame, block: str) -> pd.DataFrame:
    """One block of Table 2, wide: an arm per row, ρ and τ_b with Δ, CI, p and q per comparator."""
    sub = long[long["block"] == block]
    rows = []
    for arm in ARM_ORDER:
        a = sub[sub["arm"] == arm]
        if a.empty and arm not in ("best single",):
            continue
        row: dict[str, object] = {"arm": ARM_LABELS.get(arm, arm)}
        for metric, sym in (("spearman", "rho"), ("kendall_b", "tau_b")):
            m = sub[(sub["metric"] == metric)]
            val = m.loc[m["arm"] == arm, "value"]
            if val.empty:  # the best single model only appears as a comparator of itself
                val = m.loc[m["comparator"] == arm, "comparator_value"]
            row[sym] = float(val.iloc[0]) if not val.empty else np.nan
        for comp, tag in (("best single", "best"), ("panel mean", "panel")):
            c = a[(a["comparator"] == comp) & (a["metric"] == "spearman")]
            if c.empty:
                continue
            c = c.iloc[0]
            row[f"Δρ vs {tag}"] = c["delta"]
            row[f"CI vs {tag}"] = f"[{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"
            row[f"q vs {tag}"] = c["q"]
            tb = a[(a["comparator"] == comp) & (a["metric"] == "kendall_b")]
            if not tb.empty:
                row[f"Δτ_b vs {tag}"] = tb.iloc[0]["delta"]
        rows.append(row)
    return pd.DataFrame(rows)


def ablation_row(
    long: pd.DataFrame, block: str, arm: str, comparator: str, metric: str = "spearman"
) -> pd.Series:
    """The one row of :func:`ablate_inputs`'s long table for this block, arm, comparator and
    metric; a combination the table does not hold is an error naming it."""
    sel = long[
        (long["block"] == block)
        & (long["arm"] == arm)
        & (long["comparator"] == comparator)
        & (long["metric"] == metric)
    ]
    if len(sel) != 1:
        raise KeyError(
            f"the ablation table has {len(sel)} rows for block {block!r}, arm {arm!r}, "
            f"comparator {comparator!r} and metric {metric!r}; expected one"
        )
    return sel.iloc[0]


COMPARATORS: tuple[str, ...] = ("best single", "panel mean")
METRICS: tuple[str, ...] = ("spearman", "kendall_b")


OWNER = "02_input_ablation"
"""The notebook whose ledger rows own Table 2's comparisons; another page that shows one of
them links that row instead of testing it again."""

OWNED_SIDES: tuple[str, ...] = ("H+P_gb", "panel mean", "best single")
"""The arms whose comparisons with each other Table 2 tests, in the order it orients them
(the first named is the arm, the later one its comparator)."""


def claim_id(block: str, arm: str, comparator: str, metric: str = "spearman") -> str:
    """The ledger id (within its run and notebook) of one row of Table 2."""
    return f"{slug(block)}:{slug(arm)}-vs-{slug(comparator)}:{metric}"


def owned_claim_id(block: str, a: str, b: str, metric: str = "spearman") -> str | None:
    """The id of Table 2's row comparing ``a`` with ``b`` in either order, or None when Table
    2 does not compare them (one side is not among :data:`OWNED_SIDES`)."""
    if a == b or a not in OWNED_SIDES or b not in OWNED_SIDES:
        return None
    arm, comparator = sorted((a, b), key=OWNED_SIDES.index)
    return claim_id(block, arm, comparator, metric)


def family_name(block: str, comparator: str, metric: str) -> str:
    return f"table2:{slug(block)}:{slug(comparator)}:{metric}"


def correction_families(block_names: Sequence[str], alpha: float = 0.05) -> list[Family]:
    """Table 2's correction families, declared before any result: Benjamini–Hochberg over
    the arms of one block against one comparator under one metric (as :func:`ablate_inputs`
    corrects them). ``block_names`` are the blocks tested (a block repeating another's
    families has none, :func:`repeated_blocks`); the comparator's own row (an arm against
    itself) and the selected best single model against the panel mean are not in them."""
    return [
        Family(
            family_name(block, comp, metric),
            f"Table 2, {block}: every arm against the {comp} ({metric}), one-sided",
            alpha=alpha,
        )
        for block in block_names
        for comp in COMPARATORS
        for metric in METRICS
    ]


def _claim(r: pd.Series, *, dataset: str, alpha: float = 0.05, role: str = "") -> Claim:
    """One row of the long table as a ledger row: a one-sided test for the arm being
    better, corrected within its block, comparator and metric, or, where the row carries
    an ``excluded`` reason, kept out of every family."""
    excluded = str(r.get("excluded", "") or "")
    block, comparator, metric = str(r["block"]), str(r["comparator"]), str(r["metric"])
    return Claim.of_row(
        r,
        id=claim_id(block, str(r["arm"]), comparator, metric),
        a=str(r["arm"]),
        b=comparator,
        dataset=dataset,
        scope=f"{block}: {', '.join(canonical(str(r['families']).split(', ')))}",
        metric=metric,
        unit="images",
        alternative="greater",
        family="" if excluded else family_name(block, comparator, metric),
        excluded=excluded,
        alpha=alpha,
        role=role,
        note="fold partition seed 42",
    )


def ablation_claim(
    long: pd.DataFrame,
    block: str,
    arm: str,
    comparator: str,
    *,
    dataset: str,
    metric: str = "spearman",
    role: str = "",
    alpha: float = 0.05,
    spread: Sequence[float] | np.ndarray | None = None,
) -> Claim:
    """One row of Table 2 as a claim of the ledger: a one-sided test for the arm being
    better, corrected within its block, comparator and metric; ``spread``, the same margin
    under random fold partitions (``robustness.random_margins``), rides beside it."""
    r = ablation_row(long, block, arm, comparator, metric)
    claim = _claim(r, dataset=dataset, alpha=alpha, role=role)
    return claim if spread is None else claim.with_spread(spread)


def table2_claims(
    long: pd.DataFrame,
    *,
    dataset: str,
    alpha: float = 0.05,
    headline: Sequence[str] = (),
    spreads: Mapping[str, Sequence[float] | np.ndarray] | None = None,
) -> list[Claim]:
    """Every row of :func:`ablate_inputs`'s long table as a ledger row, in its order: each
    correction family then holds every arm it was corrected over. ``headline`` names the
    ids a page leads with; ``spreads`` gives, by id, the margin under random partitions."""
    spreads = spreads or {}
    out = []
    for _, r in long.iterrows():
        cid = claim_id(str(r["block"]), str(r["arm"]), str(r["comparator"]), str(r["metric"]))
        claim = _claim(r, dataset=dataset, alpha=alpha,
                       role="headline" if cid in headline else "")  # fmt: skip
        out.append(claim.with_spread(spreads[cid]) if cid in spreads else claim)
    return out


def best_of_table(long: pd.DataFrame) -> pd.DataFrame:
    """Per block tested and metric: the best single model against the panel mean, with
    ``p_max``, the max-statistic p that pays for having picked the model as the best of the
    block's families."""
    sel = long[
        (long["arm"] == "best single")
        & (long["comparator"] == "panel mean")
        & (long["same_as"] == "")
    ]
    cols = ["block", "families", "best_family", "metric", "value", "comparator_value",
            "delta", "ci_low", "ci_high", "p_max"]  # fmt: skip
    return sel[cols].reset_index(drop=True)


def best_of_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """The rows of :func:`best_of_table` as best-of ledger rows: the decisive p is the
    max-statistic p (a family of one each: it already pays for the selection)."""
    return [
        Claim(
            id=f"{slug(str(r['block']))}:best_single-vs-panel_mean:{r['metric']}:max",
            a=f"{r['best_family']} (the best single model of the {r['block']} block)",
            b="the panel mean",
            dataset=dataset,
            scope=f"{r['block']}: {', '.join(canonical(str(r['families']).split(', ')))}",
            metric=str(r["metric"]),
            unit="images",
            estimate=float(r["delta"]),
            ci_low=float(r["ci_low"]),
            ci_high=float(r["ci_high"]),
            p=float(r["p_max"]),
            alternative="greater",
            kind="best-of",
            alpha=alpha,
            symbol=SYMBOLS.get(str(r["metric"]), "Δ"),
            note="max-statistic p over the block's families",
        )
        for _, r in table.iterrows()
    ]


COMPARATOR_WORDS = {"best single": "the best single model", "panel mean": "the panel mean"}
"""How a sentence names the two comparators of Table 2."""


def block_words(claims: Sequence[Claim]) -> dict[str, dict[str, Any]]:
    """How a sentence names each Table 2 row's sides (``Notebook.claims_table``'s ``words``)."""
    name = lambda arm: COMPARATOR_WORDS.get(arm) or plain_arm(arm)  # noqa: E731
    return {c.id: {"a": name(c.a), "b": name(c.b)} for c in claims}
