"""Out-of-fold fits made once per process: same predictions, and a miss on any change."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import cross_val_predict

from judgepanel.studies.common.combiners import (
    gb_combiner,
    make_folds,
    oof_predict,
    oof_predict_many,
)
from judgepanel.studies.common.fitcache import FITS, estimator_description, fit_key
from judgepanel.studies.fusion.blocks import ridge_combiner
from judgepanel.studies.fusion.robustness.selection import dimension_groups, selecting_combiner


def _data(n=60, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(5, 2, size=(n, p)))
    y = X @ rng.normal(size=p) + rng.normal(0, 1, n)
    return pd.DataFrame(X, columns=[f"f{j}:quality" for j in range(p)]), pd.Series(y)


def _plain(estimator, X, y, seed=42):
    """The fit as the study made it before the memo: sklearn's own checks included."""
    return cross_val_predict(
        estimator, np.asarray(X, float), np.asarray(y, float), cv=make_folds(seed)
    )


@pytest.mark.parametrize("make", [gb_combiner, ridge_combiner])
def test_memoised_and_fast_fits_equal_the_plain_fit(make):
    X, y = _data()
    FITS.clear()
    first = oof_predict(make(), X, y)
    again = oof_predict(make(), X, y)
    assert FITS.misses == 1 and FITS.hits == 1
    np.testing.assert_array_equal(first, _plain(make(), X, y))
    np.testing.assert_array_equal(again, first)
    again[:] = 0  # the caller's copy, not the stored one
    np.testing.assert_array_equal(oof_predict(make(), X, y), first)


def test_a_fit_misses_when_any_input_changes():
    X, y = _data()
    FITS.clear()
    oof_predict(gb_combiner(), X, y)
    X2 = X.copy()
    X2.iloc[3, 1] += 1
    y2 = y.copy()
    y2.iloc[7] += 0.5
    changed = [
        (gb_combiner(), X2, y, 42),
        (gb_combiner(), X, y2, 42),
        (gb_combiner(), X, y, 7),
        (gb_combiner(random_state=1), X, y, 42),
        (GradientBoostingRegressor(n_estimators=50, max_depth=3, random_state=0), X, y, 42),
        (ridge_combiner(), X, y, 42),
        (gb_combiner(), X[X.columns[::-1]], y, 42),  # same columns, another order
    ]
    for est, Xc, yc, seed in changed:
        pred = oof_predict(est, Xc, yc, seed=seed)
        np.testing.assert_array_equal(pred, _plain(est, Xc, yc, seed))
    assert FITS.hits == 0 and FITS.misses == 1 + len(changed)


def test_nested_estimators_and_their_arrays_enter_the_key():
    X, y = _data()
    Xa, ya = np.asarray(X, float), np.asarray(y, float)
    groups = dimension_groups(list(X.columns), ["quality"])
    assert fit_key(selecting_combiner(groups), Xa, ya, (5, 42)) != fit_key(
        selecting_combiner([groups[0][:2]]), Xa, ya, (5, 42)
    )
    ridge = ridge_combiner()
    other = ridge_combiner().set_params(ridgecv__alphas=np.logspace(-3, 4, 30))
    assert fit_key(ridge, Xa, ya, (5, 42)) != fit_key(other, Xa, ya, (5, 42))
    assert estimator_description(ridge) == estimator_description(ridge_combiner())


def test_an_estimator_with_unpinned_randomness_is_never_memoised():
    X, y = _data()
    free = GradientBoostingRegressor(n_estimators=20, random_state=None)
    assert fit_key(free, np.asarray(X, float), np.asarray(y, float), (5, 42)) is None
    FITS.clear()
    oof_predict(free, X, y)
    oof_predict(free, X, y)
    assert len(FITS) == 0 and FITS.hits == 0


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_many_fits_equal_single_fits_and_fill_the_memo_in_this_process(n_jobs):
    X, y = _data(n=50)
    jobs = [
        (gb_combiner(), X, y, 42),
        (gb_combiner(), X.iloc[:, :2], y, 3),
        (ridge_combiner(), X, y, 42),
    ]
    FITS.clear()
    preds = oof_predict_many(jobs, n_jobs=n_jobs)
    assert len(FITS) == 3
    for (est, Xj, yj, seed), pred in zip(jobs, preds, strict=True):
        np.testing.assert_array_equal(pred, _plain(est, Xj, yj, seed))
    hits = FITS.hits
    again = oof_predict_many(jobs, n_jobs=n_jobs)
    assert FITS.hits == hits + 3
    for a, b in zip(preds, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_memo_off_gives_the_same_predictions():
    X, y = _data(seed=2)
    FITS.clear()
    on = oof_predict(gb_combiner(), X, y)
    with FITS.disabled():
        off = oof_predict(gb_combiner(), X, y)
    np.testing.assert_array_equal(on, off)


def test_non_finite_features_are_refused_naming_the_column():
    X, y = _data()
    X.iloc[4, 2] = np.nan
    with pytest.raises(ValueError, match=r"f2:quality"):
        oof_predict(gb_combiner(), X, y)
    X, y = _data()
    y.iloc[0] = np.inf
    with pytest.raises(ValueError, match="the target"):
        oof_predict(gb_combiner(), X, y)


def test_an_unknown_spread_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="over must be"):
        oof_predict_many([(gb_combiner(), X, y, 42)], over="trees")


def test_a_fit_shared_through_the_folder_is_read_by_another_process(tmp_path, monkeypatch, request):
    """One report's kernels share fits: what one stored, another reads instead of fitting,
    the same predictions; an unreadable file is fitted again; without the folder, nothing
    is written."""
    from judgepanel.studies.common import combiners
    from judgepanel.studies.common.fitcache import share_fits

    X, y = _data(seed=3)
    FITS.clear()
    share_fits(None)
    alone = oof_predict(gb_combiner(), X, y)
    share_fits(tmp_path)
    request.addfinalizer(lambda: share_fits(None))
    assert list(tmp_path.iterdir()) == []

    FITS.clear()
    first = oof_predict(gb_combiner(), X, y)  # fitted here, stored in the folder
    stored = list(tmp_path.glob("*.npy"))
    assert len(stored) == 1 and not list(tmp_path.glob(".*"))
    np.testing.assert_array_equal(first, alone)

    FITS.clear()  # as a fresh kernel: its own memo is empty

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted again although the folder holds the fit")

    monkeypatch.setattr(combiners, "fresh_oof", no_fit)
    np.testing.assert_array_equal(oof_predict(gb_combiner(), X, y), first)
    monkeypatch.undo()

    stored[0].write_bytes(b"not an array")
    FITS.clear()
    np.testing.assert_array_equal(oof_predict(gb_combiner(), X, y), first)
    FITS.clear()


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_folds_fitted_side_by_side_equal_the_sequential_fit(backend):
    """The five folds of one combiner spread over two workers (threads, as the benchmark at
    AVA's scale fits them, or processes) give the sequential fit's predictions, bit for bit."""
    from joblib import parallel_config

    X, y = _data(n=120, seed=5)
    with FITS.disabled():
        sequential = oof_predict(gb_combiner(), X, y, n_jobs=1)
        with parallel_config(backend=backend):
            side_by_side = oof_predict(gb_combiner(), X, y, n_jobs=2)
    np.testing.assert_array_equal(sequential, side_by_side)
    np.testing.assert_array_equal(sequential, _plain(gb_combiner(), X, y, 42))
