"""Benchmark: the simulated judge's score distribution, over the whole grid against node by node.

A logprob request makes the simulator integrate the judge's softmax over 161 impressions
(`judgepanel_sim.judges.marginal`). The reference computes each impression's logits and
log-softmax in Python, one node at a time, as `Family.to_scale` sees one impression; the
fast path does the same arithmetic on the whole grid at once. Both run here on the same
families, scales and temperatures, one after the other, the bits are checked equal, and
the ratio of their times is printed. Prints a one-line JSON summary last.

Usage: python bench/bench_marginal.py [--cases 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from judgepanel_sim.judges import marginal
from judgepanel_sim.judges.families import FAMILIES


def cases(n: int, seed: int = 0) -> list[tuple]:
    """``n`` (family, z0, sd, lo, hi, temperature) draws over every family and two scales."""
    rng = np.random.default_rng(seed)
    families = list(FAMILIES.values())
    out = []
    for i in range(n):
        lo, hi = ((1, 10), (1, 5))[i % 2]
        out.append(
            (
                families[i % len(families)],
                float(rng.normal(0, 1.5)),
                float(abs(rng.normal(0.5, 0.4))) + 1e-3,
                lo,
                hi,
                float(rng.choice([0.3, 0.7, 1.0])),
            )
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    work = cases(args.cases)
    x, _ = marginal._grid()

    def node(case: tuple) -> np.ndarray:
        return marginal.node_log_softmax(*case)

    def grid(case: tuple) -> np.ndarray:
        family, z0, sd, lo, hi, temperature = case
        logits = family.score_logits_grid(z0 + sd * x, lo, hi)
        return marginal._log_softmax_rows(logits, temperature)

    same = all(np.array_equal(node(c).view(np.int64), grid(c).view(np.int64)) for c in work)
    timings: dict[str, list[float]] = {"node": [], "grid": []}
    for _ in range(args.repeats):  # alternate, so drift in the machine hits both alike
        for name, fn in (("node", node), ("grid", grid)):
            start = time.perf_counter()
            for case in work:
                fn(case)
            timings[name].append((time.perf_counter() - start) / len(work))
    node_ms, grid_ms = (1000 * min(timings[k]) for k in ("node", "grid"))
    summary = {
        "benchmark": "marginal",
        "cases": len(work),
        "bit_identical": same,
        "node_by_node_ms_per_marginal": round(node_ms, 3),
        "whole_grid_ms_per_marginal": round(grid_ms, 3),
        "speedup": round(node_ms / grid_ms, 1),
    }
    print(json.dumps(summary))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
