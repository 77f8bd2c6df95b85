"""Benchmark: the rubric-fusion analyses with and without the per-process memos.

Runs a slice of what notebooks 01, 02 and 04 compute on the demo store's EVA-like dataset
(the input ablation of two family blocks, the trio sweep, a few fold partitions and the
MTMM cells), once on the plain path (the bootstrap-column, -draw and -target and the
out-of-fold-fit memos disabled, one worker) and once with the memos on, starting empty;
every table of the two passes must be identical. Times are CPU seconds of this process
(everything runs in it), which a busy machine disturbs less than wall time; wall time is
reported too. It also times one out-of-fold gradient-boosting fit with sklearn's
per-tree checks (plain ``cross_val_predict``) against the study's fit, which skips them,
on the same design. The last line is a one-line JSON summary.

It needs the scored demo store (``make report`` writes it); without one it says so and
reports itself skipped.

Usage: python bench/bench_analysis.py [--n-resamples 2000] [--partitions 4]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import cross_val_predict

from judgepanel.core.config import load_config
from judgepanel.core.prompts import VALIDATED
from judgepanel.stats.bootstrap import DRAWN, RESAMPLED, TARGETS
from judgepanel.studies import fusion
from judgepanel.studies.common.combiners import fresh_oof, gb_combiner, make_folds
from judgepanel.studies.common.fitcache import FITS
from judgepanel.studies.fusion import ablation, mtmm, robustness, trios
from judgepanel.studies.fusion.blocks import hp_design

RUNS_FILE = Path("papermill_runs.yaml")
RUN = "demo-eva"


def workload(rated: fusion.RatedData, n_resamples: int, n_partitions: int) -> dict:
    """The analyses timed, in a notebook's order; returns every table they make."""
    blocks = rated.blocks
    fams = list(blocks.H.columns)
    pre = fams[:3]
    human = rated.images.loc[blocks.items, ["mean_score", *VALIDATED]]
    sets = {"pre-declared": pre, f"all {len(fams)}": fams}
    out: dict[str, pd.DataFrame] = {}
    steps: dict[str, Callable[[], pd.DataFrame]] = {
        "ablation": lambda: ablation.ablate_inputs(blocks, sets, n_resamples=n_resamples, n_jobs=1),
        "trio sweep": lambda: trios.sweep_trios(
            blocks, fams, metrics=("spearman",), n_resamples=n_resamples, n_jobs=1
        ),
        "partitions": lambda: robustness.sweep_partitions(
            blocks, {"pre-declared": pre}, seeds=tuple(range(n_partitions)), n_jobs=1
        ),
        "mtmm cells": lambda: mtmm.mtmm_cells(
            blocks.P, blocks.H, human, fams, n_resamples=n_resamples
        ),
    }
    seconds = {}
    for name, step in steps.items():
        start = time.process_time()  # CPU: one worker, and the machine may be shared
        out[name] = step()
        seconds[name] = time.process_time() - start
    return {"tables": out, "seconds": seconds}


def timed_pass(rated: fusion.RatedData, n_resamples: int, n_partitions: int, memo: bool) -> dict:
    """One pass over the workload with the memos on (emptied first) or off."""
    FITS.clear()
    RESAMPLED.clear()
    DRAWN.clear()
    TARGETS.clear()
    FITS.enabled = RESAMPLED.enabled = DRAWN.enabled = TARGETS.enabled = memo
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        result = workload(rated, n_resamples, n_partitions)
        result["wall_s"] = time.perf_counter() - wall
        result["cpu_s"] = time.process_time() - cpu
        result["hits"] = {
            "fits": FITS.hits,
            "bootstrap columns": RESAMPLED.hits,
            "bootstrap draws": DRAWN.hits,
            "bootstrap targets": TARGETS.hits,
        }
    finally:
        FITS.enabled = RESAMPLED.enabled = DRAWN.enabled = TARGETS.enabled = True
    return result


