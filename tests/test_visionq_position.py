"""VisionQ's position tests on hand-made predictions: the gold-last comparison within strata
of the number of panels, the paper-clustered tests, and the claims they become."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgepanel.claims.rows import NOT_TESTED
from judgepanel.claims.wording import BEATS, NO_DIFFERENCE, NOT_ESTIMABLE, Difference
from judgepanel.stats import group_seed
from judgepanel.studies.visionq import (
    ABOVE_CHANCE,
    JUDGE_PAIRS,
    LAST_PANEL,
    LAST_SHARE,
    LETTER_FIT,
    chance_claims,
    chance_test,
    correction_families,
    judge_pair_claims,
    judge_pairs,
    last_letter_accuracy,
    last_letter_strata,
    last_panel_claims,
    last_share_claims,
    leader_claim,
    leader_test,
    letter_fit_claims,
    mantel_haenszel_difference,
    paper_sums,
    position_bias,
)

COLUMNS = ["id", "pred", "gold", "n_choices", "axis", "leaf", "paper"]


def _wrong(gold: str, n: int) -> str:
    """A letter of the question that is not ``gold``."""
    letters = "ABCD"[:n]
    return letters[(letters.index(gold) + 1) % n]


def _confounded(n_papers: int = 20) -> pd.DataFrame:
    """Accuracy depends on the number of panels only, never on where the gold answer is:
    two-panel papers (the gold answer mostly last) are right 3 times in 4 in both groups,
    four-panel papers (the gold answer mostly elsewhere) once in 4 in both groups. So the
    raw gold-last difference is large and comes from the panel counts alone."""
    rows = []
    for p in range(n_papers):
        n = 2 if p % 2 == 0 else 4
        # (gold last?, questions, of which right)
        groups = [(True, 8, 6), (False, 4, 3)] if n == 2 else [(True, 4, 1), (False, 12, 3)]
        for last, count, right in groups:
            for i in range(count):
                gold = "ABCD"[n - 1] if last else "ABCD"[i % (n - 1)]
                pred = gold if i < right else _wrong(gold, n)
                rows.append((f"p{p}-{int(last)}-{i}", pred, gold, n, "X", "L", f"paper{p:02d}"))
    return pd.DataFrame(rows, columns=COLUMNS)


def _pulled(seed: int, n: int = 120, papers: int = 15, pull: float = 0.3) -> pd.DataFrame:
    """Random questions of 2 to 4 panels whose judge answers the last panel with ``pull``."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        k = int(rng.integers(2, 5))
        gold = "ABCD"[int(rng.integers(k))]
        pred = gold if rng.random() < 0.5 else "ABCD"[int(rng.integers(k))]
        if rng.random() < pull:
            pred = "ABCD"[k - 1]
        rows.append((f"q{i}", pred, gold, k, "X", "L", f"paper{int(rng.integers(papers)):02d}"))
    return pd.DataFrame(rows, columns=COLUMNS)


def _twice(frame: pd.DataFrame) -> pd.DataFrame:
    """Every question again, in its own paper, under another id."""
    return pd.concat([frame, frame.assign(id=frame["id"] + "-again")], ignore_index=True)


def test_mantel_haenszel_by_hand():
    # stratum 1: 3/4 against 1/4, weight 4*4/8 = 2; stratum 2: 2/2 against 1/6, weight 1.5
    d = mantel_haenszel_difference([3, 2], [4, 2], [1, 1], [4, 6])
    assert float(d) == pytest.approx((2 * 0.5 + 1.5 * (1 - 1 / 6)) / 3.5)
    # a stratum lacking a group weighs nothing; none with both groups: not estimable
    assert float(mantel_haenszel_difference([3, 5], [4, 5], [1, 0], [4, 0])) == pytest.approx(0.5)
    assert math.isnan(float(mantel_haenszel_difference([1], [2], [0], [0])))
    # the strata are the last axis: one difference per row of a (resamples x strata) array
    rows = mantel_haenszel_difference([[3, 2], [1, 1]], [[4, 2], [2, 2]], [[1, 1], [1, 1]],
                                      [[4, 6], [2, 2]])  # fmt: skip
    assert rows.shape == (2,) and rows[1] == 0.0


