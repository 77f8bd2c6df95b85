"""An answers file as the source of truth for its import, read as Excel and crowd platforms
save it, its cost not known, and its bad rows all counted.

Each test writes real files and runs the command line (or the library's public calls) as
a researcher would.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2
import pandas as pd
import pytest
from release_files import write_generic

from judgepanel.cli import main
from judgepanel.core import coverage
from judgepanel.core.frames import read_calls
from judgepanel.core.paths import project_root
from judgepanel.report.provenance import imported_files, store_label

RUBRIC = project_root() / "rubric"
DATASET = "tiny-photos"


def _answers(n_images: int = 8, judges: tuple[str, ...] = ("lens", "prism")) -> pd.DataFrame:
    """96 answers: 8 images x 2 judges x 3 samples of the holistic question and of
    quality, enough to delete 80."""
    rows = []
    for i in range(n_images):
        for j, judge in enumerate(judges):
            for sample in range(3):
                rows.append((f"img{i:02d}", judge, "holistic", 1 + (i + j + sample) % 10, sample))
                rows.append(
                    (f"img{i:02d}", judge, "quality", 1 + (i + 2 * j + sample) % 10, sample)
                )
    return pd.DataFrame(rows, columns=["image_id", "judge", "dimension", "score", "sample"])


@pytest.fixture
def study(tmp_path: Path) -> dict[str, Path]:
    return {
        "dataset": write_generic(tmp_path / "photos"),
        "answers": tmp_path / "answers.csv",
        "store": tmp_path / "store.sqlite",
    }


def _import(study: dict[str, Path], answers: Path) -> int:
    return main(
        ["import", "answers", str(answers), "--dataset", f"ratings:{study['dataset']}",
         "--rubric", str(RUBRIC), "--store", str(study["store"])]
    )  # fmt: skip


def test_a_changed_file_replaces_its_import_and_says_what_changed(study, capsys) -> None:
    answers = _answers()
    assert len(answers) == 96
    answers.to_csv(study["answers"], index=False)
    other = study["answers"].with_name("other-lab.csv")  # another file's answers stay
    pd.DataFrame(
        [("img00", "third", "holistic", 4, 0), ("img01", "third", "holistic", 5, 0)],
        columns=["image_id", "judge", "dimension", "score", "sample"],
    ).to_csv(other, index=False)
    assert _import(study, study["answers"]) == 0 and _import(study, other) == 0
    capsys.readouterr()
    assert len(read_calls(study["store"], DATASET)) == 98

    shorter = answers.iloc[80:].copy()  # 80 rows deleted
    shorter.iloc[:3, shorter.columns.get_loc("score")] = [v % 10 + 1 for v in shorter["score"][:3]]
    shorter.to_csv(study["answers"], index=False)
    assert _import(study, study["answers"]) == 0
    out = capsys.readouterr().out
    assert (
        "answers.csv changed since its last import: 80 answers removed, 3 changed, 0 added" in out
    )
    calls = read_calls(study["store"], DATASET)
    assert len(calls) == 98 - 80  # the analyses read 80 fewer answers
    assert (calls["family"] == "third").sum() == 2  # the other file's answers stay
    lens = calls.set_index(["item", "family", "kind", "dimension", "repetition"])["value"]
    first = shorter.iloc[0]
    kind = "holistic" if first["dimension"] == "holistic" else "dimension"
    dim = "" if kind == "holistic" else first["dimension"]
    assert lens[(first["image_id"], first["judge"], kind, dim, first["sample"])] == first["score"]

    # the page's provenance names the file and the digest of the bytes last imported
    imports = imported_files(study["store"], (DATASET,))
    digest = hashlib.sha256(study["answers"].read_bytes()).hexdigest()
    assert {"file": "answers.csv", "sha256": digest, "dataset": DATASET, "answers": 16} in imports
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(project_root() / "lib/judgepanel/report/templates")
    )
    record = {"run": "r", "profile": "p", "datasets": [DATASET], "n_items": {}, "seed": 0,
              "world_seeds": {}, "n_resamples": 10, "overrides": {}, "commit": "c",
              "store": store_label(study["store"], imports), "store_hash": "h",
              "data_hash": "d", "date": "today"}  # fmt: skip
    box = env.from_string("{% from '_provenance.html.j2' import box %}{{ box(p) }}").render(
        p=record
    )
    assert f"answers.csv (SHA-256 {digest})" in box and "other-lab.csv" in box

    # the same file again changes nothing and says nothing changed
    assert _import(study, study["answers"]) == 0
    out = capsys.readouterr().out
    assert "changed since its last import:" not in out and "imported 0 answers" in out


def test_imported_answers_cost_is_not_known(study) -> None:
    _answers().to_csv(study["answers"], index=False)
    assert _import(study, study["answers"]) == 0
    calls = read_calls(study["store"], DATASET)
    costs = coverage.cost_summary(calls, DATASET, 8)
    assert costs["cost_usd"].isna().all() and costs["usd_per_image"].isna().all()
    assert coverage.usd_words(costs["cost_usd"].iloc[-1]) == "not known"
    sentence = coverage.cost_sentence(costs, DATASET)
    assert (
        "not known" in sentence
        and "lens, prism" in sentence
        and "$0.00" not in sentence.split("(")[0]
    )


def test_european_excel_and_unicode_text_files_are_read(study, capsys) -> None:
    """Excel's European CSV (';' and a decimal comma, CRLF) and its "Unicode text"
    (UTF-16 with a byte-order mark, tab-separated) hold the same answers as the CSV."""
    answers = _answers(n_images=2)
    answers.to_csv(study["answers"], index=False)
    european = study["answers"].with_name("european.csv")
    text = answers.assign(score=answers["score"].map(lambda v: f"{v},0")).to_csv(
        index=False, sep=";", lineterminator="\r\n"
    )
    european.write_bytes(text.encode("utf-8-sig"))
    unicode_text = study["answers"].with_name("unicode.txt")
    unicode_text.write_bytes(answers.to_csv(index=False, sep="\t").encode("utf-16"))
    assert unicode_text.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    key = ["item", "family", "kind", "dimension", "repetition", "value"]
    got = []
    for path in (study["answers"], european, unicode_text):
        store = study["store"].with_name(f"{path.stem}.sqlite")
        assert _import({**study, "store": store}, path) == 0, capsys.readouterr().err
        got.append(read_calls(store, DATASET)[key].sort_values(key).reset_index(drop=True))
    assert len(got[0]) == len(answers)
    pd.testing.assert_frame_equal(got[0], got[1])
    pd.testing.assert_frame_equal(got[0], got[2])


def test_all_bad_rows_are_counted_and_the_first_few_listed(study, capsys) -> None:
    answers = _answers().astype(str)
    bad = [3, 10, 20, 30, 40, 50, 60]
    answers.loc[bad, "score"] = "42"
    answers.to_csv(study["answers"], index=False)
    assert _import(study, study["answers"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "7 bad rows of 96" in err
    for row in bad[:5]:
        assert f"line {row + 2}: score '42'" in err
    assert f"line {bad[5] + 2}:" not in err and "and 2 more" in err
    assert not study["store"].exists() or len(read_calls(study["store"])) == 0


def test_a_decimal_comma_in_a_comma_separated_file_is_named(study, capsys) -> None:
    lines = ["image_id,judge,dimension,score", "img00,lens,holistic,4", "img01,lens,holistic,3,5"]
    study["answers"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _import(study, study["answers"]) == 1
    err = capsys.readouterr().err
    assert "line 3 has 5 fields, the header 4" in err and "decimal comma" in err
    assert "write 3.5" in err


def test_a_file_in_another_encoding_names_the_fix(study, capsys) -> None:
    text = "image_id,judge,dimension,score\nimg00,lens,holistic,4\n"
    study["answers"].write_bytes(text.encode("utf-16-le"))  # no byte-order mark
    assert _import(study, study["answers"]) == 1
    err = capsys.readouterr().err
    assert "UTF-16 without a byte-order mark" in err and "CSV UTF-8" in err
