"""``judgepanel data describe`` as a user runs it, on a small dataset of every rated kind.

Text and ``--json`` output for each format (EVA, PARA, the generic ``ratings`` format,
AVA, AADB, KonIQ-10k, SPAQ, LAPIS); a bad path, a bad ``--dataset`` and a malformed
file are one line on stderr and exit code 1.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from release_files import WRITERS as RELEASE_WRITERS
from release_files import write_ava, write_generic, write_koniq
from test_datasets_eva_para import _para_frame, write_eva, write_para

from judgepanel.cli import main
from judgepanel.cli.exit_codes import BAD_INPUT


def _write_para(root: Path) -> Path:
    """PARA's test frame with an overall score that follows the image (a defined ceiling)."""
    frame = _para_frame(n_images=8, n_raters=5)
    image = frame["imageName"].str.extract(r"(\d+)")[0].astype(int) - 500
    noise = (frame.index.to_series() * 7 % 3 - 1) * 0.5
    frame["aestheticScore"] = (1 + 0.5 * image + noise).clip(1, 5)
    return write_para(root, frame)


EXPECTED = {
    "eva": ("per_rater_split_half", "raters", 6),
    "para": ("per_rater_split_half", "raters", 8),
    "ratings": ("per_rater_split_half", "raters", 8),
    "ava": ("vote_split_half", "votes", 12),
    "aadb": ("per_rater_split_half", "raters", 9),
    "koniq": ("vote_split_half", "votes", 10),
    "spaq": ("none", "no count of raters or votes", 6),
    "lapis": ("per_rater_split_half", "raters", 8),
}
"""Per kind: the ceiling method, what is counted per image, and the fixture's images."""
WRITERS = {"eva": write_eva, "para": _write_para, **RELEASE_WRITERS}
KEYS = {"n_images", "attributes", "ceiling", "ceiling_method", "ceiling_ci"}
QUICK = ["--splits", "20", "--resamples", "50"]


def _describe(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(["data", "describe", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_describe_every_kind_in_text_and_json(tmp_path, capsys, kind):
    method, unit, n_images = EXPECTED[kind]
    root = WRITERS[kind](tmp_path / kind)
    code, text, err = _describe(capsys, "--dataset", f"{kind}:{root}", *QUICK)
    assert code == 0 and err == ""
    assert f"images     {n_images}" in text and f"per image  {unit}" in text
    assert "noise ceiling" in text and "attributes" in text
    code, out, _ = _describe(capsys, "--dataset", f"{kind}:{root}", "--json", *QUICK)
    info = json.loads(out)
    assert code == 0 and set(info) >= KEYS
    assert info["n_images"] == n_images and info["ceiling_method"] == method
    assert len(info["ceiling_ci"]) == 2
    assert any(a["dimension"] == "holistic" and a["column"] == "score" for a in info["attributes"])
    if method == "none":
        assert info["ceiling"] is None and info["ceiling_ci"] == [None, None]
        assert "mean alone" in info["ceiling_reason"] and "mean alone" in text
    else:
        low, high = info["ceiling_ci"]
        assert 0 < low <= info["ceiling"] <= high <= 1
        assert f"{info['ceiling']:.3f}" in text


def test_splits_and_licence_are_shown(tmp_path, capsys):
    root = write_generic(tmp_path / "r")
    code, out, _ = _describe(capsys, "--dataset", f"ratings:{root}", "--json", *QUICK)
    info = json.loads(out)
    assert info["splits"] == {"train": 6, "test": 2} and info["licence"] == "CC0 1.0"
    turned = next(a for a in info["attributes"] if a["column"] == "composition")
    assert turned["name"] == "clutter" and not turned["higher_is_better"] and turned["turned"]
    assert code == 0
    code, text, _ = _describe(capsys, "--dataset", f"ratings:{root}", *QUICK)
    assert code == 0
    assert "images     8 (split: train 6, test 2)" in text
    assert "higher is worse (turned around in the tables)" in text


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ava:{tmp}/nowhere", "nowhere/AVA.txt: the AVA votes file (AVA.txt) is missing"),
        ("ratings:{tmp}/nowhere", "nowhere: not a folder"),
        ("ava", "expected KIND:PATH"),
        ("vab:{tmp}", "kind 'vab' has no per-image human ratings"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(tmp_path, capsys, spec, expected):
    code, out, err = _describe(capsys, "--dataset", spec.format(tmp=tmp_path))
    assert code == BAD_INPUT == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and expected in err


def test_a_malformed_file_names_its_line(tmp_path, capsys):
    root = write_ava(tmp_path / "ava")
    lines = (root / "AVA.txt").read_text().splitlines()
    lines[2] += " 7"
    (root / "AVA.txt").write_text("\n".join(lines) + "\n")
    code, _, err = _describe(capsys, "--dataset", f"ava:{root}")
    assert code == BAD_INPUT and "AVA.txt" in err and "line 3" in err and err.count("\n") == 1


@pytest.mark.slow
def test_the_installed_command_runs_as_a_user_would(tmp_path):
    root = write_koniq(tmp_path / "koniq")
    command = [sys.executable, "-m", "judgepanel.cli", "data", "describe"]
    done = subprocess.run(
        [*command, "--dataset", f"koniq:{root}", "--json", *QUICK],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ceiling_method"] == "vote_split_half"
    bad = subprocess.run(
        [*command, "--dataset", f"koniq:{Path(tmp_path) / 'missing'}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == BAD_INPUT and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "koniq10k_distributions_sets.csv" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_ratings_without_shared_signal_have_no_ceiling_and_say_why(tmp_path, capsys):
    root = write_para(tmp_path / "para")  # the loader test's ratings: noise, no signal
    code, out, _ = _describe(capsys, "--dataset", f"para:{root}", "--json", *QUICK)
    info = json.loads(out)
    assert code == 0 and info["ceiling_method"] == "per_rater_split_half"
    assert info["ceiling"] is None and "do not correlate positively" in info["ceiling_reason"]


def test_describe_with_the_seed_rubric_maps_its_dimensions(tmp_path, capsys):
    from judgepanel.core.paths import project_root

    root = write_generic(tmp_path / "photos")
    rubric = str(project_root() / "rubric")
    argv = ["data", "describe", "--dataset", f"ratings:{root}", "--rubric", rubric]
    assert main([*argv, "--splits", "10", "--resamples", "20", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    by = {m["dimension"]: m for m in info["mapping"]}
    assert list(by) == [
        "holistic",
        "quality",
        "composition",
        "colour",
        "distinctiveness",
        "emotion",
    ]
    assert by["holistic"]["attribute"] == "aesthetic"
    assert (by["quality"]["attribute"], by["composition"]["attribute"]) == ("sharpness", "clutter")
    assert by["colour"]["column"] is None
    assert by["colour"]["ceiling_reason"] == "no attribute of the dataset validates it"
    assert main(["data", "describe", "--dataset", f"ratings:{root}", "--rubric", "nowhere"]) == (
        BAD_INPUT
    )
    assert "nowhere: no rubric file or folder" in capsys.readouterr().err