def fit_checks(rated: fusion.RatedData, repeats: int) -> dict:
    """One H+P_gb out-of-fold fit with sklearn's per-tree checks and without."""
    blocks = rated.blocks
    X = hp_design(blocks, list(blocks.H.columns)[:3]).to_numpy(float)
    y = blocks.y.to_numpy(float)
    best: dict[str, float] = {}
    preds = {}
    for _ in range(repeats):
        for name, fit in (
            ("checked", lambda: cross_val_predict(clone(gb_combiner()), X, y, cv=make_folds())),
            ("unchecked", lambda: fresh_oof(gb_combiner(), X, y, 42)),
        ):
            start = time.process_time()
            preds[name] = fit()
            best[name] = min(best.get(name, np.inf), time.process_time() - start)
    return {
        "checked_cpu_s": round(best["checked"], 3),
        "unchecked_cpu_s": round(best["unchecked"], 3),
        "speed_ratio": round(best["checked"] / best["unchecked"], 2),
        "identical": bool(np.array_equal(preds["checked"], preds["unchecked"])),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples")
    parser.add_argument("--partitions", type=int, default=4, help="random fold partitions")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many single fits")
    args = parser.parse_args(argv)
    summary: dict = {"bench": "analysis"}
    config = load_config(RUNS_FILE) if RUNS_FILE.exists() else None
    run = config.run(RUN) if config else None
    store = Path(run.profile.store) if run else None
    if store is None or not store.exists():
        reason = f"no scored demo store at {store}; run `make report` first"
        print(f"bench_analysis skipped: {reason}")
        summary["skipped"] = reason
        print(json.dumps(summary))
        return summary
    rated = fusion.load_rated(run, config, families=list(run.profile.families))
    print(
        f"{rated.name}: {len(rated.blocks.items)} images, {rated.blocks.H.shape[1]} families; "
        f"B = {args.n_resamples}, {args.partitions} partitions, one worker"
    )
    plain = timed_pass(rated, args.n_resamples, args.partitions, memo=False)
    memo = timed_pass(rated, args.n_resamples, args.partitions, memo=True)
    identical = all(plain["tables"][k].equals(memo["tables"][k]) for k in plain["tables"])
    for step in plain["seconds"]:
        p, m = plain["seconds"][step], memo["seconds"][step]
        print(f"{step:11s} plain {p:7.2f} s CPU | memo {m:7.2f} s CPU | ratio {p / m:5.2f}x")
    ratio = plain["cpu_s"] / memo["cpu_s"]
    print(
        f"all        plain {plain['wall_s']:7.2f} s ({plain['cpu_s']:.1f} s CPU) | memo "
        f"{memo['wall_s']:7.2f} s ({memo['cpu_s']:.1f} s CPU) | CPU ratio {ratio:.2f}x | "
        f"hits {memo['hits']} | tables identical: {identical}"
    )
    checks = fit_checks(rated, args.repeats)
    print(
        f"one H+P_gb out-of-fold fit: sklearn's checks {checks['checked_cpu_s']} s CPU, "
        f"skipped {checks['unchecked_cpu_s']} s ({checks['speed_ratio']}x), "
        f"predictions identical: {checks['identical']}"
    )
    summary.update(
        n_images=len(rated.blocks.items),
        n_resamples=args.n_resamples,
        partitions=args.partitions,
        plain_s=round(plain["wall_s"], 2),
        memo_s=round(memo["wall_s"], 2),
        plain_cpu_s=round(plain["cpu_s"], 2),
        memo_cpu_s=round(memo["cpu_s"], 2),
        cpu_ratio=round(ratio, 2),
        steps={k: round(plain["seconds"][k] / memo["seconds"][k], 2) for k in plain["seconds"]},
        hits=memo["hits"],
        tables_identical=identical,
        fit_checks=checks,
        load_average_1min=round(os.getloadavg()[0], 2),
    )
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
