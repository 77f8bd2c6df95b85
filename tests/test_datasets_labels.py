"""Labels read without loss and without the images: a renamed column is one line naming the
file, what it found, what it missed and the fix; ``missing_images`` decides what an image
absent from disk does; ``data describe`` works from the label files alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from release_files import JPEG, WRITERS, spaq_frame, write_aadb, write_spaq
from release_forms import para_giaa_ratings, write_cadb, write_live, write_para_giaa
from test_datasets_eva_para import EVA_HEADER, write_eva, write_para

from judgepanel.cli import main
from judgepanel.cli.exit_codes import BAD_INPUT
from judgepanel.datasets import Dataset, DatasetError, load_dataset
from judgepanel.stats import noise_ceiling

ALL_WRITERS = {
    **WRITERS,
    "eva": write_eva,
    "para": write_para,
    "para_giaa": lambda root: write_para_giaa(root, para_giaa_ratings(8, 6)),
    "live_wild": lambda root: write_live(root, n_images=12)[0],
    "cadb": lambda root: write_cadb(root, n_images=8)[0],
}
"""Each form's writer; ``para_giaa`` is the ``para`` kind read from its GIAA files."""


def kind_of(form: str) -> str:
    return "para" if form == "para_giaa" else form


def _rename(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8-sig")
    header, _, rest = text.partition("\n")
    path.write_text(header.replace(old, new, 1) + "\n" + rest, encoding="utf-8")


def _spaq(root: Path) -> Path:
    return write_spaq(root, spaq_frame().rename(columns={"Contrast": "Contrasts"}))


def _aadb(root: Path) -> Path:
    root = write_aadb(root)
    folder = root / "imgListFiles_label"
    for split in ("Train", "Validation", "Test"):
        old = folder / f"imgList{split}Regression_Light.txt"
        old.rename(folder / f"imgList{split}Regression_Lite.txt")
    return root


def _cadb(root: Path) -> Path:
    root = write_cadb(root, n_images=6)[0]
    path = root / "composition_scores.json"
    path.write_text(path.read_text().replace('"scores"', '"score"', 1))
    return root


def _renamed(writer, file: str, old: str, new: str):  # type: ignore[no-untyped-def]
    def write(root: Path) -> Path:
        root = writer(root)
        _rename(root / file, old, new)
        return root

    return write


RENAMED = {
    "eva": (_renamed(write_eva, "data/votes_filtered.csv", "visual", "visuals"),
            r"votes_filtered\.csv: missing column\(s\) visual \(found: .*visuals.*\); rename"),
    "para": (_renamed(write_para, "annotation/PARA-Images.csv", "colorScore", "colourScore"),
             r"PARA-Images\.csv: missing column\(s\) colorScore \(found: .*colourScore.*\); "),
    "para_giaa": (
        _renamed(ALL_WRITERS["para_giaa"], "annotation/PARA-GiaaTrain.csv",
                 "aestheticScore_1.0", "aestheticScore_1"),
        r"PARA-GiaaTrain\.csv: missing column\(s\) aestheticScore_1\.0 \(found: .*\); PARA's",
    ),
    "ratings": (_renamed(WRITERS["ratings"], "ratings.csv", "rater_id", "rater"),
                r"ratings\.csv: unknown column\(s\) rater; expected image_id, .*rater_id"),
    "koniq": (_renamed(WRITERS["koniq"], "koniq10k_distributions_sets.csv", "MOS", "mos"),
              r"distributions_sets\.csv: missing column\(s\) MOS \(found: .*mos.*\); the KonIQ"),
    "spaq": (_spaq, r"scores\.xlsx: missing column\(s\) Contrast \(found: .*Contrasts.*\); SPAQ"),
    "lapis": (_renamed(WRITERS["lapis"], "annotation/LAPIS_individualratings_metaANDdemodata.csv",
                       "response", "rating"),
              r"metaANDdemodata\.csv: missing column\(s\) response \(found: .*rating.*\); rename"),
    "aadb": (_aadb, r"imgList\w+Regression_Lite\.txt: unknown AADB attribute 'Lite' \(known: "
                    r".*BalacingElements\); rename it"),
    "cadb": (_cadb, r"composition_scores\.json: image '.*' has no list 'scores' \(found: score, "),
}  # fmt: skip


@pytest.mark.parametrize("form", list(RENAMED))
def test_a_renamed_column_is_one_line_naming_file_found_missing_and_fix(tmp_path, form):
    writer, expected = RENAMED[form]
    with pytest.raises(DatasetError) as info:
        load_dataset(kind_of(form), str(writer(tmp_path / form)))
    message = str(info.value)
    assert "\n" not in message and re.search(expected, message), message


def test_an_unread_column_is_listed_not_dropped(tmp_path):
    root = write_eva(tmp_path, header=EVA_HEADER.replace("vote_time", "vote_tim"))
    ds = load_dataset("eva", str(root))
    assert ds.notes == ("votes_filtered.csv: column(s) not read: vote_tim",)


def test_the_authors_spelling_of_balancing_elements_is_mapped_and_said(tmp_path):
    root = write_aadb(tmp_path)
    folder = root / "imgListFiles_label"
    for split in ("Train", "Validation", "Test"):
        light = (folder / f"imgList{split}Regression_Light.txt").read_text()
        (folder / f"imgList{split}Regression_BalacingElements.txt").write_text(light)
    ds = load_dataset("aadb", str(root))
    assert ds.attributes["balancing_elements"].name == "BalancingElements"
    assert np.allclose(ds.images["balancing_elements"], ds.images["light"])
    assert "BalacingElements (the authors' spelling) read as BalancingElements" in ds.notes


def _delete_images(root: Path, keep: int = 0) -> int:
    """Delete the image files under ``root`` but the first ``keep``; how many there were."""
    images = sorted(p for p in root.rglob("*") if p.is_file() and p.read_bytes() == JPEG)
    for path in images[keep:]:
        path.unlink()
    return len(images)


@pytest.mark.parametrize("form", list(ALL_WRITERS))
def test_missing_images_error_skip_or_keep(tmp_path, form):
    kind = kind_of(form)
    root = ALL_WRITERS[form](tmp_path / form)
    full = load_dataset(kind, str(root))
    assert full.n_on_disk == len(full)
    _delete_images(root, keep=2)
    present = sum(Path(p).is_file() for p in full.images["path"])
    absent = len(full) - present
    with pytest.raises(DatasetError) as info:
        load_dataset(kind, str(root))
    message = str(info.value)
    assert "missing" in message and "missing_images='skip'" in message and "\n" not in message
    # one count over the dataset, or (a file that names lines) over that file's lines
    assert f"{absent} of {len(full)} " in message or re.search(r"on \d+ line\(s\)", message)
    skipped = load_dataset(kind, str(root), missing_images="skip")
    assert len(skipped) == skipped.n_on_disk == present > 0
    assert set(skipped.ratings["image_id"]) <= set(skipped.images["image_id"])
    kept = load_dataset(kind, str(root), missing_images="keep")
    assert len(kept) == len(full) and kept.n_on_disk == present
    pd.testing.assert_frame_equal(kept.images, full.images)


def test_describe_reads_labels_alone(tmp_path, capsys):
    root = WRITERS["koniq"](tmp_path / "koniq")
    _delete_images(root)
    quick = ["--splits", "20", "--resamples", "30"]
    assert main(["data", "describe", "--dataset", f"koniq:{root}", *quick]) == 0
    text = capsys.readouterr().out
    assert "on disk    0 of 10 images" in text and "split-half of exchangeable votes" in text
    assert "mos: the released MOS on 1-100 and its SD on the same scale" in text
    assert main(["data", "describe", "--dataset", f"koniq:{root}", "--json", *quick]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n_on_disk"] == 0 and info["ceiling"] is not None
    mos = next(a for a in info["attributes"] if a["column"] == "mos")
    assert mos["ceiling_method"] == "summary_ctt" and mos["ceiling"] < 0.999
    argv = ["data", "describe", "--dataset", f"koniq:{root}", "--option", "mos_scale=1-5"]
    assert main(argv) == BAD_INPUT and "not numbers in 1-5" in capsys.readouterr().err
    assert main([*argv[:-1], "nope=1"]) == BAD_INPUT
    assert "KEY one of missing_images, mos_scale, sd_scale" in capsys.readouterr().err


@pytest.mark.parametrize("form", list(ALL_WRITERS))
def test_every_kind_states_licence_and_citation(tmp_path, form):
    ds = load_dataset(kind_of(form), str(ALL_WRITERS[form](tmp_path / form)))
    assert ds.licence and ds.citation


def test_an_sd_without_n_says_so(tmp_path):
    ds = load_dataset("koniq", str(WRITERS["koniq"](tmp_path)))
    summary = ds.summary.assign(n=np.nan)
    found = noise_ceiling(Dataset(**{**ds.__dict__, "summary": summary}), attribute="mos")
    assert found.method == "none" and "SD is released but not how many ratings" in found.reason


def test_describe_cadb_gives_the_composition_ceiling(tmp_path, capsys):
    root = write_cadb(tmp_path / "cadb", n_images=30)[0]
    argv = ["data", "describe", "--dataset", f"cadb:{root}", "--json", "--splits", "20"]
    assert main([*argv, "--resamples", "30"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["ceiling"] is None and "no overall rating" in info["ceiling_reason"]
    (composition,) = info["attributes"]
    assert composition["ceiling_method"] == "per_rater_split_half" and composition["ceiling"] > 0
    assert info["citation"].startswith("Zhang, B.")


@pytest.mark.parametrize("form", list(ALL_WRITERS))
def test_label_files_alone_load_with_keep(tmp_path, form):
    root = ALL_WRITERS[form](tmp_path / form)
    n = len(load_dataset(kind_of(form), str(root)))
    _delete_images(root)
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    ds = load_dataset(kind_of(form), str(root), missing_images="keep")
    assert len(ds) == n and ds.n_on_disk == 0
