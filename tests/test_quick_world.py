"""Quick worlds: ``--quick`` shrinks VAB and VisionQ, and a changed size rewrites a world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgepanel.datasets.visionq import load_questions
from judgepanel_sim.world.world import TRUTH_DIR, write_worlds


def _manifest(out: Path, world: str) -> dict:
    return json.loads((out / TRUTH_DIR / f"{world}.json").read_text())


def test_a_changed_size_rewrites_the_world_when_asked(tmp_path: Path) -> None:
    log: list[str] = []
    write_worlds(tmp_path, n_images=5, seed=1, only=("para",), log=log.append)
    with pytest.raises(ValueError, match="FORCE=1"):
        write_worlds(tmp_path, n_images=6, seed=1, only=("para",), log=log.append)
    write_worlds(tmp_path, n_images=6, seed=1, only=("para",), replace_changed=True, log=log.append)
    assert _manifest(tmp_path, "synth-para")["n_images"] == 6
    assert any("rewriting" in line for line in log)
    log.clear()
    write_worlds(tmp_path, n_images=6, seed=1, only=("para",), replace_changed=True, log=log.append)
    assert any("kept" in line for line in log)  # the same parameters keep the world


@pytest.mark.slow
def test_quick_shrinks_visionq_and_is_remembered(tmp_path: Path) -> None:
    write_worlds(tmp_path, seed=1, only=("visionq",), quick=True, log=lambda _: None)
    assert _manifest(tmp_path, "synth-visionq")["quick"] is True
    questions = load_questions(tmp_path / "synth-visionq")
    assert 0 < len(questions) < 100
    with pytest.raises(ValueError, match="quick"):
        write_worlds(tmp_path, seed=1, only=("visionq",), log=lambda _: None)


@pytest.mark.slow
def test_a_quick_world_of_another_size_is_rewritten(tmp_path: Path, monkeypatch) -> None:
    """A quick world's manifest holds its size: when the quick size changes, the world
    made at the old size counts as changed (rewritten with --replace-changed)."""
    from judgepanel_sim.world import world as W

    write_worlds(tmp_path, seed=1, only=("visionq",), quick=True, log=lambda _: None)
    assert _manifest(tmp_path, "synth-visionq")["n_papers"] == W.QUICK_SIZES["visionq"]["n_papers"]
    monkeypatch.setitem(W.QUICK_SIZES, "visionq", {"n_papers": 3})
    with pytest.raises(ValueError, match="n_papers"):
        write_worlds(tmp_path, seed=1, only=("visionq",), quick=True, log=lambda _: None)
    log: list[str] = []
    write_worlds(
        tmp_path, seed=1, only=("visionq",), quick=True, replace_changed=True, log=log.append
    )
    assert _manifest(tmp_path, "synth-visionq")["n_papers"] == 3
    assert any("rewriting" in line for line in log)
