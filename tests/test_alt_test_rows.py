"""The alternative annotator test as ledger rows of kind ``alt-test`` (issue 53): worded
passes / does not pass with the rule that decided, an interval at the level of the row's q,
rows that cannot enter a family kept out of it, and the count of passes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from judgepanel.claims.rows import DOES_NOT_PASS, NOT_TESTED, PASSES, Family
from judgepanel.stats.alt_test import AltTestResult
from judgepanel.studies import agreement
from judgepanel.studies.agreement.verdicts import decisive_test, matched_interval

EPS = 0.1
FAM = Family("alt", "the judges", method="fdr_by")


def _result(diffs: list[list[float]], epsilon: float = EPS, q: float = 0.05) -> AltTestResult:
    """A test whose annotator j has the differences W_human − W_judge ``diffs[j]``."""
    rows = []
    for j, d in enumerate(diffs):
        d = np.asarray(d, dtype=float)
        test = stats.ttest_1samp(d, epsilon, alternative="less")
        judge = 1 - max(d.mean(), 0)
        se = float(d.std(ddof=1) / np.sqrt(len(d)))
        rows.append({"annotator": f"r{j}", "n_items": len(d), "rho_judge": judge,
                     "rho_human": judge + d.mean(), "t": float(test.statistic), "se": se,
                     "p": float(test.pvalue)})  # fmt: skip
    table = pd.DataFrame(rows)
    p = table["p"].to_numpy()
    reject, q_by, _, _ = multipletests(np.where(np.isnan(p), 1.0, p), alpha=q, method="fdr_by")
    table["q_by"] = np.where(np.isnan(p), np.nan, q_by)
    table["rejected"] = reject & ~np.isnan(p)
    rate = float(table["rejected"].mean())
    return AltTestResult(rate, float(table["rho_judge"].mean()), rate >= 0.5, epsilon,
                         "neg_rmse", q, "none", int(table["n_items"].max()), len(rows), (),
                         table)  # fmt: skip


def _diffs(rng: np.random.Generator, shift: float, m: int = 5, n: int = 40) -> list[list[float]]:
    return [list(rng.choice([-1.0, 0.0, 1.0], size=n, p=[0.2 + shift, 0.6, 0.2 - shift]))
            for _ in range(m)]  # fmt: skip


def test_a_row_is_an_alt_test_worded_passes_or_does_not_pass():
    rng = np.random.default_rng(0)
    results = {"good": _result(_diffs(rng, 0.15)), "bad": _result(_diffs(rng, -0.1))}
    rows = {c.a: c for c in agreement.alt_claims(results, dataset="d", family=FAM)}
    assert {c.kind for c in rows.values()} == {"alt-test"}
    assert {c.alternative for c in rows.values()} == {"greater"}
    assert rows["good"].verdict == PASSES and rows["bad"].verdict == DOES_NOT_PASS
    words = rows["bad"].words()
    assert "does not pass the alternative annotator test" in words
    assert "no detectable difference" not in words
    assert "correction over the 2 judges" in rows["good"].extra["rule"]
    assert "before any correction over judges" in rows["bad"].extra["rule"]


@pytest.mark.parametrize("seed", range(6))
def test_the_interval_is_at_the_level_of_the_q_and_above_zero_exactly_when_it_passes(seed):
    rng = np.random.default_rng(seed)
    results = {f"j{i}": _result(_diffs(rng, s)) for i, s in enumerate((0.0, 0.08, 0.12, 0.2))}
    for c in agreement.alt_claims(results, dataset="d", family=FAM):
        assert (c.ci_low > 0) == (c.verdict == PASSES), c
        d = decisive_test(results[c.a])
        assert c.level == pytest.approx(1 - 2 * 0.05 * min(1.0, d.p_raw / c.q))
        assert 0.9 - 1e-12 <= c.level < 1


def test_the_interval_dual_of_the_q():
    d = decisive_test(_result([[0.0, 1.0, -1.0, 0.0, -1.0] * 8] * 3))
    for q in (0.01, 0.04, 0.06, 0.5):
        low, _, _ = matched_interval(d, q, 0.05)
        assert (low > 0) == (q < 0.05)


def test_a_pass_of_its_own_rule_undone_by_the_correction_over_judges_says_why():
    rng = np.random.default_rng(1)
    shifts = (0.08, -0.1, -0.1, -0.1, -0.1, -0.1)
    results = {f"j{i}": _result(_diffs(rng, s)) for i, s in enumerate(shifts)}
    rows = agreement.alt_claims(results, dataset="d", family=FAM)
    undone = [c for c in rows if c.extra["passed"] and c.verdict != PASSES]
    assert undone, [(c.extra["winning_rate"], c.q) for c in rows]
    for c in undone:
        assert "meets the test's own rule" in c.extra["rule"] and "not below 0.05" in c.words()


def test_an_untestable_row_stays_out_of_the_family_and_ties_of_two_judges_stay_in():
    rng = np.random.default_rng(1)
    same = _diffs(rng, 0.1)
    flat = [[EPS] * 40, [EPS] * 40, [EPS] * 40]  # constant at ε: scipy gives no p
    results = {"a": _result(same), "b": _result(same), "flat": _result(flat),
               "c": _result(_diffs(rng, 0))}  # fmt: skip
    rows = {c.a: c for c in agreement.alt_claims(results, dataset="d", family=FAM)}
    assert rows["flat"].excluded.startswith("not estimable") and not rows["flat"].family
    assert rows["flat"].verdict == NOT_TESTED
    # two judges whose numbers coincide are two tests: both are corrected over
    inside = [c for c in rows.values() if c.family]
    assert [c.a for c in inside] == ["a", "b", "c"]
    qs = multipletests([c.p for c in inside], method="fdr_by")[1]
    assert [c.q for c in inside] == pytest.approx(list(qs))
    assert "over the 3 judges" in rows["a"].extra["rule"]


def test_the_count_of_passes_and_the_row_closest_to_passing():
    rng = np.random.default_rng(2)
    results = {f"j{i}": _result(_diffs(rng, s)) for i, s in enumerate((0.2, 0.05, -0.1))}
    rows = agreement.alt_claims(results, dataset="d", family=FAM)
    count = agreement.count_passes("n", rows, "alt", what="passes", over="the judges")
    assert count.kind == "count" and count.extra["n"] == 3
    assert int(count.estimate) == sum(c.verdict == PASSES for c in rows) >= 1
    assert count.extra["point"] == sum(c.estimate > 0 for c in rows)
    assert count.verdict == f"{int(count.estimate)} of 3 with q < 0.05"
    closest = agreement.closest_to_passing(rows)
    assert closest is not None and closest.q == min(c.q for c in rows)
    with pytest.raises(ValueError, match="no row"):
        agreement.count_passes("n", rows, "other", what="x", over="y")
    assert math.isnan(count.ci_low)
