"""Out-of-fold fits made once per process, however many analyses ask for them.

In the fusion study, H+P_gb of the pre-declared families is the ablation's arm, the sham
comparison's reference, a label-matched arm, the partition sweep's reference and the
transfer's in-domain arm. Each fit is deterministic (a pinned ``random_state``, a fixed
fold partition), so its out-of-fold predictions are kept in :data:`FITS` under a key built
from everything the fit depends on: the estimator's class and parameters (nested estimators
included), the feature matrix, the target and the fold partition, byte for byte. An
estimator whose randomness is not pinned (``random_state=None`` or a generator) or whose
parameters have no stable description is never memoised.

The notebooks of one report run in separate kernels and fit some of the same combiners
(03's trios again in 04, 02's arms among 04's baselines), and bootstrap some of the same
arms (03's trio sweep again in 04's retest, 04's logprob arms again in 09). Once
:func:`share_fits` names a folder, each fit made, and each arm's column of resampled
metrics (:data:`judgepanel.stats.bootstrap.RESAMPLED`, in its subfolder
:data:`RESAMPLED_FOLDER`), is also written to it and read from it by the other kernels:
the report hands its kernels a folder of its own (their setup call passes it on), empty
when it starts and removed when it ends, so nothing in it outlives the code and the
machine that made it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator

from judgepanel.stats.bootstrap import RESAMPLED
from judgepanel.stats.memo import ArrayMemo, digest, load_array, save_array

FITS = ArrayMemo("out-of-fold fits", max_bytes=64 * 2**20)
"""The process's out-of-fold predictions (a few kB each)."""

_SHARED: list[Path] = []
"""The folder this process shares its fits in with the other kernels of one report (empty:
none is shared); set by :func:`share_fits`."""


RESAMPLED_FOLDER = "resampled"
"""The subfolder of the shared folder that holds the bootstrap columns."""


def share_fits(folder: str | Path | None) -> None:
    """Share this process's fits and bootstrap columns in ``folder`` from now on
    (``None``: share none)."""
    _SHARED[:] = [Path(folder)] if folder else []
    RESAMPLED.share(Path(folder) / RESAMPLED_FOLDER if folder else None)


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


def _shared(key: str | None) -> Path | None:
    if not _SHARED or key is None or not FITS.enabled:
        return None
    return _SHARED[0] / f"{key}.npy"


def load_shared(key: str | None) -> np.ndarray | None:
    """The predictions another kernel of this report stored under ``key``, or None."""
    path = _shared(key)
    return None if path is None else load_array(path)  # unreadable: the fit is made again


def save_shared(key: str | None, predictions: np.ndarray) -> None:
    """Store ``predictions`` for the other kernels of this report (whole or not at all)."""
    path = _shared(key)
    if path is not None:
        save_array(path, np.asarray(predictions, np.float64))
