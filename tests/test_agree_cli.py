"""``judgepanel agree`` end to end on the small scored project: text and ``--json`` per
judge (QWK, alpha, Spearman, bias, repeatability, the alt-test with epsilon and metric
named), the people's reliability beside them; bad input is one line and exit code 1."""

from __future__ import annotations

import json

import pytest

from judgepanel.cli import main
from judgepanel.cli.exit_codes import BAD_INPUT

FAMILIES = ["aurora", "basalt", "cobalt", "dune", "ember"]


def _args(project, kind: str = "para", *extra: str) -> list[str]:
    root = project.root / "synth" / f"synth-{kind}"
    return ["agree", "--dataset", f"{kind}:{root}", "--store", str(project.store),
            "--resamples", "50", *extra]  # fmt: skip


def test_json_gives_every_judge_and_the_panel_its_alt_test(small_project, capsys):
    assert main(_args(small_project, "para", "--json", "--epsilon", "0.15")) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["dataset"] == "para" and info["mapping"] == "linear 1-10 -> 1-5"
    assert list(info["judges"]) == [*FAMILIES, "panel mean"]
    assert {"alpha_interval", "ICC(2,1)", "ICC(2,k)"} <= set(info["human_reliability"])
    for name, entry in info["judges"].items():
        alt = entry["alt_test"]
        assert set(alt) >= {"winning_rate", "advantage_probability", "passed", "epsilon",
                            "metric", "q"}  # fmt: skip
        assert (alt["epsilon"], alt["metric"], alt["q"]) == (0.15, "neg_rmse", 0.05)
        assert alt["passed"] == (alt["winning_rate"] >= 0.5)
        assert 0.0 <= alt["advantage_probability"] <= 1.0
        if name != "panel mean":
            assert -1.0 <= entry["qwk"]["estimate"] <= 1.0
            assert entry["repetitions"] == 5 and entry["repeatability_alpha"] > 0


def test_text_names_the_mapping_the_people_and_each_verdict(small_project, capsys):
    assert main(_args(small_project, "eva", "--min-items", "10", "--metric", "abs")) == 0
    out = capsys.readouterr().out
    notes = [x for x in out.splitlines() if x.startswith("note: ")]
    lines = [x for x in out.splitlines() if not x.startswith("note: ")]
    assert notes[0].startswith("note: holistic: the rubric gives it no scale, so it is read")
    assert lines[0].startswith("eva (eva), rubric ") and "holistic, quality" in lines[0]
    assert lines[1].startswith("holistic vs the overall rating (score, 0-10)")
    assert "linear 1-10 -> 0-10" in lines[1]
    assert lines[2].startswith("  people: alpha_interval")
    for fam in FAMILIES:
        line = next(x for x in lines if x.startswith(f"  {fam}:"))  # the holistic question's
        assert "QWK" in line and "repeatability alpha" in line
        assert "alt-test (abs, epsilon 0.1, q 0.05)" in line
        assert line.endswith(("passed", "not passed"))


def test_too_few_images_per_annotator_is_said_not_failed(small_project, capsys):
    assert main(_args(small_project, "eva", "--json")) == 0
    alt = json.loads(capsys.readouterr().out)["judges"]["aurora"]["alt_test"]
    assert "no annotator has 30 instances" in alt["not_tested"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--dataset", "eva:/no/such/folder"], "/no/such/folder"),
        (["--dataset", "nonsense"], "expected KIND:PATH"),
        (["--store", "/no/such.sqlite"], "/no/such.sqlite: no such store file"),
        (["--epsilon", "1.5"], "--epsilon"),
        (["--store-dataset", "nosuch"], "no holistic or dimension answers under dataset 'nosuch'"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(small_project, capsys, change, message):
    args = _args(small_project, "para")
    flag = change[0]
    at = args.index(flag) if flag in args else None
    if at is None:
        args += change
    else:
        args[at + 1] = change[1]
    assert main(args) == BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and message in err and "\n" not in err


def test_answers_from_elsewhere_agree_as_the_store_they_came_from(small_project, tmp_path, capsys):
    """``--answers``: the store's answers exported as a long CSV and read back give the same
    statistics as the store itself (the judges, their agreement and the alt-test)."""
    long = tmp_path / "para.csv"
    argv = ["export", "--long", "--store", str(small_project.store), "--dataset", "para"]
    assert main([*argv, "--out", str(long)]) == 0
    capsys.readouterr()
    assert main(_args(small_project, "para", "--json")) == 0
    stored = json.loads(capsys.readouterr().out)
    root = small_project.root / "synth" / "synth-para"
    from_file = ["agree", "--dataset", f"para:{root}", "--answers", str(long),
                 "--resamples", "50", "--json"]  # fmt: skip
    assert main(from_file) == 0
    read = json.loads(capsys.readouterr().out)
    assert list(read["judges"]) == list(stored["judges"])
    for name in FAMILIES:
        assert read["judges"][name]["qwk"] == stored["judges"][name]["qwk"]
        assert read["judges"][name]["alt_test"] == stored["judges"][name]["alt_test"]
    assert main([*from_file[:3], "--answers", str(tmp_path / "none.csv")]) == BAD_INPUT
    assert "none.csv: answers file not found" in capsys.readouterr().err


def test_labels_without_images_agree_as_with_them(small_project, tmp_path, capsys):
    """agree reads labels only: a copy of PARA's label files without its images agrees
    exactly as the release with every image on disk."""
    import shutil

    root = small_project.root / "synth" / "synth-para"
    bare = tmp_path / "para-labels"
    shutil.copytree(root, bare, ignore=shutil.ignore_patterns("*.jpg", "*.png"))
    assert not list(bare.rglob("*.jpg")) and not list(bare.rglob("*.png"))
    assert main(_args(small_project, "para", "--json")) == 0
    with_images = json.loads(capsys.readouterr().out)
    argv = _args(small_project, "para", "--json")
    argv[argv.index("--dataset") + 1] = f"para:{bare}"
    assert main(argv) == 0
    without = json.loads(capsys.readouterr().out)
    assert without == with_images
