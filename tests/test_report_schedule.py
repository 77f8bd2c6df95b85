"""The report's schedule: notebooks start as soon as what they read is scored, at most
``--jobs`` at once with scoring counted as one, writers of the store before its readers;
and the records the notebooks of one run share survive concurrent updates."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from judgepanel.report.execute import ReportRequest, run_report
from judgepanel.report.index import NotebookResult
from judgepanel.report.schedule import JobPool, chain_seconds
from judgepanel.report.steps import Job, in_order, order_by_data
from judgepanel.report.timings import TIMINGS_FILE

EVA = ("p", "eva")
PARA = ("p", "para")


class Recorder:
    """Runs each job for ``seconds``, as the report's steps do, and records when it ran and
    how many jobs ran at once."""

    def __init__(self, seconds: float = 0.15, fail: str = "") -> None:
        self.seconds = seconds
        self.fail = fail
        self.spans: dict[str, tuple[float, float]] = {}
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()

    def __call__(self, job: Job) -> NotebookResult:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        start = time.monotonic()
        time.sleep(self.seconds)
        with self.lock:
            self.active -= 1
            self.spans[job.name] = (start, time.monotonic())
        if job.name == self.fail:
            raise OSError(f"{job.name} could not be rendered")
        return NotebookResult("run", job.name, job.name != "bad", self.seconds, None, "boom")


def test_a_run_starts_when_its_data_is_scored_while_later_runs_still_score() -> None:
    jobs = [Job(0, "eva/01", frozenset({EVA})), Job(1, "para/01", frozenset({PARA}))]
    rec = Recorder()
    lines: list[str] = []
    pool = JobPool(jobs, 2, rec, unscored={EVA, PARA}, echo=lines.append)
    pool.scoring(1)
    time.sleep(0.3)
    assert not rec.spans and not lines  # nothing is scored yet
    pool.scored({EVA})  # para is still scoring: eva's notebook runs beside it
    time.sleep(0.4)
    assert list(rec.spans) == ["eva/01"]
    pool.scored({PARA})
    pool.scoring(0)
    results = pool.wait()
    assert [r.notebook for r in results] == ["eva/01", "para/01"]
    assert lines[0] == "[1/2] started eva/01"
    assert lines[1] == "[1/2] eva/01     0.1 s  ok"  # the seconds the step reported


def test_a_notebook_that_may_score_runs_beside_the_scoring_of_other_datasets() -> None:
    """The store admits one sender per dataset: 00_scoring of a scored dataset may resume
    its plan while the report scores another one, and waits while its own is scored."""
    jobs = [
        Job(0, "eva/00", frozenset({EVA}), writes=True),
        Job(1, "para/00", frozenset({PARA}), writes=True),
    ]
    rec = Recorder(0.05)
    pool = JobPool(jobs, 3, rec, unscored={EVA, PARA}, echo=lambda _: None)
    pool.scoring(1)
    pool.scored({EVA})  # para is still being scored
    time.sleep(0.4)
    assert list(rec.spans) == ["eva/00"]
    pool.scored({PARA})
    pool.scoring(0)
    pool.wait()
    assert list(rec.spans) == ["eva/00", "para/00"]


@pytest.mark.parametrize("slots", [1, 2, 3])
def test_scoring_takes_one_of_the_slots(slots: int) -> None:
    jobs = [Job(i, f"nb{i}", frozenset({EVA})) for i in range(12)]
    rec = Recorder(0.2)
    pool = JobPool(jobs, slots, rec, unscored={PARA}, echo=lambda _: None)
    pool.scoring(1)  # para is being scored; the jobs read eva only
    time.sleep(0.5)
    during, rec.peak = rec.peak, rec.active
    pool.scoring(0)
    pool.wait()
    assert during == slots - 1  # one job at most slots - 1 ran beside the scoring
    assert rec.peak == slots  # then every slot is used (jobs are left: 12 x 0.2 s)


def test_one_slot_keeps_the_order_and_several_start_the_longest_chain_first() -> None:
    jobs = [
        Job(0, "short", frozenset({EVA}), expected=5.0),
        Job(1, "long", frozenset({EVA}), expected=50.0),
        Job(2, "first", frozenset({EVA}), expected=1.0),
        Job(3, "after-first", frozenset({EVA}), after=frozenset({2}), expected=100.0),
    ]
    assert chain_seconds(jobs) == {0: 5.0, 1: 50.0, 2: 101.0, 3: 100.0}
    for slots, first in ((1, ["short"]), (2, ["first", "long"])):
        lines: list[str] = []
        JobPool(jobs, slots, Recorder(0.05), echo=lines.append).wait()
        started = [line.split("started ")[1] for line in lines if "started" in line]
        assert started[: len(first)] == first


def test_readers_wait_for_the_notebooks_that_may_score_their_data() -> None:
    explorer = Job(0, "explorer eva", frozenset({EVA}), shown=False)
    scoring_eva = Job(1, "eva/00", frozenset({EVA}), writes=True, after=frozenset({0}))
    mtmm = Job(2, "eva/01", frozenset({EVA}), after=frozenset({0}))
    scoring_para = Job(3, "para/00", frozenset({PARA}), writes=True)
    headroom = Job(4, "headroom/04", frozenset({EVA, PARA}))
    again = Job(5, "eva2/00", frozenset({EVA}), writes=True)
    ordered = order_by_data([explorer, scoring_eva, mtmm, scoring_para, headroom, again])
    after = {j.name: set(j.after) for j in ordered}
    assert after == {
        "explorer eva": set(),  # its page link makes eva/00 wait for it, not the reverse
        "eva/00": {0},
        "eva/01": {0, 1, 5},
        "para/00": set(),
        "headroom/04": {1, 3, 5},
        "eva2/00": {1},  # writers of one dataset keep their order
    }
    rec = Recorder(0.05)
    JobPool(ordered, 3, rec, echo=lambda _: None).wait()
    for job in ordered:
        for first in job.after:
            assert rec.spans[ordered[first].name][1] <= rec.spans[job.name][0]


def test_one_slot_runs_the_steps_in_the_order_the_pool_would() -> None:
    """``report --jobs 1`` runs its steps in ``in_order``, without the pool: the order is
    the one a pool of one slot starts them in (a reader after a writer listed later)."""
    ordered = order_by_data(
        [
            Job(0, "explorer eva", frozenset({EVA}), shown=False),
            Job(1, "eva/01", frozenset({EVA}), after=frozenset({0})),
            Job(2, "para/01", frozenset({PARA})),
            Job(3, "eva/00", frozenset({EVA}), writes=True, after=frozenset({0})),
        ]
    )
    lines: list[str] = []
    JobPool(ordered, 1, Recorder(0.01), echo=lines.append).wait()
    started = [line.split("started ")[1] for line in lines if "started" in line]
    assert [j.name for j in in_order(ordered) if j.shown] == started
    assert started == ["para/01", "eva/00", "eva/01"]
    with pytest.raises(RuntimeError, match="waiting on each other: a, b"):
        in_order(
            [
                Job(0, "a", frozenset(), after=frozenset({1})),
                Job(1, "b", frozenset(), after=frozenset({0})),
            ]
        )


def test_a_failing_job_does_not_stop_the_others() -> None:
    """A failed notebook is reported; a step that raised is raised once the others ended."""
    jobs = [Job(i, name, frozenset({EVA})) for i, name in enumerate(["bad", "raises", "good"])]
    rec = Recorder(0.05, fail="raises")
    lines: list[str] = []
    pool = JobPool(jobs, 1, rec, echo=lines.append)
    with pytest.raises(RuntimeError, match="raises could not be rendered"):
        pool.wait()
    assert list(rec.spans) == ["bad", "raises", "good"]
    assert "[1/3] bad     0.1 s  FAILED: boom" in lines
    assert "[2/3] raises  FAILED: raises could not be rendered" in lines
    assert "[3/3] good     0.1 s  ok" in lines


WRITER = """
import sys, time
from pathlib import Path
from judgepanel.report.nbtools import Notebook
folder, name, go = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
nb = Notebook("run", name, folder / "tables", folder / "figures", False)
while not go.exists():
    time.sleep(0.01)
