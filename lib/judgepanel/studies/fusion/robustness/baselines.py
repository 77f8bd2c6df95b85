"""Label-matched baselines: what the fused arms' labels would buy elsewhere.

The fused arms consume the human labels of every training fold, which the single model
does not; the same labels, folds and protocol are spent on image statistics (ridge and
GB) and on an in-fold monotone recalibration of the best single score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression
from sklearn.pipeline import Pipeline

from judgepanel.claims.rows import Claim, Family, slug
from judgepanel.stats import (
    add_q,
)
from judgepanel.studies.common.combiners import FOLD_SEED, gb_combiner, oof_predict_many
from judgepanel.studies.fusion import ablation
from judgepanel.studies.fusion.blocks import (
    Blocks,
    best_single,
    hp_design,
    panel_mean,
    ridge_combiner,
)
from judgepanel.studies.fusion.compare import compare_arms, gain_claim, plain_arm


def recalibrator() -> Pipeline:
    """Monotone recalibration of one score: isotonic regression, refitted in every fold.

    A monotone map keeps the order of the scores it is fitted on, so within one fold it
    can change Spearman only by merging values into ties; across folds, different maps can
    also reorder images that fall in different test folds.
    """
    return Pipeline([("isotonic", IsotonicRegression(out_of_bounds="clip", increasing=True))])


def label_matched_arms(
    blocks: Blocks,
    families: Sequence[str],
    image_stats: pd.DataFrame,
    *,
    imported: pd.DataFrame | None = None,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = None,
) -> tuple[dict[str, np.ndarray], str]:
    """The arms that spend the combiner's labels elsewhere, on the same images and folds.

    Args:
        blocks: the dataset's feature blocks.
        families: the family block (the best single model is its best member).
        image_stats: the eleven image statistics, indexed by image id.
        imported: off-the-shelf model scores, one column per model, indexed by image id;
            when given, their stack enters as ``imported_ridge`` and ``imported_gb``.
        fold_seed: the fold partition.
        n_jobs: joblib workers (None: one).

    Returns:
        (arms, best family): ``best single``, ``panel mean``, ``H+P_gb``, ``F11_ridge``,
        ``F11_gb`` and ``best single, isotonic`` as out-of-fold predictions. The isotonic
        arm recalibrates the comparator's own score (the family chosen as best single on
        all images, as the protocol defines that comparator), so its difference from the
        best single model measures the recalibration alone.
    """
    missing = blocks.items.difference(image_stats.index)
    if len(missing):
        raise ValueError(
            f"{len(missing)} image(s) have no image statistics, e.g. {list(missing[:3])}"
        )
    F = image_stats.loc[blocks.items]
    H = blocks.H_of(families)
    best, _ = best_single(H, blocks.y)
    jobs = {
        "H+P_gb": (gb_combiner(), hp_design(blocks, families)),
        "F11_ridge": (ridge_combiner(), F),
        "F11_gb": (gb_combiner(), F),
        "best single, isotonic": (recalibrator(), H[[best]]),
    }
    if imported is not None:
        stack = imported.reindex(blocks.items)
        unscored = stack.index[stack.isna().any(axis=1)]
        if len(unscored):
            raise ValueError(
                f"{len(unscored)} image(s) lack an imported score, e.g. {list(unscored[:3])}"
            )
        jobs["imported_ridge"] = (ridge_combiner(), stack)
        jobs["imported_gb"] = (gb_combiner(), stack)
    preds = oof_predict_many(
        [(est, X, blocks.y, fold_seed) for est, X in jobs.values()], n_jobs=n_jobs
    )
    arms = {"best single": H[best].to_numpy(float), "panel mean": panel_mean(H).to_numpy(float)}
    arms.update(zip(jobs, preds, strict=True))
    return arms, best


def compare_label_matched(
    blocks: Blocks,
    families: Sequence[str],
    image_stats: pd.DataFrame,
    *,
    imported: pd.DataFrame | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = None,
    block: str = "pre-declared",
) -> pd.DataFrame:
    """Every label-matched arm against the best single model and against H+P_gb.

    One-sided p in the direction "the arm is better"; q is BH within comparator and metric,
    over this table's own comparisons. A comparison of two arms that Table 2 (notebook 02)
    also compares (H+P_gb, the panel mean and the best single model of the same families)
    is that notebook's: its row names it in ``owner`` and the id of 02's ledger row in
    ``owner_claim``, and it stays out of the correction here (q is NaN), so the report
    tests it once and words it once.
    """
    arms, best = label_matched_arms(
        blocks, families, image_stats, imported=imported, fold_seed=fold_seed, n_jobs=n_jobs
    )
    comps = {"best single": arms["best single"], "H+P_gb": arms["H+P_gb"]}
    res = compare_arms(blocks.y.to_numpy(float), arms, comps, n_resamples=n_resamples, seed=seed)
    res.insert(0, "best_family", best)
    owned = [
        ablation.owned_claim_id(block, a, b, m)
        for a, b, m in zip(res["arm"], res["comparator"], res["metric"], strict=True)
    ]
    res["owner"] = [ablation.OWNER if o else "" for o in owned]
    res["owner_claim"] = [o or "" for o in owned]
    own = res["owner"] == ""
    out = res.assign(q=np.nan)
    out.loc[own, "q"] = add_q(res[own], by=["comparator", "metric"])["q"]
    return out


SHOWN_ARMS = (
    "F11_ridge",
    "F11_gb",
    "best single, isotonic",
    "H+P_gb",
    "imported_ridge",
    "imported_gb",
)
"""The arms the sentence against the best single model names, in this order of the table."""

STAND_IN_PREFIX = "imagestat-"
"""How the synthetic world's stand-in comparator files name their models."""


