"""Shared fixtures: the simulated judge server as a real subprocess, and synthetic images.

``sim_server`` (one per test session, no injected faults) and ``sim_server_factory``
(servers with injected errors, stalls or latency, stopped after each test) both start
``python -m judgepanel.cli sim-server --port 0 --port-file ...`` through
``judgepanel.core.local_sim`` and stop it at teardown, also when the test fails.

``small_project`` and ``small_report`` are built once per test run, whatever the number of
workers, and only read by the tests (see ``shared_build.py``).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFilter

from judgepanel.core.local_sim import SimConfig, SimProcess, start_sim_server

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pytest_configure(config: pytest.Config) -> None:
    """Fix this run's key of the sources and one thread per pool before the workers start
    (they inherit both).

    Two workers on two cores, each spinning OpenMP and BLAS pools as wide as the machine,
    spent most of their time waiting on each other: a scikit-learn fit that takes 5 s alone
    took over 100 s in the suite. The workers, the simulated servers and the notebook
    kernels the tests start inherit one thread per pool; a value the caller set is kept.
    The tables do not depend on it (``test_table_determinism`` runs both widths).
    """
    import os

    from shared_build import KEY_ENV, source_key
    from threadpoolctl import threadpool_limits

    if not os.environ.get(KEY_ENV):
        os.environ[KEY_ENV] = source_key()
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    threadpool_limits(int(os.environ["OMP_NUM_THREADS"]))  # this process's pools, loaded already


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the ``slow`` tests first, each kept in the order it was collected in.

    pytest-xdist hands the tests out in this order (a group of ``--dist loadgroup`` as one
    unit, the largest first). Collected by file name, the longest tests came last, and one
    worker ran the last of them while the other sat idle; started first, they are spread
    over both workers while the short tests fill the gaps.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a grouped test that ``--dist loadgroup`` could not group.

    Under loadgroup each worker names a grouped test ``<id>@<group>`` and the controller
    sends a group to one worker. A pytest that does not let pytest-xdist rename its tests
    (9.2 with xdist 3.8) splits the groups silently, and the tests that share
    ``outputs/interactive/`` then delete each other's tables from two workers at once.
    """
    if getattr(item.config.option, "loadgroup", False) and "@" not in item.nodeid:
        group = item.get_closest_marker("xdist_group")
        if group is not None:
            pytest.fail(
                f"--dist loadgroup did not keep this test in its group {group.args[0]!r}: this "
                "pytest does not let pytest-xdist add the group to a test's id; install the "
                "pytest pinned in pyproject.toml",
                pytrace=False,
            )


@pytest.fixture(scope="session")
def sim_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcess]:
    """A simulated judge server without injected faults; ``.base_url`` ends in ``/v1``."""
    server = start_sim_server(SimConfig(seed=0), log_dir=tmp_path_factory.mktemp("sim-server"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def sim_server_factory(tmp_path: Path) -> Iterator[Callable[..., SimProcess]]:
    """Start servers with flags such as ``error_rate=0.2, seed=3``; all stop at teardown."""
    started: list[SimProcess] = []

    def start(**flags: float) -> SimProcess:
        server = start_sim_server(SimConfig(**flags), log_dir=tmp_path)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()


def synthetic_scene(
    seed: int = 0,
    size: tuple[int, int] = (384, 288),
    subject_x: float = 1 / 3,
    subject_y: float = 0.55,
) -> Image.Image:
    """A small outdoor-like picture: graded sky, textured ground, a shaded round subject
    with a trunk, and a few background shapes. Deterministic given ``seed``."""
    rng = np.random.default_rng(seed)
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    horizon = 0.58 * h + 6.0 * np.sin(xx / w * 2 * np.pi * (1 + seed % 3))
    sky_top = np.array([70, 120, 200], np.float32) + rng.integers(-20, 20, 3)
    sky_low = np.array([190, 210, 235], np.float32)
    t = (yy / h)[..., None]
    img = sky_top * (1 - t) + sky_low * t
    ground_col = np.array([80, 120, 50], np.float32) + rng.integers(-25, 25, 3)
    coarse = rng.normal(0, 1, (h // 3, w // 3)).astype(np.float32)
    texture = np.asarray(Image.fromarray(coarse, mode="F").resize((w, h), Image.BICUBIC))
    ground = ground_col + 18.0 * texture[..., None]
    img = np.where((yy > horizon)[..., None], ground, img)
    pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(pil)
    for _ in range(3):  # distant shapes on the horizon
        bx = int(rng.uniform(0.05, 0.95) * w)
        bw, bh = int(rng.uniform(0.04, 0.1) * w), int(rng.uniform(0.05, 0.15) * h)
        top = int(0.58 * h) - bh
        draw.rectangle([bx, top, bx + bw, int(0.58 * h)], fill=(110, 110, 130))
    cx, cy, r = subject_x * w, subject_y * h, 0.16 * h
    hue = rng.uniform(0, 1)
    base = np.array(
        [200 + 50 * np.cos(2 * np.pi * hue), 90 + 40 * np.sin(2 * np.pi * hue), 60], np.float32
    )
    draw.rectangle([cx - 0.12 * r, cy, cx + 0.12 * r, cy + 1.6 * r], fill=(90, 60, 40))
    for k in range(12, 0, -1):  # shaded disc: lighter toward the upper left
        f = k / 12
        col = tuple(int(c) for c in np.clip(base * (0.55 + 0.45 * (1 - f)), 0, 255))
        off = (1 - f) * 0.3 * r
        draw.ellipse(
            [cx - f * r - off, cy - f * r - off, cx + f * r - off, cy + f * r - off], fill=col
        )
    return pil


def jpeg_bytes_of(img: Image.Image, quality: int = 90) -> bytes:
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


@pytest.fixture(scope="session")
def scene() -> Callable[..., Image.Image]:
    """The ``synthetic_scene(seed, size, subject_x, subject_y)`` maker."""
    return synthetic_scene


@pytest.fixture(scope="session")
def make_jpeg() -> Callable[..., bytes]:
    """``make_jpeg(seed=0, size=(384, 288), quality=90, blur=0.0) -> bytes``: a JPEG of a
    synthetic scene, optionally blurred before encoding."""

    def make(
        seed: int = 0, size: tuple[int, int] = (384, 288), quality: int = 90, blur: float = 0.0
    ) -> bytes:
        img = synthetic_scene(seed, size)
        if blur > 0:
            img = img.filter(ImageFilter.GaussianBlur(blur))
        return jpeg_bytes_of(img, quality)

    return make


@pytest.fixture(scope="session")
def jpeg_image(make_jpeg: Callable[..., bytes]) -> bytes:
    """One 384x288 synthetic JPEG."""
    return make_jpeg(seed=1)


@pytest.fixture(scope="session")
def small_project():
    """A small synthetic world, its runs file and a store scored by the simulated judges,
    built once per state of the sources and shared by every worker (tests/shared_build.py).
    Read it; a test that changes a file of it works on a copy."""
    from small_project import shared_small_project

    return shared_small_project()


@pytest.fixture(scope="session")
def small_report(small_project) -> Path:
    """The outputs folder of the small project's rendered report (every run's notebooks,
    pages, explorers, index and manifest), built once and shared like ``small_project``."""
    from small_project import shared_report

    return shared_report(small_project)
