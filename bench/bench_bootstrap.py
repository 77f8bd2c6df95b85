"""Benchmark: the vectorised paired bootstrap against scipy.stats.bootstrap.

Times ``judgepanel.stats.paired_bootstrap`` for Spearman's rho and Kendall's tau-b on
n synthetic images with tied integer scores and B resamples, and scipy's own paired
percentile bootstrap of the same difference. scipy calls the statistic once per resample,
so it is timed on fewer resamples and scaled linearly to B (the output says so). The two
draw identical resamples for a given seed, so their CIs on the smaller run must agree; that
agreement is checked and printed too. The last line is a one-line JSON summary.

Usage: python bench/bench_bootstrap.py [--n 500] [--n-resamples 10000] [--scipy-resamples 500]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from judgepanel.stats import paired_bootstrap, paired_bootstrap_partial

METRICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "spearman": lambda y, x: stats.spearmanr(y, x).statistic,
    "kendall_b": lambda y, x: stats.kendalltau(y, x).statistic,
}


def synthetic(n: int, seed: int) -> tuple[np.ndarray, ...]:
    """A human mean on a 0-10 grid, two judges' integer scores, and a human overall."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    y = np.round(np.clip(5 + 2 * latent + rng.normal(0, 0.6, n), 0, 10))
    a = np.round(np.clip(5 + 2 * latent + rng.normal(0, 1.6, n), 1, 10))
    b = np.round(np.clip(5 + 2 * latent + rng.normal(0, 2.0, n), 1, 10))
    overall = np.round(latent + rng.normal(0, 0.5, n), 1)
    return y, a, b, overall


def timed(fn: Callable[[], object], repeats: int = 1) -> tuple[float, object]:
    """Best wall time over ``repeats`` runs, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500, help="images")
    parser.add_argument("--n-resamples", type=int, default=10_000, help="bootstrap resamples")
    parser.add_argument(
        "--scipy-resamples", type=int, default=500, help="resamples scipy is timed on"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs (ours)")
    args = parser.parse_args(argv)

    y, a, b, overall = synthetic(args.n, args.seed)
    scale = args.n_resamples / args.scipy_resamples
    print(
        f"paired bootstrap, n={args.n}, B={args.n_resamples}; distinct values: "
        f"y {len(np.unique(y))}, a {len(np.unique(a))}, b {len(np.unique(b))} (ties)"
    )
    print(
        f"scipy.stats.bootstrap timed on {args.scipy_resamples} resamples and scaled "
        f"linearly by {scale:g} to {args.n_resamples}"
    )
    summary: dict = {
        "bench": "bootstrap",
        "n": args.n,
        "n_resamples": args.n_resamples,
        "scipy_resamples": args.scipy_resamples,
        "scipy_scaled_linearly": True,
    }
    paired_bootstrap(y, a, b, "kendall_b", n_resamples=50, seed=args.seed)  # warm-up
    for metric, corr in METRICS.items():
        ours_s, ours = timed(
            lambda m=metric: paired_bootstrap(
                y, a, b, m, n_resamples=args.n_resamples, seed=args.seed
            ),
            args.repeats,
        )

        def delta(yy, aa, bb, corr=corr):
            return corr(yy, aa) - corr(yy, bb)

        scipy_s, ref = timed(
            lambda delta=delta: stats.bootstrap(
                (y, a, b),
                delta,
                paired=True,
                vectorized=False,
                n_resamples=args.scipy_resamples,
                method="percentile",
                rng=np.random.default_rng(args.seed),
            )
        )
        small = paired_bootstrap(y, a, b, metric, n_resamples=args.scipy_resamples, seed=args.seed)
        ci_diff = max(
            abs(small.ci_low - ref.confidence_interval.low),
            abs(small.ci_high - ref.confidence_interval.high),
        )
        scipy_scaled = scipy_s * scale
        ratio = scipy_scaled / ours_s
        print(
            f"{metric:9s} ours {ours_s:7.3f} s | scipy {scipy_s:7.3f} s for "
            f"{args.scipy_resamples} -> {scipy_scaled:7.2f} s scaled | speed ratio {ratio:6.1f}x"
            f" | delta {ours.delta:+.4f} [{ours.ci_low:+.4f}, {ours.ci_high:+.4f}] p={ours.p:.4f}"
            f" | CI vs scipy on the same {args.scipy_resamples} resamples: max |diff| "
            f"{ci_diff:.1e}"
        )
        summary[metric] = {
            "ours_s": round(ours_s, 4),
            "scipy_s_measured": round(scipy_s, 4),
            "scipy_s_scaled": round(scipy_scaled, 3),
            "speed_ratio": round(ratio, 1),
            "ci_max_abs_diff_vs_scipy": ci_diff,
        }
    partial_s, _ = timed(
        lambda: paired_bootstrap_partial(
            a, y, b, overall, n_resamples=args.n_resamples, seed=args.seed
        ),
        args.repeats,
    )
    print(f"partial   ours {partial_s:7.3f} s per MTMM cell (difference of two partial rhos)")
    summary["partial_spearman_s_per_cell"] = round(partial_s, 4)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
