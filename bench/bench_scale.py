"""Benchmark: the analyses at AVA's scale (255,000 images), on a synthetic score table.

Writes, with a fixed seed, vote histograms for n images (about 200 votes an image on
AVA's 1-10 scale, laid out by the AVA adapter's own `assemble`) and a score table of five
families (5 holistic runs, 5 rubric dimensions x 3 runs), then runs, step by step: the
feature blocks, the noise ceiling ``noise_ceiling`` picks (the vote split-half), the
out-of-fold H+P_gb combiner, both arms' resampled Spearman (one pass, as the studies
bootstrap all their arms), the best single family's Spearman with its B-resample CI and
the paired delta-rho of fused minus best single (both reading those columns), and one
notebook page (papermill, rendered by the report's page machinery). No scoring is done.

Each step records its wall time, its CPU time (this process's, all its threads: on a
shared machine the steadier figure) and the peak resident memory of this process during the
step (the kernel's high-water mark, VmHWM, reset before the step through
``/proc/self/clear_refs``; where that is refused, the process's ``ru_maxrss`` so far); the
page's kernel is a child process, reported by ``ru_maxrss`` of the children. The
combiner's two fold workers are threads, so their memory is this process's. The
obvious alternative to the chunked bootstrap, drawing the whole (B, n) index matrix at
once, needs 20 GB at n = 255,000; both are run side by side at ``--compare-n`` images,
where it fits, with their times, peaks and ratios, and must agree bit for bit.

The run ends with the analyses' time (every step but the benchmark's own: making the
data and the chunked/unchunked check), the total time and the peak memory of the whole
command: this process's and its children's (the page's kernel) largest resident sets, from
``resource.getrusage(...).ru_maxrss``; the last line is a one-line JSON summary.

Usage: python bench/bench_scale.py [--n 255000] [--n-resamples 10000] [--compare-n 25500]
       [--jobs N (default: the cores this process may use)] [--no-page]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.datasets import ava
from judgepanel.datasets.assemble import assemble
from judgepanel.stats import bootstrap as bs
from judgepanel.stats import noise_ceiling, paired_bootstrap, percentile_ci, spearman
from judgepanel.studies.common.combiners import gb_combiner, oof_predict
from judgepanel.studies.fusion.blocks import best_single, build_blocks, hp_design

HERE = Path(__file__).resolve().parent
PAGE = HERE / "scale_page.ipynb"
FAMILIES = tuple(f"family_{k}" for k in range(1, 6))
DIMENSIONS = ("quality", "composition", "colour", "distinctiveness", "emotion")
HOLISTIC_RUNS = 5
DIMENSION_RUNS = 3
GIB = 2**30
BENCH_ONLY = frozenset({"synthetic data", "chunked, compare-n", "unchunked, compare-n"})
"""Steps that are the benchmark's own (making the data, the chunked/unchunked check), left
out of the analyses' subtotal: a user's run of the analyses has neither."""


class Peak:
    """Peak resident memory of this process during a step, in bytes."""

    def __init__(self) -> None:
        self.exact = self._reset()

    @staticmethod
    def _reset() -> bool:
        try:
            Path("/proc/self/clear_refs").write_text("5")
            return True
        except OSError:
            return False

    def start(self) -> None:
        self._reset()

    def read(self) -> int:
        if self.exact:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def synthetic(n: int, seed: int) -> tuple[Any, pd.DataFrame]:
    """An AVA-like dataset (vote histograms) and a long score table of the five families."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    ids = np.array([str(100_000 + i) for i in range(n)], dtype=object)
    levels = np.arange(1, 11, dtype=float)
    centre = 5.4 + 0.8 * latent + rng.normal(0, 0.25, n)  # each image's own taste offset
    logits = -((levels[None, :] - centre[:, None]) ** 2) / (2 * 1.5**2)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    votes_per_image = np.maximum(rng.poisson(210, n), 2)
    counts = rng.multinomial(votes_per_image, probs)
    image, level = np.nonzero(counts)
    votes = pd.DataFrame(
        {
            "image_id": ids[image],
            "attribute": "score",
            "value": levels[level],
            "count": counts[image, level].astype(float),
        }
    )
    images = pd.DataFrame({"image_id": ids, "path": ""})
    data = assemble("ava", Path("."), images, ava.ATTRIBUTES, "synthetic AVA", votes=votes)
    return data, score_table(ids, latent, rng)