for i in range(40):
    nb.headline(f"h{i}", i, f"headline {i}")
"""


@pytest.mark.slow
def test_notebooks_of_one_run_keep_each_others_headlines(tmp_path: Path) -> None:
    """Kernels of one run update headlines.json at the same time; no update is lost."""
    go = tmp_path / "go"
    names = [f"0{i}_notebook" for i in range(4)]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, str(go)])
        for name in names
    ]
    time.sleep(1.0)
    go.touch()  # the writers start together
    assert [p.wait(timeout=240) for p in procs] == [0, 0, 0, 0]
    kept = json.loads((tmp_path / "headlines.json").read_text())
    assert sorted(kept) == names
    assert all(len(kept[name]) == 40 for name in names)


def _notebook_spans(outputs: Path) -> dict[str, tuple[float, float]]:
    steps = json.loads((outputs / TIMINGS_FILE).read_text())["steps"]
    return {
        f"{s['run']}/{s['notebook']}": (s["start"], s["end"])
        for s in steps
        if s["phase"] == "notebook"
    }


def _shown(outputs: Path, run: str) -> dict[str, bytes]:
    """What a run's pages show as data: every table, and the headline numbers."""
    files = [*sorted((outputs / run / "tables").glob("*.csv")), outputs / run / "headlines.json"]
    return {p.name: p.read_bytes() for p in files}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_independent_runs_overlap_with_two_jobs_and_show_the_same(
    small_project, tmp_path, monkeypatch, capsys
):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    runs = ("test-eva", "test-para")
    for jobs in (1, 2):
        request = ReportRequest(
            profile="test",
            runs=runs,
            only=("00",),
            runs_file=small_project.runs_file,
            outputs=tmp_path / f"jobs-{jobs}",
            jobs=jobs,
            quick=True,  # every page must say so
            overrides={"savings_images": 0},  # 00's savings sample is not checked here
        )
        assert run_report(request) == 0
    printed = capsys.readouterr().out
    for jobs in (1, 2):
        for run in runs:
            page = (tmp_path / f"jobs-{jobs}" / run / "00_scoring.html").read_text()
            assert "Quick run." in page, (jobs, run)
    one, two = (_notebook_spans(tmp_path / f"jobs-{jobs}") for jobs in (1, 2))
    (a, b), (c, d) = one.values(), two.values()
    assert a[1] <= b[0] or b[1] <= a[0]  # one job: one notebook after the other
    assert c[0] < d[1] and d[0] < c[1]  # two jobs: independent runs overlap
    for run in runs:
        assert _shown(tmp_path / "jobs-1", run) == _shown(tmp_path / "jobs-2", run)
        assert f"started {run}/00_scoring" in printed
    index = (tmp_path / "jobs-2" / "index.html").read_text()
    assert index.index("<h2>test-eva</h2>") < index.index("<h2>test-para</h2>")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_failing_notebook_does_not_stop_the_others(small_project, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    text = small_project.runs_file.read_text().replace(
        str(small_project.root / "synth" / "synth-eva"), str(tmp_path / "missing-eva")
    )
    broken = tmp_path / "runs.yaml"
    broken.write_text(text)
    request = ReportRequest(
        profile="test",
        runs=("test-eva", "test-para"),
        only=("00",),
        runs_file=broken,
        outputs=tmp_path / "out",
        jobs=2,
        overrides={"savings_images": 0},  # 00's savings sample is not checked here
    )
    assert run_report(request) == 1
    out, err = capsys.readouterr()
    assert "test-para/00_scoring" in out and "report: 1 notebooks ok, 1 failed" in out
    assert "error: test-eva/00_scoring.ipynb: cell" in err
    assert (tmp_path / "out" / "test-para" / "tables" / "coverage.csv").exists()
    assert "failed" in (tmp_path / "out" / "index.html").read_text()
