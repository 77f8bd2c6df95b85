"""Feature blocks read from the store, and the fused arms the study compares.

The blocks follow the rubric-fusion study: H (each family's holistic mean), P (each family
by dimension mean), H block-split (P's column count) and holistic blocks of 3 (P's column
count and P's averaging of 3 runs per column). The means and the study's combiner, fitted
out of fold, are shared with VAB (:mod:`judgepanel.studies.common.features`,
:mod:`judgepanel.studies.common.combiners`); the ridge and best-column combiners are the
study's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import spearmanr
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import RidgeCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from judgepanel.core.prompts import DIMENSIONS, VALIDATED
from judgepanel.stats import kendall_b, spearman
from judgepanel.studies.common.combiners import FOLD_SEED, gb_combiner, oof_predict
from judgepanel.studies.common.features import dimension_means, holistic_means, holistic_runs


def holistic_block_split(
    scores: pd.DataFrame, families: Sequence[str], n_blocks: int = 5
) -> pd.DataFrame:
    """H block-split: each family's runs cut into ``n_blocks`` contiguous blocks, block means.

    With k=25 this gives five features per family, each a mean of five runs, so the
    combiner sees as many holistic columns as P has dimension columns.
    """
    runs = holistic_runs(scores, families)
    out = {}
    for fam in families:
        reps = sorted(runs[fam].columns)
        for b, chunk in enumerate(np.array_split(np.array(reps), n_blocks)):
            if len(chunk):
                out[f"{fam}:b{b}"] = runs[fam][list(chunk)].mean(axis=1)
    return pd.DataFrame(out)


BLOCK_RUNS = 3
"""Runs averaged by each column of the blocks-of-3 control, as P averages R=3 repetitions."""


def blocks_of_3_runs(n_blocks: int = len(DIMENSIONS), size: int = BLOCK_RUNS) -> int:
    """Holistic runs a family needs for the blocks-of-3 control: one block per P column."""
    return n_blocks * size


def holistic_blocks_of(
    scores: pd.DataFrame,
    families: Sequence[str],
    size: int = BLOCK_RUNS,
    n_blocks: int = len(DIMENSIONS),
) -> pd.DataFrame:
    """The fusion paper's "blocks of 3" control: P's column count and P's per-column averaging.

    Each family gets ``n_blocks`` holistic columns (as many as it has dimension columns in
    P), each the mean of ``size`` consecutive, disjoint runs: runs 0-2, 3-5, ... 12-14 at
    the defaults, so it needs 15 runs and leaves the rest of k=25 out. The combiner then
    sees holistic verdicts exactly as numerous and as averaged as the dimension scores, so
    a gap between P and this arm is not a column-count or averaging artefact. The paper
    runs it on EVA only (k=25); with k=5, as on PARA, it cannot be built.

    Raises:
        ValueError: a family has fewer than ``n_blocks * size`` holistic runs.
    """
    runs = holistic_runs(scores, families)
    need = blocks_of_3_runs(n_blocks, size)
    out = {}
    for fam in families:
        reps = sorted(runs[fam].columns)
        if len(reps) < need:
            raise ValueError(
                f"family {fam!r} has {len(reps)} holistic runs; {n_blocks} blocks of {size} "
                f"need {need}"
            )
        for b in range(n_blocks):
            cols = reps[b * size : (b + 1) * size]
            out[f"{fam}:h{b}"] = runs[fam][cols].mean(axis=1)
    return pd.DataFrame(out)


@dataclass(frozen=True)
class Blocks:
    """The feature blocks of one dataset, aligned on the images with a human mean.

    ``H_blocks3`` is None where the families have too few holistic runs for it
    (:func:`holistic_blocks_of`).
    """

    y: pd.Series
    H: pd.DataFrame
    P: pd.DataFrame
    H_split: pd.DataFrame
    H_blocks3: pd.DataFrame | None
    dimensions: tuple[str, ...] = DIMENSIONS
    """The rubric's dimension keys, in order (the columns of P per family)."""

    @property
    def items(self) -> pd.Index:
        return self.y.index

    def P_of(self, families: Sequence[str], dimensions: Sequence[str] | None = None):
        """The dimension means of ``families``, in the canonical order of the families
        (``dimensions``: default the rubric's)."""
        dims = self.dimensions if dimensions is None else dimensions
        cols = [f"{f}:{d}" for f in canonical(families) for d in dims]
        return self.P[cols]

    def H_of(self, families: Sequence[str]) -> pd.DataFrame:
        """The holistic means of ``families``, in the canonical order of the families."""
        return self.H[canonical(families)]

    def split_of(self, families: Sequence[str]) -> pd.DataFrame:
        return self.H_split[[c for c in self.H_split.columns if c.split(":")[0] in families]]

    def blocks3_of(self, families: Sequence[str]) -> pd.DataFrame | None:
        if self.H_blocks3 is None:
            return None
        cols = [c for c in self.H_blocks3.columns if c.split(":")[0] in families]
        return self.H_blocks3[cols]


def canonical(families: Sequence[str]) -> list[str]:
    """A set of judges in one order (by name), whatever order it was named in.

    Every sum, fit and rank over judges goes through it: float sums, gradient boosting's
    choice between tied splits and rank ties all depend on column order, so the same three
    judges named in two orders (the pre-declared trio and the strong trio, when they are
    the same families) must meet the same columns to give the same numbers.
    """
    return sorted(dict.fromkeys(families))


