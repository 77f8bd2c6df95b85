"""The notebooks as a person runs them in JupyterLab: one line picks the run.

nbclient executes each notebook the way JupyterLab does, with the project's kernel started
in ``notebooks/`` and only ``run`` and ``runs_file`` set in the parameters cell; nothing
tells the kernel where the report's outputs are, so the tables go to
``outputs/interactive/<run>/``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from judgepanel.core.errors import ConfigError
from judgepanel.core.parameters import resolve_parameters
from judgepanel.core.paths import project_root
from judgepanel.report.notebook_run import INTERACTIVE_DIR, open_run

# Every test here writes and removes outputs/interactive/<run>/: one worker runs them all.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("interactive-outputs")]

CASES = [
    ("test-eva", "00_scoring"),
    ("test-eva", "01_mtmm_validity"),
    ("test-para", "01_mtmm_validity"),  # the same notebook, another run: PARA's data
    ("test-para", "02_input_ablation"),
    ("test-eva", "03_trio_sweep"),
    ("test-headroom", "04_headroom"),
    ("test-vab", "05_vab"),
    ("test-visionq", "06_visionq"),
]


def _interactive(run: str) -> Path:
    return project_root() / "outputs" / INTERACTIVE_DIR / run


@pytest.fixture(scope="module")
def kernel_env(small_project):
    """What a JupyterLab kernel's environment holds: no report outputs, no endpoint."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    yield env
    for run in {r for r, _ in CASES}:
        shutil.rmtree(_interactive(run), ignore_errors=True)


def _execute(notebook: str, run: str, runs_file: Path, env: dict[str, str]):
    nb = nbformat.read(project_root() / "notebooks" / f"{notebook}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    nb_rest = cell.source.splitlines()[3:]
    cell.source = f'run = "{run}"\nruns_file = "{runs_file}"\noverrides = {{}}'
    # the rest of the cell as committed: what only a report passes stays None
    cell.source += "\n" + "\n".join(nb_rest)
    client = NotebookClient(
        nb,
        timeout=1200,
        kernel_name=nb.metadata["kernelspec"]["name"],
        resources={"metadata": {"path": str(project_root() / "notebooks")}},
    )
    client.execute(env=env)
    return nb


@pytest.mark.timeout(1800)
@pytest.mark.parametrize(("run", "notebook"), CASES, ids=[f"{n}-{r}" for r, n in CASES])
def test_notebook_runs_from_its_folder_with_one_line_set(small_project, kernel_env, run, notebook):
    shutil.rmtree(_interactive(run) / "tables", ignore_errors=True)
    nb = _execute(notebook, run, small_project.runs_file, kernel_env)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    first = next(o for o in outputs if o.output_type == "stream")
    assert f"tables and figures go to outputs/interactive/{run}/" in first["text"]
    tables = list((_interactive(run) / "tables").glob("*.csv"))
    assert tables, "the interactive execution writes its tables under outputs/interactive/"
    assert not (project_root() / "outputs" / run).exists()  # never over the report's own
    if notebook == "01_mtmm_validity":  # it reports the images of the run's own dataset
        text = "".join(o["text"] for o in outputs if o.output_type == "stream")
        assert f"\n{run.removeprefix('test-')}: 40 images with every feature" in text


def test_an_unknown_run_or_parameter_lists_what_exists(small_project, monkeypatch):
    with pytest.raises(ConfigError, match="runs are: test-eva, test-para"):
        open_run("test-evaa", "01_mtmm_validity", runs_file=small_project.runs_file)
    with pytest.raises(ConfigError, match=r"n_resample is not a parameter.*n_resamples"):
        open_run(
            "test-eva", "01_mtmm_validity", runs_file=small_project.runs_file,
            overrides={"n_resample": 10},
        )  # fmt: skip
    with pytest.raises(ConfigError, match="does not include 05_vab"):
        open_run("test-eva", "05_vab", runs_file=small_project.runs_file)


def test_parameters_come_from_the_study_model_the_runs_file_and_overrides(small_project):
    config = small_project.config
    vab = resolve_parameters(config.run("test-vab"), config.parameters, {"vab_orders": 2})
    assert (vab.n_resamples, vab.vab_balanced, vab.vab_orders, vab.fusion_train) == (
        300,  # the runs file's global value
        False,  # the run's own value
        2,  # the override
        "para",  # the study's default
    )
    head = resolve_parameters(config.run("test-headroom"), config.parameters)
    assert head.n_partitions == 3 and head.probe_k == 5
    with pytest.raises(ConfigError, match="vab_orders"):
        resolve_parameters(config.run("test-vab"), config.parameters, {"vab_orders": "many"})