def family_name(dataset: str, comparator: str, metric: str) -> str:
    """The correction family of the label-matched arms of one dataset against one
    comparator and metric (the table's q is BH within these, per dataset)."""
    return f"label-matched:{slug(dataset)}:{slug(comparator)}:{metric}"


def correction_families(
    datasets: Sequence[str],
    metrics: Sequence[str] = ("spearman", "kendall_b"),
    alpha: float = 0.05,
) -> list[Family]:
    """The label-matched table's families, declared before it is computed: per dataset, BH
    over the arms against one comparator under one metric (the comparisons 02 owns are not
    in them), so each family's q is its own rows' correction."""
    return [
        Family(
            family_name(n, comp, metric),
            f"04 label-matched baselines on {n}: every arm against {comp} ({metric}), one-sided",
            alpha=alpha,
        )
        for n in datasets
        for comp in COMPARATORS
        for metric in metrics
    ]


COMPARATORS = ("best single", "H+P_gb")
"""What every label-matched arm is compared with."""


def claim_id(row: Mapping[str, Any] | pd.Series) -> str:
    """The ledger id of one of the table's own rows (unique within the page)."""
    return (
        f"{slug(row['dataset'])}:label-matched:{slug(row['arm'])}-vs-"
        f"{slug(row['comparator'])}:{row['metric']}"
    )


def tested_rows(baselines: pd.DataFrame) -> pd.Series:
    """The rows this table tests (its ledger rows, :func:`baseline_claims`, in this order):
    not those 02's Table 2 owns, nor a comparator against itself (equal by construction)."""
    return (baselines["owner"] == "") & (baselines["arm"] != baselines["comparator"])


def baseline_claims(baselines: pd.DataFrame, alpha: float = 0.05) -> list[Claim]:
    """The table's own comparisons (not those 02 owns) as ledger rows: one-sided, the arm
    better, with the table's q (BH within comparator and metric, over these rows)."""
    return [
        gain_claim(
            row,
            id=claim_id(row),
            a=str(row["arm"]),
            b=str(row["comparator"]),
            dataset=str(row["dataset"]),
            scope=f"best single {row['best_family']}",
            family=family_name(str(row["dataset"]), str(row["comparator"]), str(row["metric"])),
            alpha=alpha,
        )
        for _, row in baselines[tested_rows(baselines)].iterrows()
    ]


