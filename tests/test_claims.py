"""The claims ledger: one verdict per comparison, a direction only from a test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from judgepanel.claims import wording
from judgepanel.claims.rows import (
    NOT_TESTED,
    Claim,
    Family,
    check_families,
    claims_frame,
    contradictions,
    correct,
    declare,
)


def claim(**kw) -> Claim:
    base = dict(
        id="c1", a="H+P_gb", b="panel mean", dataset="eva", metric="spearman", unit="images",
        estimate=0.05, ci_low=0.01, ci_high=0.09,
    )  # fmt: skip
    base.update(kw)
    return Claim(**base)


def test_an_interval_alone_never_decides():
    assert claim().verdict == wording.NO_DIFFERENCE  # no p: no direction
    assert claim(p=0.01, alternative="greater").verdict == wording.BEATS
    # the test looked for a gain; the interval below zero says nothing directional
    low = claim(estimate=-0.05, ci_low=-0.09, ci_high=-0.01, p=0.999, alternative="greater")
    assert low.verdict == wording.NO_GAIN
    assert claim(estimate=-0.05, ci_low=-0.09, ci_high=-0.01, p=0.01).verdict == (
        wording.FALLS_BELOW
    )


def test_the_family_q_decides_not_the_raw_p():
    fam = declare(Family("f", "two rows"))
    rows = [
        claim(id="a", p=0.03, family="f"),
        claim(id="b", p=0.04, family="f"),
        claim(id="c", p=0.9, family="f"),
    ]
    done = correct(rows, fam)
    want = multipletests([0.03, 0.04, 0.9], method="fdr_bh")[1]
    assert [c.q for c in done] == pytest.approx(list(want), abs=1e-12)
    assert done[0].verdict == wording.NO_DIFFERENCE  # q = 0.06
    assert claim(p=0.03).verdict == wording.BEATS  # alone, its p decides


def test_a_family_must_be_declared_before_it_is_used():
    with pytest.raises(ValueError, match="was not declared"):
        check_families([claim(family="later", p=0.01)], {})
    with pytest.raises(ValueError, match="declared twice"):
        declare(Family("f", "x"), Family("f", "y"))
    with pytest.raises(ValueError, match="without a p"):
        correct([claim(family="f")], declare(Family("f", "x")))


def test_rows_equal_by_construction_stay_out_and_say_so():
    c = claim(excluded="pass^3 equals ap@1 for a ranker", p=0.01)
    assert c.verdict == NOT_TESTED and "not tested" in c.words()
    with pytest.raises(ValueError, match="excluded"):
        claim(excluded="x", family="f")


def test_two_rows_of_one_comparison_with_two_verdicts_are_found():
    a = claim(id="x", p=0.01)
    b = claim(id="y", a="panel mean", b="H+P_gb", estimate=-0.05, ci_low=-0.09, ci_high=-0.01,
              p=0.2)  # fmt: skip
    other = claim(id="z", dataset="para", p=0.5)
    found = contradictions(claims_frame([a, b, other]))
    assert len(found) == 1 and "x, y" in found[0]
    assert contradictions(claims_frame([a, other])) == []


def test_words_carry_the_verdict_and_the_numbers():
    c = claim(p=0.004, alternative="greater", symbol="Δρ")
    text = c.words()
    assert text.startswith("H+P_gb beats panel mean (Δρ = +0.050 [+0.010, +0.090]")
    row = c.as_row()
    assert row["verdict"] == wording.BEATS and math.isnan(row["q"])
    frame = claims_frame([c])
    assert list(frame["verdict"]) == [wording.BEATS]


def test_ids_are_checked():
    with pytest.raises(ValueError, match="claim id"):
        claim(id="Has Space")


@pytest.mark.parametrize("seed", range(5))
def test_verdicts_follow_the_rule_on_random_rows(seed):
    rng = np.random.default_rng(seed)
    for _ in range(200):
        lo, hi = np.sort(rng.normal(0, 0.1, 2))
        est = (lo + hi) / 2
        p = float(rng.uniform(0, 0.1)) if rng.random() < 0.8 else math.nan
        alt = str(rng.choice(["two-sided", "greater", "less"]))
        c = claim(estimate=est, ci_low=lo, ci_high=hi, p=p, alternative=alt)
        passes = not math.isnan(p) and p < 0.05
        if c.verdict == wording.BEATS:
            assert lo > 0 and passes and alt in ("two-sided", "greater")
        elif c.verdict == wording.FALLS_BELOW:
            assert hi < 0 and passes and alt in ("two-sided", "less")
        else:
            assert not (lo > 0 and passes and alt != "less")
            assert not (hi < 0 and passes and alt != "greater")


def test_a_claim_reads_a_comparison_row_and_names_its_metric():
    row = {"delta": -0.1, "ci_low": -0.2, "ci_high": -0.05, "p": 0.01, "q": 0.03}
    c = Claim.of_row(row, id="r", a="x", b="y", dataset="d", metric="kendall_b", unit="images",
                     alternative="less")  # fmt: skip
    assert (c.estimate, c.ci_low, c.ci_high, c.p, c.q) == (-0.1, -0.2, -0.05, 0.01, 0.03)
    assert c.symbol == "Δτ_b" and c.verdict == wording.FALLS_BELOW
