"""Run every benchmark in this folder and collect their one-line JSON summaries.

Each ``bench_*.py`` prints a JSON object as its last line. This runs them one after the
other (they measure ratios against an obvious alternative in the same run, so they must
not compete for the cores), writes ``bench/results/summary.json`` (with ``--only``, the
figures of the benchmarks not run are kept) and prints the figures.

``--quick`` leaves out the slow benchmarks (:data:`SLOW`: the analyses at AVA's scale take
about ten minutes).

Usage: python bench/run_all.py [--only client,resume] [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SLOW = ("scale",)
"""Benchmarks that ``--quick`` leaves out."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated names, e.g. client,resume")
    parser.add_argument("--quick", action="store_true", help=f"leave out {', '.join(SLOW)}")
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    scripts = sorted(HERE.glob("bench_*.py"))
    results: dict[str, object] = {}
    failed = []
    for script in scripts:
        name = script.stem.removeprefix("bench_")
        if (wanted and name not in wanted) or (args.quick and name in SLOW):
            continue
        print(f"== {script.name}", flush=True)
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, cwd=HERE.parent
        )
        print(proc.stdout, end="")
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            print(proc.stderr[-4000:], file=sys.stderr)
            failed.append(name)
            continue
        results[name] = {**json.loads(lines[-1]), "wall_s": round(time.monotonic() - started, 1)}
    out = HERE / "results" / "summary.json"
    out.parent.mkdir(exist_ok=True)
    # With --only or --quick, the other benchmarks' last figures are kept rather than dropped.
    kept = wanted or args.quick
    earlier = json.loads(out.read_text()) if kept and out.exists() else {}
    out.write_text(json.dumps({**earlier, **results}, indent=2, sort_keys=True) + "\n")
    print(f"wrote {out.relative_to(HERE.parent)}")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
