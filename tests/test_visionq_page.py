"""The VisionQ page's helpers and figures, on the official harness's fixture and small
hand-made tables."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from judgepanel.claims.rows import Claim
from judgepanel.studies import visionq
from judgepanel.studies.visionq import figures, page

FIX = Path(__file__).parent / "fixtures" / "official"
VQ = FIX / "test_questions_or_sim-aurora-v1_p1.jsonl"


def _two_files(tmp_path: Path) -> list[Path]:
    """The fixture and a second judge, right on every question, in the harness's format."""
    other = tmp_path / "test_questions_or_sim-basalt-v1_p1.jsonl"
    rows = [json.loads(line) for line in VQ.read_text().splitlines()]
    for r in rows:
        r["pred_letter"], r["status"] = r["gold_letter"], "ok"
    other.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return [VQ, other]


def test_imported_answers_name_their_judges_and_their_questions(tmp_path):
    answers = page.read_answers(
        None, families={}, rotations=1, seed=0, predictions=_two_files(tmp_path)
    )
    assert answers.imported
    assert answers.families == {
        "or_sim-aurora-v1_p1": "or_sim-aurora-v1_p1",
        "or_sim-basalt-v1_p1": "or_sim-basalt-v1_p1",
    }
    assert len(answers.questions) == 8 and set(answers.questions["id"]) == set(
        answers.predictions["id"]
    )


def test_the_leader_is_a_headline_row_and_intervals_widen_by_their_ratio(tmp_path):
    preds = visionq.load_predictions(_two_files(tmp_path))
    test, claim = page.leader(preds, dataset="vq", n_resamples=200, seed=0)
    assert test.leader == "or_sim-basalt-v1_p1" and claim.role == "headline"
    overall = pd.DataFrame(
        {
            "ci_low": [0.2, 0.4],
            "ci_high": [0.6, 0.6],
            "wilson_ci_low": [0.3, 0.45],
            "wilson_ci_high": [0.5, 0.55],
        }
    )
    assert page.interval_widening(overall) == pytest.approx(2.0)


def test_row_words_name_each_judge_with_its_shares():
    bias = pd.DataFrame({"judge": ["a"], "pred_last_share": [0.5], "gold_last_share": [0.25]})
    claim = Claim(
        id="c",
        a="a",
        b="b",
        dataset="d",
        metric="m",
        unit="papers",
        estimate=0.25,
        ci_low=0.1,
        ci_high=0.4,
        p=0.01,
    )
    assert page.last_share_words(bias, [claim]) == {
        "c": {
            "a": "a's share of last-panel answers (50.0%)",
            "b": "the share of questions whose gold answer is last (25.0%)",
        }
    }
    words = page.last_panel_words(bias, [claim])["c"]
    assert words["a"] == "a's accuracy with the gold answer in the last panel"


def test_the_figures_draw_one_panel_per_axis_and_per_number_of_choices(tmp_path):
    preds = visionq.load_predictions(_two_files(tmp_path))
    overall = visionq.accuracy_table(preds, rotation=0, n_resamples=200, seed=0)
    overall = overall.sort_values("accuracy", ascending=False).reset_index(drop=True)
    axis = visionq.per_axis_accuracy(preds, rotation=0, n_resamples=200, seed=0)
    fig = figures.axis_figure(overall, axis)
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == 1 + axis["axis"].nunique()
    assert shown[0].get_title().startswith("Overall\n8 questions")
    # the best judge on top: the overall order, at falling heights
    assert [t.get_text() for t in shown[0].get_yticklabels()] == overall["judge"].tolist()
    assert list(shown[0].get_yticks()) == [1, 0]
    letters = visionq.letter_frequencies(preds, rotation=0)
    fig = figures.letter_figure(letters, {"or_sim-basalt-v1_p1": "#123456"})
    assert len(fig.axes) == letters["n_choices"].nunique()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels[0] == "(A)"