def test_a_raw_difference_from_panel_counts_alone_is_no_verdict():
    frame = _confounded()
    row = last_letter_accuracy(frame, n_resamples=500, seed=1).iloc[0]
    # the groups differ in chance accuracy, and so in raw accuracy
    assert row["chance_gold_last"] > row["chance_gold_other"]
    assert row["raw_delta"] == pytest.approx(7 / 12 - 6 / 16)
    assert row["raw_ci_low"] > 0
    raw = Difference(row["raw_delta"], row["raw_ci_low"], row["raw_ci_high"], p=row["raw_p"])
    assert raw.verdict == BEATS
    # within each number of panels the two groups are equally accurate, in every resample
    assert (row["delta"], row["ci_low"], row["ci_high"], row["p"]) == (0.0, 0.0, 0.0, 1.0)
    (claim,) = last_panel_claims(row.to_frame().T, dataset="toy")
    assert claim.verdict == NO_DIFFERENCE
    assert claim.id == "last-panel:the_judge" and claim.family == LAST_PANEL
    assert "unstratified difference +20.8 points" in claim.note
    strata = last_letter_strata(frame).set_index("n_choices")
    assert strata["delta"].tolist() == [0.0, 0.0]
    assert strata["chance"].tolist() == [0.5, 0.25]
    # weights n_last n_other / (n_last + n_other) over 10 papers of each kind: 80*40/120 and
    # 40*120/160, as shares
    w2, w4 = 80 * 40 / 120, 40 * 120 / 160
    assert strata["weight"].tolist() == pytest.approx([w2 / (w2 + w4), w4 / (w2 + w4)])


def test_stratified_interval_and_p_equal_a_naive_loop_over_papers():
    frame = _pulled(5)
    b, seed = 300, 4
    row = last_letter_accuracy(frame, n_resamples=b, seed=seed).iloc[0]
    checked = frame.assign(
        last=[g == "ABCD"[n - 1] for g, n in zip(frame["gold"], frame["n_choices"], strict=True)],
        correct=frame["pred"] == frame["gold"],
    )
    labels = np.unique(checked["paper"])
    per_paper = {p: checked[checked["paper"] == p] for p in labels}
    rng = np.random.default_rng(group_seed((), seed))  # one judge, no judge column
    draws = rng.integers(0, len(labels), size=(b, len(labels)))
    found = []
    for draw in draws:
        sample = pd.concat([per_paper[labels[j]] for j in draw])
        num = den = 0.0
        for _, s in sample.groupby("n_choices"):
            last, other = s[s["last"]], s[~s["last"]]
            if len(last) and len(other):
                w = len(last) * len(other) / len(s)
                num += w * (last["correct"].mean() - other["correct"].mean())
                den += w
        found.append(num / den if den else np.nan)
    d = np.array(found)
    d = d[np.isfinite(d)]
    d[np.abs(d) < 1e-12] = 0.0
    greater = (1 + np.sum(d <= 0)) / (d.size + 1)
    less = (1 + np.sum(d >= 0)) / (d.size + 1)
    assert row["ci_low"] == pytest.approx(np.percentile(d, 2.5), abs=1e-12)
    assert row["ci_high"] == pytest.approx(np.percentile(d, 97.5), abs=1e-12)
    assert row["p"] == pytest.approx(min(1.0, 2 * min(greater, less)))


