"""A study of its own, rendered with one command: its rubric (four dimensions on mixed
scales, no holistic question), its images in a ``ratings`` folder without an overall
rating, and its judges' answers from a CSV; ``report --dataset --rubric --answers`` runs
00, 01 and 10 (per dimension) and says why it skips 02 and 03."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from judgepanel.cli import main
from judgepanel.core.paths import project_root
from judgepanel.core.store import Store
from judgepanel_sim.world.posters import SCALES, write_posters

RUBRIC = project_root() / "rubric" / "posters.yaml"
JUDGES = {"keen": 0.08, "fair": 0.15, "vague": 0.3}
"""Each judge's noise, as a share of a scale's span."""
LEVELS = ("sparse", "moderate", "busy")


def write_answers(world: Path, path: Path, seed: int = 1) -> Path:
    """Two answers per judge, poster and dimension: the poster's latent on the dimension's
    scale plus the judge's noise; clutter is answered with its level names."""
    truth = pd.read_csv(world.parent / "truth" / "synth-posters-latents.csv")
    rng = np.random.default_rng(seed)
    rows = []
    for judge, noise in JUDGES.items():
        for poster in truth.itertuples():
            for name, (low, high) in SCALES.items():
                for sample in range(2):
                    raw = low + (high - low) * (getattr(poster, name) + rng.normal(0, noise))
                    value = int(np.clip(np.round(raw), low, high))
                    score = LEVELS[value] if name == "clutter" else str(value)
                    rows.append((poster.image_id, judge, name, score, sample, f"vendor/{judge}"))
    columns = ["image_id", "judge", "dimension", "score", "sample", "model"]
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def small_world(tmp_path_factory) -> tuple[Path, Path]:
    """A 12-poster world and its answers file."""
    out = tmp_path_factory.mktemp("small")
    world = write_posters(out / "world", n_images=12, seed=5)
    return world, write_answers(world, out / "answers.csv")


def study_argv(world: Path, out: Path, *more: str) -> list[str]:
    return ["report", "--dataset", f"ratings:{world}", "--rubric", str(RUBRIC),
            "--out", str(out), *more]  # fmt: skip


def test_a_study_no_candidate_applies_to_is_refused_with_the_reasons(
    small_world, tmp_path: Path, capsys
) -> None:
    world, _ = small_world
    assert main(study_argv(world, tmp_path / "out", "--only", "02,03")) == 1
    said = capsys.readouterr()
    assert "skipped 02_input_ablation: no overall human rating;" in said.out
    assert "skipped 03_trio_sweep: no overall human rating;" in said.out
    assert "no notebook of 02_input_ablation, 03_trio_sweep applies" in said.err
    assert "Traceback" not in said.err and not (tmp_path / "out").exists()
    assert main(study_argv(world, tmp_path / "out", "--only", "05")) == 1
    assert "--only 05 matches none of the notebooks" in capsys.readouterr().err


def test_a_study_is_one_dataset_not_a_run_of_the_runs_file(small_world, tmp_path, capsys):
    world, _ = small_world
    assert main(study_argv(world, tmp_path / "out", "--run", "demo-eva")) == 1
    assert "give --dataset or --run, not both" in capsys.readouterr().err
    assert main(["report", "--answers", "answers.csv", "--out", str(tmp_path / "o")]) == 1
    assert "--answers goes with --dataset" in capsys.readouterr().err


def test_bad_answers_stop_before_anything_is_written(small_world, tmp_path, capsys):
    world, answers = small_world
    table = pd.read_csv(answers, dtype=str)
    table.loc[3, "score"] = "9"
    bad = tmp_path / "bad.csv"
    table.to_csv(bad, index=False)
    assert main(study_argv(world, tmp_path / "out", "--answers", str(bad))) == 1
    err = capsys.readouterr().err
    assert "bad.csv: 1 answer(s) to saturation fall outside its rubric scale" in err
    assert "values 9, first at line 5" in err and "else correct those rows" in err
    assert not (tmp_path / "out" / "study.sqlite").exists()


