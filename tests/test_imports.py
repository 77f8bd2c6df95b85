"""Importers of the official harnesses' outputs, on fixtures in their formats.

``fixtures/official/test_questions_or_sim-aurora-v1_p1.jsonl`` is written as VisionQ's
``bench_run.py --tag-quality`` writes predictions (every field of its rows: one failed
request, one unparseable answer, one ineligible question); ``fixtures/official/
sim-basalt-v1.json`` as VAB's ``eval.py`` writes a completed model's results (one
unparseable trial, and the pick_best_and_worst rows it derives for pairs).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgepanel.cli import main
from judgepanel.datasets import DatasetError
from judgepanel.studies import vab, visionq

FIX = Path(__file__).parent / "fixtures" / "official"
VQ = FIX / "test_questions_or_sim-aurora-v1_p1.jsonl"
VAB = FIX / "sim-basalt-v1.json"


def test_visionq_predictions_become_a_tidy_table():
    every = visionq.read_official_predictions([VQ], slice_name="all")
    assert len(every) == 9 and set(every["judge"]) == {"or_sim-aurora-v1_p1"}
    assert every["paper"].tolist()[:3] == ["paper_0100"] * 3
    assert every["rotation"].eq(0).all()
    failed = every.set_index("id").loc["paper_0101__fig_4_p3__row_1"]
    assert pd.isna(failed["pred"]) and failed["status"].startswith("error")
    kept = visionq.read_official_predictions([VQ], judge="aurora")
    assert len(kept) == 8 and "paper_0101__fig_5_p3__row_1" not in set(kept["id"])
    assert set(kept["judge"]) == {"aurora"}
    checked = visionq.check_predictions(kept)
    # The harness's own 'correct' agrees with ours on every row (failed rows are wrong).
    rows = {r["id"]: r for r in map(json.loads, VQ.read_text().splitlines())}
    assert checked.set_index("id")["correct"].to_dict() == {
        i: rows[i]["correct"] for i in kept["id"]
    }


def test_visionq_errors_name_file_line_and_question(tmp_path):
    bad = tmp_path / "test_questions_x.jsonl"
    lines = VQ.read_text().splitlines()
    row = json.loads(lines[2])
    row["pred_letter"] = "E"
    bad.write_text("\n".join([lines[0], lines[1], json.dumps(row)]) + "\n")
    with pytest.raises(
        DatasetError, match=r"x\.jsonl:3 \(question 'paper_0100__fig_2_p3__row_1'\)"
    ):
        visionq.read_official_predictions([bad])
    row = json.loads(lines[0])
    del row["quality_flags"], row["gold_letter"]
    bad.write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match=r"missing field.*gold_letter"):
        visionq.read_official_predictions([bad])
    del row["id"]
    row.update(id="paper_0100__f__r", gold_letter="A")
    bad.write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetError, match="--tag-quality"):
        visionq.read_official_predictions([bad])
    assert len(visionq.read_official_predictions([bad], slice_name="all")) == 1


def test_vab_results_become_a_tidy_table():
    pred, tasks = vab.read_official_results([VAB])
    assert set(pred["judge"]) == {"sim-basalt-v1"}
    assert len(pred) == 3 * 3 + 2 * 3 - 0  # derived rows are left out
    assert set(pred["kind"]) == {"vab_top1", "vab_bot1", "vab_tb1"}
    pair = tasks.set_index("task_id").loc["fine-art_portrait_9"]
    assert pair.ground_truth_worst == "B"
    # Slot i shows original image permutation[i].
    row = pred[(pred.task_id == "photograph_landscape_3") & (pred.repetition == 1)].iloc[0]
    assert row.order == "C,A,B"
    unparsed = pred[(pred.kind == "vab_bot1") & (pred.task_id == "photograph_landscape_3")]
    assert unparsed.pred_worst.isna().sum() == 1
    scores = vab.task_scores(pred, tasks, repetitions=(0, 1, 2))
    acc = vab.accuracy_wide(vab.accuracy_table(scores, n_resamples=200, seed=0))
    acc = acc.set_index("metric")
    # Top-1: B,A,B on the triple and A,A,B on the pair -> 4 of 6 answers right.
    assert acc.loc["top1", "ap1"] == pytest.approx(4 / 6)
    # TB-1 on the pair is derived from the Top-1 answers, as the harness derives it.
    assert acc.loc["tb1", "ap1"] == pytest.approx((2 / 3 + 2 / 3) / 2)


def test_vab_errors_name_the_file_and_the_task(tmp_path):
    data = json.loads(VAB.read_text())
    data["results"][1]["permutation"] = [0, 0, 1]
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(
        DatasetError, match=r"m\.json: results\[1\] \(task 'photograph_landscape_3'\)"
    ):
        vab.read_official_results([bad])
    bad.write_text("{")
    with pytest.raises(DatasetError, match=r"m\.json: not valid JSON"):
        vab.read_official_results([bad])


def test_cli_writes_tables_the_notebooks_read(tmp_path, capsys):
    out = tmp_path / "vq.csv"
    assert main(["import", "visionq-predictions", str(VQ), "--out", str(out)]) == 0
    assert "wrote 9 predictions of or_sim-aurora-v1_p1" in capsys.readouterr().out
    from_csv = visionq.load_predictions([out])
    from_jsonl = visionq.load_predictions([VQ])
    pd.testing.assert_frame_equal(
        from_csv.drop(columns="eligible"), from_jsonl.drop(columns="eligible"), check_dtype=False
    )
    out2 = tmp_path / "vab.csv"
    assert main(["import", "vab-results", str(VAB), "--out", str(out2), "--judge", "b"]) == 0
    pred, tasks = vab.load_predictions([out2])
    official, official_tasks = vab.load_predictions([VAB], judge="b")
    pd.testing.assert_frame_equal(pred.fillna(""), official.fillna(""), check_dtype=False)
    pd.testing.assert_frame_equal(tasks, official_tasks)
    # User errors: one line naming the file, no traceback.
    assert main(["import", "vab-results", str(tmp_path / "none.json"), "--out", str(out2)]) == 1
    err = capsys.readouterr().err
    assert "none.json: results file not found" in err and "Traceback" not in err
    assert main(["import", "visionq-predictions", str(VQ), "--out", str(tmp_path / "x.txt")]) == 1


def test_06_analyses_run_on_two_official_files(tmp_path):
    other = tmp_path / "test_questions_or_sim-basalt-v1_p1.jsonl"
    rows = [json.loads(line) for line in VQ.read_text().splitlines()]
    for r in rows:
        r["pred_letter"], r["status"] = r["gold_letter"], "ok"
    other.write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds = visionq.load_predictions([VQ, other])
    axis = visionq.per_axis_accuracy(preds, rotation=0, n_resamples=300, seed=0)
    assert {"ci_low", "ci_high", "n_papers"} <= set(axis.columns)
    assert axis.groupby("judge")["n"].sum().to_dict() == {
        "or_sim-aurora-v1_p1": 8,
        "or_sim-basalt-v1_p1": 8,
    }
    bias = visionq.position_bias(preds, rotation=0)
    assert len(bias) == 2
    pairs = visionq.judge_pairs(preds, rotation=0, n_resamples=200, seed=0)
    assert len(pairs) == 1 and pairs.iloc[0]["a"] == "or_sim-basalt-v1_p1"
    assert pairs.iloc[0]["delta"] == pytest.approx(5 / 8)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("run", "notebook", "what", "fixture", "table"),
    [
        ("test-vab", "05_vab", "vab-results", VAB, "table_vab_degradation"),
        ("test-visionq", "06_visionq", "visionq-predictions", VQ, "table_visionq_overall"),
    ],
)
def test_notebooks_read_what_the_command_imports(tmp_path, run, notebook, what, fixture, table):
    # As a user does: import the harness's file on the command line, then run the notebook
    # with it as its 'predictions' (no store: imported answers need none). The fixtures' few
    # tasks hold no set of four or more images (05) and no question text (06).
    from small_project import SEED, runs_yaml

    from judgepanel.core.config import load_config
    from judgepanel.report.execute import execute_notebook, no_page
    from judgepanel_sim.world.vab import write_vab
    from judgepanel_sim.world.visionq import write_visionq

    write_vab(tmp_path / "synth" / "synth-vab", SEED, n_tasks=4)
    write_visionq(tmp_path / "synth" / "synth-visionq", SEED, n_papers=2)
    runs_file = tmp_path / "papermill_runs.yaml"
    runs_file.write_text(yaml.safe_dump(runs_yaml(tmp_path), sort_keys=False))
    imported = tmp_path / "imported.csv"
    assert main(["import", what, str(fixture), "--out", str(imported)]) == 0
    config = load_config(runs_file)
    overrides = {"predictions": [str(imported)], "n_resamples": 200}
    result = execute_notebook(
        config, config.run(run), notebook, tmp_path / "out", overrides=overrides, render=no_page
    )
    assert result.ok, result.error
    tables = tmp_path / "out" / run / "tables"
    assert len(pd.read_csv(tables / f"{table}.csv").columns) > 1
    assert not (tables / "table_visionq_pairs.csv").exists()


@pytest.mark.parametrize("study", ["vab", "visionq"])
def test_one_predictions_file_may_be_named_alone(study):
    """``-p predictions=results.json`` is a list of one file; a list stays a list."""
    from judgepanel.cli.report import parse_overrides
    from judgepanel.studies.vab.parameters import VabParameters
    from judgepanel.studies.visionq.parameters import VisionqParameters

    model = {"vab": VabParameters, "visionq": VisionqParameters}[study]
    alone = parse_overrides(["predictions=results.json"])
    assert model(**alone).predictions == ["results.json"]
    listed = parse_overrides(["predictions=[a.json, b.json]"])
    assert model(**listed).predictions == ["a.json", "b.json"]
    with pytest.raises(ValueError):
        model(predictions=3)
