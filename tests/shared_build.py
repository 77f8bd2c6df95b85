"""One build per test run of what many tests only read, shared by every pytest-xdist worker.

Each xdist worker runs the session fixtures of its own, so a build cannot live in a fixture's
memory. It lives on disk instead, in a folder named by the SHA-256 of every file that
produces it (the library, the notebooks, the rubric, the runs file, the pins and the test
modules that build it), behind a file lock: the first worker to ask builds it and the
others wait, then read it. A later test run on the same sources reads it without building;
any change to those sources names another folder, and the stale ones are removed.

The key is computed once per test run: ``make test`` (or the first pytest process) puts it
in ``$JUDGEPANEL_TEST_BUILD_KEY``, and every worker and later step of the run uses it, so a
file edited while the tests run does not make one run build twice.

A build is finished when its ``DONE`` file exists; a folder without one (a worker killed
mid-build) is built again. Tests must not write into a build: each copies what it changes.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from filelock import FileLock

from judgepanel.core.paths import project_root

KEY_ENV = "JUDGEPANEL_TEST_BUILD_KEY"
"""The run's key of the sources, set once (``make test``, or pytest's controller)."""
CACHE_ENV = "JUDGEPANEL_TEST_CACHE"
"""Where builds are kept (default: ``.test-cache/`` in the checkout, which git ignores)."""
SOURCES = (
    "lib",
    "notebooks",
    "rubric",
    "papermill_runs.yaml",
    "pyproject.toml",
    "tests/small_project.py",
    "tests/shared_build.py",
)
"""What every build depends on; a build may name more (``extra``)."""
DONE = "DONE"


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else project_root() / ".test-cache"


def _files(root: Path, names: Iterable[str]) -> list[Path]:
    found: list[Path] = []
    for name in names:
        path = root / name
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [
                p
                for p in path.rglob("*")
                if p.is_file()
                and "__pycache__" not in p.parts
                and p.suffix != ".pyc"
                and ".egg-info" not in str(p)
            ]
    return sorted(found)


def _digest(names: Iterable[str], seed: str = "") -> str:
    root = project_root()
    digest = hashlib.sha256(seed.encode())
    for path in _files(root, names):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def source_key(extra: Iterable[str] = ()) -> str:
    """The SHA-256 (16 hex digits) of the paths and bytes of every source of a build: the
    run's key of :data:`SOURCES` (from ``$JUDGEPANEL_TEST_BUILD_KEY`` once set), with the
    build's ``extra`` files hashed into it."""
    base = os.environ.get(KEY_ENV) or _digest(SOURCES)
    extra = tuple(extra)
    return _digest(extra, seed=base) if extra else base


def cached_build(name: str, build: Callable[[Path], None], *, extra: Iterable[str] = ()) -> Path:
    """The folder of build ``name`` for today's sources, built once by ``build(folder)``.

    Safe under parallel workers (a file lock per name) and across runs (a folder per key).
    """
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"{name}-{source_key(extra)}"
    with FileLock(str(root / f"{name}.lock")):
        if (folder / DONE).exists():
            return folder
        for stale in root.iterdir():
            if re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{16}}", stale.name):
                shutil.rmtree(stale, ignore_errors=True)
        folder.mkdir(parents=True)
        build(folder)
        (folder / DONE).write_text("built\n")
    return folder


if __name__ == "__main__":
    print(_digest(SOURCES))  # the key `make test` exports for the whole run
