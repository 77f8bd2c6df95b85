"""The report's tables do not depend on threads, kernels or the hash seed.

The small scored project's analyses (MTMM, the input ablation, VAB and VisionQ) run through
`judgepanel report --tables-only` once per setting, each from the same start (``BASELINE``:
one BLAS thread, hash seed 1) with one setting changed, in a fresh interpreter (these
settings are read at start-up), and every table's digest
(`judgepanel.report.manifest`) must match the baseline's. The baseline is the shared report
of the same project (``small_project.shared_report``): every page rendered, notebooks side by
side, the kernels sharing their fits, with the hash seed Python chose. So each setting is
also checked against the report a researcher gets, not only against another tables-only
run. The pages of a setting are not rendered: the tables are what must not move. The
settings run side by side on parallel workers.

A setting that is a notebook parameter rather than a start-up one (``n_jobs``) runs only
the notebooks that read it: the others would run the baseline's code in the baseline's
process, which every other setting already checks
(``test_a_parameter_setting_leaves_out_only_notebooks_that_ignore_it`` keeps this true).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

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
    # a parameter, not a start-up setting: only the notebooks that read it (ONLY_READERS)
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
ONLY_READERS = {"joblib-2-jobs": ("n_jobs", ("test-eva",), "02")}
"""A parameter's setting -> (the parameter, the runs and the notebooks of the matrix that
read it). The others never see it: run under it, they would repeat the baseline."""


def _selection(setting: str) -> tuple[tuple[str, ...], str]:
    """The runs and notebooks a setting runs: all of the matrix's, or only the readers of
    its parameter."""
    if setting in ONLY_READERS:
        _, runs, notebooks = ONLY_READERS[setting]
        return runs, notebooks
    return RUNS, NOTEBOOKS


def _report(
    project, out: Path, env_extra: dict[str, str], extra: list[str], setting: str = ""
) -> Path:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL",)}
    env.pop("NPY_DISABLE_CPU_FEATURES", None)
    env.pop("OPENBLAS_CORETYPE", None)
    env.update({**BASELINE, **env_extra})
    selected_runs, notebooks = _selection(setting)
    runs = [a for run in selected_runs for a in ("--run", run)]
    cmd = [sys.executable, "-m", "judgepanel.cli", "report", "--runs-file",
           str(project.runs_file), "--profile", "test", *runs, "--only", notebooks,
           "--outputs", str(out), "--jobs", "1", "--no-progress", "--tables-only",
           *extra]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


NOTEBOOK_NAMES = {
    "test-eva": ("01_mtmm_validity", "02_input_ablation"),
    "test-vab": ("05_vab",),
    "test-visionq": ("06_visionq",),
}
"""The notebooks ``NOTEBOOKS`` selects in each of ``RUNS``."""
CLAIMS = "claims.csv"
FAMILIES = "claim_families.csv"


def selected_notebooks(setting: str = "") -> dict[str, tuple[str, ...]]:
    """Run -> the names of the notebooks ``setting`` runs (every one of the matrix's when
    none is named)."""
    runs, prefixes = _selection(setting)
    return {
        run: tuple(n for n in NOTEBOOK_NAMES[run] if n.startswith(tuple(prefixes.split(","))))
        for run in runs
    }


def expected_tables(report: Path, setting: str = "") -> list[str]:
    """The tables the selected notebooks write, as the report's executed copies of them name
    them (each page links every table it writes), and the claims ledger and its families."""
    names = {CLAIMS, FAMILIES}
    for run, notebooks in selected_notebooks(setting).items():
        for notebook in notebooks:
            text = (report / run / f"{notebook}.ipynb").read_text(encoding="utf-8")
            names |= {f"{run}/{m}" for m in re.findall(r"tables/[a-z0-9_]+\.csv", text)}
    return sorted(names)


def report_claims(report: Path, pages: set[str]) -> pd.DataFrame:
    """The report's claims ledger, only the rows of ``pages``, as the manifest reads it."""
    claims = canonical_table(report / CLAIMS)
    return claims[claims["page"].isin(pages)].reset_index(drop=True)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the first one may build the small project and its report
@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_tables_are_the_same_under(setting, small_project, small_report, tmp_path):
    env_extra, extra = SETTINGS[setting]
    other = _report(small_project, tmp_path / setting, env_extra, extra, setting)
    want = read_manifest(small_report / MANIFEST_NAME).digests
    got = read_manifest(other / MANIFEST_NAME).digests
    expected = expected_tables(small_report, setting)
    assert len(expected) >= (40 if setting not in ONLY_READERS else 9)
    assert sorted(got) == expected
    differing = []
    for rel in expected:
        if rel not in (CLAIMS, FAMILIES) and got[rel] != want[rel]:
            mine, theirs = canonical_table(other / rel), canonical_table(small_report / rel)
            first = first_difference(mine, theirs)
            differing.append(f"{rel}: {first}")
    # the report's ledger holds every page's claims: the setting's pages must read alike
    claims = canonical_table(other / CLAIMS)
    baseline = report_claims(small_report, set(claims["page"]))
    selected = {f"{run}/{name}" for run, names in selected_notebooks(setting).items()
                for name in names}  # fmt: skip
    assert len(claims) and set(claims["page"]) <= selected
    if not claims.equals(baseline):
        differing.append(f"{CLAIMS}: {first_difference(claims, baseline)}")
    families = canonical_table(other / FAMILIES)
    every = canonical_table(small_report / FAMILIES)
    kept = every[every["page"].isin(set(families["page"]))].reset_index(drop=True)
    if not families.equals(kept):
        differing.append(f"{FAMILIES}: {first_difference(families, kept)}")
    assert not differing, "\n".join(differing)


def test_a_parameter_setting_leaves_out_only_notebooks_that_ignore_it():
    """A notebook the matrix leaves out of a parameter's setting never names the parameter,
    and one it keeps does: what is left out would only repeat the baseline."""
    from judgepanel.core.paths import project_root

    for setting, (parameter, _, _) in ONLY_READERS.items():
        kept = selected_notebooks(setting)
        for run, names in NOTEBOOK_NAMES.items():
            for name in names:
                source = (project_root() / "notebooks" / f"{name}.ipynb").read_text("utf-8")
                reads = re.search(rf"\b{parameter}\b", source) is not None
                assert reads == (name in kept.get(run, ())), (setting, run, name)
