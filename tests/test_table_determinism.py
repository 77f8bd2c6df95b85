"""The report's tables do not depend on threads, kernels or the hash seed.

The small scored project's analyses (MTMM, the input ablation, VAB and VisionQ) run through
`judgepanel report --tables-only` once as a baseline and then once per setting, one setting
changed at a time, each in a fresh interpreter (these settings are read at start-up), and
every table's digest (`judgepanel.report.manifest`) must match the baseline's. The pages
are not rendered: the tables are what must not move. The baseline is built once per state
of the sources (``shared_build``), and the settings run side by side on parallel workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_build import cached_build

from judgepanel.report.manifest import (
    MANIFEST_NAME,
    canonical_table,
    first_difference,
    read_manifest,
)

BASELINE = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "1",
}
SETTINGS: dict[str, tuple[dict[str, str], list[str]]] = {
    "blas-openmp-2-threads": (
        {"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"},
        [],
    ),
    "joblib-2-jobs": ({}, ["-p", "n_jobs=2"]),
    "blas-prescott": ({"OPENBLAS_CORETYPE": "Prescott"}, []),
    "numpy-baseline-kernels": (
        {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR"},
        [],
    ),
    "hash-seed": ({"PYTHONHASHSEED": "2"}, []),
}
RUNS = ("test-eva", "test-vab", "test-visionq")
NOTEBOOKS = "01,02,05,06"


def _report(project, out: Path, env_extra: dict[str, str], extra: list[str]) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL",)}
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    env.pop("OPENBLAS_CORETYPE", None)
    env.update({**BASELINE, **env_extra})
    runs = [a for run in RUNS for a in ("--run", run)]
    cmd = [sys.executable, "-m", "judgepanel.cli", "report", "--runs-file",
           str(project.runs_file), "--profile", "test", *runs, "--only", NOTEBOOKS,
           "--outputs", str(out), "--jobs", "1", "--no-progress", "--tables-only",
           *extra]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def determinism_baseline(project) -> Path:
    """The baseline's outputs, built once per state of the sources (``make test`` builds it
    before the tests start, beside the other shared builds)."""
    folder = cached_build(
        "determinism-baseline",
        lambda root: _report(project, root / "outputs", {}, []),
        extra=["tests/test_table_determinism.py"],
    )
    return folder / "outputs"


@pytest.fixture(scope="session")
def baseline(small_project) -> Path:
    return determinism_baseline(small_project)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the first one may build the small project and the baseline
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_tables_are_the_same_under(setting, small_project, baseline, tmp_path):
    env_extra, extra = SETTINGS[setting]
    other = _report(small_project, tmp_path / setting, env_extra, extra)
    want = read_manifest(baseline / MANIFEST_NAME).digests
    got = read_manifest(other / MANIFEST_NAME).digests
    assert len(want) >= 20 and sorted(got) == sorted(want)
    differing = [
        f"{rel}: {first_difference(canonical_table(other / rel), canonical_table(baseline / rel))}"
        for rel in want
        if got[rel] != want[rel]
    ]
    assert not differing, "\n".join(differing)
