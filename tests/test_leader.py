"""The leader of several judges with its selection paid for (max-T), and every pair of them."""

from __future__ import annotations

import numpy as np
import pytest

from judgepanel.claims.rows import HIGHEST_ONLY, LEADS
from judgepanel.stats import bh
from judgepanel.stats.means import finite_p
from judgepanel.studies.common.leader import (
    best_of,
    best_of_claim,
    pairwise,
    resampled_values,
)


def _hits(rates: list[float], n: int = 120, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random((n, len(rates))) < np.array(rates)).astype(float)


def test_a_clear_leader_leads_every_other_judge():
    hits = _hits([0.9, 0.5, 0.45, 0.4])
    res = best_of(hits, 1.0, ["a", "b", "c", "d"], n_resamples=1000, seed=1)
    assert res.leader == "a" and res.runner_up == "b"
    assert res.margin == pytest.approx(hits[:, 0].mean() - hits[:, 1].mean())
    assert res.p < 0.05 and res.ci_low > 0 and res.p == max(res.p_each)
    claim = best_of_claim(res, id="leader", dataset="d", metric="acc", unit="tasks")
    assert claim.kind == "best-of" and claim.verdict == LEADS
    assert claim.b == "every other judge (b, c and d)"
    assert "selection-adjusted" in claim.words()


def test_a_leader_no_test_separates_names_the_judges_it_ties_with():
    hits = _hits([0.6, 0.58, 0.2], n=60)
    res = best_of(hits, 1.0, ["x", "y", "z"], n_resamples=1000, seed=2)
    assert res.order[:2] == ["x", "y"] or res.order[:2] == ["y", "x"]
    assert res.p >= 0.05 and res.not_separated() == [res.runner_up]
    assert res.separated() == ["z"]
    claim = best_of_claim(res, id="leader", dataset="d", metric="acc", unit="tasks")
    assert claim.verdict == HIGHEST_ONLY and claim.b == res.runner_up
    assert f"no test separates it from {res.runner_up}" in claim.words()
    table = res.table()
    assert table.loc[0, "not_separated_from"] == res.runner_up
    assert table.loc[0, "separated_from"] == "z"


def test_the_selection_is_paid_for():
    """The max-T p of the leader is never below the test of the same pair chosen in advance,
    and among judges of equal skill it finds a leader rarely."""
    hits = _hits([0.5] * 6, n=80, seed=5)
    names = list("abcdef")
    res = best_of(hits, 1.0, names, n_resamples=500, seed=3)
    observed, draws = resampled_values(hits, 1.0, 500, 3)
    lead, runner = names.index(res.leader), names.index(res.runner_up)
    centred = (draws[:, lead] - draws[:, runner]) - (observed[lead] - observed[runner])
    naive = (1 + np.count_nonzero(np.abs(centred) >= res.margin - 1e-12)) / 501
    assert res.p >= naive
    found = sum(
        best_of(_hits([0.5] * 6, n=80, seed=s), 1.0, names, n_resamples=300, seed=s).p < 0.05
        for s in range(40)
    )
    assert found <= 4  # about 5% of 40 at most, with room for the bootstrap's own error


def test_units_of_several_items_are_resampled_whole():
    """A paper of many questions is one unit: repeating every question of each paper
    leaves the estimates, the interval and the p as they are."""
    rng = np.random.default_rng(4)
    correct = rng.integers(0, 5, size=(15, 3)).astype(float)
    asked = np.full(15, 4.0)
    one = best_of(correct, asked, ["a", "b", "c"], n_resamples=400, seed=7)
    four = best_of(4 * correct, 4 * asked, ["a", "b", "c"], n_resamples=400, seed=7)
    assert (one.margin, one.ci_low, one.p) == pytest.approx((four.margin, four.ci_low, four.p))
    assert one.values[0] == pytest.approx(correct.sum(axis=0).max() / 60)


def test_pairs_name_the_higher_judge_first_with_bh_q():
    hits = _hits([0.3, 0.8, 0.5], n=100, seed=6)
    table = pairwise(hits, 1.0, ["low", "high", "mid"], n_resamples=500, seed=0)
    assert len(table) == 3 and (table["delta"] >= 0).all()
    assert set(zip(table["a"], table["b"], strict=True)) == {
        ("high", "low"), ("mid", "low"), ("high", "mid"),
    }  # fmt: skip
    np.testing.assert_allclose(table["q"], bh(table["p"].to_numpy()))
    _, draws = resampled_values(hits, 1.0, 500, 0)
    row = table.set_index(["a", "b"]).loc[("high", "low")]
    assert row.p == pytest.approx(finite_p(draws[:, 1] - draws[:, 0]))


def test_a_leader_needs_a_rival():
    with pytest.raises(ValueError, match="at least two"):
        best_of(np.ones((5, 1)), 1.0, ["a"], n_resamples=10, seed=0)
