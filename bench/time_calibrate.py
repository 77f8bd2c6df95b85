"""Time `make calibrate` end to end and record it in ``bench/results/calibrate.json``.

The calibration study must finish within 15 minutes on two cores. This runs its two steps
as `make calibrate` does (the pool, then notebook 08), times each, and records the
figures with the machine's core count and load average, so a slow run on a shared machine
can be told from a slow study. It is not part of ``run_all.py``: it takes minutes.

Usage: python bench/time_calibrate.py [--fresh]   (--fresh: rebuild the pool first)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POOL = ROOT / "data" / "calibration" / "pool"
BUDGET_S = 15 * 60


def _timed(cmd: list[str]) -> float:
    started = time.monotonic()
    subprocess.run(cmd, cwd=ROOT, check=True)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", action="store_true", help="remove the pool first")
    parser.add_argument(
        "--n-images", type=int, default=3000, help="pool size (the Makefile's CAL_IMAGES)"
    )
    args = parser.parse_args()
    if args.fresh and POOL.exists():
        shutil.rmtree(POOL)
    load_before = os.getloadavg()
    bin_dir = Path(sys.executable).parent
    pool_s = _timed(
        [
            sys.executable,
            "-m",
            "judgepanel_sim",
            "pool",
            "--out",
            str(POOL),
            "--jobs",
            "2",
            "--n-images",
            str(args.n_images),
        ]
    )
    report_s = _timed([str(bin_dir / "judgepanel"), "report", "--profile", "calibration"])
    total = pool_s + report_s
    result = {
        "n_images": args.n_images,
        "pool_s": round(pool_s, 1),
        "notebook_s": round(report_s, 1),
        "total_s": round(total, 1),
        "budget_s": BUDGET_S,
        "within_budget": total <= BUDGET_S,
        "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    out = ROOT / "bench" / "results" / "calibrate.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
