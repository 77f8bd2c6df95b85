"""The wording layer: a table row in, the sentence out, on each rule's edge cases."""

from __future__ import annotations

import math

import pytest

from judgepanel.claims import wording as w


def row(delta, low, high, p=math.nan, q=None, margin=None):
    return w.Difference(delta, low, high, p=p, q=q, margin=margin)


def test_a_difference_is_a_win_only_when_interval_and_test_agree() -> None:
    assert row(0.118, 0.075, 0.163, p=0.001).verdict == w.BEATS
    assert row(-0.118, -0.163, -0.075, p=0.001).verdict == w.FALLS_BELOW
    # the interval excludes zero but the corrected q does not pass: no claim
    assert row(0.034, 0.002, 0.066, p=0.02, q=0.156).verdict == w.NO_DIFFERENCE
    # the interval touches zero: no claim, whatever p says
    assert row(0.05, 0.0, 0.1, p=0.01).verdict == w.NO_DIFFERENCE
    assert row(math.nan, math.nan, math.nan).verdict == w.NOT_ESTIMABLE


def test_no_detectable_difference_gives_the_range_the_interval_allows() -> None:
    text = w.describe_difference(row(-0.050, -0.115, 0.013, p=0.07), "high", "low")
    assert text.startswith("high and low show no detectable difference")
    assert "the interval allows −0.115 to +0.013" in text
    assert "no worse" not in text and "holds" not in text
    assert w.prose_problems(text) == []


def test_a_corrected_loss_of_significance_is_said() -> None:
    text = w.describe_difference(
        row(0.034, 0.002, 0.066, p=0.02, q=0.156),
        "H+P_gb",
        "the best single model",
        family="the 12 comparisons of the table",
    )
    assert "no detectable difference after correction over the 12 comparisons" in text
    assert "q = 0.156 is not below 0.05" in text


def test_equivalence_needs_a_margin_and_an_interval_inside_it() -> None:
    inside = row(-0.01, -0.015, 0.012, p=0.4, margin=0.02)
    assert inside.verdict == w.EQUIVALENT
    assert "stated margin of ±0.020" in w.describe_difference(inside, "a", "b")
    # the same interval without a margin is only "no detectable difference"
    assert row(-0.01, -0.015, 0.012, p=0.4).verdict == w.NO_DIFFERENCE
    # an interval reaching past the margin is not equivalence
    assert row(-0.01, -0.115, 0.013, p=0.4, margin=0.02).verdict == w.NO_DIFFERENCE


def test_wins_and_losses_read_with_their_numbers() -> None:
    text = w.describe_difference(row(0.118, 0.075, 0.163, q=0.002), "H+P_gb", "the panel mean")
    assert text == "H+P_gb beats the panel mean (Δρ = +0.118 [+0.075, +0.163], q = 0.002)"
    loss = w.describe_difference(
        row(-0.04, -0.07, -0.01, p=1 / 10_001), "a", "b", n_resamples=10_000
    )
    assert loss.startswith("a falls below b") and "p ≤ 1/10,001" in loss


def test_proportions_are_written_in_points() -> None:
    assert w.points(0.0321) == "+3.2 points"
    assert w.points(-0.05) == "−5.0 points"
    assert w.points_interval(0.03, -0.01, 0.075) == "+3.0 points [−1.0, +7.5]"
    text = w.describe_difference(
        row(0.03, 0.01, 0.05, p=0.01), "vote", "single", symbol="Δ accuracy", in_points=True
    )
    assert "Δ accuracy = +3.0 points [+1.0, +5.0]" in text


def test_non_finite_numbers_never_reach_a_sentence() -> None:
    with pytest.raises(ValueError, match="cannot be written"):
        w.number(math.inf)
    with pytest.raises(ValueError, match="cannot be written"):
        w.number(math.nan)
    assert w.interval(0.636, math.inf) == "from 0.636 upward"
    assert w.interval(-math.inf, 0.2) == "up to 0.200"
    assert "inf" not in w.interval(-math.inf, math.inf)
    assert w.estimate(math.nan, 0.1, 0.2) == w.NOT_ESTIMABLE
    assert w.number(-0.0001, 3) == "0.000"
    assert w.number(-0.0001, 3, signed=True) == "+0.000"


def test_p_values_at_the_bootstrap_floor() -> None:
    assert w.p_value(1 / 201, n_resamples=200) == "p ≤ 1/201 (no resample went the other way)"
    assert w.p_value(2 / 201, n_resamples=200) == "p = 0.010"
    assert w.p_value(0.00004) == "p < 0.0001"
    assert w.p_value(0.0004, name="q") == "q = 0.0004"


def test_a_leader_stands_alone_only_when_separated() -> None:
    assert w.leader(["aurora", "dune", "ember"], [True, True]) == "aurora"
    assert w.leads_alone([True, True])
    tied = w.leader(["aurora", "dune", "ember"], [False, True])
    assert tied.startswith("aurora and dune (tied")
    assert not w.leads_alone([False, True])
    assert not w.leads_alone([])
    with pytest.raises(ValueError, match="one 'separated' per runner-up"):
        w.leader(["a", "b"], [])


def test_counts_use_one_convention() -> None:
    assert w.count(7, 15) == "7 of 15 with q < 0.05"
    assert w.count(7, 15, point=15, what="cells") == (
        "7 of 15 cells with q < 0.05 (15 of 15 by point estimate alone)"
    )
    with pytest.raises(ValueError, match="impossible"):
        w.count(16, 15)


