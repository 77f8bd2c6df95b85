"""Multitrait–multimethod validity of the dimension prompts (the fusion paper, section 5.1).

Traits are the human per-attribute ratings (quality, composition, colour); methods are the
two prompts (the matched rubric dimension, and the holistic verdict). Raw correlations are
confounded: every human attribute is collinear with the overall score, so a prompt that
tracks overall aesthetics also tracks every attribute. The test is therefore the partial
Spearman correlation given the human overall score: what a prompt knows about the
attribute beyond the verdict.

Multiplicity: the fusion paper corrects the cells of both datasets (2 x 15) as one family. Each
dataset's table carries ``q_dataset`` (Benjamini-Hochberg within that dataset), and
:func:`pool_cells` puts the datasets in one table with ``q_pooled``, the paper's family.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from judgepanel.claims.rows import Claim, Family, count_claim, slug
from judgepanel.core.prompts import DIMENSIONS, VALIDATED
from judgepanel.stats import (
    BootstrapResult,
    add_q,
    bh,
    bootstrap_partials,
    partial_spearman,
    residual_rank_variance,
    spearman,
    summarize_paired,
)

OVERALL = "mean_score"


def _aligned(P: pd.DataFrame, H: pd.DataFrame, human: pd.DataFrame) -> tuple:
    items = P.index.intersection(H.index).intersection(human.dropna().index)
    return P.loc[items], H.loc[items], human.loc[items]


def mtmm_cells(
    P: pd.DataFrame,
    H: pd.DataFrame,
    human: pd.DataFrame,
    families: Sequence[str],
    *,
    attributes: Sequence[str] = VALIDATED,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per family x validated attribute: raw and partial correlations, and the test.

    Args:
        P: dimension means, columns ``family:dimension``, indexed by image.
        H: holistic means, one column per family, indexed by image.
        human: human means per image with ``mean_score`` and the attribute columns.
        families: families to test.
        attributes: validated attributes (rubric dimension names).
        n_resamples: paired-bootstrap resamples of the partial-correlation difference.
        seed: resampling seed (shared by every cell).

    Returns:
        Columns family, attribute, raw_dimension, raw_holistic, partial_dimension,
        partial_holistic, delta (= partial_dimension - partial_holistic), ci_low, ci_high,
        p (one-sided: the dimension prompt's partial is larger), q_dataset (BH over this
        dataset's cells only; the paper's family spans the datasets, see
        :func:`pool_cells`), won (delta > 0), raw_won.
    """
    P, H, human = _aligned(P, H, human)
    overall = human[OVERALL].to_numpy(float)
    results = {}
    for attr in attributes:  # one bootstrap per attribute: every family's two prompts
        target = human[attr].to_numpy(float)
        arms = {
            fam: (P[f"{fam}:{attr}"].to_numpy(float), H[fam].to_numpy(float)) for fam in families
        }
        results.update(
            ((fam, attr), res)
            for fam, res in paired_partials(target, arms, overall, n_resamples, seed).items()
        )
    rows = []
    for fam in families:
        hol = H[fam].to_numpy(float)
        for attr in attributes:
            target = human[attr].to_numpy(float)
            dim = P[f"{fam}:{attr}"].to_numpy(float)
            res = results[fam, attr]
            rows.append(
                {
                    "family": fam,
                    "attribute": attr,
                    "raw_dimension": spearman(target, dim),
                    "raw_holistic": spearman(target, hol),
                    "partial_dimension": res.estimate_a,
                    "partial_holistic": res.estimate_b,
                    "delta": res.delta,
                    "ci_low": res.ci_low,
                    "ci_high": res.ci_high,
                    "p": res.p,
                }
            )
    out = pd.DataFrame(rows)
    out["q_dataset"] = bh(out["p"].to_numpy())
    out["won"] = out["delta"] > 0
    out["raw_won"] = out["raw_dimension"] > out["raw_holistic"]
    return out


def paired_partials(
    target: np.ndarray,
    pairs: Mapping[Hashable, tuple[np.ndarray, np.ndarray]],
    covar: np.ndarray,
    n_resamples: int,
    seed: int,
) -> dict[Hashable, BootstrapResult]:
    """``stats.paired_bootstrap_partial`` of each (a, b) pair, all on one shared bootstrap.

    The target's and the covariate's resampled ranks are computed once for every pair;
    each result equals the pair's own :func:`paired_bootstrap_partial`.
    """
    arms = np.vstack([arm for pair in pairs.values() for arm in pair])
    samples = bootstrap_partials(target, arms, covar, n_resamples=n_resamples, seed=seed)
    out = {}
    for i, (name, (a, b)) in enumerate(pairs.items()):
        out[name] = summarize_paired(
            samples[:, 2 * i],
            samples[:, 2 * i + 1],
            partial_spearman(a, target, covar),
            partial_spearman(b, target, covar),
            metric="partial_spearman",
            n=target.size,
        )
    return out