def score_table(ids: np.ndarray, latent: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    """item, family, kind, dimension, repetition, value: integer scores 1-10, a row a call."""
    parts = []
    for f, family in enumerate(FAMILIES):
        skill = 0.5 + 0.1 * f  # families differ in how much of the latent they see
        bias = rng.normal(0, 0.6, latent.size)  # a family's own view of each image
        for dim, runs in [(None, HOLISTIC_RUNS)] + [(d, DIMENSION_RUNS) for d in DIMENSIONS]:
            view = bias + (rng.normal(0, 0.5, latent.size) if dim else 0.0)
            for rep in range(runs):
                raw = 5.5 + 1.5 * (skill * latent + view) + rng.normal(0, 1.0, latent.size)
                parts.append(
                    pd.DataFrame(
                        {
                            "item": ids,
                            "family": family,
                            "kind": "dimension" if dim else "holistic",
                            "dimension": dim,
                            "repetition": rep,
                            "value": np.clip(np.round(raw), 1, 10),
                        }
                    )
                )
    return pd.concat(parts, ignore_index=True)


def old_bootstrap(y: np.ndarray, arms: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The unchunked alternative: the whole (B, n) index matrix drawn at once."""
    return bs._resampled_arms(
        y, arms, "spearman", indices=bs.resample_indices(y.size, n_resamples, seed)
    )


def new_bootstrap(y: np.ndarray, arms: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The chunked bootstrap, as ``bootstrap_arms`` runs it (without its memo)."""
    return bs._resampled_arms(y, arms, "spearman", draws=(n_resamples, seed))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=255_000, help="images")
    parser.add_argument("--n-resamples", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument(
        "--compare-n", type=int, default=25_500, help="images of the chunked/unchunked run"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--jobs", type=int, default=_cores(), help="threads fitting the folds (default: the cores)"
    )
    parser.add_argument("--no-page", action="store_true", help="skip the notebook page")
    args = parser.parse_args(argv)

    peak = Peak()
    steps: dict[str, dict[str, float]] = {}
    results: dict[str, Any] = {}

    def step(name: str, fn: Callable[..., Any], *fn_args: Any) -> Any:
        peak.start()
        started, cpu = time.perf_counter(), time.process_time()
        out = fn(*fn_args)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        steps[name] = {
            "wall_s": round(seconds, 2),
            "cpu_s": round(cpu, 2),
            "peak_rss_gib": round(peak.read() / GIB, 3),
        }
        print(
            f"{name:28s} {seconds:8.1f} s   cpu {cpu:8.1f} s   peak {peak.read() / GIB:6.2f} GiB",
            flush=True,
        )
        return out

    print(
        f"n={args.n} images, B={args.n_resamples}, {args.jobs} fold workers; "
        f"peak = VmHWM per step: {peak.exact}"
    )
    data, scores = step("synthetic data", lambda: synthetic(args.n, args.seed))
    results["score_rows"] = len(scores)
    results["vote_rows"] = len(data.votes)
    human = data.images.set_index("image_id")["mean_score"]
    blocks = step("feature blocks", build_blocks, scores, human, FAMILIES)
    del scores
    y = blocks.y.to_numpy()

    ceiling = step("noise ceiling", lambda: noise_ceiling(data, n_resamples=500))
    results["ceiling"] = {
        "method": ceiling.method,
        "value": ceiling.ceiling,
        "interval": list(ceiling.interval),
    }

    design = hp_design(blocks, FAMILIES)
    results["design_columns"] = design.shape[1]

    def combine() -> np.ndarray:
        from joblib import parallel_config

        with parallel_config(backend="threading"):
            return oof_predict(gb_combiner(), design, blocks.y, n_jobs=args.jobs)

    fused = step("out-of-fold H+P_gb", combine)
    best, _ = best_single(blocks.H, blocks.y)
    single = blocks.H[best].to_numpy()

    # As the studies do, every arm's resampled rho in one pass over the resamples (the
    # human mean's ranks on each chunk made once for both); the CI and the paired delta
    # below then read the two memoised columns.
    step(
        "resampled rho, both arms",
        lambda: bs.bootstrap_arms(
            y, {best: single, "fused": fused}, n_resamples=args.n_resamples, seed=args.seed
        ),
    )

    def single_ci() -> tuple[float, tuple[float, float]]:
        column = bs.bootstrap_arms(y, {best: single}, n_resamples=args.n_resamples, seed=args.seed)
        return spearman(y, single), percentile_ci(column[:, 0])

    rho, ci = step("best single rho + CI", single_ci)
    results["best_single"] = {"family": best, "rho": rho, "ci": list(ci)}
    delta = step(
        "paired delta (fused-best)",
        lambda: paired_bootstrap(y, fused, single, n_resamples=args.n_resamples, seed=args.seed),
    )
    results["fused_minus_best"] = {
        "fused_rho": delta.estimate_a,
        "delta": delta.delta,
        "ci": [delta.ci_low, delta.ci_high],
        "p": delta.p,
    }

    m = min(args.compare_n, y.size)
    sub_y, sub_arms = y[:m], np.vstack([fused[:m], single[:m]])
    chunked = step(
        "chunked, compare-n", lambda: new_bootstrap(sub_y, sub_arms, args.n_resamples, args.seed)
    )
    unchunked = step(
        "unchunked, compare-n", lambda: old_bootstrap(sub_y, sub_arms, args.n_resamples, args.seed)
    )
    same = bool(np.array_equal(chunked, unchunked, equal_nan=True))
    new, old = steps["chunked, compare-n"], steps["unchunked, compare-n"]
    results["compare"] = {
        "n": m,
        "identical": same,
        "time_ratio_unchunked_over_chunked": round(old["wall_s"] / new["wall_s"], 2),
        "peak_ratio_unchunked_over_chunked": round(old["peak_rss_gib"] / new["peak_rss_gib"], 2),
        "unchunked_index_gib_at_n": round(8 * args.n * args.n_resamples / GIB, 1),
        "chunked_index_block_gib_at_n": round(
            8
            * args.n
            * bs.block_rows(args.n, args.n_resamples, max(1, bs._CHUNK_CELLS // args.n))
            / GIB,
            3,
        ),
    }
    print(f"chunked equals unchunked bit for bit at n={m}: {same}")
    if not args.no_page:
        with tempfile.TemporaryDirectory() as tmp:
            step("notebook page", lambda: page(Path(tmp), blocks, fused, best, results))
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        steps["notebook page"]["kernel_peak_rss_gib"] = round(children / GIB, 3)
    # Resetting VmHWM resets ru_maxrss too: the process's peak is the largest step's.
    process_peak = max(s["peak_rss_gib"] for s in steps.values())
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / GIB
    summary = {
        "bench": "scale",
        "n": args.n,
        "n_resamples": args.n_resamples,
        "jobs": args.jobs,
        "machine_cores": _cores(),
        "load_average": list(os.getloadavg()),
        "peak_measure": "VmHWM per step" if peak.exact else "ru_maxrss so far",
        "process_peak_rss_gib": process_peak,
        "children_peak_rss_gib": round(children_peak, 3),
        "total_s": round(sum(s["wall_s"] for s in steps.values()), 1),
        "total_cpu_s": round(sum(s["cpu_s"] for s in steps.values()), 1),
        "analyses_s": round(sum(s["wall_s"] for k, s in steps.items() if k not in BENCH_ONLY), 1),
        "analyses_cpu_s": round(
            sum(s["cpu_s"] for k, s in steps.items() if k not in BENCH_ONLY), 1
        ),
        "steps": steps,
        "results": results,
    }
    print(
        f"analyses {summary['analyses_s']:.1f} s (cpu {summary['analyses_cpu_s']:.1f} s), "
        f"without {', '.join(sorted(BENCH_ONLY))}"
    )
    print(
        f"total {summary['total_s']:.1f} s (cpu {summary['total_cpu_s']:.1f} s); peak memory: "
        f"this process {process_peak:.2f} GiB, its children {children_peak:.2f} GiB"
    )
    print(json.dumps(summary))
    return summary


def page(folder: Path, blocks: Any, fused: np.ndarray, best: str, results: dict) -> Path:
    """Write the table and the results, execute the page on them and render it to HTML."""
    import papermill as pm

    from judgepanel.report.page import render_page

    table = folder / "scale_table.parquet"
    pd.DataFrame(
        {"human_mean": blocks.y, "best_single": blocks.H[best], "fused": fused}
    ).to_parquet(table)
    numbers = folder / "scale_results.json"
    numbers.write_text(json.dumps(results))
    out = folder / "scale_page.ipynb"
    pm.execute_notebook(
        str(PAGE),
        str(out),
        parameters={"table": str(table), "results": str(numbers)},
        kernel_name="python3",
        progress_bar=False,
        extra_arguments=["--log-level=CRITICAL"],
    )
    return render_page(out, None, [])


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    main(sys.argv[1:])