def hp_design(blocks: Blocks, families: Sequence[str]) -> pd.DataFrame:
    """The H+P feature matrix of ``families``: their holistic means, then their dimension means."""
    return pd.concat([blocks.H_of(families), blocks.P_of(families)], axis=1)


def build_blocks(
    scores: pd.DataFrame,
    target: pd.Series,
    families: Sequence[str],
    *,
    k: int | None = None,
    dimensions: Sequence[str] = DIMENSIONS,
    holistic: bool = True,
) -> Blocks:
    """All blocks for ``families``, restricted to images that have every feature.

    Images missing a feature (a failed call that left no repetition) are dropped from all
    blocks alike, so every arm is compared on the same images; the caller reports how many.
    ``dimensions`` are the rubric's; a rubric without a holistic question (``holistic``
    False) gives holistic blocks without columns. A ``target`` missing on every image (a
    study without an overall rating) restricts nothing, and ``y`` stays missing.
    """
    P = dimension_means(scores, families, dimensions)
    b3: pd.DataFrame | None = None
    if holistic:
        H = holistic_means(scores, families, k)
        split = holistic_block_split(scores, families)
        try:
            b3 = holistic_blocks_of(scores, families, n_blocks=len(dimensions))
        except ValueError:
            b3 = None
    else:
        H = split = pd.DataFrame(index=P.index)
    frames = [H, P, split] + ([b3] if b3 is not None else [])
    common = target.dropna().index if target.notna().any() else target.index
    for f in frames:
        common = common.intersection(f.dropna().index)
    common = common.sort_values()
    return Blocks(
        y=target.loc[common].astype(float),
        H=H.loc[common],
        P=P.loc[common],
        H_split=split.loc[common],
        H_blocks3=None if b3 is None else b3.loc[common],
        dimensions=tuple(dimensions),
    )


def ridge_combiner() -> BaseEstimator:
    """Standardised ridge whose penalty is chosen by efficient LOO inside each training fold."""
    return make_pipeline(StandardScaler(), RidgeCV(alphas=np.logspace(-3, 4, 29)))


class BestColumn(RegressorMixin, BaseEstimator):
    """Predicts with the training fold's best single column (by Spearman with the target).

    An honest, in-fold version of "pick the best model": the choice is made on the training
    fold only, so its out-of-fold score carries no selection optimism.
    """

    def fit(self, X, y):
        X = np.asarray(X, float)
        rhos = [spearmanr(X[:, j], y).statistic for j in range(X.shape[1])]
        self.column_ = int(np.nanargmax(rhos))
        return self

    def predict(self, X):
        return np.asarray(X, float)[:, self.column_]


def panel_mean(H: pd.DataFrame) -> pd.Series:
    """The panel mean: the plain average of the families' holistic means, on their raw scale."""
    return H.mean(axis=1)


def best_single(H: pd.DataFrame, y: pd.Series) -> tuple[str, pd.DataFrame]:
    """The family whose raw holistic mean has the highest Spearman rho with the human mean.

    This choice is made on all images, which favours the comparator; claims that rest on it
    carry a max-statistic p.
    """
    rows = [
        {
            "family": f,
            "rho": spearman(y.to_numpy(), H[f].to_numpy()),
            "tau_b": kendall_b(y.to_numpy(), H[f].to_numpy()),
        }
        for f in H.columns
    ]
    table = pd.DataFrame(rows).sort_values("rho", ascending=False).reset_index(drop=True)
    return str(table.loc[0, "family"]), table


def fused_arms(
    blocks: Blocks,
    families: Sequence[str],
    *,
    seed: int = FOLD_SEED,
    n_jobs: int | None = None,
    include_ridge: bool = True,
) -> dict[str, np.ndarray]:
    """Out-of-fold predictions of every fused arm of the input ablation for ``families``."""
    y = blocks.y
    H = blocks.H_of(families)
    P = blocks.P_of(families)
    arms: dict[str, np.ndarray] = {
        "H_gb": oof_predict(gb_combiner(), H, y, seed=seed, n_jobs=n_jobs),
        "P_gb": oof_predict(gb_combiner(), P, y, seed=seed, n_jobs=n_jobs),
        "H+P_gb": oof_predict(
            gb_combiner(), hp_design(blocks, families), y, seed=seed, n_jobs=n_jobs
        ),
        "H_split_gb": oof_predict(
            gb_combiner(), blocks.split_of(families), y, seed=seed, n_jobs=n_jobs
        ),
        "P_validated_gb": oof_predict(
            gb_combiner(), blocks.P_of(families, VALIDATED), y, seed=seed, n_jobs=n_jobs
        ),
    }
    b3 = blocks.blocks3_of(families)
    if b3 is not None:
        arms["H_blocks3_gb"] = oof_predict(gb_combiner(), b3, y, seed=seed, n_jobs=n_jobs)
    if include_ridge:
        arms["H_ridge"] = oof_predict(ridge_combiner(), H, y, seed=seed, n_jobs=n_jobs)
        arms["P_ridge"] = oof_predict(ridge_combiner(), P, y, seed=seed, n_jobs=n_jobs)
    return arms
