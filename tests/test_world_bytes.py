"""The synthetic worlds are the demo's data: the work they share is done once, and no
shortcut moves a byte of what they write."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
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

# Digests of small worlds (seed 5; VAB seed 2, whose first sets cover every domain): a change
# to any written byte shows here. A deliberate change to a world updates them, and says so in
# its commit. Last changed when every transcendental function of the worlds became portable
# (`judgepanel_sim.portable`): a float32 power of numpy's had moved one pixel of the EVA
# world on an AVX-512 machine.
DIGESTS = {
    "eva": "950861a20066a92e69361c075f39bc76857bf4abaf07ca6802ef8805e1610584",
    "para": "9cc6cc666dc40914c00ad69495dd08ab1f287829ff97e62feb523ea403eea6ee",
    "vab": "623d2a0c350f82f087c4ddd64425f85046a54be9972dd2009f01f1ef55193290",
    "visionq": "0c95d47b06f0542e2f40bea9a27459bca4d36befd1b7ae0a13ca32bc6702bebe",
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


_WRITE_ALL = """
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_world_bytes import tree_digest
from judgepanel_sim.world.vab import write_vab
from judgepanel_sim.world.visionq import write_visionq
from judgepanel_sim.world.world import write_worlds
out = {{}}
for w in ("eva", "para"):
    d = Path(tempfile.mkdtemp())
    write_worlds(d, n_images=12, seed=5, only=(w,), log=lambda *_: None)
    out[w] = tree_digest(d)
d = Path(tempfile.mkdtemp())
write_vab(d / "synth-vab", 2, n_tasks=8)
out["vab"] = tree_digest(d)
d = Path(tempfile.mkdtemp())
write_visionq(d / "synth-visionq", 5, n_papers=6)
out["visionq"] = tree_digest(d)
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "setting",
    [
        # numpy's vector kernels at their baseline (they differ from AVX2's in the last bit)
        {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"},
        {"OPENBLAS_CORETYPE": "Prescott"},  # another BLAS kernel family
        {"JSIMD_FORCENONE": "1"},  # libjpeg-turbo without its SIMD code
        {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "12345"},
    ],
    ids=["numpy-baseline-kernels", "blas-prescott", "jpeg-no-simd", "one-thread-hashseed"],
)
def test_worlds_do_not_depend_on_cpu_kernels(setting):
    """Every world writes its digest with the machine's kernels swapped for others.

    The CPU-dependent choices a world could meet are numpy's dispatched kernels, the BLAS
    kernel family, libjpeg-turbo's SIMD code, threads and the hash seed; each is changed
    here in a fresh interpreter (they are read at start-up). Before the worlds' functions
    became portable, the VAB world changed with numpy's kernels at their baseline.
    """
    env = {**os.environ, **setting}
    code = _WRITE_ALL.format(tests=str(Path(__file__).parent))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == DIGESTS
