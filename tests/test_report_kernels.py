"""Each notebook kernel of a report starts with its share of the cores as its pools' width."""

from __future__ import annotations

import os
import tempfile
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


def _printed(tmp_path: Path, source: str, threads: int) -> list[str]:
    """What one cell printed, run by papermill in a kernel of ``kernel_manager(threads)``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, tmp_path / "in.ipynb")
    done = pm.execute_notebook(
        str(tmp_path / "in.ipynb"),
        str(tmp_path / "out.ipynb"),
        kernel_name="python3",
        progress_bar=False,
        kernel_manager_class=kernel_manager(threads),
    )
    return done.cells[0].outputs[0]["text"].split()


def test_a_kernel_started_by_papermill_sees_the_width(tmp_path: Path, monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "5")  # set by the user: kept
    printed = _printed(
        tmp_path,
        "import os\n"
        "print(*(os.environ.get(n) for n in "
        "('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS')))",
        3,
    )
    assert printed == ["3", "3", "5"]


@pytest.mark.skipif(os.name != "posix", reason="Unix sockets: POSIX only")
def test_a_kernel_is_reached_over_unix_sockets_that_go_with_it(tmp_path: Path, monkeypatch):
    """No TCP port is chosen for a report's kernel (another process could take it before
    the kernel binds it): its sockets are files in a folder of its own, removed with it."""
    sockets = tmp_path / "tmp"
    sockets.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(sockets))
    transport, ip = _printed(
        tmp_path,
        "from ipykernel.connect import get_connection_info\n"
        "info = get_connection_info(unpack=True)\n"
        "print(info['transport'], info['ip'])",
        1,
    )
    assert transport == "ipc"
    assert Path(ip).parent.parent == sockets and Path(ip).parent.name.startswith("judgepanel-")
    assert list(sockets.iterdir()) == []  # the folder went with the kernel
