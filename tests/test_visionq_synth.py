"""The synthetic VisionQ benchmark: released layout, loadable, deterministic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from judgepanel.datasets import load_visionq
from judgepanel.datasets.taxonomy import load_taxonomy
from judgepanel.datasets.visionq import ineligible_reasons, load_questions
from judgepanel_sim.world.visionq import CRITERIA, write_visionq


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_writer_is_deterministic_and_loadable(tmp_path):
    a = write_visionq(tmp_path / "a", 7, n_papers=4)
    write_visionq(tmp_path / "b", 7, n_papers=4)
    assert a == tmp_path / "a" / "data" / "benchmark" / "test_questions.jsonl"
    files_a, files_b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert files_a == files_b and len(files_a) > 6
    c = write_visionq(tmp_path / "c", 8, n_papers=4)
    assert c.read_bytes() != a.read_bytes()

    root = tmp_path / "a"
    frame = load_questions(root)
    everything = load_visionq(a, root / "bench")
    assert 0 < len(frame) <= len(everything)
    assert frame["paper_id"].str.fullmatch(r"(cvpr|iccv)\d{4}_\d{4}").all()
    assert frame["leaf_known"].all()
    assert frame["n_choices"].between(2, 4).all()
    tax = load_taxonomy()
    phrases = {(c.axis, c.leaf): c.phrases for c in CRITERIA}
    for q in everything.itertuples():
        assert q.id == f"{q.paper_id}__{q.fig_id}__{q.row}"
        assert tax.has_leaf(q.axis, q.leaf)
        assert any(
            q.question == f"Which method demonstrates better {p}?"
            for p in phrases[(q.axis, q.leaf)]
        )
        gold_method = q.methods["ABCD".index(q.gold)]
        assert gold_method == "Ours" or gold_method.endswith("(ours)")
        for f in q.image_files:
            with Image.open(f) as im:
                assert max(im.size) <= 512


def test_rewrite_replaces_old_crops(tmp_path):
    write_visionq(tmp_path, 1, n_papers=2)
    qfile = write_visionq(tmp_path, 2, n_papers=2)
    papers = {json.loads(line)["paper_id"] for line in qfile.read_text().splitlines()}
    on_disk = {p.name for p in (tmp_path / "bench").iterdir()}
    assert on_disk == papers, "papers of the first run are gone"


@pytest.mark.slow
def test_release_layout_data_points_and_quality_flags(tmp_path):
    qfile = write_visionq(tmp_path, 11, n_papers=30)
    questions = [json.loads(line) for line in qfile.read_text().splitlines()]
    points_file = tmp_path / "data" / "benchmark" / "data_points.jsonl"
    points = {
        p["data_point_key"]: p
        for p in (json.loads(line) for line in points_file.read_text().splitlines())
    }
    assert not (tmp_path / "data" / "benchmark" / "eligible_ids.txt").exists()
    assert len(points) == len(questions)
    ineligible = set()
    for q in questions:
        point = points[q["v5_data_point_key"]]
        # Crops resolve under bench/, as the official harness resolves image_paths.
        assert all((tmp_path / "bench" / p).is_file() for p in q["image_paths"])
        assert [b["crop_path"] for b in point["evidence"]["bboxes"]] == q["image_paths"]
        assert [b["method_raw"] for b in point["evidence"]["bboxes"]] == q["methods"]
        flags = point["quality_flags"]
        assert flags["benchmark_eligible"] == (not flags["ineligible_reasons"])
        # The recorded flags are what the release's checks on the labels give.
        assert flags["ineligible_reasons"] == ineligible_reasons(q["methods"])
        if "Reference" in q["methods"]:
            assert flags["ineligible_reasons"][0] == "choice_is_context_panel"
            assert ("single_method_family_after_ref_strip" in flags["ineligible_reasons"]) == (
                len(q["methods"]) == 2
            )
            ineligible.add(q["id"])
        else:
            assert flags == {"benchmark_eligible": True, "ineligible_reasons": []}
    assert 0 < len(ineligible) < 0.2 * len(questions)
    kept = load_questions(tmp_path)
    assert set(kept["id"]) == {q["id"] for q in questions} - ineligible


def test_eligible_ids_file_is_an_optional_extra(tmp_path):
    write_visionq(tmp_path, 3, n_papers=6)
    everything = load_questions(tmp_path)
    some = sorted(everything["id"])[:5]
    (tmp_path / "data" / "benchmark" / "eligible_ids.txt").write_text("\n".join(some) + "\n")
    assert sorted(load_questions(tmp_path)["id"]) == some
