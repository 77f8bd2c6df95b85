"""A warm kernel runs notebook after notebook, and each page is what a fresh kernel makes.

The report leases every notebook a kernel of `judgepanel.report.warm_kernels`, put back to
its fresh state between notebooks. Here a notebook that changes everything it can is run
first, and a witness notebook then reports what it sees: in a warm kernel after the first,
and in a fresh kernel of its own, it must report the same. Two real notebooks of the small
project are then run in one warm kernel and in fresh kernels, and their tables and executed
cells compared.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import papermill as pm
import pytest
from small_project import shared_small_project

from judgepanel.report.execute import KernelContext, execute_notebook, no_page
from judgepanel.report.timings import Timings
from judgepanel.report.warm_kernels import KERNELS, notebook_kernel

SPOILER = """\
import logging, os, random, sys, warnings
import matplotlib as mpl, matplotlib.pyplot as plt, numpy as np, pandas as pd, seaborn as sns
import sklearn
from judgepanel.stats import memo
np.random.seed(0)
random.seed(0)
left_behind = 1
sns.set_theme(style="darkgrid")
plt.rcParams["lines.linewidth"] = 9
plt.figure()
os.chdir(os.path.expanduser("~"))
os.environ["JUDGEPANEL_LEFT_BEHIND"] = "1"
sys.path.insert(0, "left-behind")
warnings.simplefilter("error")
pd.set_option("display.max_rows", 3)
np.set_printoptions(precision=2)
np.seterr(all="raise")
sklearn.set_config(assume_finite=True)
logging.getLogger().setLevel(logging.DEBUG)
logging.getLogger("left.behind").setLevel(logging.ERROR)
memo.LEFT_BEHIND = True
"""

WITNESS = """\
import json, logging, os, random, sys, warnings
import matplotlib as mpl, matplotlib.pyplot as plt, numpy as np, pandas as pd
import sklearn
from judgepanel.stats import memo
seen = {
    "names": sorted(n for n in dir() if not n.startswith("_")),
    "rc": sorted((k, repr(v)) for k, v in mpl.rcParams.items()),
    "figures": plt.get_fignums(),
    "cwd": os.getcwd(),
    "env": os.environ.get("JUDGEPANEL_LEFT_BEHIND"),
    "path": sys.path,
    "filters": [repr(f) for f in warnings.filters],
    "max_rows": pd.get_option("display.max_rows"),
    "printoptions": repr(np.get_printoptions()),
    "seterr": np.geterr(),
    "sklearn": repr(sorted(sklearn.get_config().items())),
    "root_level": logging.getLogger().level,
    "loggers": "left.behind" in logging.Logger.manager.loggerDict,
    "memo": hasattr(memo, "LEFT_BEHIND"),
}
draws = [float(np.random.random()), random.random()]
print(json.dumps(seen))
print(json.dumps(draws))
"""


def _write(folder: Path, name: str, *sources: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    path = folder / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _run(path: Path, lease_arguments: dict, cwd: Path) -> nbformat.NotebookNode:
    out = path.with_name(f"{path.stem}-out.ipynb")
    return pm.execute_notebook(
        str(path), str(out), kernel_name="python3", progress_bar=False, cwd=str(cwd),
        **lease_arguments,
    )  # fmt: skip


def _witnessed(nb: nbformat.NotebookNode) -> tuple[dict, list[float], list[int | None]]:
    lines = nb.cells[0].outputs[0]["text"].splitlines()
    return json.loads(lines[0]), json.loads(lines[1]), [c.execution_count for c in nb.cells]


@pytest.mark.slow
def test_nothing_one_notebook_did_is_seen_by_the_next(tmp_path: Path):
    spoiler = _write(tmp_path, "spoiler", SPOILER)
    witness = _write(tmp_path, "witness", WITNESS, "1 + 1")
    with notebook_kernel(1, str(tmp_path), warm=False) as lease:
        fresh, _, fresh_counts = _witnessed(_run(witness, lease.arguments, tmp_path))
    reused, started = KERNELS.reused, KERNELS.started
    with notebook_kernel(1, str(tmp_path)) as lease:
        kernel = lease.kernel
        _run(spoiler, lease.arguments, tmp_path)
    with notebook_kernel(1, str(tmp_path)) as lease:
        # the same warm kernel, after the spoiler
        assert kernel is not None and lease.kernel is kernel, KERNELS.last_failure
        warm, warm_draws, warm_counts = _witnessed(_run(witness, lease.arguments, tmp_path))
    assert KERNELS.started - started <= 1 and KERNELS.reused - reused >= 1

    assert warm == fresh  # names, settings, figures, folder, environment, memos
    assert warm_counts == fresh_counts == [1, 2]  # the counter starts again at 1
    assert fresh["names"] and "left_behind" not in warm["names"]
    assert warm["cwd"] == str(tmp_path) and warm["env"] is None and not warm["memo"]
    # the random states are drawn anew, as at a start: not the spoiler's seed, not repeated
    assert warm_draws[0] != pytest.approx(0.5488135039273248)  # numpy's first draw after seed(0)
    assert warm_draws[1] != pytest.approx(0.8444218515250481)  # random's first after seed(0)
    with notebook_kernel(1, str(tmp_path)) as lease:
        again = _witnessed(_run(witness, lease.arguments, tmp_path))[1]
    assert again != warm_draws


def test_a_failed_notebook_gives_its_kernel_up(tmp_path: Path):
    failing = _write(tmp_path, "failing", "raise ValueError('no')")
    kernel = None
    with pytest.raises(pm.PapermillExecutionError), notebook_kernel(1, str(tmp_path)) as lease:
        kernel = lease.kernel
        _run(failing, lease.arguments, tmp_path)
    assert kernel is not None and not kernel.alive()


@pytest.mark.slow
def test_a_warm_kernel_sees_its_width_and_a_new_environment_gets_a_new_kernel(
    tmp_path: Path, monkeypatch
):
    probe = _write(tmp_path, "probe", "import os; print(os.environ.get('OMP_NUM_THREADS'), "
                   "os.environ.get('JUDGEPANEL_PROBE'))")  # fmt: skip
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with notebook_kernel(3, str(tmp_path)) as lease:
        first = lease.kernel
        assert _run(probe, lease.arguments, tmp_path).cells[0].outputs[0]["text"].split() == [
            "3", "None"]  # fmt: skip
    monkeypatch.setenv("JUDGEPANEL_PROBE", "set")
    with notebook_kernel(3, str(tmp_path)) as lease:
        assert lease.kernel is not first  # started with another environment
        assert _run(probe, lease.arguments, tmp_path).cells[0].outputs[0]["text"].split() == [
            "3", "set"]  # fmt: skip


STYLER_ID = re.compile(r"T_[0-9a-f]{5}")
"""A pandas Styler's table id: drawn anew for every table, in any kernel."""


