"""Benchmark: requests per second of the simulated judge server.

Starts the server (no faults, no added latency) on a free loopback port, then keeps N
requests in flight from the official ``openai.AsyncOpenAI`` client (max_retries=0) for a
fixed time: each sends the frozen holistic prompt with one 384x288 JPEG, as the scoring
study does. The same image is used throughout, so after the first call its features come
from the server's cache and the figure measures the protocol path: JSON parsing, hashing
the base64 text (a known image is not decoded again), judging and the response. The
client runs in this process and the server in another; on a machine with one free core
they share it, so the figure is a lower bound on what the server alone sustains; the CPU
seconds each side spent per request (client from this process, server from /proc when
this script started it) show which side is the bottleneck. Prints a one-line JSON summary
last.

``--kind`` picks the prompts: ``holistic`` (the default, as above), ``dimension`` (the
five rubric dimensions and their sham prompts in turn, one image), ``vab`` (three
versions of the picture, best and worst) or ``visionq`` (a three-panel composite and a
criterion question); a study's requests are mostly the first two.

Usage: python bench/bench_sim_server.py [--concurrency 32] [--seconds 5] [--base-url URL]
       [--kind holistic|dimension|vab|visionq]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import time

import numpy as np
import openai
from PIL import Image, ImageDraw, ImageFilter

from judgepanel.core.local_sim import start_sim_server
from judgepanel.core.prompts import DIMENSIONS, bytes_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel.studies.vab.protocol import build_messages
from judgepanel.studies.visionq.composite import composite_png
from judgepanel.studies.visionq.protocol import prompt_text, visionq_messages
from judgepanel_sim.judges import MODELS


def test_image(size: tuple[int, int] = (384, 288)) -> bytes:
    """A deterministic 384x288 JPEG with a graded sky, textured ground and a subject."""
    rng = np.random.default_rng(0)
    w, h = size
    yy = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
    sky = np.array([70, 120, 200], np.float32) * (1 - yy) + np.array([190, 210, 235]) * yy
    img = np.broadcast_to(sky, (h, w, 3)).copy()
    ground = np.array([80, 120, 50], np.float32) + rng.normal(0, 14, (h, w, 1))
    img[int(0.6 * h) :] = ground[int(0.6 * h) :]
    pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    ImageDraw.Draw(pil).ellipse([90, 90, 170, 170], fill=(210, 90, 60))
    return to_jpeg(pil)


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of process ``pid`` (Linux /proc), or None."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


KINDS = ("holistic", "dimension", "vab", "visionq")


def prompts(kind: str, image: bytes) -> list[list[dict]]:
    """The messages a benchmark of ``kind`` sends, in turn."""
    rubric = load_rubric()
    url = bytes_data_url(image, "image/jpeg")
    if kind == "holistic":
        return [rubric.holistic_messages(url)]
    if kind == "dimension":
        return [rubric.dimension_messages(d, url) for d in DIMENSIONS] + [
            rubric.sham_messages(d, url) for d in DIMENSIONS
        ]
    pil = Image.open(io.BytesIO(image))
    versions = [pil.filter(ImageFilter.GaussianBlur(b)) if b else pil for b in (0, 1.5, 3)]
    if kind == "vab":
        urls = [bytes_data_url(to_jpeg(v), "image/jpeg") for v in versions]
        return [build_messages("vab_tb1", (0, 1, 2), ["A", "B", "C"], urls)]
    if kind == "visionq":
        png = bytes_data_url(composite_png(versions), "image/png")
        question = prompt_text("Which method demonstrates better sharpness?", 3)
        return [visionq_messages(question, png)]
    raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")


def to_jpeg(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


async def run(
    base_url: str,
    concurrency: int,
    seconds: float,
    warmup: float,
    server_pid: int | None,
    kind: str = "holistic",
) -> dict:
    image = test_image()
    messages = prompts(kind, image)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0, timeout=30)
    latencies: list[float] = []
    errors = 0
    measuring = False
    stop_at = time.perf_counter() + warmup + seconds

    async def worker(i: int) -> None:
        nonlocal errors
        n = 0
        while time.perf_counter() < stop_at:
            t0 = time.perf_counter()
            try:
                r = await client.chat.completions.create(
                    model=MODELS[(i + n) % len(MODELS)],
                    messages=messages[(i + n) % len(messages)],
                    temperature=0.3,
                    max_tokens=200,
                )
                ok = bool(r.choices[0].message.content)
            except (openai.APIError, ValueError):
                ok = False
            if measuring:
                if ok:
                    latencies.append(time.perf_counter() - t0)
                else:
                    errors += 1
            n += 1

    tasks = [asyncio.create_task(worker(i)) for i in range(concurrency)]
    await asyncio.sleep(warmup)
    measuring = True
    started = time.perf_counter()
    client_cpu0, server_cpu0 = time.process_time(), _cpu_seconds(server_pid)
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu0
    server_cpu1 = _cpu_seconds(server_pid)
    server_cpu = None if server_cpu0 is None or server_cpu1 is None else server_cpu1 - server_cpu0
    n = max(1, len(latencies) + errors)
    await client.close()
    lat = np.array(latencies) * 1000
    return {
        "benchmark": "sim_server",
        "kind": kind,
        "concurrency": concurrency,
        "image": "384x288 JPEG",
        "image_bytes": len(image),
        "seconds": round(elapsed, 2),
        "requests": len(latencies),
        "errors": errors,
        "requests_per_s": round(len(latencies) / elapsed, 1),
        "latency_ms_p50": round(float(np.percentile(lat, 50)), 1) if lat.size else None,
        "latency_ms_p95": round(float(np.percentile(lat, 95)), 1) if lat.size else None,
        "client_cpu_ms_per_request": round(1000 * client_cpu / n, 2),
        "server_cpu_ms_per_request": None
        if server_cpu is None
        else round(1000 * server_cpu / n, 2),
        "server_requests_per_cpu_s": None if not server_cpu else round(n / server_cpu, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured duration")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured start")
    parser.add_argument("--base-url", help="use a running server instead of starting one")
    parser.add_argument("--kind", choices=KINDS, default="holistic", help="the prompts sent")
    args = parser.parse_args(argv)
    server = None if args.base_url else start_sim_server()
    try:
        base_url = args.base_url or server.base_url
        pid = server.process.pid if server is not None else None
        result = asyncio.run(
            run(base_url, args.concurrency, args.seconds, args.warmup, pid, args.kind)
        )
    finally:
        if server is not None:
            server.stop()
    print(
        f"{result['requests_per_s']} requests/s with {args.concurrency} in flight "
        f"({result['image']}, {result['requests']} requests, {result['errors']} errors, "
        f"p50 {result['latency_ms_p50']} ms, p95 {result['latency_ms_p95']} ms)"
    )
    if result["server_requests_per_cpu_s"]:
        print(
            f"server CPU {result['server_cpu_ms_per_request']} ms/request "
            f"(= {result['server_requests_per_cpu_s']} requests per CPU second); client CPU "
            f"{result['client_cpu_ms_per_request']} ms/request"
        )
    print(json.dumps(result))
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