def validated_attributes(images: pd.DataFrame, dimensions: Sequence[str] = VALIDATED) -> list[str]:
    """The validated rubric dimensions a dataset holds a human rating of, in rubric order.

    A dataset's tables hold an attribute under the name of the rubric dimension it
    validates: EVA's and PARA's loaders fix the mapping, every other adapter and the
    generic format's ``dataset.yaml`` state it. A column without a single number counts
    as absent. AVA, for one, has only the overall score, and so no cell to test.
    """
    return [
        d
        for d in dimensions
        if d in images.columns and pd.to_numeric(images[d], errors="coerce").notna().any()
    ]


def rubric_attributes(dimensions: Sequence[str]) -> list[str]:
    """The dimensions of a rubric that a human attribute rating may validate.

    The seed rubric holds distinctiveness and emotion out by design (they are tested
    against the held-out fourth attribute instead), so for it this is ``VALIDATED``; for
    any other rubric every dimension may be validated by a rating stored under its key.
    """
    if tuple(dimensions) == DIMENSIONS:
        return list(VALIDATED)
    return list(dimensions)


def profile_cells(
    datasets: Mapping[str, tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]],
    families: Sequence[str],
    *,
    done: Mapping[str, pd.DataFrame] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    attributes: Sequence[str] = VALIDATED,
) -> dict[str, pd.DataFrame]:
    """The :func:`mtmm_cells` of every dataset that has a validated attribute.

    Args:
        datasets: dataset name -> (P, H, human images table) as :func:`mtmm_cells` takes
            them; ``human`` may hold any columns, the dataset's own attributes are used.
        families: the families tested.
        done: tables already computed, by dataset name; used as they are.
        n_resamples, seed: as :func:`mtmm_cells`, the same for every dataset.
        attributes: the rubric dimensions a human rating may validate
            (:func:`rubric_attributes`).

    A dataset without a validated attribute has no cell and is left out, so the family of
    comparisons that :func:`pool_cells` corrects is the cells that exist.
    """
    done = done or {}
    out: dict[str, pd.DataFrame] = {}
    for name, (P, H, images) in datasets.items():
        if name in done:
            out[name] = done[name]
            continue
        held = validated_attributes(images, attributes)
        if held and OVERALL in images and images[OVERALL].notna().any():  # it is optional
            human = images.loc[P.index, [OVERALL, *held]]
            out[name] = mtmm_cells(
                P, H, human, families, attributes=held, n_resamples=n_resamples, seed=seed
            )
    return out


