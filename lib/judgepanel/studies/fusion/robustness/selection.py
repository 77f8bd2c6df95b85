"""One family per dimension, chosen honestly inside the training fold, against an oracle
that chooses on the test fold, and against all features.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import spearmanr
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.pipeline import Pipeline, make_pipeline

from judgepanel.claims import wording
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.studies.common.combiners import FOLD_SEED, gb_combiner, make_folds, oof_predict
from judgepanel.studies.fusion.blocks import Blocks
from judgepanel.studies.fusion.compare import compare_arms, stack_datasets


def dimension_groups(
    columns: Sequence[str], dimensions: Sequence[str] = DIMENSIONS
) -> list[list[int]]:
    """Column positions of each dimension in a ``family:dimension`` block."""
    groups = []
    for d in dimensions:
        idx = [i for i, c in enumerate(columns) if c.split(":", 1)[1] == d]
        if not idx:
            raise ValueError(f"no column for dimension {d!r} in {list(columns)[:6]}...")
        groups.append(idx)
    return groups


def _column_rhos(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman rho of every column with ``y``; NaN (constant column) becomes -inf."""
    out = np.full(X.shape[1], -np.inf)
    for j in range(X.shape[1]):
        if np.ptp(X[:, j]) > 0:
            r = spearmanr(X[:, j], y).statistic
            out[j] = -np.inf if np.isnan(r) else r
    return out


def _best_in_group(rhos: np.ndarray, group: Sequence[int]) -> int:
    return int(group[int(np.argmax(rhos[list(group)]))])


class PerGroupSelector(TransformerMixin, BaseEstimator):
    """Keeps one column per group: the one with the highest Spearman rho with the target.

    With groups = the dimensions of a P block, it picks one family per dimension. Inside a
    Pipeline under ``cross_val_predict`` the choice is made on the training fold only.

    Args:
        groups: column positions of each group.
    """

    def __init__(self, groups: Sequence[Sequence[int]]):
        self.groups = groups

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y, float)
        rhos = _column_rhos(X, y)
        self.chosen_ = np.array([_best_in_group(rhos, g) for g in self.groups], dtype=int)
        return self

    def transform(self, X):
        return np.asarray(X, float)[:, self.chosen_]


def selecting_combiner(groups: Sequence[Sequence[int]], estimator=None) -> Pipeline:
    """Honest selection: :class:`PerGroupSelector` then the combiner, one Pipeline."""
    return make_pipeline(
        PerGroupSelector(groups), estimator if estimator is not None else gb_combiner()
    )


