"""``judgepanel import answers`` and ``export --long`` as a researcher uses them.

Answers collected elsewhere go into a store checked against the dataset's images and the
rubric's scales, marked as imported, and read back by the analyses' own reader like scored
calls; bad rows are one line naming the file, the lines and the reasons, and write nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from release_files import write_generic

from judgepanel.cli import main
from judgepanel.core.frames import read_calls, score_table
from judgepanel.core.paths import project_root
from judgepanel.core.rubric import load_rubric
from judgepanel.core.store import Store

RUBRIC = project_root() / "rubric"


def _answers(n_images: int = 8, judges: tuple[str, ...] = ("lens", "prism")) -> pd.DataFrame:
    rows = []
    for i in range(n_images):
        for j, judge in enumerate(judges):
            rows.append((f"img{i:02d}", judge, "holistic", 1 + (i + j) % 10, 0))
            rows.append((f"img{i:02d}", judge, "holistic", 1 + (i + j + 1) % 10, 1))
            for d, dim in enumerate(("quality", "composition", "colour")):
                rows.append((f"img{i:02d}", judge, dim, 1 + (i * 3 + d + j) % 10, 0))
    return pd.DataFrame(rows, columns=["image_id", "judge", "dimension", "score", "sample"])


@pytest.fixture
def study(tmp_path: Path) -> dict[str, Path]:
    dataset = write_generic(tmp_path / "photos")
    answers = tmp_path / "answers.csv"
    _answers().to_csv(answers, index=False)
    return {"dataset": dataset, "answers": answers, "store": tmp_path / "store.sqlite"}


def _import(study: dict[str, Path], answers: Path | None = None, *extra: str) -> int:
    return main(
        [
            "import", "answers", str(answers or study["answers"]),
            "--dataset", f"ratings:{study['dataset']}", "--rubric", str(RUBRIC),
            "--store", str(study["store"]), *extra,
        ]
    )  # fmt: skip


def test_imported_answers_read_like_scored_calls(study, capsys) -> None:
    assert _import(study) == 0
    assert "imported 80 answers of tiny-photos" in capsys.readouterr().out
    calls = read_calls(study["store"], "tiny-photos")
    assert len(calls) == 80 and (calls["status"] == "ok").all()
    assert (calls["attempts"] == 0).all() and calls["cost"].isna().all()  # no price
    rubric = load_rubric(str(RUBRIC))
    table = score_table(calls, "tiny-photos", rubric_sha=rubric.sha256)
    answers = _answers()
    assert len(table) == len(answers)
    got = table[(table["family"] == "prism") & (table["dimension"] == "colour")]
    want = answers[(answers["judge"] == "prism") & (answers["dimension"] == "colour")]
    assert sorted(got["value"]) == sorted(want["score"].astype(float))
    # keyed as if asked with the rubric's own prompts
    dims = calls[calls["kind"] == "dimension"].iloc[0]
    assert dims["prompt_hash"] == rubric.prompt_hash("dimension", dims["dimension"])
    with Store(study["store"], readonly=True) as db:
        imports = db.imports()
        assert imports[["file", "dataset", "rows"]].values.tolist() == [
            ["answers.csv", "tiny-photos", 80]
        ]
        assert len(db.imported_digests("tiny-photos")) == 80
    # a second import of the same file writes nothing and says so
    assert _import(study) == 0
    assert "imported 0 answers" in capsys.readouterr().out
    assert len(read_calls(study["store"])) == 80


def test_export_long_round_trips(study, tmp_path, capsys) -> None:
    assert _import(study) == 0
    out = tmp_path / "long.csv"
    argv = ["export", "--long", "--store", str(study["store"]), "--out", str(out)]
    assert main(argv) == 0
    back = pd.read_csv(out, dtype=str)
    assert list(back.columns) == [
        "image_id",
        "judge",
        "dimension",
        "score",
        "sample",
        "model",
        "raw",
    ]
    again = {**study, "store": tmp_path / "again.sqlite"}
    assert _import(again, out) == 0
    key = ["item", "family", "kind", "dimension", "repetition", "value", "prompt_hash"]
    first = read_calls(study["store"])[key].sort_values(key).reset_index(drop=True)
    second = read_calls(again["store"])[key].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(first, second)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"image_id": "img99"}, "line 6: image 'img99' is not in tiny-photos"),
        ({"score": "7.5"}, "line 6: score '7.5' of colour is not a whole number from 1 to 10"),
        ({"dimension": "sharpness"}, "line 6: 'sharpness' is not a question of the rubric; its "
         "questions are: holistic, quality, composition, colour, distinctiveness, emotion"),
        ({"sample": "-1"}, "line 6: sample '-1' is not a whole number 0 or more"),
        ({"judge": ""}, "line 6: empty judge"),
        ({"dimension": "composition"}, "line 6: repeats line 5 (the same judge, image, "
         "composition and sample); give repeated answers distinct sample numbers"),
    ],
)  # fmt: skip
def test_a_bad_row_names_file_line_and_reason_and_writes_nothing(
    study, capsys, change, says
) -> None:
    answers = _answers().astype(str)
    for column, value in change.items():
        answers.loc[4, column] = value  # line 6 of the file: row 4 under the header
    answers.to_csv(study["answers"], index=False)
    assert _import(study) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {study['answers']}, ") and says in err, err
    assert err.count("\n") == 1
    assert not study["store"].exists() or len(read_calls(study["store"])) == 0


def test_a_bad_file_and_a_conflicting_answer_are_refused(study, capsys) -> None:
    bad = study["answers"].with_name("bad.csv")
    _answers().rename(columns={"score": "value"}).to_csv(bad, index=False)
    assert _import(study, bad) == 1
    assert "missing column(s) score; unknown column(s) value" in capsys.readouterr().err
    _answers().drop(columns=["score"]).to_csv(bad, index=False)  # missing only
    assert _import(study, bad) == 1
    err = capsys.readouterr().err
    assert "missing column(s) score; the columns are " in err and "; ;" not in err, err
    assert _import(study) == 0
    capsys.readouterr()
    changed = _answers()
    changed.loc[3, "score"] = 1 + changed.loc[3, "score"] % 10
    changed.to_csv(bad, index=False)
    before = sqlite3.connect(study["store"]).execute("SELECT COUNT(*) FROM calls").fetchone()
    assert _import(study, bad) == 1
    err = capsys.readouterr().err
    assert (
        "bad.csv, line 5: lens on img00 (composition, sample 0) is already stored with the answer "
        in err
    )
    assert "nothing was imported" in err
    after = sqlite3.connect(study["store"]).execute("SELECT COUNT(*) FROM calls").fetchone()
    assert before == after