def pool_cells(cells: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The MTMM cells of several datasets as one family of comparisons, as the fusion paper has it.

    Args:
        cells: dataset name -> its :func:`mtmm_cells` table.

    Returns:
        The tables stacked with a leading ``dataset`` column and ``q_pooled``: BH over every
        cell of every dataset (30 for two datasets of 5 families x 3 attributes). Each row
        keeps its ``q_dataset``, the correction within its own dataset.
    """
    if not cells:
        raise ValueError("no MTMM cells to pool")
    frames = [table.assign(dataset=name) for name, table in cells.items()]
    pooled = pd.concat(frames, ignore_index=True)
    pooled = pooled[["dataset", *[c for c in pooled.columns if c != "dataset"]]]
    return add_q(pooled, q="q_pooled")


def best_columns(
    P: pd.DataFrame,
    human: pd.DataFrame,
    families: Sequence[str],
    *,
    attributes: Sequence[str] = VALIDATED,
) -> pd.DataFrame:
    """For each family's validated dimension prompt, its partial with every attribute.

    ``matched`` says whether the prompt's own attribute is its best column, i.e. whether
    the quality prompt knows more about human quality than about composition or colour.
    """
    P, _, human = _aligned(P, P, human)
    overall = human[OVERALL].to_numpy(float)
    rows = []
    for fam in families:
        for dim in attributes:
            x = P[f"{fam}:{dim}"].to_numpy(float)
            partials = {
                a: partial_spearman(x, human[a].to_numpy(float), overall) for a in attributes
            }
            best = max(partials, key=partials.get)
            rows.append(
                {
                    "family": fam,
                    "prompt": dim,
                    **{f"partial_{a}": v for a, v in partials.items()},
                    "best": best,
                    "matched": best == dim,
                }
            )
    return pd.DataFrame(rows)


def residual_variance(human: pd.DataFrame, attributes: Sequence[str] = VALIDATED) -> pd.DataFrame:
    """How much of each attribute's rank variance is left once the overall score is known.

    A small share means the partial correlations in that column sit on a nearly degenerate
    residual and deserve less weight.
    """
    human = human.dropna(subset=[OVERALL, *attributes])
    overall = human[OVERALL].to_numpy(float)
    return pd.DataFrame(
        [
            {
                "attribute": a,
                "rho_with_overall": spearman(overall, human[a].to_numpy(float)),
                "residual_rank_variance": residual_rank_variance(human[a].to_numpy(float), overall),
            }
            for a in attributes
        ]
    )


def mtmm_matrix(
    P: pd.DataFrame,
    H: pd.DataFrame,
    human: pd.DataFrame,
    families: Sequence[str],
    *,
    partial: bool = True,
    attributes: Sequence[str] = VALIDATED,
    dimensions: Sequence[str] = DIMENSIONS,
) -> pd.DataFrame:
    """Correlation of every prompt (the rubric's ``dimensions`` and holistic) with every
    human attribute.

    Rows are ``family · prompt``, columns the attributes; values are partial Spearman
    correlations given the overall score (or raw ones with ``partial=False``).
    """
    P, H, human = _aligned(P, H, human)
    overall = human[OVERALL].to_numpy(float)
    rows = {}
    for fam in families:
        prompts = {d: P[f"{fam}:{d}"] for d in dimensions} | {"holistic": H[fam]}
        for name, values in prompts.items():
            x = values.to_numpy(float)
            rows[f"{fam} · {name}"] = {
                a: (
                    partial_spearman(x, human[a].to_numpy(float), overall)
                    if partial
                    else spearman(human[a].to_numpy(float), x)
                )
                for a in attributes
            }
    return pd.DataFrame(rows).T.astype(float).rename_axis("prompt")


FAMILY = "mtmm:cells"
"""The MTMM cells' correction family: every cell of every rated dataset (``q_pooled``)."""


def correction_family(datasets: Sequence[str], alpha: float = 0.05) -> Family:
    """The cells' family, declared before they are computed: BH over every cell of every
    rated dataset of the profile, as the fusion paper corrects them (:func:`pool_cells`)."""
    return Family(
        FAMILY,
        f"01 MTMM cells of {', '.join(datasets)}: a dimension prompt's partial ρ with its "
        "attribute against the holistic prompt's, one-sided, BH over every cell (q_pooled)",
        alpha=alpha,
    )


def cell_claims(pooled: pd.DataFrame, alpha: float = 0.05) -> list[Claim]:
    """Every row of :func:`pool_cells`'s table as a ledger row, in its order: a one-sided
    test that the dimension prompt's partial correlation is the larger, decided by
    ``q_pooled`` in :data:`FAMILY`."""
    return [
        Claim(
            id=f"mtmm:{slug(str(r['dataset']))}:{slug(str(r['family']))}:{slug(str(r['attribute']))}",
            a=f"{r['family']}'s {r['attribute']} prompt",
            b=f"{r['family']}'s holistic prompt",
            dataset=str(r["dataset"]),
            scope=f"partial ρ with the human {r['attribute']} rating given the overall score",
            metric="partial_spearman",
            unit="images",
            estimate=float(r["delta"]),
            ci_low=float(r["ci_low"]),
            ci_high=float(r["ci_high"]),
            p=float(r["p"]),
            q=float(r["q_pooled"]),
            alternative="greater",
            family=FAMILY,
            alpha=alpha,
            symbol="Δ partial ρ",
        )
        for _, r in pooled.iterrows()
    ]


def count_of(
    recorded: Sequence[Claim],
    keep: Callable[[Claim], bool],
    *,
    id: str,
    family: str,
    what: str,
    over: str,
    **fields: object,
) -> Claim:
    """ "k of n with q < alpha" over the recorded rows of one family that ``keep`` selects
    (one dataset's cells of a family pooled over datasets, one prompt's cells), as a count
    row naming ``family`` (the page's name for it) in its scope.

    ``recorded`` are the rows as the page recorded them (``Notebook.claims_table``'s
    return), whose family carries the page's full id; the count is over their q, the
    correction of the whole family."""
    inside = [c for c in recorded if keep(c) and not c.excluded and c.family]
    if not inside:
        raise ValueError(f"count {id!r}: no recorded row of family {family!r} is selected")
    fields.setdefault("dataset", inside[0].dataset)
    row = count_claim(id, inside, inside[0].family, what=what, over=over, **fields)
    return replace(row, scope=family)
