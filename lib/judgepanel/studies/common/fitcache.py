"""Out-of-fold fits made once per process, however many analyses ask for them.

In the fusion study, H+P_gb of the pre-declared families is the ablation's arm, the sham
comparison's reference, a label-matched arm, the partition sweep's reference and the
transfer's in-domain arm. Each fit is deterministic (a pinned ``random_state``, a fixed
fold partition), so its out-of-fold predictions are kept in :data:`FITS` under a key built
from everything the fit depends on: the estimator's class and parameters (nested estimators
included), the feature matrix, the target and the fold partition, byte for byte. An
estimator whose randomness is not pinned (``random_state=None`` or a generator) or whose
parameters have no stable description is never memoised.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator

from judgepanel.stats.memo import ArrayMemo, digest

FITS = ArrayMemo("out-of-fold fits", max_bytes=64 * 2**20)
"""The process's out-of-fold predictions (a few kB each)."""


class Uncacheable(TypeError):
    """An estimator whose fit cannot be named exactly (see :func:`estimator_description`)."""


def _describe(value: object) -> object:
    """A stable description of one parameter value; arrays by content."""
    if isinstance(value, BaseEstimator):
        return estimator_description(value)
    if isinstance(value, np.ndarray):
        return ("ndarray", digest(value))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_describe(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), _describe(v)) for k, v in sorted(value.items())))
    if value is None or isinstance(value, bool | int | float | str | np.generic):
        return repr(value)
    raise Uncacheable(f"no stable description for a parameter of type {type(value).__name__}")


def estimator_description(estimator: BaseEstimator) -> tuple:
    """The estimator's class and every parameter, nested estimators described alike.

    Raises:
        Uncacheable: a parameter has no stable description, or a ``random_state`` is not
            an integer, so that two fits could differ.
    """
    params = estimator.get_params(deep=False)
    state = params.get("random_state", 0)
    if "random_state" in params and not isinstance(state, int | np.integer):
        raise Uncacheable(f"{type(estimator).__name__} has random_state={state!r}")
    kind = f"{type(estimator).__module__}.{type(estimator).__qualname__}"
    return (kind, tuple((name, _describe(params[name])) for name in sorted(params)))


def fit_key(
    estimator: BaseEstimator, X: np.ndarray, y: np.ndarray, folds: tuple[int, int]
) -> str | None:
    """The key of one out-of-fold fit, or None when the estimator cannot be memoised.

    Args:
        estimator: the unfitted estimator.
        X, y: the float64 feature matrix and target exactly as the fit receives them.
        folds: (number of folds, shuffle seed) of the partition.
    """
    try:
        described = estimator_description(estimator)
    except Uncacheable:
        return None
    return digest(repr(described), folds, np.asarray(X, np.float64), np.asarray(y, np.float64))