def test_constant_rules_are_named() -> None:
    assert w.constant_rule(math.inf) == "the constant rule 'never a panel'"
    assert w.constant_rule(-math.inf) == "the constant rule 'always a panel'"
    assert w.constant_rule(0.4) is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("the unresolved band is [0.636, inf].", "non-finite"),
        ("its ρ is nan on this split.", "non-finite"),
        ("the gain is – here.", "dash"),
        ("high temperature is no worse than low.", "without a stated margin"),
        ("The rule holds on this data.", "without a stated margin"),
        ("the deployed score matches its estimate.", "'matches'"),
        ("the vote changes accuracy by +3.5% on average.", "points"),
        ("the families's means agree.", "plural"),
        ("the best judge, aurora, is tied with dune.", "beside a tie"),
    ],
)
def test_the_prose_check_finds_each_forbidden_form(text: str, problem: str) -> None:
    found = w.prose_problems(text)
    assert found and any(problem in f for f in found), found


@pytest.mark.parametrize(
    "text",
    [
        "aurora and dune are tied at 56.3%.",
        "high is equivalent to low within the stated margin of ±0.020; the claim holds.",
        "the interval allows −0.115 to +0.013.",
        "accuracy is 56.3% against 25.0% by chance.",
        "the families' means agree, from 0.636 upward.",
    ],
)
def test_the_prose_check_passes_good_sentences(text: str) -> None:
    assert w.prose_problems(text) == []


def test_percent_intervals() -> None:
    assert w.percent_interval(0.531, 0.692) == "[53.1%, 69.2%]"
    assert "inf" not in w.percent_interval(0.5, math.inf)


def test_an_interval_alone_names_no_direction() -> None:
    # an interval on the side the one-sided test did not look at decides nothing
    loss = w.Difference(-0.194, -0.328, -0.033, p=0.99, q=1.0, alternative="greater")
    assert loss.verdict == w.NO_GAIN  # never "no detectable difference": a loss was not sought
    text = w.describe_difference(loss, "H+P_gb", "the best single model")
    assert text.startswith("H+P_gb shows no detectable gain over the best single model")
    assert "the test looked for a gain only" in text and "falls below" not in text
    assert "difference" not in text.split("(")[0]
    drop = w.Difference(0.02, -0.01, 0.05, p=0.4, alternative="less")
    assert drop.verdict == w.NO_LOSS
    assert w.describe_difference(drop, "a", "b").startswith("a shows no detectable loss against b")
    # nor does an interval without any test
    untested = w.Difference(0.05, 0.01, 0.09)
    assert untested.verdict == w.NO_DIFFERENCE
    assert "an interval alone decides nothing" in w.describe_difference(untested, "a", "b")
    # in the tested direction the q still decides
    gain = w.Difference(0.03, 0.001, 0.06, p=0.02, q=0.2, alternative="greater")
    assert gain.verdict == w.NO_GAIN
    # "after correction" only where the raw p passed and the correction stopped it
    assert "after correction" in w.describe_difference(gain, "a", "b")
    raw_fails = w.Difference(0.03, 0.001, 0.06, p=0.07, q=0.2, alternative="greater")
    assert "after correction" not in w.describe_difference(raw_fails, "a", "b")
    with pytest.raises(ValueError, match="alternative"):
        w.Difference(0.0, 0.0, 0.0, alternative="bigger")


def test_a_difference_reads_a_table_row() -> None:
    import pandas as pd

    table = pd.DataFrame(
        [{"delta": 0.1, "ci_low": 0.05, "ci_high": 0.15, "p": 0.01, "q": float("nan")}]
    )
    r = next(table.itertuples())
    d = w.Difference.of(r, alternative="greater")
    assert (d.delta, d.low, d.high, d.p, d.q, d.alternative) == (
        0.1,
        0.05,
        0.15,
        0.01,
        None,
        "greater",
    )
    assert w.Difference.of(table.iloc[0], q=0.2).verdict == w.NO_DIFFERENCE


def test_separation_from_the_leader_reads_a_pair_table() -> None:
    import pandas as pd

    pairs = pd.DataFrame(
        {
            "judge_a": ["aurora", "aurora", "dune"],
            "judge_b": ["dune", "ember", "ember"],
            "q": [0.93, 0.01, 0.2],
        }
    )
    sep = w.separated_from_leader(["aurora", "dune", "ember"], pairs)
    assert sep == [False, True]
    assert w.leader(["aurora", "dune", "ember"], sep).startswith("aurora and dune (tied")
    # a pair the table lacks is not separated; pairs may be listed either way round
    assert w.separated_from_leader(["ember", "aurora", "zeta"], pairs) == [True, False]


def test_a_quotation_is_left_as_written() -> None:
    assert w.prose_problems("The file says:\n\n> the claim holds when it is no worse.") == []


def test_relative_changes_may_be_percentages_and_matched_is_not_matches() -> None:
    assert w.prose_problems("As a share of the rounded value it is +10.8%.") == []
    assert w.prose_problems("the matched dimension prompt wins.") == []


def test_the_best_image_is_no_ranking_claim() -> None:
    text = "aurora and dune (tied: no test separates them); aurora picks the best image."
    assert w.prose_problems(text) == []
    assert w.prose_problems("the best direct judge, aurora, is tied with dune.")


def test_a_numbers_hyphen_sign_becomes_a_true_minus_and_nothing_else_does() -> None:
    assert w.true_minus("runs from -2 points; CI [-0.220, +0.203] (-0.5)") == (
        "runs from −2 points; CI [−0.220, +0.203] (−0.5)"
    )
    for kept in ("linear 1-10 -> 1-5", "2026-12-06", "q = 1e-05", "x=-1", "alt-test-3",
                 "--missing-images", 'data-claim="r.02.a-1"'):  # fmt: skip
        assert w.true_minus(kept) == kept
