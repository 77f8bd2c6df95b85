"""The combiner the studies fit, and how: out of fold over a fixed partition.

The combiner is a scikit-learn gradient-boosting regressor (:func:`gb_combiner`), fitted
out of fold with ``cross_val_predict`` over ``KFold(5, shuffle=True, random_state=42)``;
anything fitted on the target lives inside the estimator, so it is refitted in every
training fold. The fusion study fuses its feature blocks with it, and VAB's fused
score-then-rank judge is the same combiner trained on a rated world.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import sklearn
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import KFold, cross_val_predict

from judgepanel.studies.common.fitcache import FITS, fit_key, load_shared, save_shared

FOLD_SEED = 42
N_FOLDS = 5


def gb_combiner(random_state: int = 0) -> GradientBoostingRegressor:
    """The study's combiner: 100 trees, depth 3, learning rate 0.1, never tuned."""
    return GradientBoostingRegressor(
        n_estimators=100, max_depth=3, learning_rate=0.1, random_state=random_state
    )


def make_folds(seed: int = FOLD_SEED, n_splits: int = N_FOLDS) -> KFold:
    """The fixed fold partition: ``KFold(5, shuffle=True, random_state=42)``."""
    return KFold(n_splits=n_splits, shuffle=True, random_state=seed)


def describe_combiner(n_items: int | None = None) -> str:
    """The combiner and its fold protocol in words, read off the objects the study fits.

    With ``n_items``, also how many human labels each training fold consumes.
    """
    gb = gb_combiner().get_params()
    kf = make_folds()
    text = (
        f"gradient boosting ({gb['n_estimators']} trees, depth {gb['max_depth']}, learning "
        f"rate {gb['learning_rate']}, never tuned), fitted out of fold over "
        f"`KFold({kf.n_splits}, shuffle=True, random_state={kf.random_state})`"
    )
    if n_items is not None:
        sizes = sorted({len(train) for train, _ in kf.split(np.zeros(n_items))})
        labels = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
        text += (
            f"; each training fold consumes the human labels of {labels} of the {n_items} images"
        )
    return text


def oof_predict(
    estimator: BaseEstimator,
    X: pd.DataFrame | np.ndarray,
    y: pd.Series | np.ndarray,
    *,
    seed: int = FOLD_SEED,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Out-of-fold predictions: every image is predicted by a model that never saw it.

    A fit this process has already made on identical inputs (estimator parameters, X, y,
    fold partition) is not made again: its predictions come from
    :data:`~judgepanel.studies.common.fitcache.FITS`. ``n_jobs`` workers fit the folds.
    """
    return oof_predict_many([(estimator, X, y, seed)], n_jobs=n_jobs, over="folds")[0]


OofJob = tuple[BaseEstimator, "pd.DataFrame | np.ndarray", "pd.Series | np.ndarray", int]
"""One out-of-fold fit: (estimator, X, y, fold seed)."""


def oof_predict_many(
    jobs: Sequence[OofJob], *, n_jobs: int | None = None, over: str = "jobs"
) -> list[np.ndarray]:
    """:func:`oof_predict` of several fits, in order; only fits not yet made are made.

    The memo is read and filled here, in the calling process. With ``over="jobs"`` each
    fit runs whole in one of ``n_jobs`` joblib workers; with ``over="folds"`` the fits run
    one after another, each spreading its folds over the workers.
    """
    if over not in ("jobs", "folds"):
        raise ValueError(f"over must be 'jobs' or 'folds', got {over!r}")
    arrays = [_checked(est, X, y, s) for est, X, y, s in jobs]
    keys = [fit_key(est, X, y, (N_FOLDS, s)) for est, X, y, s in arrays]
    preds: list[np.ndarray | None] = [FITS.get(k) for k in keys]
    for i, k in enumerate(keys):
        if preds[i] is None and (shared := load_shared(k)) is not None:
            FITS.put(k, shared)
            preds[i] = shared
    todo = [i for i, p in enumerate(preds) if p is None]
    if over == "folds" or len(todo) < 2:
        fitted = [fresh_oof(*arrays[i], n_jobs=n_jobs) for i in todo]
    else:
        fitted = Parallel(n_jobs=n_jobs)(delayed(fresh_oof)(*arrays[i]) for i in todo)
    for i, pred in zip(todo, fitted, strict=True):
        FITS.put(keys[i], pred)
        save_shared(keys[i], pred)
        preds[i] = pred
    return [np.asarray(p, float) for p in preds]


def _checked(
    estimator: BaseEstimator, X: pd.DataFrame | np.ndarray, y: pd.Series | np.ndarray, seed: int
) -> tuple[BaseEstimator, np.ndarray, np.ndarray, int]:
    """The job with X and y as float arrays, refused if either holds NaN or infinity."""
    Xa, ya = np.asarray(X, float), np.asarray(y, float)
    bad = ~np.isfinite(Xa).all(axis=0) if Xa.ndim == 2 else ~np.isfinite(Xa)
    if np.any(bad) or not np.isfinite(ya).all():
        names = list(X.columns) if isinstance(X, pd.DataFrame) else list(range(Xa.shape[-1]))
        where = [names[j] for j in np.flatnonzero(np.atleast_1d(bad))[:5]] or ["the target"]
        raise ValueError(f"the combiner's inputs hold NaN or infinite values in {where}")
    return estimator, Xa, ya, seed


def fresh_oof(
    estimator: BaseEstimator, X: np.ndarray, y: np.ndarray, seed: int, n_jobs: int | None = None
) -> np.ndarray:
    """One out-of-fold fit, without sklearn's per-tree checks.

    Gradient boosting fits a hundred trees, and sklearn validates the parameters and the
    finiteness of X for every one; a third of a fit's time on the study's data. The
    parameters are the study's fixed combiners and X, y were checked finite once
    (:func:`_checked`), so the checks are skipped; the predictions are the same.
    """
    with sklearn.config_context(skip_parameter_validation=True, assume_finite=True):
        return cross_val_predict(clone(estimator), X, y, cv=make_folds(seed), n_jobs=n_jobs)