def _cells(path: Path) -> list[tuple]:
    """What a reader sees of an executed notebook: each cell's counter and outputs."""
    nb = nbformat.read(path, as_version=4)
    return [(c.get("execution_count"),
             STYLER_ID.sub("T_", json.dumps(c.get("outputs", []), sort_keys=True)))
            for c in nb.cells]  # fmt: skip


def _tables(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.csv"))}


NOTEBOOKS = ("03_trio_sweep", "01_mtmm_validity")


@pytest.mark.slow
def test_two_real_notebooks_in_one_warm_kernel_match_fresh_kernels(tmp_path: Path):
    project = shared_small_project()
    run = project.config.run("test-eva")
    cwd = os.getcwd()
    pages = {}
    for warm in (False, True):
        outputs = tmp_path / ("warm" if warm else "fresh")
        reused, timings = KERNELS.reused, Timings()
        for name in NOTEBOOKS:
            context = KernelContext(warm=warm)
            result = execute_notebook(project.config, run, name, outputs, render=no_page,
                                      context=context, timings=timings)  # fmt: skip
            assert result.ok, result.error
        # a warm kernel's step records the CPU its kernel spent on the notebook
        assert [("cpu_s" in s, s.get("cpu_s", 1) > 0) for s in timings.steps()] == [
            (warm, True)
        ] * 2
        if warm:
            assert KERNELS.reused - reused >= 1  # the second ran in the first's kernel
        pages[warm] = (
            _tables(outputs / run.name / "tables"),
            [_cells(outputs / run.name / f"{n}.ipynb") for n in NOTEBOOKS],
        )
    assert os.getcwd() == cwd
    fresh_tables, fresh_cells = pages[False]
    warm_tables, warm_cells = pages[True]
    assert fresh_tables and warm_tables == fresh_tables
    assert warm_cells == fresh_cells
