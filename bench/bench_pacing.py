"""Benchmark: how close to a provider's rate limit does each client get, and at what cost?

One family, ``--calls`` holistic calls (900), 16 in flight, against the simulated judge
server at 200 ms latency behind a provider-like limiter: ``--rpm`` (600) per key, a token
bucket holding two seconds' worth, refused requests counted toward the limit as OpenAI
documents. Four clients send the same plan, one after the other, each to a fresh server:

- ``paced``: :func:`judgepanel.core.client.run_calls` told the limit (``rpm=600``);
- ``unconfigured``: the same client told nothing (it reads the ``x-ratelimit-*`` headers,
  pauses a lane on a 429 and adapts its concurrency);
- ``previous``: the client as it was before pacing (fixed concurrency, each refused call
  retried on its own), loaded from the commit named by ``--previous``;
- ``bare``: a plain ``AsyncOpenAI`` loop, 16 workers, the SDK's own retries (2, which honour
  ``Retry-After``), nothing stored.

For each: the share of the limit reached (answered requests per minute over the limit),
the share of requests answered 429, failed calls, and seconds. Target for ``paced``: at
least 0.95 of the limit, at most 1% refused, no call failing. Prints one JSON line.

Usage: python bench/bench_pacing.py [--calls 900] [--rpm 600] [--previous 1988c6d]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import openai

from judgepanel.core.client import run_calls
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.studies.common.rubric_plan import SCORE_MAX_TOKENS, plan_images

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_client import make_images

MODEL = "sim-cobalt-v1"
PRICES = {MODEL: Price(0.10, 0.30)}
MAX_TOKENS = SCORE_MAX_TOKENS  # the completion cap of each request, which the server counts
ROOT = Path(__file__).resolve().parents[1]


def plan(folder: Path, calls: int) -> list:
    images = make_images(folder, max(1, calls // 10))
    design = ScoringDesign(holistic_k=10, dimension_r=0, temperature=0.3)
    return plan_images(images, {"cobalt": MODEL}, design, dataset="bench")[:calls]


def previous_client(commit: str):
    """The client module as it was at ``commit`` (one file then), loaded under its own name."""
    source = subprocess.run(
        ["git", "show", f"{commit}:lib/judgepanel/core/client.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "previous_client.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("previous_client", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["previous_client"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def measure(name: str, rpm: int, send, tpm: int = 0) -> dict:
    """Run ``send(base_url, store)`` against a fresh limited server; its figures.

    With ``tpm`` the share is of the token limit: the tokens the server counted (each
    answered request's prompt plus ``max_tokens``) per minute, over ``tpm``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        server = start_sim_server(SimConfig(latency_ms=200, rpm=rpm, tpm=tpm), log_dir=Path(tmp))
        try:
            t0 = time.perf_counter()
            with Store(Path(tmp) / "s.sqlite") as store:
                ok, failed, requests, refused = send(server.base_url, store)
                elapsed = time.perf_counter() - t0
                counted = store.frame(columns=["prompt_tokens"])["prompt_tokens"].sum()
        finally:
            server.stop()
    share = (counted + ok * MAX_TOKENS) / elapsed * 60.0 / tpm if tpm else ok / elapsed * 60.0 / rpm
    return {
        "client": name,
        "limit": f"{tpm} TPM" if tpm else f"{rpm} RPM",
        "ok": ok,
        "failed": failed,
        "requests": requests,
        "refused_share": round(refused / max(requests, 1), 4),
        "limit_share": round(float(share), 3),
        "seconds": round(elapsed, 1),
    }


def ours(specs, rpm: int | None, tpm: int | None = None):
    def send(base_url: str, store: Store):
        options = ClientOptions(
            endpoint=Endpoint.at(base_url), concurrency=16, rpm=rpm, tpm=tpm, progress=False
        )
        s = run_calls(specs, store, prices=PRICES, options=options)
        return s.ok, s.failed, s.requests, s.refused

    return send


def previous(specs, module):
    def send(base_url: str, store: Store):
        s = module.run_calls(
            specs, store, base_url=base_url, concurrency=16, prices=PRICES, progress=False
        )
        df = store.frame(columns=["status", "attempts"])
        requests = int(df.attempts.sum())
        # nothing but the limiter refuses here: every attempt beyond the answered ones was a 429
        return s.ok, s.failed, requests, requests - s.ok

    return send


def bare(specs):
    def send(base_url: str, store: Store):
        return asyncio.run(_bare(base_url, specs))

    return send


async def _bare(base_url: str, specs) -> tuple[int, int, int, int]:
    counts = {"requests": 0, "refused": 0}

    async def hook(response) -> None:
        counts["requests"] += 1
        counts["refused"] += response.status_code == 429

    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key="sim-local",
        http_client=openai.DefaultAsyncHttpxClient(event_hooks={"response": [hook]}),
    )
    queue = list(reversed(specs))
    ok = failed = 0

    async def worker() -> None:
        nonlocal ok, failed
        while queue:
            spec = queue.pop()
            try:
                await client.chat.completions.create(
                    model=spec.key.model,
                    messages=spec.build(),
                    temperature=spec.key.temperature,
                    max_tokens=spec.max_tokens,
                    seed=spec.seed,
                )
                ok += 1
            except openai.OpenAIError:
                failed += 1

    await asyncio.gather(*(worker() for _ in range(16)))
    await client.close()
    return ok, failed, counts["requests"], counts["refused"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=900)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument(
        "--tpm", type=int, default=120_000, help="the token limit of the token-bound run"
    )
    parser.add_argument("--previous", default="1988c6d", help="the commit before pacing")
    args = parser.parse_args()
    import os

    os.environ.setdefault("OPENAI_API_KEY", "sim-local")
    with tempfile.TemporaryDirectory() as tmp:
        specs = plan(Path(tmp) / "img", args.calls)
        rows = [
            measure("paced", args.rpm, ours(specs, args.rpm)),
            measure("unconfigured", args.rpm, ours(specs, None)),
            measure("paced-tpm", args.rpm, ours(specs, args.rpm, args.tpm), tpm=args.tpm),
        ]
        try:
            module = previous_client(args.previous)
        except (subprocess.CalledProcessError, FileNotFoundError) as exc:
            print(f"previous client not available ({exc}); skipped", file=sys.stderr)
        else:
            rows.append(measure("previous", args.rpm, previous(specs, module)))
        rows.append(measure("bare", args.rpm, bare(specs)))
    for row in rows:
        print(
            f"{row['client']:>13}: {row['limit_share']:.3f} of the {row['limit']} limit, "
            f"{row['refused_share']:.1%} refused, {row['failed']} failed, "
            f"{row['ok']} ok, {row['seconds']} s",
            flush=True,
        )
    paced = rows[0]
    summary = {
        "calls": args.calls,
        "rpm": args.rpm,
        "clients": rows,
        "paced_meets_target": paced["limit_share"] >= 0.95
        and paced["refused_share"] <= 0.01
        and paced["failed"] == 0,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
