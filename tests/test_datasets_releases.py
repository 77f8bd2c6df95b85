"""AVA, AADB, KonIQ-10k, SPAQ and LAPIS read as released, good files and malformed ones.

The fixtures (tests/release_files.py) are written in each release's own format; the bad
variants change one thing each, and the error must name the file and the column or line.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from release_files import (
    aadb_name,
    ava_lines,
    koniq_frame,
    lapis_frame,
    spaq_frame,
    write_aadb,
    write_ava,
    write_koniq,
    write_lapis,
    write_spaq,
)

from judgepanel.datasets import (
    DatasetError,
    load_aadb,
    load_ava,
    load_dataset,
    load_koniq,
    load_lapis,
    load_spaq,
)


def _error(loader, root: Path) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(DatasetError) as info:
        loader(root)
    return str(info.value)


# --- AVA -------------------------------------------------------------------------------------


def test_ava_reads_votes_and_the_official_test_list(tmp_path):
    lines = ava_lines()
    ds = load_dataset("ava", str(write_ava(tmp_path, lines)))
    assert len(ds) == 12 and ds.ratings.empty and ds.summary is None
    first = np.array(lines[0].split()[2:12], dtype=int)
    assert ds.images.loc[0, "image_id"] == "953600"
    assert ds.images.loc[0, "n_raters"] == first.sum()
    assert ds.images.loc[0, "mean_score"] == pytest.approx(first @ np.arange(1, 11) / first.sum())
    assert ds.images["split"].tolist().count("test") == 3
    assert ds.votes["value"].between(1, 10).all() and (ds.votes["count"] > 0).all()
    assert ds.votes["count"].sum() == 12 * 60
    assert ds.images[["tag1", "tag2", "challenge_id"]].iloc[0].tolist() == [0, 15, 1396]


@pytest.mark.parametrize(
    ("line", "edit", "expected"),
    [
        (3, lambda f: f[:-1], r"AVA\.txt:3: expected 15 space-separated columns .* found 14"),
        (5, lambda f: [*f[:4], "x", *f[5:]], r"column 'votes_3' has 1 value\(s\) .* line 5 "),
        (4, lambda f: [*f[:4], "-2", *f[5:]], r"column 'votes_3' has 1 value\(s\) .* line 4 "),
        (6, lambda f: [f[0], "953600", *f[2:]], r"column 'image_id' has an id listed more"),
        (2, lambda f: [*f[:2], *["0"] * 10, *f[12:]], r"an image without votes on 1 line.*line 2 "),
    ],
)
def test_ava_bad_lines_are_named(tmp_path, line, edit, expected):
    lines = ava_lines()
    lines[line - 1] = " ".join(edit(lines[line - 1].split()))
    message = _error(load_ava, write_ava(tmp_path, lines))
    assert "AVA.txt" in message and re.search(expected, message), message


def test_ava_missing_files_are_named(tmp_path):
    root = write_ava(tmp_path)
    (root / "images" / "953605.jpg").unlink()
    message = _error(load_ava, root)
    assert "AVA.txt: column 'image_id' has an image missing on disk" in message
    assert "line 6 (image_id=953605)" in message
    root = write_ava(tmp_path / "t", test=["953601", "123"])
    assert "generic_test.jpgl:2: test image '123' is not in AVA.txt" in _error(load_ava, root)
    (root / "aesthetics_image_lists" / "generic_test.jpgl").unlink()
    assert "the official test list" in _error(load_ava, root)


# --- AADB ------------------------------------------------------------------------------------


def test_aadb_reads_the_lists_and_the_raw_ratings(tmp_path):
    ds = load_aadb(write_aadb(tmp_path))
    assert len(ds) == 9 and ds.votes is None
    assert ds.images["split"].tolist() == ["train"] * 3 + ["validation"] * 3 + ["test"] * 3
    assert ds.images["mean_score"].between(0, 1).all()  # the released score
    assert (ds.images["n_raters"] == 5).all() and len(ds.ratings) == 45
    assert ds.ratings["score"].between(1, 5).all()  # the raw ratings, 1-5
    assert ds.attributes["colour"].name == "ColorHarmony"
    assert ds.attributes["composition"].name == "RuleOfThirds"
    assert ds.images["light"].notna().all()
    assert "symmetry" not in ds.images.columns and "symmetry" not in ds.attributes
    assert ds.images.loc[0, "image_id"] == aadb_name(0)[0]
    lists_only = load_aadb(write_aadb(tmp_path / "lists", raw=False))
    assert lists_only.ratings.empty and lists_only.images["n_raters"].isna().all()


def test_aadb_bad_list_files_are_named(tmp_path):
    root = write_aadb(tmp_path)
    path = root / "imgListFiles_label" / "imgListTestRegression_score.txt"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1].split()[0] + " 1.7", lines[2]]) + "\n")
    message = _error(load_aadb, root)
    assert "imgListTestRegression_score.txt: column 'value'" in message and "line 2 " in message
    path.write_text("\n".join([lines[0], lines[1].replace(" ", "\t") + " x", lines[2]]) + "\n")
    assert "imgListTestRegression_score.txt:2: expected '<image> <value>'" in _error(
        load_aadb, root
    )
    path.write_text("\n".join(lines) + "\n")
    (root / "imgListFiles_label" / "imgListValidationRegression_Light.txt").unlink()
    message = _error(load_aadb, root)
    assert "imgListValidationRegression_Light.txt: missing" in message
    root = write_aadb(tmp_path / "two")
    train = root / "imgListFiles_label" / "imgListTrainRegression_score.txt"
    test = root / "imgListFiles_label" / "imgListTestRegression_score.txt"
    test.write_text(test.read_text() + train.read_text().splitlines()[0] + "\n")
    assert "is also in the train set" in _error(load_aadb, root)


def test_aadb_bad_raw_ratings_are_named(tmp_path):
    root = write_aadb(tmp_path)
    raw = pd.read_csv(root / "AADB_AllinAll.csv", dtype=str, keep_default_na=False)
    raw.loc[3, "Answer.overallScore2"] = "7"
    raw.to_csv(root / "AADB_AllinAll.csv", index=False)
    message = _error(load_aadb, root)
    assert "AADB_AllinAll.csv: column 'Answer.overallScore2'" in message and "line 5 " in message
    raw.loc[3, "Answer.overallScore2"] = "3"
    raw.loc[4, "Input.image_url1"] = "not a url"
    raw.to_csv(root / "AADB_AllinAll.csv", index=False)
    message = _error(load_aadb, root)
    assert "column 'Input.image_url1' has a URL that names no image" in message
    assert "line 6 " in message
    raw.drop(columns=[c for c in raw.columns if c.startswith("Answer")]).to_csv(
        root / "AADB_AllinAll.csv", index=False
    )
    assert "no columns Input.image_url<k> with Answer.overallScore<k>" in _error(load_aadb, root)


# --- KonIQ-10k -------------------------------------------------------------------------------


def test_koniq_rebuilds_the_vote_histogram(tmp_path):
    frame = koniq_frame()
    ds = load_koniq(write_koniq(tmp_path, frame))
    assert len(ds) == 10 and ds.ratings.empty
    counts = np.rint(
        frame[[f"c{k}" for k in range(1, 6)]].to_numpy() * frame[["c_total"]].to_numpy()
    )
    assert ds.images["n_raters"].tolist() == counts.sum(axis=1).astype(int).tolist()
    assert ds.images["mean_score"].to_numpy() == pytest.approx(
        counts @ np.arange(1, 6) / counts.sum(axis=1)
    )
    assert ds.images["mos"].tolist() == frame["MOS"].tolist()
    assert ds.images["split"].tolist()[:3] == ["training", "validation", "test"]
    assert ds.summary["attribute"].eq("mos").all()


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("c2", "lots", r"column 'c2' has 1 value\(s\) that are not numbers"),
        ("c2", "0.9", r"column 'c1\+c2\+c3\+c4\+c5' has fractions that do not sum to 1"),
        ("c_total", "120.5", r"column 'c_total' has 1 value\(s\) that are not whole numbers"),
        ("MOS", "", r"column 'MOS' has 1 value\(s\) that are not numbers in 1-100"),
        ("set", "train", r"column 'set' has a set other than"),
        ("image_name", "826373.jpg", r"column 'image_name' has an id listed more than once"),
    ],
)
def test_koniq_bad_cells_are_named(tmp_path, column, value, expected):
    frame = koniq_frame().astype(str)
    frame.loc[4, column] = value
    message = _error(load_koniq, write_koniq(tmp_path, frame))
    assert "koniq10k_distributions_sets.csv" in message and re.search(expected, message), message
    assert "line 6 " in message


def test_koniq_missing_column_and_image_are_named(tmp_path):
    message = _error(load_koniq, write_koniq(tmp_path, koniq_frame().drop(columns="c_total")))
    assert "missing column(s) c_total" in message
    root = write_koniq(tmp_path / "img")
    (root / "1024x768" / "826375.jpg").unlink()
    message = _error(load_koniq, root)
    assert "an image missing on disk" in message and "line 4 (image_name=826375.jpg)" in message


# --- SPAQ ------------------------------------------------------------------------------------


def test_spaq_reads_the_workbook_and_has_means_only(tmp_path):
    frame = spaq_frame()
    ds = load_spaq(write_spaq(tmp_path, frame))
    assert len(ds) == 6 and ds.ratings.empty and ds.votes is None
    assert ds.images["mean_score"].tolist() == frame["MOS"].tolist()
    assert ds.images["quality"].tolist() == frame["Sharpness"].tolist()
    assert ds.images["colour"].tolist() == frame["Colorfulness"].tolist()
    assert not ds.attributes["noisiness"].higher_is_better
    assert ds.images["n_raters"].isna().all() and "split" not in ds.images


def test_spaq_bad_cells_and_files_are_named(tmp_path):
    frame = spaq_frame().astype(object)
    frame.loc[2, "MOS"] = "n/a"
    message = _error(load_spaq, write_spaq(tmp_path, frame))
    assert "MOS and Image attribute scores.xlsx: column 'MOS'" in message
    assert "line 4 (Image name=00003.jpg): 'n/a'" in message
    frame = spaq_frame()
    frame.loc[1, "Sharpness"] = 130
    assert "column 'Sharpness'" in _error(load_spaq, write_spaq(tmp_path / "r", frame))
    message = _error(load_spaq, write_spaq(tmp_path / "c", spaq_frame().drop(columns="Contrast")))
    assert "missing column(s) Contrast (found: Image name, MOS" in message
    root = write_spaq(tmp_path / "i")
    (root / "TestImage" / "00002.jpg").unlink()
    assert "line 3 (Image name=00002.jpg)" in _error(load_spaq, root)
    (root / "Annotations" / "MOS and Image attribute scores.xlsx").write_text("not a workbook")
    assert "cannot be read as an Excel workbook" in _error(load_spaq, root)


# --- LAPIS -----------------------------------------------------------------------------------


def test_lapis_reads_raters_images_and_sets(tmp_path):
    frame = lapis_frame()
    ds = load_lapis(write_lapis(tmp_path, frame))
    assert len(ds) == 8 and len(ds.ratings) == 48 and (ds.images["n_raters"] == 6).all()
    assert ds.images["image_id"].tolist()[0] == "100"
    assert ds.images.loc[0, "mean_score"] == frame[frame.image_id == 100]["response"].mean()
    assert ds.images["split"].tolist()[:3] == ["train", "validation", "test"]
    assert ds.images["art_type"].tolist()[:2] == ["impressionism", "baroque"]
    assert ds.images["style"].tolist()[:2] == ["Impressionism", "Baroque"]
    assert {"age", "demo_gender"} <= set(ds.ratings.columns)
    unsplit = load_lapis(write_lapis(tmp_path / "n", sets=False))
    assert "split" not in unsplit.images


def test_lapis_bad_input_is_named(tmp_path):
    frame = lapis_frame().astype(object)
    frame.loc[7, "response"] = "great"
    message = _error(load_lapis, write_lapis(tmp_path, frame))
    assert (
        "column 'response'" in message and "line 9 (image_id=101, participant_id=5001)" in message
    )
    frame = lapis_frame()
    frame.loc[7, "participant_id"] = 5000
    message = _error(load_lapis, write_lapis(tmp_path / "d", frame))
    assert "(rater, image) pair(s) appear more than once" in message and "line 9 " in message
    frame = lapis_frame()
    frame.loc[8, "file"] = "baroque/other.jpg"
    message = _error(load_lapis, write_lapis(tmp_path / "f", frame))
    assert "column 'file' has another file for the same image_id" in message
    root = write_lapis(tmp_path / "s")
    (root / "imageset" / "ValImageSet.txt").write_text("img_001.jpg\nnope.jpg\n")
    assert "ValImageSet.txt:2: image 'nope.jpg' is not in the ratings file" in _error(
        load_lapis, root
    )
    (root / "imageset" / "ValImageSet.txt").write_text("img_000.jpg\n")
    assert "ValImageSet.txt:1: image 'img_000.jpg' is also in the train set" in _error(
        load_lapis, root
    )
