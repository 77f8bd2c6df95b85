"""Every notebook executed through papermill on the small scored project, as the report does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judgepanel.report import execute_notebook, report_command, write_index

SECRET = "sk-test-DISTINCTIVE-7f3a9c2e41"

CASES = [
    ("test-eva", "00_scoring"),
    ("test-eva", "01_mtmm_validity"),
    ("test-para", "02_input_ablation"),
    ("test-eva", "03_trio_sweep"),
    ("test-headroom", "04_headroom"),
    ("test-vab", "05_vab"),
    ("test-visionq", "06_visionq"),
]


@pytest.fixture
def endpoint_env(sim_server, monkeypatch):
    """The endpoint and a distinctive key in the environment, as a researcher would set them."""
    monkeypatch.setenv("OPENAI_BASE_URL", sim_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.mark.slow
@pytest.mark.parametrize(("run", "notebook"), CASES, ids=[c[1] for c in CASES])
def test_notebook_executes_and_writes_its_tables(small_project, endpoint_env, run, notebook):
    config = small_project.config
    result = execute_notebook(config, config.run(run), notebook, small_project.outputs)
    assert result.ok, result.error
    run_dir = small_project.outputs / run
    html = (run_dir / f"{notebook}.html").read_text(encoding="utf-8")
    executed = (run_dir / f"{notebook}.ipynb").read_text(encoding="utf-8")
    assert "Simulated data." in html  # the banner of every simulated run
    assert SECRET not in html and SECRET not in executed
    tables = list((run_dir / "tables").glob("*.csv"))
    assert tables, "a notebook shows at least one table, written as CSV"
    for path in tables:
        assert SECRET not in path.read_text(encoding="utf-8")
    assert "Traceback" not in html


@pytest.mark.slow
def test_failing_cell_is_named_and_the_report_exits_non_zero(small_project, tmp_path, monkeypatch):
    # A dataset root that does not exist makes the first code cell after the parameters fail.
    from judgepanel.config import load_config

    text = small_project.runs_file.read_text().replace(
        str(small_project.root / "synth" / "synth-eva"), str(tmp_path / "missing-eva")
    )
    broken = tmp_path / "runs.yaml"
    broken.write_text(text)
    config = load_config(broken)
    result = execute_notebook(config, config.run("test-eva"), "00_scoring", tmp_path / "out")
    assert not result.ok
    assert "00_scoring.ipynb" in result.error and "cell" in result.error
    assert "missing-eva" in result.error or "not found" in result.error
    index = write_index(tmp_path / "out", [result], config)
    assert "failed" in index.read_text()

    class Args:
        runs_file = broken
        profile = "test"
        run = ["test-eva"]
        only = "00"
        outputs = tmp_path / "out2"
        start_sim = False
        score = False

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert report_command(Args()) == 1
    assert (tmp_path / "out2" / "index.html").exists()


@pytest.mark.slow
def test_report_command_writes_the_index_with_headlines(small_project, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    class Args:
        runs_file = small_project.runs_file
        profile = "test"
        run = ["test-eva"]
        only = "00"
        outputs = tmp_path / "out"
        start_sim = False
        score = False

    assert report_command(Args()) == 0
    index = (tmp_path / "out" / "index.html").read_text()
    assert "test-eva/00_scoring.html" in index
    assert "planned calls answered" in index  # a headline computed by the notebook
    assert Path(tmp_path / "out" / "test-eva" / "tables" / "coverage.csv").exists()
    assert os.environ.get("OPENAI_API_KEY") != SECRET