def test_a_judge_is_one_model(small_world, tmp_path: Path) -> None:
    from judgepanel.report.execute import ReportError
    from judgepanel.report.study import answers_design

    _, answers = small_world
    design = answers_design(answers, 0.3)
    assert design.families == {j: f"vendor/{j}" for j in JUDGES}
    assert (design.holistic_k, design.dimension_r, design.temperature) == (0, 2, 0.3)
    table = pd.read_csv(answers, dtype=str)
    table.loc[0, "model"] = "vendor/other"
    table.to_csv(tmp_path / "two.csv", index=False)
    with pytest.raises(ReportError, match="judge 'keen' answers as several models"):
        answers_design(tmp_path / "two.csv", 0.0)


def error_outputs(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [
        f"{o.get('ename')}: {o.get('evalue')}"
        for c in cells
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_study_of_its_own_renders_00_01_and_10(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # nothing may be sent
    world = write_posters(tmp_path / "world", n_images=40, seed=5)
    answers = write_answers(world, tmp_path / "answers.csv")
    out = tmp_path / "out"
    code = main(
        ["report", "--dataset", f"ratings:{world}", "--rubric", str(RUBRIC),
         "--answers", str(answers), "--out", str(out), "--jobs", "2",
         "-p", "n_resamples=200"]
    )  # fmt: skip
    said = capsys.readouterr()
    assert code == 0, said.out + said.err
    skipped = {
        line.split(":")[0].removeprefix("skipped "): line
        for line in said.out.splitlines()
        if line.startswith("skipped ")
    }
    assert set(skipped) == {"02_input_ablation", "03_trio_sweep"}
    assert skipped["03_trio_sweep"].startswith(
        "skipped 03_trio_sweep: no overall human rating; the rubric asks no holistic question"
    )
    assert "lacks quality, composition" in skipped["02_input_ablation"]
    assert "imported 960 answers of synth-posters" in said.out
    run = out / "synth-posters"
    for name in ("00_scoring", "01_mtmm_validity", "10_agreement"):
        assert (run / f"{name}.html").is_file(), name
        assert error_outputs(run / f"{name}.ipynb") == [], name
    agree = pd.read_csv(run / "tables" / "table_dimension_agreement.csv")
    assert list(dict.fromkeys(agree["dimension"])) == list(SCALES)
    assert set(agree["judge"]) == set(JUDGES) and not (run / "tables" / "judge_card.csv").exists()
    mapped = agree.drop_duplicates("dimension").set_index("dimension")["mapping"]
    assert mapped["brightness"] == "linear 1-7 -> 1-7"
    alt = pd.read_csv(run / "tables" / "table_dimension_alt_test.csv")
    assert "pooled dimensions" in set(alt["dimension"])
    assert not (run / "02_input_ablation.ipynb").exists()
    with Store(out / "study.sqlite", readonly=True) as store:
        imports = store.imports()
        calls = store.frame()
        imported = store.imported_digests("synth-posters")
    assert imports[["file", "dataset", "rows"]].values.tolist() == [
        ["answers.csv", "synth-posters", 960]
    ]
    assert len(calls) == len(imported) == 960 and set(calls["family"]) == set(JUDGES)
    dist = pd.read_csv(run / "tables" / "score_distribution.csv")
    assert set(dist["family"]) == set(JUDGES)
    assert set(dist["prompt"]) == set(SCALES)
    coverage = pd.read_csv(run / "tables" / "coverage.csv")
    assert int(coverage["planned"].sum()) == int(coverage["ok"].sum()) == 960
    runs = yaml.safe_load((out / "study-runs.yaml").read_text(encoding="utf-8"))
    assert runs["runs"]["synth-posters"]["notebooks"] == [
        "00_scoring",
        "01_mtmm_validity",
        "10_agreement",
    ]
    assert runs["profiles"]["study"]["families"] == {j: f"vendor/{j}" for j in JUDGES}
