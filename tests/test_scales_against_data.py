"""A lab's own study checked against its files: rubric scales against the people's ranges and
the answers' values, and images missing from disk with imported answers (issue 56).

The study: 30 product photos, three questions (sharpness 1-5, clutter 0-3, appeal 1-7),
four raters, two outside judges' answers, all written as Excel writes a CSV (CRLF, the
answers with a UTF-8 byte-order mark). Every command is the real CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgepanel.core.paths import project_root
from judgepanel.core.store import Store

LIB = project_root() / "lib"
N_IMAGES = 30
QUESTIONS = {"sharp": ("sharpness", 1, 5), "tidy": ("clutter", 0, 3), "appeal": ("appeal", 1, 7)}
"""attribute -> (the rubric dimension it validates, its range)."""
JUDGES = {"lens": 0.08, "prism": 0.15}
ABSENT = ("img_003", "img_007")

RUBRIC = """name: product
dimensions:
  sharpness:
    asks: how sharp the product is{sharpness}
  clutter:
    asks: how tidy the background is
    scale: {{min: 0, max: 3}}
  appeal:
    asks: how appealing the photo is
    scale: {{min: 1, max: 7}}
"""


def jp(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(LIB)}
    env.pop("OPENAI_BASE_URL", None)  # nothing may be sent
    return subprocess.run(
        [sys.executable, "-m", "judgepanel.cli", *map(str, args)],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=600,
    )  # fmt: skip


def write_rubric(path: Path, sharpness: str | None) -> Path:
    """The study's rubric; ``sharpness`` is its scale line, or None to leave it out."""
    line = f"\n    scale: {sharpness}" if sharpness else ""
    path.write_text(RUBRIC.format(sharpness=line), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> dict[str, Path]:
    """The photos (a ``ratings`` folder), the answers CSV and two rubrics."""
    out = tmp_path_factory.mktemp("lab")
    root = out / "photos"
    (root / "images").mkdir(parents=True)
    rng = np.random.default_rng(56)
    ids = [f"img_{i:03d}" for i in range(N_IMAGES)]
    for image_id in ids:
        (root / "images" / f"{image_id}.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    lines = ["name: product-photos", "images: images", "attributes:"]
    for attribute, (dimension, low, high) in QUESTIONS.items():
        lines.append(
            f"  {attribute}: {{range: [{low}, {high}], higher: better, dimension: {dimension}}}"
        )
    (root / "dataset.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    pd.DataFrame({"image_id": ids, "path": [f"{i}.jpg" for i in ids]}).to_csv(
        root / "images.csv", index=False, lineterminator="\r\n"
    )
    ratings, answers = [], []
    for attribute, (dimension, low, high) in QUESTIONS.items():
        latent = rng.uniform(0, 1, N_IMAGES)
        for image_id, truth in zip(ids, latent, strict=True):

            def on_scale(noise: float, t: float = truth, low: int = low, high: int = high) -> int:
                raw = low + (high - low) * (t + rng.normal(0, noise))
                return int(np.clip(np.round(raw), low, high))

            ratings += [(image_id, attribute, on_scale(0.1), f"r{r}") for r in range(4)]
            answers += [(image_id, j, dimension, on_scale(n)) for j, n in JUDGES.items()]
    pd.DataFrame(ratings, columns=["image_id", "attribute", "value", "rater_id"]).to_csv(
        root / "ratings.csv", index=False, lineterminator="\r\n"
    )
    answers_csv = out / "answers.csv"
    pd.DataFrame(answers, columns=["image_id", "judge", "dimension", "score"]).to_csv(
        answers_csv, index=False, lineterminator="\r\n", encoding="utf-8-sig"
    )
    return {
        "root": root,
        "answers": answers_csv,
        "bare": write_rubric(out / "bare.yaml", None),
        "declared": write_rubric(out / "declared.yaml", "{min: 1, max: 5}"),
        "out": out,
    }


def agree(lab: dict[str, Path], rubric: Path) -> dict:
    done = jp("agree", "--dataset", f"ratings:{lab['root']}", "--answers", lab["answers"],
              "--rubric", rubric, "--resamples", "50", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_declaring_the_scale_left_out_changes_the_agreement_and_the_note_says_why(lab):
    bare, declared = agree(lab, lab["bare"]), agree(lab, lab["declared"])
    (note,) = [n for n in bare["notes"] if n.startswith("sharpness:")]
    assert "the rubric gives it no scale, so it is read on 1-10 (the default)" in note
    assert "its attribute sharp is rated 1-5" in note
    assert "the answers in answers.csv run 1-5" in note
    assert "the agreement maps linear 1-10 -> 1-5" in note
    assert note.endswith(
        "declare `scale: {min: 1, max: 5}` under dimensions.sharpness in bare.yaml"
    )
    assert not [n for n in declared["notes"] if n.startswith("sharpness:")]
    assert bare["questions"]["sharpness"]["mapping"] == "linear 1-10 -> 1-5"
    assert declared["questions"]["sharpness"]["mapping"] == "linear 1-5 -> 1-5"
    qwk = {
        name: {j: run["judges"][j]["questions"]["sharpness"]["qwk"]["estimate"] for j in JUDGES}
        for name, run in (("bare", bare), ("declared", declared))
    }
    for judge in JUDGES:  # the default squeezes the answers into the bottom of the range
        assert qwk["declared"][judge] > 0.7 and qwk["bare"][judge] < 0.5, qwk
    same = {j: bare["judges"][j]["questions"]["clutter"]["qwk"] for j in JUDGES}
    assert same == {j: declared["judges"][j]["questions"]["clutter"]["qwk"] for j in JUDGES}
    text = jp("agree", "--dataset", f"ratings:{lab['root']}", "--answers", lab["answers"],
              "--rubric", lab["bare"], "--resamples", "50")  # fmt: skip
    said = text.stdout.splitlines()
    assert said[1] == f"note: {note}"  # said before any question's numbers


@pytest.mark.slow
def test_describe_and_import_say_it_before_anything_is_written(lab, tmp_path):
    done = jp("data", "describe", "--dataset", f"ratings:{lab['root']}", "--rubric",
              lab["bare"], "--splits", "5", "--resamples", "5", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    rows = {row["dimension"]: row for row in info["mapping"]}
    assert rows["sharpness"]["scale"] == [1, 10] and rows["sharpness"]["scale_defaulted"]
    assert rows["clutter"]["scale"] == [0, 3] and not rows["clutter"]["scale_defaulted"]
    (note,) = info["scale_notes"]
    assert note.startswith("sharpness: the rubric gives it no scale")
    assert "linear 1-10 -> 1-5" in note and "answers" not in note  # no answers read here
    text = jp("data", "describe", "--dataset", f"ratings:{lab['root']}", "--rubric",
              lab["bare"], "--splits", "5", "--resamples", "5")  # fmt: skip
    assert f"note: {note}" in text.stdout.splitlines()
    store = tmp_path / "s.sqlite"
    done = jp("import", "answers", lab["answers"], "--dataset", f"ratings:{lab['root']}",
              "--rubric", lab["bare"], "--store", store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = done.stdout.splitlines()
    assert said[0].startswith("note: sharpness: the rubric gives it no scale")
    assert said[-1] == f"imported 180 answers of product-photos into {store}"


def test_answers_outside_the_scale_are_refused_in_one_line_with_the_fix(lab, tmp_path):
    narrow = write_rubric(tmp_path / "narrow.yaml", "{min: 1, max: 4}")
    answers = pd.read_csv(lab["answers"], encoding="utf-8-sig")
    n_off = int(((answers["dimension"] == "sharpness") & (answers["score"] > 4)).sum())
    first = int(answers.index[(answers["dimension"] == "sharpness") & (answers["score"] > 4)][0])
    store = tmp_path / "s.sqlite"
    for command in (
        ("import", "answers", lab["answers"], "--store", store),
        ("agree", "--answers", lab["answers"]),
        ("report", "--answers", lab["answers"], "--out", tmp_path / "out"),
    ):
        done = jp(*command, "--dataset", f"ratings:{lab['root']}", "--rubric", narrow)
        assert done.returncode != 0
        err = done.stderr
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert (
            f"{lab['answers']}: {n_off} answer(s) to sharpness fall outside its rubric scale "
            f"1-4: values 5, first at line {first + 2}; if the judges answered on 1-5, declare "
            "`scale: {min: 1, max: 5}` under dimensions.sharpness in narrow.yaml, else correct "
            "those rows"
        ) in err
    assert not store.exists() and not (tmp_path / "out" / "study.sqlite").exists()


@pytest.mark.slow
def test_missing_images_end_to_end_with_imported_answers(lab, tmp_path):
    root = tmp_path / "photos"
    subprocess.run(["cp", "-r", str(lab["root"]), str(root)], check=True)
    for image_id in ABSENT:
        (root / "images" / f"{image_id}.jpg").unlink()
    dataset = f"ratings:{root}"
    store = tmp_path / "mine.sqlite"
    done = jp("import", "answers", lab["answers"], "--dataset", dataset, "--rubric",
              lab["declared"], "--store", store)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--missing-images" not in done.stdout + done.stderr
    assert done.stdout.splitlines()[-1].startswith("imported 180 answers")
    done = jp("agree", "--dataset", dataset, "--store", store, "--rubric", lab["declared"],
              "--resamples", "50", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["questions"]["sharpness"]["n_images"] == N_IMAGES
    out = tmp_path / "out"
    report = ("report", "--dataset", dataset, "--rubric", lab["bare"], "--answers",
              lab["answers"], "--only", "10", "--out", out, "-p", "n_resamples=100")  # fmt: skip
    refused = jp(*report)
    assert refused.returncode != 0 and "missing on disk" in refused.stderr
    assert "--missing-images skip" in refused.stderr and "Traceback" not in refused.stderr
    done = jp(*report, "--missing-images", "skip")
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    left = "left out 12 answers of 2 image(s) absent from disk (--missing-images skip), of 180"
    assert any(line.startswith(left) for line in said), done.stdout
    note = next(i for i, line in enumerate(said) if line.startswith("note: sharpness:"))
    assert note < next(i for i, line in enumerate(said) if "started" in line)
    assert "imported 168 answers of product-photos from answers.csv" in said
    with Store(out / "study.sqlite", readonly=True) as db:
        calls = db.frame()
    assert len(calls) == 168 and not set(calls["item"]) & set(ABSENT)
    table = pd.read_csv(out / "product-photos" / "tables" / "table_dimension_agreement.csv")
    assert set(table["dimension"]) == {d for d, _, _ in QUESTIONS.values()}
