"""bench_report --timings: a report's _timings.json as one table of steps and costs per call."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "bench" / "bench_report.py"

TIMINGS = {
    "jobs": 2,
    "profile": "demo",
    "quick": False,
    "seconds": 60.5,
    "started_at": "2026-01-01T00:00:00+00:00",
    "steps": [
        {
            "calls": 1000,
            "datasets": ["eva-logprob"],
            "phase": "scoring",
            "planned": 1000,
            "run": "demo-logprob",
            "skipped": 0,
            "start": 1.0,
            "end": 5.0,
            "seconds": 4.0,
            "cpu_s": 1.5,
        },
        {"phase": "simulator", "start": 0.0, "end": 0.8, "seconds": 0.8},
        {
            "calls": 0,
            "datasets": ["eva"],
            "phase": "scoring",
            "planned": 10,
            "run": "demo-eva",
            "skipped": 10,
            "start": 0.9,
            "end": 1.0,
            "seconds": 0.1,
        },
        {
            "dataset": "eva",
            "phase": "explorer",
            "profile": "demo",
            "start": 5.0,
            "end": 7.0,
            "seconds": 2.0,
        },
        {
            "notebook": "09_logprob",
            "ok": True,
            "phase": "notebook",
            "run": "demo-logprob",
            "start": 7.0,
            "end": 60.0,
            "seconds": 53.0,
            "cpu_s": 41.25,
        },
    ],
}


def _bench_report():
    spec = importlib.util.spec_from_file_location("bench_report", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_step_by_start_with_the_cost_per_call_of_scoring():
    rows = _bench_report().timing_rows(TIMINGS)
    assert [(r["phase"], r["name"]) for r in rows] == [
        ("simulator", "simulator"),
        ("scoring", "demo-eva"),
        ("scoring", "demo-logprob"),
        ("explorer", "demo/eva"),
        ("notebook", "demo-logprob/09_logprob"),
    ]
    logprob = rows[2]
    assert logprob["calls"] == 1000
    assert logprob["wall_ms_per_call"] == pytest.approx(4.0)
    assert logprob["cpu_ms_per_call"] == pytest.approx(1.5)
    # nothing sent: no cost per call; no cpu_s recorded: none shown
    assert rows[1]["wall_ms_per_call"] is None and rows[1]["cpu_ms_per_call"] is None
    assert "calls" not in rows[4]
    assert rows[4]["cpu_s"] == 41.25 and rows[0]["cpu_s"] is None  # a warm kernel's CPU


def test_the_table_from_the_command_line(tmp_path: Path):
    path = tmp_path / "_timings.json"
    path.write_text(json.dumps(TIMINGS), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--timings", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].split()[:4] == ["step", "start", "end", "seconds"]
    logprob = next(line for line in lines if "scoring demo-logprob" in line)
    assert logprob.split()[-5:] == ["4.0", "1.5", "1000", "4.000", "1.500"]
    notebook = next(line for line in lines if "notebook demo-logprob/09_logprob" in line)
    assert notebook.split()[-5:] == ["53.0", "41.2", "-", "-", "-"]
    assert lines[-1].split() == ["total", "60.5"]
    assert len(lines) == 1 + len(TIMINGS["steps"]) + 1


def test_a_bad_timings_file_is_named_with_its_step(tmp_path: Path):
    module = _bench_report()
    with pytest.raises(module.TimingsError, match="no 'steps' list"):
        module.timing_rows({"seconds": 1.0}, "t.json")
    broken = {"steps": [TIMINGS["steps"][1], {"phase": "scoring", "start": "soon"}]}
    with pytest.raises(module.TimingsError, match=r"t.json: step 2: 'start' must be a number"):
        module.timing_rows(broken, "t.json")
    path = tmp_path / "_timings.json"
    path.write_text("{not json", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--timings", str(path)], capture_output=True, text=True
    )
    assert proc.returncode != 0 and "not a JSON file" in proc.stderr
