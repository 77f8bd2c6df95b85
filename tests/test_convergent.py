"""Convergent and discriminant validity of dimension prompts from raw correlations."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from judgepanel.studies.fusion.convergent import correlation_matrix, validity_table


def _study(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    human = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    P = pd.DataFrame(index=human.index)
    P["good:a"] = human["a"] + rng.normal(0, 0.5, n)
    P["good:b"] = human["b"] + rng.normal(0, 0.5, n)
    P["good:c"] = human["c"] + rng.normal(0, 0.5, n)
    P["swap:a"] = human["b"] + rng.normal(0, 0.5, n)  # reads another attribute
    P["swap:b"] = human["b"] + rng.normal(0, 0.5, n)
    P["swap:c"] = 3.0  # never varies
    return P, human


def test_each_row_is_the_correlations_it_names() -> None:
    P, human = _study()
    table = validity_table(P, human, ["good", "swap"], ["a", "b", "c"], n_resamples=300)
    row = table.set_index(["family", "dimension"]).loc[("swap", "a")]
    assert row["rho_own"] == spearmanr(P["swap:a"], human["a"])[0]
    assert row["other"] == "b" and row["rho_other"] == spearmanr(P["swap:a"], human["b"])[0]
    assert row["margin"] < 0 and row["p"] > 0.5
    good = table[table["family"] == "good"]
    assert (good["margin"] > 0).all() and (good["q"] < 0.05).all()
    assert (good["own_low"] < good["rho_own"]).all() and (good["rho_own"] < good["own_high"]).all()
    constant = table.set_index(["family", "dimension"]).loc[("swap", "c")]
    assert np.isnan(constant["rho_own"]) and np.isnan(constant["q"])


def test_the_matrix_holds_every_prompt_against_every_attribute() -> None:
    P, human = _study()
    m = correlation_matrix(P, human, ["good"], ["a", "b", "c"])
    assert m.shape == (3, 3) and list(m.columns) == ["a", "b", "c"]
    assert m.loc["good:b", "c"] == spearmanr(P["good:b"], human["c"])[0]
    assert (np.diag(m.to_numpy()) == m.max(axis=1).to_numpy()).all()
