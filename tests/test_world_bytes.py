"""The synthetic worlds are the demo's data: the work they share is done once, and no
shortcut moves a byte of what they write."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageFilter

from judgepanel.datasets import load_vab
from judgepanel_sim.world import render as R
from judgepanel_sim.world.render import Execution, Scene, render
from judgepanel_sim.world.vab import median_filter3, write_vab
from judgepanel_sim.world.visionq import write_visionq
from judgepanel_sim.world.world import write_worlds

# Digests of small worlds (seed 5; VAB seed 2, whose first sets cover every domain) as
# the writers made them before their shared work was cached: a change to any written byte
# shows here. A deliberate change to a world updates them, and says so in its commit.
DIGESTS = {
    "eva": "807885d1a650b69f4601e9c04c3b792dbba9f6040a0f07c82f233e0b09d2bf36",
    "para": "051871176e3cf877669b45451c4acfd099ba803c33468ebfbe415fc43c98cf16",
    "vab": "9772eab79d31938d0e82964b6325c22e25eea0336e9e8e6444094eb6099fea1a",
    "visionq": "1854e7fcad404cc0509b809dd211402b1eddd8ede6bce9792ae7c236b64035dc",
}


def tree_digest(root: Path) -> str:
    """SHA-256 over every file under ``root``: its relative path and its content."""
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


@pytest.mark.parametrize("world", ["eva", "para"])
def test_aesthetic_worlds_write_the_same_bytes(tmp_path, world):
    write_worlds(tmp_path, n_images=12, seed=5, only=(world,), log=lambda *_: None)
    assert tree_digest(tmp_path) == DIGESTS[world]


def test_vab_world_writes_the_same_bytes(tmp_path):
    write_vab(tmp_path / "synth-vab", 2, n_tasks=8)
    domains = set(load_vab(tmp_path / "synth-vab")["domain"])
    assert domains == {"fine-art", "photograph", "illustration"}  # every look is covered
    assert tree_digest(tmp_path) == DIGESTS["vab"]


def test_visionq_world_writes_the_same_bytes(tmp_path):
    write_visionq(tmp_path / "synth-visionq", 5, n_papers=6)
    copies = list(tmp_path.rglob("*_reference.png"))
    assert len(copies) == 1  # a defect row: its copied crop is written from one encode
    assert tree_digest(tmp_path) == DIGESTS["visionq"]


def _fresh(scene: Scene, ex: Execution) -> bytes:
    R._drawn.cache_clear()
    R._backdrop.cache_clear()
    return render(scene, ex).tobytes()


def test_captures_of_one_drawing_draw_it_once():
    scene = Scene("still_life", seed=11, detail=0.4)
    base = Execution(clutter=3, subject_x=0.4, vignette=0.3)
    captures = [
        base,
        replace(base, blur_sigma=1.5, noise_sd=6.0, jpeg_quality=60),
        replace(base, exposure=0.7, contrast=1.3, saturation=0.6, cast_warmth=0.4),
        replace(base, vignette=0.8, cast_tint=-0.3),
    ]
    fresh = [_fresh(scene, ex) for ex in captures]
    R._drawn.cache_clear()
    shared = [render(scene, ex).tobytes() for ex in captures]
    assert R._drawn.cache_info().misses == 1 and R._drawn.cache_info().hits == 3
    assert shared == fresh


def test_framings_of_one_scene_share_its_backdrop():
    scene = Scene("architecture", seed=4, detail=0.2, oddity=0.3)
    framings = [
        Execution(),
        Execution(subject_x=0.6, subject_scale=0.3, clutter=4),
        Execution(subject_y=0.4, clutter=1, blur_sigma=0.8),
        Execution(tilt_deg=5.0),  # another camera roll: another backdrop
    ]
    fresh = [_fresh(scene, ex) for ex in framings]
    R._drawn.cache_clear()
    R._backdrop.cache_clear()
    shared = [render(scene, ex).tobytes() for ex in framings]
    assert R._backdrop.cache_info().misses == 2 and R._backdrop.cache_info().hits == 2
    assert shared == fresh


def test_median_filter_matches_pillows_pixel_for_pixel():
    rng = np.random.default_rng(0)
    for h, w in ((3, 3), (5, 17), (64, 48), (288, 384)):
        arr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        arr[: h // 2] = arr[: h // 2] // 64 * 64  # flat areas and ties, as in a rendering
        img = Image.fromarray(arr, "RGB")
        want = np.asarray(img.filter(ImageFilter.MedianFilter(3)))
        assert np.array_equal(np.asarray(median_filter3(img)), want)


def test_worlds_written_side_by_side_are_the_same_bytes(tmp_path):
    """`data synth --jobs 2` writes each world in a worker process: the same files."""
    one, two = tmp_path / "one", tmp_path / "two"
    quiet = {"log": lambda *_: None}
    first = write_worlds(one, n_images=12, seed=5, only=("eva", "para"), jobs=1, **quiet)
    second = write_worlds(two, n_images=12, seed=5, only=("eva", "para"), jobs=2, **quiet)
    assert list(first) == list(second) == ["eva", "para"]
    assert tree_digest(one) == tree_digest(two)
    assert tree_digest(one / "synth-eva") == tree_digest(two / "synth-eva")
