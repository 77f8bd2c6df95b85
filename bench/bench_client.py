"""Benchmark: does the client keep the endpoint busy, and what does a call cost it?

Two runs against the simulated judge server, each sending the same rubric calls:

- **Latency-bound** (200 ms added latency, 16 in flight): :func:`judgepanel.core.client.run_calls`
  (store writes, budget and progress included) as a share of the ideal 16 / 0.2 s = 80
  calls/s, beside two obvious alternatives sending the same requests through the same SDK:
  batches of 16 with ``asyncio.gather`` (each batch waits for its slowest call), and
  sequential calls (on a subset, since they are slow).
- **Full speed** (no added latency, 32 in flight): the client's CPU per call, beside a bare
  ``AsyncOpenAI`` loop (``chat.completions.create`` under a semaphore, nothing stored) on the
  same transport, and the same bare loop on the SDK's default transport. On a shared machine
  CPU is what caps the rate: the server, and in the demo the notebooks, need the rest.

Prints a one-line JSON summary.

Usage: python bench/bench_client.py [--calls 800] [--latency-ms 200] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import openai
import pandas as pd
import uvloop
from openai.types.chat import ChatCompletion
from PIL import Image

from judgepanel.core.client import http_transport, run_calls
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.studies.common.rubric_plan import plan_images

MODEL = "sim-cobalt-v1"
PRICES = {MODEL: Price(0.10, 0.30)}


def make_images(folder: Path, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n):
        arr = np.clip(rng.normal(110 + i % 40, 25, size=(96, 128, 3)), 0, 255).astype(np.uint8)
        path = folder / f"b{i:04d}.jpg"
        Image.fromarray(arr).save(path, quality=88)
        rows.append({"image_id": f"b{i:04d}", "path": str(path)})
    return pd.DataFrame(rows)


async def _one(client: openai.AsyncOpenAI, spec) -> None:
    """One request sent the way the client sends it, so only the scheduling differs."""
    body = {
        "model": spec.key.model,
        "messages": spec.build(),
        "temperature": spec.key.temperature,
        "max_tokens": spec.max_tokens,
        "seed": spec.seed,
    }
    await client.post("/chat/completions", cast_to=ChatCompletion, body=body)


async def batched(base_url: str, specs, batch: int) -> float:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="sim-local", max_retries=0)
    t0 = time.perf_counter()
    for i in range(0, len(specs), batch):
        await asyncio.gather(*(_one(client, s) for s in specs[i : i + batch]))
    elapsed = time.perf_counter() - t0
    await client.close()
    return elapsed


async def sequential(base_url: str, specs) -> float:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="sim-local", max_retries=0)
    t0 = time.perf_counter()
    for s in specs:
        await _one(client, s)
    elapsed = time.perf_counter() - t0
    await client.close()
    return elapsed


async def bare_loop(base_url: str, specs, concurrency: int, transport: bool) -> float:
    """The obvious client: ``create`` under a semaphore, answers read, nothing stored."""
    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key="sim-local",
        max_retries=0,
        http_client=http_transport(60.0) if transport else None,
    )
    gate = asyncio.Semaphore(concurrency)

    async def one(spec) -> str | None:
        async with gate:
            resp = await client.chat.completions.create(
                model=spec.key.model,
                messages=spec.build(),
                temperature=spec.key.temperature,
                max_tokens=spec.max_tokens,
                seed=spec.seed,
            )
            return resp.choices[0].message.content

    t0 = time.perf_counter()
    await asyncio.gather(*(one(s) for s in specs))
    elapsed = time.perf_counter() - t0
    await client.close()
    return elapsed


def timed(fn, *args) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of ``fn(*args)`` run on a uvloop loop."""
    cpu0 = time.process_time()
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        wall = runner.run(fn(*args))
    return wall, time.process_time() - cpu0


def pool(base_url: str, specs, store_path: Path, concurrency: int):
    """run_calls into a fresh store: (summary, CPU seconds of this process)."""
    cpu0 = time.process_time()
    with Store(store_path) as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(
                endpoint=Endpoint.at(base_url), concurrency=concurrency, progress=False
            ),
        )
    return summary, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=800)
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--sequential", type=int, default=40, help="calls sent one by one")
    parser.add_argument("--full-calls", type=int, default=2000, help="calls of the full-speed run")
    parser.add_argument("--full-concurrency", type=int, default=32)
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = "sim-local"
    reps = 20
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        n_calls = max(args.calls, args.full_calls)
        images = make_images(tmp_path / "img", -(-n_calls // reps))
        design = ScoringDesign(holistic_k=reps, dimension_r=0, temperature=0.3)
        all_specs = plan_images(images, {"cobalt": MODEL}, design, dataset="bench")
        specs = all_specs[: args.calls]
        full = all_specs[: args.full_calls]
        with start_sim_server(SimConfig(latency_ms=args.latency_ms)) as server:
            # warm the server's per-image feature cache so every arm sees the same server
            asyncio.run(batched(server.base_url, all_specs[::reps], args.concurrency))
            summary, _ = pool(server.base_url, specs, tmp_path / "lat.sqlite", args.concurrency)
            t_batched = asyncio.run(batched(server.base_url, specs, args.concurrency))
            t_seq = asyncio.run(sequential(server.base_url, specs[: args.sequential]))
        with start_sim_server(SimConfig(latency_ms=0)) as server:
            asyncio.run(batched(server.base_url, all_specs[::reps], args.full_concurrency))
            conc = args.full_concurrency
            fast, fast_cpu = pool(server.base_url, full, tmp_path / "full.sqlite", conc)
            bare_wall, bare_cpu = timed(bare_loop, server.base_url, full, conc, True)
            httpx_wall, httpx_cpu = timed(bare_loop, server.base_url, full, conc, False)
    ideal = args.concurrency / (args.latency_ms / 1000.0)
    pool_rate = summary.ok / summary.elapsed
    batched_rate = len(specs) / t_batched
    seq_rate = args.sequential / t_seq
    fast_rate = fast.ok / fast.elapsed
    bare_rate = len(full) / bare_wall
    print(
        json.dumps(
            {
                "bench": "client",
                "calls": len(specs),
                "ok": summary.ok,
                "failed": summary.failed + fast.failed,
                "concurrency": args.concurrency,
                "latency_ms": args.latency_ms,
                "ideal_calls_per_s": round(ideal, 1),
                "pool_calls_per_s": round(pool_rate, 1),
                "pool_fraction_of_ideal": round(pool_rate / ideal, 3),
                "batched_gather_calls_per_s": round(batched_rate, 1),
                "sequential_calls_per_s": round(seq_rate, 2),
                "pool_vs_batched": round(pool_rate / batched_rate, 2),
                "pool_vs_sequential": round(pool_rate / seq_rate, 1),
                "full_speed_calls": len(full),
                "full_speed_concurrency": conc,
                "pool_full_calls_per_s": round(fast_rate, 1),
                "client_cpu_ms_per_call": round(1000 * fast_cpu / len(full), 2),
                "bare_create_calls_per_s": round(bare_rate, 1),
                "bare_create_cpu_ms_per_call": round(1000 * bare_cpu / len(full), 2),
                "bare_create_default_transport_cpu_ms_per_call": round(
                    1000 * httpx_cpu / len(full), 2
                ),
                "bare_create_default_transport_calls_per_s": round(len(full) / httpx_wall, 1),
                "pool_vs_bare_create": round(fast_rate / bare_rate, 2),
                "load_average_1min": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
