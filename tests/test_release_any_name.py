"""A release's scores file given as a file path is read under any name (issue 56): SPAQ's
CSV exported as ``mos_scores.csv``, its workbook renamed, and the single scores file of
AVA, KonIQ-10k and LAPIS; the images are found where the release keeps them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from release_files import spaq_frame, write_ava, write_koniq, write_lapis, write_spaq
from release_forms import write_spaq_csv

from judgepanel.cli.exit_codes import BAD_INPUT
from judgepanel.datasets import DatasetError, load_dataset


def describe(spec: str) -> subprocess.CompletedProcess[str]:
    """``judgepanel data describe`` as a user runs it."""
    command = [sys.executable, "-m", "judgepanel.cli", "data", "describe", "--dataset", spec]
    return subprocess.run(
        [*command, "--json", "--splits", "5", "--resamples", "5"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_spaq_exported_as_mos_scores_csv_is_read(tmp_path: Path) -> None:
    root = write_spaq_csv(tmp_path / "spaq", spaq_frame())
    released = root / "Annotations" / "MOS and Image attribute scores.csv"
    beside = root / "mos_scores.csv"  # beside TestImage/
    beside.write_bytes(released.read_bytes().replace(b"\n", b"\r\n"))  # as Excel saves it
    inside = released.rename(root / "Annotations" / "mos_scores.csv")  # where the release has it
    expected = load_dataset("spaq", str(root / "Annotations" / "mos_scores.csv"))
    assert len(expected) == 6 and expected.n_on_disk == 6 and expected.root == root
    for path in (beside, inside):
        done = describe(f"spaq:{path}")
        assert done.returncode == 0, done.stderr
        info = json.loads(done.stdout)
        assert (info["n_images"], info["n_on_disk"]) == (6, 6)
        assert f"read {path.name}" in info["notes"]
    # the folder still wants the author's name
    assert describe(f"spaq:{root}").returncode == BAD_INPUT


def test_spaq_workbook_renamed_is_read(tmp_path: Path) -> None:
    root = write_spaq(tmp_path / "spaq")
    renamed = (root / "Annotations" / "MOS and Image attribute scores.xlsx").rename(
        root / "Annotations" / "spaq.xlsx"
    )
    ds = load_dataset("spaq", str(renamed))
    assert len(ds) == 6 and ds.n_on_disk == 6


@pytest.mark.parametrize(
    ("kind", "write", "released", "renamed"),
    [
        ("ava", write_ava, "AVA.txt", "ava_votes.txt"),
        ("koniq", write_koniq, "koniq10k_distributions_sets.csv", "koniq.csv"),
        ("lapis", write_lapis, "annotation/LAPIS_individualratings_metaANDdemodata.csv",
         "annotation/lapis_ratings.csv"),
    ],
)  # fmt: skip
def test_every_single_file_release_reads_its_scores_under_any_name(
    tmp_path: Path, kind, write, released, renamed
) -> None:
    root = write(tmp_path / kind)
    before = load_dataset(kind, str(root))
    path = (root / released).rename(root / renamed)
    after = load_dataset(kind, str(path))
    assert after.root == root and after.n_on_disk == before.n_on_disk == len(before)
    pd.testing.assert_frame_equal(after.images, before.images)


@pytest.mark.slow
def test_a_renamed_file_of_another_kind_names_the_columns(tmp_path: Path) -> None:
    root = write_koniq(tmp_path / "koniq")
    wrong = root / "koniq10k_distributions_sets.csv"
    done = describe(f"spaq:{wrong}")
    assert done.returncode == BAD_INPUT and done.stderr.count("\n") == 1, done.stderr
    assert str(wrong) in done.stderr and "SPAQ's scores file has the columns" in done.stderr
    with pytest.raises(DatasetError, match=r"no SPAQ scores file; .* give the scores file's"):
        load_dataset("spaq", str(tmp_path / "nowhere.csv"))
