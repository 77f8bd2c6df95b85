"""A run's values read by attribute in the notebooks: known names, a clear error, read-only."""

from __future__ import annotations

import pytest

from judgepanel.report.notebook_run import RunValues


def test_values_by_attribute():
    params = RunValues({"store": "runs.sqlite", "n_resamples": 200})
    assert params.store == "runs.sqlite"
    assert params.n_resamples == 200
    assert dir(params) == ["n_resamples", "store"]


def test_an_unknown_value_names_the_known_ones():
    params = RunValues({"store": "runs.sqlite", "seed": 3})
    with pytest.raises(
        AttributeError, match="n_resample: not a value of this run; it has store, seed"
    ):
        _ = params.n_resample


def test_values_are_read_only():
    params = RunValues({"seed": 3})
    with pytest.raises(AttributeError, match="read-only"):
        params.seed = 4
    assert params.seed == 3
