"""What drawing repetitions as samples and a prompt cache save, measured on the simulator.

A run's scoring design repeats each prompt k times. Sent one sample per request, each
repetition bills the whole prompt (the image is most of it); asked as ``n`` samples of one
request, the prompt is billed once; with a provider's prompt cache, a repeated prefix is
billed at the cached-input price. :func:`measure_savings` sends a sample of the design's
images twice, one sample per request and ``n`` to a request, each time to a fresh simulated
server with a prompt cache. The server's ledger (priced from its own table) holds, for
every answer, the bill with the cache and the bill of the same answer without one: the
cache changes what a request costs, never its answer or its tokens. The four ways of
sending are scaled from those two passes to the whole design, which is never sent.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from judgepanel.core.calls import CallSpec
from judgepanel.core.client import run_calls
from judgepanel.core.client.runner import group_key
from judgepanel.core.config import Price
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.sendconfig import resolve_options
from judgepanel.core.store import Store

SIM_MAX_N = 8
"""The most choices the simulator returns per request (as Gemini's API allows)."""
CACHE_WINDOW = 1_000_000
"""Requests a measuring server's prompt cache remembers: longer than any design, so a
prefix seen once stays cached and the ledger's total does not depend on the order in
which requests in flight are answered."""
DESIGNS: tuple[tuple[str, bool, bool], ...] = (
    ("one sample per request", False, False),
    ("n = k", True, False),
    ("one sample per request, cached", False, True),
    ("n = k, cached", True, True),
)
"""(label, repetitions as samples of one request, prompt cache on), in the table's order."""


def repetitions_per_prompt(plan: Sequence[CallSpec]) -> int:
    """The most repetitions any one prompt of the plan has (k of the design)."""
    counts = Counter(group_key(s) for s in plan)
    return max(counts.values(), default=1)


def sample_items(plan: Sequence[CallSpec], n_images: int, seed: int = 0) -> list[CallSpec]:
    """The calls of ``n_images`` items drawn from the plan with ``seed`` (all if fewer)."""
    items = sorted({s.key.item for s in plan})
    chosen = set(random.Random(seed).sample(items, min(n_images, len(items))))
    return [s for s in plan if s.key.item in chosen]


def _ledger(path: Path) -> pd.DataFrame:
    columns = ["prompt_tokens", "cached_tokens", "completion_tokens", "cost", "uncached_cost"]
    if not path.exists():
        return pd.DataFrame(columns=columns)
    return pd.DataFrame([json.loads(line) for line in path.read_text().splitlines()])


def _send(
    sample: Sequence[CallSpec],
    prices: Mapping[str, Price],
    samples_per_request: int,
    concurrency: int | None,
    tmp: Path,
) -> pd.DataFrame:
    """The ledger of a fresh simulated server with a prompt cache that answered ``sample``
    (its endpoint needs no key: a real one in the environment is never sent to it).

    Raises:
        RuntimeError: not every call came back (the figures would be wrong).
    """
    book = tmp / f"ledger-{samples_per_request}.jsonl"
    server = start_sim_server(SimConfig(ledger=book, cache_window=CACHE_WINDOW), log_dir=tmp)
    try:
        with Store(tmp / f"store-{samples_per_request}.sqlite") as store:
            options = resolve_options(
                (
                    "savings",
                    {
                        "endpoint": Endpoint.simulator(server.base_url),
                        "concurrency": concurrency,
                        "progress": False,
                        "samples_per_request": samples_per_request,
                    },
                )
            )
            summary = run_calls(sample, store, prices=prices, options=options)
    finally:
        server.stop()
    if summary.ok != len(sample):
        raise RuntimeError(f"{samples_per_request} sample(s) per request: {summary.line()}")
    return _ledger(book)


def measure_savings(
    plan: Sequence[CallSpec],
    prices: Mapping[str, Price],
    n_images: int = 50,
    *,
    seed: int = 0,
    concurrency: int | None = None,
) -> pd.DataFrame:
    """Requests, tokens and dollars of the whole ``plan`` under each of :data:`DESIGNS`.

    The calls of the same ``n_images`` images go to a fresh simulated server once per
    number of samples per request (one, and ``n = k``: each prompt's repetitions asked as
    samples of one request, at most :data:`SIM_MAX_N` to a request). A design without the
    cache is the same ledger billed at its ``uncached_cost``, with no cached tokens. Every
    ledger is scaled by planned calls over sampled calls. ``concurrency``: requests in
    flight (default: the declared one).

    Raises:
        RuntimeError: a design's calls did not all come back (the figures would be wrong).
    """
    sample = sample_items(plan, n_images, seed)
    if not sample:
        raise ValueError("the plan has no calls to measure")
    scale = len(plan) / len(sample)
    n = min(repetitions_per_prompt(plan), SIM_MAX_N)
    with tempfile.TemporaryDirectory(prefix="judgepanel-savings-") as tmp:
        ledgers = {k: _send(sample, prices, k, concurrency, Path(tmp)) for k in (1, n)}
    rows = []
    for label, together, cached in DESIGNS:
        billed = ledgers[n if together else 1]
        rows.append(
            {
                "design": label,
                "samples_per_request": n if together else 1,
                "prompt_cache": cached,
                "requests": len(billed) * scale,
                "input_tokens": float(billed["prompt_tokens"].sum()) * scale,
                "cached_tokens": float(billed["cached_tokens"].sum()) * scale if cached else 0.0,
                "output_tokens": float(billed["completion_tokens"].sum()) * scale,
                "usd": float(billed["cost" if cached else "uncached_cost"].sum()) * scale,
                "measured_requests": len(billed),
                "measured_calls": len(sample),
            }
        )
    out = pd.DataFrame(rows)
    out["usd_vs_one_per_request"] = out["usd"] / out["usd"].iloc[0]
    return out
