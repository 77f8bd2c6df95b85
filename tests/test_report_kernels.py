"""Each notebook kernel of a report starts with its share of the cores as its pools' width."""

from __future__ import annotations

from pathlib import Path

import nbformat
import papermill as pm
import pytest

from judgepanel.report.kernels import (
    THREAD_VARIABLES,
    kernel_manager,
    kernel_threads,
    thread_environment,
)


@pytest.mark.parametrize(
    ("cores", "jobs", "want"), [(2, 2, 1), (2, 1, 2), (8, 3, 2), (1, 4, 1), (4, 0, 4)]
)
def test_each_kernel_gets_its_share_of_the_cores(cores, jobs, want):
    assert kernel_threads(cores, jobs) == want


def test_a_width_the_user_set_is_kept():
    env = thread_environment(2, {"OMP_NUM_THREADS": "6", "PATH": "/bin"})
    assert env["OMP_NUM_THREADS"] == "6" and env["PATH"] == "/bin"
    assert env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "2"


def test_one_class_per_width():
    assert kernel_manager(3) is kernel_manager(3) and kernel_manager(3) is not kernel_manager(4)


def test_a_kernel_started_by_papermill_sees_the_width(tmp_path: Path, monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "5")  # set by the user: kept
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import os\n"
            "print(*(os.environ.get(n) for n in "
            "('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS')))"
        )
    ]
    nbformat.write(nb, tmp_path / "in.ipynb")
    done = pm.execute_notebook(
        str(tmp_path / "in.ipynb"),
        str(tmp_path / "out.ipynb"),
        kernel_name="python3",
        progress_bar=False,
        kernel_manager_class=kernel_manager(3),
    )
    assert done.cells[0].outputs[0]["text"].split() == ["3", "3", "5"]