def test_duplicating_every_question_of_a_paper_shrinks_no_interval():
    frame = _pulled(7)
    twice = _twice(frame)
    kw = {"n_resamples": 400, "seed": 2}
    once_row, twice_row = (last_letter_accuracy(f, **kw).iloc[0] for f in (frame, twice))
    for col in ("delta", "ci_low", "ci_high", "p", "raw_delta", "raw_ci_low", "raw_ci_high"):
        assert twice_row[col] == pytest.approx(once_row[col], abs=1e-12), col
    # resampling questions instead would take the copies for new evidence
    by_question = [
        last_letter_accuracy(f.assign(paper=f["id"]), **kw).iloc[0] for f in (frame, twice)
    ]
    widths = [r["ci_high"] - r["ci_low"] for r in by_question]
    assert widths[1] < 0.85 * widths[0]
    once_bias, twice_bias = (position_bias(f, **kw).iloc[0] for f in (frame, twice))
    for col in ("last_excess", "last_excess_ci_low", "last_excess_ci_high", "fit_p"):
        assert twice_bias[col] == pytest.approx(once_bias[col], abs=1e-12), col
    assert twice_bias["chi2"] == pytest.approx(2 * once_bias["chi2"])
    assert twice_bias["chi2_p"] < once_bias["chi2_p"]


def test_letter_fit_over_papers():
    b = 200
    right = _pulled(3, pull=0.0).assign(pred=lambda f: f["gold"])
    assert position_bias(right, n_resamples=b).iloc[0]["fit_p"] == 1.0
    # always the last panel, in every paper: no sign flip of papers comes near it
    last = _pulled(3, papers=30).assign(pred=lambda f: ["ABCD"[n - 1] for n in f["n_choices"]])
    row = position_bias(last, n_resamples=b).iloc[0]
    assert row["fit_p"] == pytest.approx(1 / (b + 1))
    assert row["last_excess_ci_low"] > 0 and row["last_excess_p"] == pytest.approx(2 / (b + 1))
    # a letter that is never the gold answer: the chi-square has no fit, this test has a p
    never = pd.DataFrame(
        [(f"q{i}", "C", "AB"[i % 2], 3, "X", "L", f"p{i % 5}") for i in range(20)], columns=COLUMNS
    )
    row = position_bias(never, n_resamples=b).iloc[0]
    assert math.isinf(row["chi2"]) and 0 < row["fit_p"] <= 1


def test_position_claims_carry_ids_families_and_q():
    frame = pd.concat(
        [_pulled(1).assign(judge="aurora"), _pulled(2, pull=0.0).assign(judge="basalt")]
    )
    # a judge asked only questions whose gold answer is last has nothing to compare
    only_last = _pulled(3).assign(
        judge="cobalt", gold=lambda f: ["ABCD"[n - 1] for n in f["n_choices"]]
    )
    frame = pd.concat([frame, only_last], ignore_index=True)
    assert [f.name for f in correction_families()] == [
        ABOVE_CHANCE, JUDGE_PAIRS, LAST_PANEL, LAST_SHARE, LETTER_FIT,
    ]  # fmt: skip
    last = last_letter_accuracy(frame, n_resamples=200, seed=0)
    claims = last_panel_claims(last, dataset="toy")
    assert [c.id for c in claims] == ["last-panel:aurora", "last-panel:basalt", "last-panel:cobalt"]
    assert [c.family for c in claims] == [LAST_PANEL, LAST_PANEL, ""]
    assert claims[2].verdict == NOT_ESTIMABLE and math.isnan(last["q"].iloc[2])
    assert [c.q for c in claims[:2]] == pytest.approx(last["q"].iloc[:2].tolist())
    assert all(c.unit == "papers" and c.in_points for c in claims)
    bias = position_bias(frame, n_resamples=200, seed=0)
    shares = last_share_claims(bias, dataset="toy")
    assert [c.id for c in shares] == ["last-share:aurora", "last-share:basalt", "last-share:cobalt"]
    assert [c.q for c in shares] == pytest.approx(bias["last_excess_q"].tolist())
    assert shares[0].estimate == pytest.approx(bias["last_excess"].iloc[0])


