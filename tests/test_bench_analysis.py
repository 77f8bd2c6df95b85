"""bench_analysis in a checkout without a scored store: a clear message, not a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_analysis_skips_without_a_store(tmp_path):
    shutil.copy(ROOT / "papermill_runs.yaml", tmp_path)  # names data/stores/demo.sqlite
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_analysis.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert "skipped" in lines[0] and "make report" in lines[0]
    summary = json.loads(lines[-1])
    assert summary["bench"] == "analysis" and "no scored demo store" in summary["skipped"]
