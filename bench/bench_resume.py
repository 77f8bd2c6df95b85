"""Benchmark: planning a resume over a store of 100,000 calls.

Fills a store with 100,000 rows of a 100,000-call rubric plan (all but 1% stored), then
times what ``judgepanel score`` does before sending anything: one ``completed_digests`` query
and a set filter over the plan (median of a few runs, wall and CPU time, since a shared
machine inflates wall time). The obvious alternative, one ``SELECT`` per planned call, is
timed on a subset spread over the plan and scaled to the full plan. Prints a one-line JSON
summary.

Usage: python bench/bench_resume.py [--rows 100000] [--probe 5000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd

from judgepanel.core.client import pending_calls
from judgepanel.core.config import ScoringDesign
from judgepanel.core.store import CallResult, Store
from judgepanel.studies.common.rubric_plan import plan_images


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--probe", type=int, default=5_000, help="calls timed one by one")
    parser.add_argument("--repeat", type=int, default=3, help="resume plannings (median)")
    args = parser.parse_args()

    design = ScoringDesign(holistic_k=25, dimension_r=3, temperature=0.3)  # 40 calls/image
    families = {f"f{i}": f"model-{i}" for i in range(5)}
    n_images = -(-args.rows // (design.calls_per_image * len(families)))
    images = pd.DataFrame(
        {"image_id": [f"img{i:05d}" for i in range(n_images)], "path": "unused.jpg"}
    )
    t0 = time.perf_counter()
    plan = plan_images(images, families, design, dataset="eva")[: args.rows]
    t_plan = time.perf_counter() - t0

    ok = CallResult(status="ok", answer='{"score": 6}', parsed={"score": 6}, value=6.0)
    stored = plan[: int(len(plan) * 0.99)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite"
        with Store(path) as store:
            t0 = time.perf_counter()
            store.record_many((s.key, ok) for s in stored)
            t_fill = time.perf_counter() - t0

        walls, cpus = [], []
        for _ in range(args.repeat):
            with Store(path) as store:  # each time a new connection, as a new process has
                t0, c0 = time.perf_counter(), time.process_time()
                todo, skipped = pending_calls(plan, store)
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
                assert skipped == len(stored) and len(todo) == len(plan) - len(stored)
        with Store(path) as store:
            # the alternative, spread over the whole plan so the page cache is not favoured
            probe = plan[:: max(1, len(plan) // args.probe)]
            t0, c0 = time.perf_counter(), time.process_time()
            n_done = sum(store.is_completed(s.key) for s in probe)
            t_probe = time.perf_counter() - t0
            c_probe = time.process_time() - c0
            assert n_done >= len(probe) - 1 - len(probe) // 100
    t_resume, c_resume = statistics.median(walls), statistics.median(cpus)
    t_naive = t_probe * len(plan) / len(probe)
    c_naive = c_probe * len(plan) / len(probe)
    summary = {
        "bench": "resume",
        "rows": len(stored),
        "plan": len(plan),
        "plan_build_s": round(t_plan, 3),
        "fill_s": round(t_fill, 3),
        "resume_plan_s": round(t_resume, 4),
        "resume_plan_cpu_s": round(c_resume, 4),
        "naive_per_call_s_scaled": round(t_naive, 3),
        "naive_per_call_cpu_s_scaled": round(c_naive, 3),
        "naive_probe_calls": len(probe),
        "speedup": round(t_naive / t_resume, 1),
        "under_1s": t_resume < 1.0,
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