def test_the_letter_fit_is_a_row_of_its_own_one_sided_with_its_distance():
    frame = pd.concat(
        [_pulled(1, papers=30).assign(judge="aurora"),
         _pulled(2, pull=0.0).assign(judge="basalt", pred=lambda f: f["gold"])],
        ignore_index=True,
    )  # fmt: skip
    bias = position_bias(frame, n_resamples=300, seed=0)
    fits = letter_fit_claims(bias, dataset="toy")
    assert [c.id for c in fits] == ["letter-fit:aurora", "letter-fit:basalt"]
    assert all(c.family == LETTER_FIT and c.alternative == "greater" for c in fits)
    assert [c.p for c in fits] == pytest.approx(bias["fit_p"].tolist())
    assert [c.q for c in fits] == pytest.approx(bias["fit_q"].tolist())
    # the distance's interval comes from the same paper draws: a judge always right has
    # no distance in any resample
    right = bias.set_index("judge").loc["basalt"]
    assert (right.tv, right.tv_ci_low, right.tv_ci_high) == (0.0, 0.0, 0.0)
    assert fits[1].verdict != BEATS
    pulled = bias.set_index("judge").loc["aurora"]
    assert pulled.tv_ci_low <= pulled.tv <= pulled.tv_ci_high and pulled.tv > 0


def test_judges_are_compared_on_resampled_papers_never_on_questions():
    """The judges against chance, against each other and the leader all resample papers:
    repeating every question of a paper leaves their intervals and p as they are, which a
    test counting questions as independent (McNemar) would shrink."""
    base = pd.concat(
        [_pulled(1, papers=12).assign(judge="aurora"),
         _pulled(1, papers=12, pull=0.0).assign(judge="basalt", pred=lambda f: f["gold"]),
         _pulled(1, papers=12, pull=0.6).assign(judge="cobalt")],
        ignore_index=True,
    )  # fmt: skip
    doubled = pd.concat([base, base.assign(id=base["id"] + "-again")], ignore_index=True)
    correct, asked, judges = paper_sums(base)
    assert judges == ["aurora", "basalt", "cobalt"] and asked.shape == (12, 3)
    assert correct[:, 1].sum() == asked[:, 1].sum()  # basalt is always right
    one, two = (judge_pairs(f, n_resamples=300, seed=0) for f in (base, doubled))
    cols = ["a", "b", "delta", "ci_low", "ci_high", "p"]
    pd.testing.assert_frame_equal(one[cols], two[cols])
    assert (one["delta"] >= 0).all() and set(one["a"]) >= {"basalt"}
    claims = judge_pair_claims(one, dataset="toy")
    assert all(c.family == JUDGE_PAIRS and c.in_points for c in claims)
    assert claims[0].id == f"judge-pairs:{one['a'].iloc[0]}-vs-{one['b'].iloc[0]}"
    lead = leader_test(base, n_resamples=300, seed=0)
    lead2 = leader_test(doubled, n_resamples=300, seed=0)
    assert lead.leader == "basalt" and (lead.margin, lead.p) == pytest.approx(
        (lead2.margin, lead2.p)
    )
    row = leader_claim(lead, dataset="toy")
    assert row.kind == "best-of" and row.family == "" and row.unit == "papers"
    chance = chance_test(base, n_resamples=300, seed=0).set_index("judge")
    chance2 = chance_test(doubled, n_resamples=300, seed=0).set_index("judge")
    pd.testing.assert_frame_equal(
        chance[["delta", "ci_low", "ci_high", "p"]], chance2[["delta", "ci_low", "ci_high", "p"]]
    )
    assert chance.loc["basalt", "delta"] == pytest.approx(1 - chance.loc["basalt", "chance"])
    rows = chance_claims(chance.reset_index(), dataset="toy")
    assert rows[1].verdict == BEATS and all(c.family == ABOVE_CHANCE for c in rows)
    assert NOT_TESTED not in {c.verdict for c in rows}