def oracle_oof(
    X: np.ndarray,
    y: np.ndarray,
    groups: Sequence[Sequence[int]],
    *,
    estimator=None,
    seed: int = FOLD_SEED,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The oracle bound: per fold, the columns are chosen on the TEST fold's targets.

    In each group the oracle keeps the column that would rank the test fold best given the
    direction learned on the training fold: the largest sign(rho_train) x rho_test. The
    combiner is still fitted on the training fold; only the choice peeks at the test
    targets. Optimistic by construction; its distance above honest selection measures
    the optimism of choosing on the data a score is reported on.

    Returns:
        Out-of-fold predictions and each fold's chosen column positions.
    """
    X, y = np.asarray(X, float), np.asarray(y, float)
    est = estimator if estimator is not None else gb_combiner()
    pred = np.empty_like(y)
    chosen = []
    for train, test in make_folds(seed).split(X):
        with np.errstate(invalid="ignore"):
            direction = np.sign(_column_rhos(X[train], y[train]))
        direction[~np.isfinite(direction)] = 0.0
        score = direction * _column_rhos(X[test], y[test])
        score[~np.isfinite(score)] = -np.inf
        cols = np.array([_best_in_group(score, g) for g in groups], dtype=int)
        model = clone(est).fit(X[train][:, cols], y[train])
        pred[test] = model.predict(X[test][:, cols])
        chosen.append(cols)
    return pred, chosen


def honest_choices(
    X: np.ndarray, y: np.ndarray, groups: Sequence[Sequence[int]], *, seed: int = FOLD_SEED
) -> list[np.ndarray]:
    """The columns honest selection picks in each training fold (for reporting)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    return [
        PerGroupSelector(groups).fit(X[tr], y[tr]).chosen_ for tr, _ in make_folds(seed).split(X)
    ]


@dataclass(frozen=True)
class FeatureSelection:
    """The feature-selection ablation of one family block.

    Attributes:
        comparisons: paired bootstrap rows (``arm`` against ``comparator``; arms: all
            features, honest selection, oracle selection; the comparison "oracle against
            honest" is the optimism).
        choices: per fold and dimension, the family chosen honestly and by the oracle.
    """

    comparisons: pd.DataFrame
    choices: pd.DataFrame


def compare_feature_selection(
    blocks: Blocks,
    families: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = None,
) -> FeatureSelection:
    """One family per dimension (honest, in fold) vs an oracle (test fold) vs all of P."""
    P = blocks.P_of(families)
    cols = list(P.columns)
    groups = dimension_groups(cols)
    X, y = P.to_numpy(float), blocks.y.to_numpy(float)
    honest, all_p, (oracle, oracle_cols) = Parallel(n_jobs=n_jobs)(
        [
            delayed(oof_predict)(selecting_combiner(groups), X, y, seed=fold_seed),
            delayed(oof_predict)(gb_combiner(), X, y, seed=fold_seed),
            delayed(oracle_oof)(X, y, groups, seed=fold_seed),
        ]
    )
    arms = {"all features": all_p, "honest selection": honest, "oracle selection": oracle}
    res = compare_arms(
        y,
        arms,
        {"all features": all_p, "honest selection": honest},
        n_resamples=n_resamples,
        seed=seed,
        skip_self=False,  # identical choices give identical arms; the row still belongs
    )
    res = res[res["arm"] != res["comparator"]].reset_index(drop=True)
    honest_cols = honest_choices(X, y, groups, seed=fold_seed)
    rows = []
    for fold, (h, o) in enumerate(zip(honest_cols, oracle_cols, strict=True)):
        for d, hj, oj in zip(DIMENSIONS, h, o, strict=True):
            rows.append(
                {
                    "fold": fold,
                    "dimension": d,
                    "honest": cols[hj].split(":")[0],
                    "oracle": cols[oj].split(":")[0],
                }
            )
    return FeatureSelection(comparisons=res, choices=pd.DataFrame(rows))


def selection_tables(
    blocks: Mapping[str, Blocks],
    families: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    n_jobs: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`compare_feature_selection` of every dataset: the comparisons (dataset first)
    and the choices per fold and dimension (dataset last)."""
    fs = {
        n: compare_feature_selection(b, families, n_resamples=n_resamples, seed=seed, n_jobs=n_jobs)
        for n, b in blocks.items()
    }
    comparisons = stack_datasets({n: f.comparisons for n, f in fs.items()})
    return comparisons, stack_datasets({n: f.choices for n, f in fs.items()}, first=False)


def describe_configurations(blocks: Blocks, families: Sequence[str]) -> str:
    """How many one-family-per-dimension configurations there are, against all features."""
    n_dims = blocks.P_of(list(families)[:1]).shape[1]
    m = len(families)
    return (
        f"One of {m} pre-declared families per dimension gives {m}^{n_dims} = {m**n_dims} "
        f"configurations; all features are the panel's {blocks.P_of(families).shape[1]} "
        "dimension columns."
    )


def selection_row(
    selection: pd.DataFrame, dataset: str, arm: str, comparator: str, metric: str = "spearman"
) -> pd.Series:
    """The comparison of ``arm`` against ``comparator`` on ``dataset`` under ``metric``."""
    hit = selection[
        (selection["dataset"] == dataset)
        & (selection["metric"] == metric)
        & (selection["arm"] == arm)
        & (selection["comparator"] == comparator)
    ]
    if hit.empty:
        raise KeyError(f"no {metric} row of {arm!r} against {comparator!r} on {dataset}")
    return hit.iloc[0]


def describe_selection(selection: pd.DataFrame) -> str:
    """Per dataset: ρ of all features, honest and oracle selection, the loss of selecting
    honestly and the optimism of the oracle."""

    def diff(n: str, arm: str) -> str:
        row = selection_row(selection, n, arm, "honest selection")
        return wording.estimate(row["delta"], row["ci_low"], row["ci_high"])

    return " ".join(
        f"On {n}, all features reach ρ = "
        f"{selection_row(selection, n, 'all features', 'honest selection')['value']:.3f}, "
        f"honest selection "
        f"{selection_row(selection, n, 'honest selection', 'all features')['value']:.3f} and "
        f"the oracle {selection_row(selection, n, 'oracle selection', 'all features')['value']:.3f}"
        f"; all features minus honest selection is {diff(n, 'all features')} and the oracle "
        f"minus honest selection (its optimism) is {diff(n, 'oracle selection')}."
        for n in dict.fromkeys(selection["dataset"])
    )