def claim_words(claims: Sequence[Claim]) -> dict[str, dict[str, str]]:
    """How a sentence names each claim's sides (``Notebook.claims_table``'s ``words``)."""
    return {c.id: {"a": plain_arm(c.a), "b": plain_arm(c.b)} for c in claims}


Cite = Callable[[str, str, str], str]
"""How a page links another page's ledger row: (dataset, the row's id within its notebook,
the text of the link) -> the link."""


def _owned(row: Any, cite: Cite | None, a: str, b: str) -> str:
    """A comparison Table 2 owns: named, and linked to 02's row instead of worded here."""
    text = f"{a} against {b} is tested once, in 02's Table 2"
    return cite(row.dataset, row.owner_claim, text) if cite else text


def describe_against_fused(
    baselines: pd.DataFrame,
    metric: str = "spearman",
    cite: Cite | None = None,
    state: Callable[[Claim], str] | None = None,
) -> str:
    """Every label-matched arm against H+P_gb on the same folds, each stated by ``state``
    (a page's ``nb.claim``; default: the claim's words); the comparisons 02 owns are linked
    to its rows with ``cite``."""
    rows = baselines[(baselines["metric"] == metric) & (baselines["comparator"] == "H+P_gb")]
    claims = {(c.dataset, c.a): c for c in baseline_claims(baselines) if c.metric == metric}
    say = state or (lambda c: c.words(**claim_words([c])[c.id]))
    return (
        "Against the fused score (H+P_gb) itself, on the same folds (one-sided test for the arm "
        "being better, q within the comparator): "
        + "; ".join(
            f"on {r.dataset}, "
            + (
                _owned(r, cite, plain_arm(r.arm), plain_arm("H+P_gb"))
                if r.owner
                else say(claims[(r.dataset, r.arm)])
            )
            for r in rows.itertuples()
        )
        + "."
    )


def describe_label_matched(
    baselines: pd.DataFrame,
    imported_models: Mapping[str, Sequence[str]],
    metric: str = "spearman",
    cite: Cite | None = None,
    state: Callable[[Claim], str] | None = None,
) -> str:
    """Per dataset, the shown arms against the best single model, each test stated by
    ``state`` (a page's ``nb.quote``; default: the claim's words), the comparisons 02 owns
    linked with ``cite``; then where the imported arms' scores come from, and that the
    stand-in files hold no aesthetics models."""
    bl = baselines[(baselines["metric"] == metric) & (baselines["comparator"] == "best single")]
    claims = {
        (c.dataset, c.a): c
        for c in baseline_claims(baselines)
        if c.metric == metric and c.b == "best single"
    }
    say = state or (lambda c: c.words(**claim_words([c])[c.id]))
    text = " ".join(
        f"On {n}: "
        + ", ".join(
            f"{plain_arm(row.arm)} ρ = {row.value:.3f} ("
            + (
                _owned(row, cite, plain_arm(row.arm), "the best single model")
                if row.owner
                else say(claims[(row.dataset, row.arm)])
            )
            + ")"
            for row in bl[(bl["dataset"] == n) & bl["arm"].isin(SHOWN_ARMS)].itertuples()
        )
        + "."
        for n in dict.fromkeys(baselines["dataset"])
    )
    if not imported_models:
        return text
    stand_in = all(m.startswith(STAND_IN_PREFIX) for ms in imported_models.values() for m in ms)
    return (
        text
        + " The imported arms stack the off-the-shelf scores of the run's `comparators` files ("
        + "; ".join(f"{n}: {', '.join(ms)}" for n, ms in imported_models.items())
        + ")"
        + (
            ", here simple image statistics from the synthetic world's stand-in script, not "
            "aesthetics models"
            if stand_in
            else ""
        )
        + "."
    )
