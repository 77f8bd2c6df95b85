"""How deep the report's sequential path is: with one job slot, a notebook reaches papermill
through ``run_report``, :func:`~judgepanel.report.execute.execute` and
:func:`~judgepanel.report.execute.execute_notebook`, in the command's own thread.

Measured on a real ``judgepanel report --jobs 1`` whose papermill engine only records the
stack it is called from (it executes no cell: the stack is what is measured, not the
notebook)."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any, ClassVar

import pytest
from papermill.engines import Engine, papermill_engines
from test_report import runs_file

from judgepanel.cli import main

LIB = Path(__file__).resolve().parents[1] / "lib" / "judgepanel"


class StackEngine(Engine):
    """A papermill engine that records the stack it was called from and runs nothing."""

    stacks: ClassVar[list[traceback.StackSummary]] = []

    @classmethod
    def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> None:
        cls.stacks.append(traceback.extract_stack())


def judgepanel_frames(stack: traceback.StackSummary) -> list[tuple[str, str]]:
    """The (module file, function) of judgepanel's frames between the command line's
    ``main`` and the call of ``papermill.execute_notebook`` (both left out), outermost
    first."""
    names = [(Path(f.filename).resolve(), f.name) for f in stack]
    start = max(i for i, (path, name) in enumerate(names) if name == "main" and LIB in path.parents)
    papermill = next(
        i
        for i, (path, name) in enumerate(names)
        if name == "execute_notebook" and "papermill" in path.parts
    )
    return [(path.name, name) for path, name in names[start + 1 : papermill] if LIB in path.parents]


def test_one_job_slot_reaches_papermill_in_a_few_frames(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setitem(papermill_engines._engines, None, StackEngine)
    monkeypatch.setattr(StackEngine, "stacks", [])
    path = runs_file(tmp_path, tmp_path / "eva")
    code = main(
        ["report", "--runs-file", str(path), "--profile", "p", "--run", "r-b", "--jobs", "1",
         "--tables-only", "--outputs", str(tmp_path / "outputs")]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert len(StackEngine.stacks) == 2  # 00_scoring and 01_mtmm_validity, in this thread
    for stack in StackEngine.stacks:
        frames = judgepanel_frames(stack)
        assert frames == [
            ("report.py", "report_command"),
            ("execute.py", "run_report"),
            ("execute.py", "execute"),
            ("execute.py", "execute_notebook"),
        ]
    printed = capsys.readouterr().out
    assert "[1/2] started r-b/00_scoring" in printed and "[2/2] r-b/01_mtmm_validity" in printed


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.slow
def test_a_failing_notebook_stops_no_other_one(tmp_path: Path, monkeypatch, capsys, jobs: int):
    """With one slot as with several, the notebooks after a failed one still run, and the
    report ends in 1 naming it."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setitem(papermill_engines._engines, None, StackEngine)
    monkeypatch.setattr(StackEngine, "stacks", [])
    path = runs_file(tmp_path, tmp_path / "eva")
    (tmp_path / "outputs" / "r-a").mkdir(parents=True)
    (tmp_path / "outputs" / "r-a" / "00_scoring.ipynb").mkdir()  # papermill cannot write it
    code = main(
        ["report", "--runs-file", str(path), "--profile", "p", "--jobs", str(jobs),
         "--tables-only", "--outputs", str(tmp_path / "outputs")]
    )  # fmt: skip
    assert code == 1
    assert len(StackEngine.stacks) == 2  # r-a failed before its engine ran; r-b ran both
    out, err = capsys.readouterr()
    assert "report: 2 notebooks ok, 1 failed" in out
    assert "error: r-a/00_scoring.ipynb" in err
