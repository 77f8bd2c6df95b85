"""VisionQ analyses (accuracy, position, judge pairs, rotations) on hand-made predictions."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from judgepanel.stats import group_seed
from judgepanel.studies.visionq.accuracy import accuracy_table, count_answers, per_axis_accuracy
from judgepanel.studies.visionq.position import (
    last_letter_accuracy,
    letter_frequencies,
    position_bias,
    shown_letters,
)
from judgepanel.studies.visionq.predictions import check_predictions, predictions_from_store
from judgepanel.studies.visionq.rotation import rotation_debiasing, rotation_vote
from judgepanel.studies.visionq.verdicts import judge_pairs


def _preds(rows: list[tuple], **extra) -> pd.DataFrame:
    cols = ["id", "pred", "gold", "n_choices", "axis", "leaf", "paper"]
    frame = pd.DataFrame(rows, columns=cols)
    for k, v in extra.items():
        frame[k] = v
    return frame


FOUR = _preds(
    [
        ("q1", "A", "A", 2, "Image Appearance", "Blur", "p1"),
        ("q2", None, "B", 4, "Image Appearance", "Noise", "p1"),
        ("q3", "(c)", "C", 4, "Object Form", "Detail", "p2"),
        ("q4", "B", "(A)", 2, "Object Form", "Detail", "p3"),
    ]
)


def test_accuracy_divides_by_all_questions():
    row = accuracy_table(FOUR, n_resamples=200).iloc[0]
    assert row["n"] == 4 and row["n_correct"] == 2 and row["n_unparsed"] == 1
    assert row["accuracy"] == pytest.approx(0.5)  # not 2/3 over answered questions
    assert row["n_papers"] == 3


def test_chance_and_normalised_accuracy():
    row = accuracy_table(FOUR, n_resamples=200).iloc[0]
    chance = np.mean([1 / 2, 1 / 4, 1 / 4, 1 / 2])
    assert row["chance"] == pytest.approx(0.375)
    assert row["normalised"] == pytest.approx((0.5 - chance) / (1 - chance))
    assert row["normalised"] == pytest.approx(0.2)


def test_per_axis_uses_the_same_denominator():
    table = per_axis_accuracy(FOUR, n_resamples=100).set_index("axis")
    assert table.loc["Image Appearance", "accuracy"] == pytest.approx(0.5)
    assert table.loc["Image Appearance", "n"] == 2
    assert table.loc["Object Form", "accuracy"] == pytest.approx(0.5)


def test_wilson_matches_statsmodels():
    rng = np.random.default_rng(4)
    rows = []
    for i in range(37):
        gold = "ABC"[i % 3]
        rows.append((f"q{i}", gold if rng.random() < 0.6 else "A", gold, 3, "X", "L", f"p{i % 7}"))
    frame = _preds(rows)
    for conf in (0.95, 0.9):
        row = accuracy_table(frame, n_resamples=50, confidence=conf).iloc[0]
        lo, hi = proportion_confint(row["n_correct"], 37, alpha=1 - conf, method="wilson")
        assert row["wilson_ci_low"] == pytest.approx(lo, abs=1e-12)
        assert row["wilson_ci_high"] == pytest.approx(hi, abs=1e-12)


def _random_frame(seed: int, n: int = 60, papers: int = 9) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        k = int(rng.integers(2, 5))
        gold = "ABCD"[int(rng.integers(k))]
        pred = gold if rng.random() < 0.55 else "ABCD"[int(rng.integers(k))]
        rows.append((f"q{i}", pred, gold, k, "X", "L", f"paper{int(rng.integers(papers)):02d}"))
    return _preds(rows)


def test_paper_bootstrap_equals_a_naive_loop():
    frame = _random_frame(11)
    b, seed = 300, 7
    row = accuracy_table(frame, n_resamples=b, seed=seed).iloc[0]
    checked = check_predictions(frame)
    labels = np.unique(checked["paper"])
    per_paper = {p: checked[checked["paper"] == p] for p in labels}
    # one judge, no grouping: the group's key is empty, its seed derived from it
    rng = np.random.default_rng(group_seed((), seed))
    draws = rng.integers(0, len(labels), size=(b, len(labels)))
    accs, norms = [], []
    for draw in draws:
        sample = pd.concat([per_paper[labels[j]] for j in draw])
        acc = sample["correct"].mean()
        chance = (1.0 / sample["n_choices"]).mean()
        accs.append(acc)
        norms.append((acc - chance) / (1 - chance))
    assert row["ci_low"] == pytest.approx(np.percentile(accs, 2.5), abs=1e-12)
    assert row["ci_high"] == pytest.approx(np.percentile(accs, 97.5), abs=1e-12)
    assert row["normalised_ci_low"] == pytest.approx(np.percentile(norms, 2.5), abs=1e-12)
    assert row["normalised_ci_high"] == pytest.approx(np.percentile(norms, 97.5), abs=1e-12)


def test_a_judge_interval_does_not_move_when_another_judge_joins():
    alone = _random_frame(12).assign(judge="basalt")
    both = pd.concat([_random_frame(13).assign(judge="aurora"), alone])
    one = accuracy_table(alone, n_resamples=300, seed=2)
    two = accuracy_table(both, n_resamples=300, seed=2)
    pd.testing.assert_frame_equal(one, two[two["judge"] == "basalt"].reset_index(drop=True))


def test_a_single_paper_gives_a_zero_width_interval():
    frame = _random_frame(3, n=12)
    frame["paper"] = "only_paper"
    row = accuracy_table(frame, n_resamples=100).iloc[0]
    assert row["n_papers"] == 1
    assert row["ci_low"] == pytest.approx(row["accuracy"])
    assert row["ci_high"] == pytest.approx(row["accuracy"])


def test_letter_frequencies_and_last_letter():
    frame = _preds(
        [
            ("q1", "C", "A", 3, "X", "L", "p"),
            ("q2", "C", "C", 3, "X", "L", "p"),
            ("q3", None, "C", 3, "X", "L", "p"),
            ("q4", "A", "B", 3, "X", "L", "p"),
        ]
    )
    freq = letter_frequencies(frame).set_index("letter")
    assert freq["pred_share"].to_dict() == {"A": 0.25, "B": 0.0, "C": 0.5, "unparsed": 0.25}
    assert freq["gold_share"].to_dict() == {"A": 0.25, "B": 0.25, "C": 0.5, "unparsed": 0.0}
    assert freq["pred_share"].sum() == pytest.approx(1.0)
    last = last_letter_accuracy(frame).iloc[0]
    assert (last["n_gold_last"], last["acc_gold_last"]) == (2, 0.5)
    assert (last["n_gold_other"], last["acc_gold_other"]) == (2, 0.0)
    bias = position_bias(frame).iloc[0]
    assert bias["last_excess"] == pytest.approx(0.0)
    assert bias["tv"] == pytest.approx(0.5 * (0 + 0.25 + 0 + 0.25))


def test_judge_pairs_on_a_known_table():
    # a right & b right: 5, a only: 7, b only: 1, neither: 3; a paper per question
    outcome = [(1, 1)] * 5 + [(1, 0)] * 7 + [(0, 1)] * 1 + [(0, 0)] * 3
    rows = []
    for i, (ca, cb) in enumerate(outcome):
        for judge, c in (("b", cb), ("a", ca)):
            rows.append((f"q{i}", "A" if c else "B", "A", 2, "X", "L", f"p{i}", judge))
    frame = pd.DataFrame(
        rows, columns=["id", "pred", "gold", "n_choices", "axis", "leaf", "paper", "judge"]
    )
    res = judge_pairs(frame, n_resamples=500, seed=0).iloc[0]
    assert (res["a"], res["b"]) == ("a", "b")  # the higher accuracy first
    assert res["delta"] == pytest.approx(12 / 16 - 6 / 16)
    assert (res["value_a"], res["value_b"]) == pytest.approx((12 / 16, 6 / 16))
    assert 0 < res["ci_low"] < res["delta"] < res["ci_high"]
    assert res["q"] == pytest.approx(res["p"]) and res["p"] < 0.05


def test_judge_pair_q_values_follow_bh():
    rng = np.random.default_rng(0)
    rows = []
    for judge, skill in (("a", 0.9), ("b", 0.5), ("c", 0.45)):
        for i in range(80):
            pred = "A" if rng.random() < skill else "B"
            rows.append((f"q{i}", pred, "A", 2, "X", "L", f"p{i % 10}", judge))
    frame = pd.DataFrame(
        rows, columns=["id", "pred", "gold", "n_choices", "axis", "leaf", "paper", "judge"]
    )
    table = judge_pairs(frame, n_resamples=500, seed=0)
    from statsmodels.stats.multitest import multipletests

    assert np.allclose(table["q"], multipletests(table["p"], method="fdr_bh")[1])
    assert len(table) == 3 and (table["delta"] >= 0).all()


def test_shown_letters_follow_the_rotation():
    frame = _preds([("q1", "B", "C", 3, "X", "L", "p")] * 3, rotation=[0, 1, 2])
    shown = shown_letters(frame)
    assert shown["gold_shown"].tolist() == ["C", "B", "A"]
    assert shown["pred_shown"].tolist() == ["B", "A", "C"]


def test_rotation_vote_majority_ties_and_abstentions():
    rows = [
        # q1: A, A, C -> A
        ("q1", "A", "A", 3, 0),
        ("q1", "A", "A", 3, 1),
        ("q1", "C", "A", 3, 2),
        # q2: a tie between B and C, broken by a seeded draw
        ("q2", None, "B", 3, 0),
        ("q2", "C", "B", 3, 1),
        ("q2", "B", "B", 3, 2),
        # q3: nothing parsed
        ("q3", None, "A", 2, 0),
        ("q3", None, "A", 2, 1),
    ]
    frame = pd.DataFrame(rows, columns=["id", "pred", "gold", "n_choices", "rotation"])
    frame["axis"], frame["leaf"], frame["paper"] = "X", "L", "p"
    vote = rotation_vote(frame).set_index("id")
    assert vote.loc["q1", "pred"] == "A" and not vote.loc["q1", "tie"]
    assert vote.loc["q2", "pred"] in ("B", "C") and vote.loc["q2", "tie"]
    assert pd.isna(vote.loc["q3", "pred"]) and vote.loc["q3", "n_votes"] == 0
    assert vote["k"].tolist() == [3, 3, 2]
    assert rotation_vote(frame).equals(rotation_vote(frame)), "ties are drawn reproducibly"


def test_vote_ties_do_not_favour_a_slot():
    # 400 two-choice questions, each split 1-1 across its two rotations.
    rows = []
    for i in range(400):
        rows += [(f"q{i}", "A", "A", 2, 0), (f"q{i}", "B", "A", 2, 1)]
    frame = pd.DataFrame(rows, columns=["id", "pred", "gold", "n_choices", "rotation"])
    frame["axis"], frame["leaf"], frame["paper"] = "X", "L", "p"
    share_a = [(rotation_vote(frame, seed=s)["pred"] == "A").mean() for s in (0, 1)]
    assert all(0.42 < x < 0.58 for x in share_a), share_a
    assert share_a[0] != share_a[1], "the seed changes the draws"


def test_rotation_debiasing_removes_a_pure_last_letter_bias():
    # A judge that is right in every rotation except that it answers the last slot when
    # the gold is in slot A; its single-call bias shows, its vote recovers the gold.
    rows = []
    for i in range(30):
        n = 3
        gold = "ABC"[i % 3]
        for r in range(n):
            gold_slot = ("ABC".index(gold) - r) % n
            shown = "C" if gold_slot == 0 else "ABC"[gold_slot]
            pred = "ABC"[("ABC".index(shown) + r) % n]
            rows.append((f"q{i}", pred, gold, n, "X", "L", f"p{i % 6}", r))
    frame = pd.DataFrame(
        rows, columns=["id", "pred", "gold", "n_choices", "axis", "leaf", "paper", "rotation"]
    )
    table = rotation_debiasing(frame, n_resamples=100).set_index("protocol")
    assert table.loc["single", "accuracy"] == pytest.approx(2 / 3)
    assert table.loc["single", "last_excess"] == pytest.approx(1 / 3)
    assert table.loc["vote", "accuracy"] == pytest.approx(1.0)
    assert table.loc["vote", "last_excess"] == pytest.approx(0.0)
    assert table.loc["vote", "calls"] == 90 and table.loc["single", "calls"] == 30
    assert table.loc["vote", "delta"] == pytest.approx(1 / 3)


def test_bad_predictions_are_named():
    bad = FOUR.copy()
    bad.loc[0, "gold"] = "C"
    with pytest.raises(ValueError, match="question 'q1': gold 'C' is not one of AB"):
        check_predictions(bad)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['paper'\]"):
        check_predictions(FOUR.drop(columns="paper"))


def test_a_letter_outside_the_choices_is_a_wrong_answer_and_counted():
    """Another harness may record "E" on a four-panel question: it is wrong, as an
    unreadable answer is, and the coverage table says how many there were."""
    outside = FOUR.copy()
    outside.loc[2, "pred"] = "(E)"  # q3 has four choices, A-D
    outside.loc[0, "pred"] = "c"  # q1 has two, A-B
    checked = check_predictions(outside)
    assert checked["out_of_range"].tolist() == [True, False, True, False]
    assert not checked["correct"].any() and checked["pred"].isna().sum() == 3
    assert check_predictions(checked)["out_of_range"].sum() == 2  # checking again keeps them
    row = accuracy_table(outside, n_resamples=50).iloc[0]
    assert row["n"] == 4 and row["n_correct"] == 0 and row["accuracy"] == 0.0
    counts = count_answers(outside).iloc[0]
    assert (counts.calls, counts.parsed, counts.unparsed, counts.out_of_range) == (4, 1, 1, 2)
    assert count_answers(FOUR).iloc[0].out_of_range == 0


def test_predictions_from_store_keeps_every_question():
    questions = pd.DataFrame(
        {
            "id": ["q1", "q2"],
            "gold": ["A", "B"],
            "n_choices": [2, 3],
            "axis": ["X", "Y"],
            "leaf": ["L", "M"],
            "paper_id": ["p1", "p2"],
        }
    )
    calls = pd.DataFrame(
        [
            ("visionq", "q1", "aurora", 0, "ok", json.dumps({"letter": "A", "shown": "A"})),
            ("visionq", "q1", "aurora", 1, "ok", json.dumps({"letter": "B", "shown": "A"})),
            ("visionq", "q2", "aurora", 0, "failed", None),
            ("visionq", "q1", "basalt", 0, "ok", json.dumps({"letter": "B", "shown": "B"})),
        ],
        columns=["kind", "item", "family", "repetition", "status", "parsed"],
    )
    preds = predictions_from_store(calls, questions)
    assert len(preds) == 2 * (2 + 1)  # q1 at rotations 0 and 1, q2 at rotation 0, per judge
    got = preds.set_index(["judge", "id", "rotation"])
    assert pd.isna(got.loc[("aurora", "q2", 0), "pred"])
    assert pd.isna(got.loc[("basalt", "q1", 1), "pred"])
    assert not got.loc[("basalt", "q2", 0), "answered"]
    acc = accuracy_table(preds, n_resamples=50).set_index("judge")["accuracy"]
    assert acc.to_dict() == {"aurora": 0.5, "basalt": 0.0}
