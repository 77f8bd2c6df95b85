"""bench_scale at a small size: every step runs, the page renders, the two bootstraps agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_bench_scale_runs_small(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_scale.py"),
            "--n",
            "2000",
            "--n-resamples",
            "300",
            "--compare-n",
            "1500",
            "--jobs",
            "1",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["bench"] == "scale" and summary["n"] == 2000
    assert set(summary["steps"]) >= {"noise ceiling", "out-of-fold H+P_gb", "notebook page"}
    assert all(
        s["wall_s"] >= 0 and s["cpu_s"] >= 0 and s["peak_rss_gib"] > 0
        for s in summary["steps"].values()
    )
    assert summary["process_peak_rss_gib"] > 0 and summary["children_peak_rss_gib"] > 0
    assert summary["total_cpu_s"] > 0 and summary["jobs"] == 1
    assert "peak memory: this process" in proc.stdout.strip().splitlines()[-2]
    # the analyses' subtotal leaves out exactly the benchmark's own steps
    own = {"synthetic data", "chunked, compare-n", "unchunked, compare-n"}
    steps = summary["steps"]
    assert summary["analyses_cpu_s"] == pytest.approx(
        sum(s["cpu_s"] for k, s in steps.items() if k not in own), abs=0.06
    )
    assert "resampled rho, both arms" in steps and own <= set(steps)
    results = summary["results"]
    assert results["compare"]["identical"] is True
    assert results["ceiling"]["method"] == "vote_split_half"
    assert results["design_columns"] == 30  # 5 families x (holistic + 5 dimensions)
    low, high = results["fused_minus_best"]["ci"]
    assert low <= results["fused_minus_best"]["delta"] <= high
