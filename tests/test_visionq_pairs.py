"""Symmetric evidence preference pairs: built from metadata alone, split by paper."""

from __future__ import annotations

import json

import pytest

from judgepanel.cli import main
from judgepanel.datasets.visionq import load_questions
from judgepanel.studies.visionq.pairs import (
    asymmetric_pairs,
    build_pairs,
    paper_split,
    shared_papers,
)
from judgepanel_sim.world.visionq import write_visionq

# The module's fixtures are built once, by the one worker that runs every test here
# (spread over two workers, each built them).
pytestmark = pytest.mark.xdist_group("visionq-pairs")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("vq") / "bench"
    write_visionq(root, 11, n_papers=16)
    return root


def test_the_two_responses_differ_only_in_the_letter(bench):
    questions = load_questions(bench)
    pairs = build_pairs(questions).pairs
    assert len(pairs) == int((questions["n_choices"] - 1).sum())  # one pair per wrong letter
    for row in pairs.itertuples():
        assert row.chosen_letter != row.rejected_letter
        assert row.chosen.replace(f"({row.chosen_letter})", "(?)") == row.rejected.replace(
            f"({row.rejected_letter})", "(?)"
        )
        assert len(row.chosen) == len(row.rejected)
        assert row.chosen.endswith(f"Answer: ({row.chosen_letter})")
    assert asymmetric_pairs(pairs).empty
    broken = pairs.assign(rejected=pairs["rejected"].str.replace("alone", "mostly"))
    assert len(asymmetric_pairs(broken)) == len(pairs)
    gold = questions.set_index("id")["gold"]
    assert (pairs["chosen_letter"] == pairs["id"].map(gold)).all()


def test_no_method_name_reaches_a_prompt_or_a_response(bench):
    questions = load_questions(bench)
    pairs = build_pairs(questions).pairs.merge(questions[["id", "methods"]], on="id")
    for row in pairs.itertuples():
        text = row.prompt + row.chosen + row.rejected
        assert not any(m in text for m in row.methods), row.id


def test_no_paper_is_in_both_splits_and_the_split_is_seeded(bench):
    questions = load_questions(bench)
    pairs = build_pairs(questions, test_share=0.4, seed=3).pairs
    assert shared_papers(pairs) == set()
    assert set(pairs["split"]) == {"train", "test"}
    by_paper = pairs.groupby("paper_id")["split"].nunique()
    assert (by_paper == 1).all()
    other = build_pairs(questions, test_share=0.4, seed=4).pairs
    assert (
        not pairs.groupby("paper_id")["split"]
        .first()
        .equals(other.groupby("paper_id")["split"].first())
    )
    assert paper_split("p", test_share=0.0, seed=0) == "train"
    assert paper_split("p", test_share=1.0, seed=0) == "test"


@pytest.mark.slow
def test_last_letter_rule_and_the_per_leaf_report(bench):
    questions = load_questions(bench)
    pair_set = build_pairs(questions, rejected="last")
    pairs = pair_set.pairs
    last = questions["n_choices"].map(lambda n: "ABCD"[n - 1])
    assert len(pairs) == int((questions["gold"] != last).sum())
    assert (pairs["rejected_letter"] == pairs["n_choices"].map(lambda n: "ABCD"[n - 1])).all()
    report = pair_set.report
    assert report["questions"].sum() == len(questions)
    assert report["pairs"].sum() == len(pairs)
    assert set(report["split"]) <= {"train", "test"}


def test_an_unknown_leaf_is_named(bench):
    questions = load_questions(bench)
    questions.loc[questions.index[0], "leaf"] = "Vibes"
    with pytest.raises(ValueError, match=rf"{questions.iloc[0]['id']}: leaf 'Vibes'"):
        build_pairs(questions)
    with pytest.raises(ValueError, match="rejected must be one of"):
        build_pairs(questions, rejected="first")
    # imported predictions carry no question text nor images: the columns are named
    with pytest.raises(ValueError, match=r"lack column\(s\) question, image_paths"):
        build_pairs(questions.drop(columns=["question", "image_paths"]))


def test_the_command_writes_pairs_and_report(bench, tmp_path, capsys):
    out = tmp_path / "out" / "pairs.jsonl"
    assert main(["visionq", "pairs", "--root", str(bench), "--out", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines and {"prompt", "chosen", "rejected", "split", "image_paths"} <= set(lines[0])
    assert (tmp_path / "out" / "pairs.jsonl.report.csv").exists()
    assert "pairs from" in capsys.readouterr().out
    assert main(["visionq", "pairs", "--root", str(tmp_path / "nope"), "--out", str(out)]) == 1
    assert "nope" in capsys.readouterr().err


def test_split_totals_count_distinct_papers_not_leaf_sums(bench):
    questions = load_questions(bench)
    pair_set = build_pairs(questions)
    totals = pair_set.totals.set_index("split")
    by_split = pair_set.pairs.groupby("split")
    for split, sub in by_split:
        assert totals.loc[split, "pairs"] == len(sub)
    assert totals["papers"].sum() == questions["paper_id"].nunique()
    assert totals["questions"].sum() == questions["id"].nunique()
    # the per-leaf report counts a paper once in every leaf it has questions in
    leaf_sum = pair_set.report.groupby("split")["papers"].sum()
    assert (leaf_sum >= totals["papers"]).all()
    assert (leaf_sum > totals["papers"]).any(), "the fixture should have papers in two leaves"
