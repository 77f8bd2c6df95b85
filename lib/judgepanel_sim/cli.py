"""The synthetic world's commands: ``synth`` (write the datasets), ``serve`` (the judges)
and ``pool`` (the calibration study's scored pool).

``judgepanel data synth`` and ``judgepanel sim-server`` forward here.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def build_parser(prog: str = "python -m judgepanel_sim") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="The embedded synthetic world.")
    sub = parser.add_subparsers(dest="command", required=True)

    synth = sub.add_parser("synth", help="write the synthetic datasets in the real formats")
    synth.add_argument("--out", type=Path, required=True, help="folder to write into")
    synth.add_argument("--n-images", type=int, default=500, help="images per scoring world")
    synth.add_argument("--seed", type=int, default=20261130)
    synth.add_argument(
        "--only",
        default="eva,para,ava,vab,visionq",
        help="comma-separated subset of eva,para,ava,vab,visionq",
    )
    synth.add_argument("--force", action="store_true", help="rewrite worlds that already exist")
    synth.add_argument(
        "--quick", action="store_true", help="small VAB and VisionQ worlds, for a quick report"
    )
    synth.add_argument(
        "--replace-changed",
        action="store_true",
        help="rewrite the worlds made with other parameters; keep the others",
    )
    synth.add_argument(
        "--jobs", type=int, default=1, help="worlds written at once, each in its own process"
    )

    pool = sub.add_parser("pool", help="the calibration pool: rendered, scored in-process, rated")
    pool.add_argument("--out", type=Path, required=True, help="folder to write into")
    pool.add_argument("--n-images", type=int, default=3000, help="images in the pool")
    pool.add_argument("--seed", type=int, default=20261201)
    pool.add_argument("--jobs", type=int, default=2, help="worker processes")

    serve = sub.add_parser("serve", help="the simulated judge server (OpenAI protocol)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    serve.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    serve.add_argument("--latency-ms", type=float, default=0.0, help="added latency per request")
    serve.add_argument("--error-rate", type=float, default=0.0, help="share of 429/500 answers")
    serve.add_argument("--malformed-rate", type=float, default=0.0, help="share of bad answers")
    serve.add_argument("--timeout-rate", type=float, default=0.0, help="share of stalled requests")
    serve.add_argument("--seed", type=int, default=0)
    serve.add_argument(
        "--echo-key",
        action="store_true",
        help="misbehave: copy the request's bearer token into every answer (tests scrubbing)",
    )
    serve.add_argument(
        "--ledger", type=Path, help="append one JSON line per billed answer (usage) to this file"
    )
    limits = serve.add_argument_group("provider behaviour (all off by default)")
    limits.add_argument("--rpm", type=int, default=0, help="requests per minute per key (0: none)")
    limits.add_argument("--tpm", type=int, default=0, help="tokens per minute per key (0: none)")
    limits.add_argument(
        "--burst-seconds",
        type=float,
        default=2.0,
        help="seconds' worth of each limit a key may send at once (the bucket size)",
    )
    limits.add_argument(
        "--no-count-refused",
        dest="count_refused",
        action="store_false",
        help="refused requests do not count toward the request limit",
    )
    limits.add_argument(
        "--cache-window",
        type=int,
        default=0,
        help="report cached prompt prefixes seen in the last N answered requests (0: off)",
    )
    limits.add_argument(
        "--report-cost", action="store_true", help="add usage.cost (USD), as OpenRouter does"
    )
    limits.add_argument(
        "--prices", type=Path, help="JSON or YAML price table replacing the simulator's own"
    )
    batch = serve.add_argument_group("the batch API (/v1/files, /v1/batches)")
    batch.add_argument(
        "--batch-delay", type=float, default=0.0, help="seconds before a batch is processed"
    )
    batch.add_argument(
        "--batch-fail-share", type=float, default=0.0, help="share of batch lines answered 500"
    )
    batch.add_argument(
        "--batch-expire-after",
        type=int,
        default=0,
        help="a batch expires after answering this many lines (0: never)",
    )
    batch.add_argument("--batch-invalid", action="store_true", help="every batch fails validation")
    batch.add_argument(
        "--batch-workers",
        type=int,
        default=0,
        help="processes that answer batch lines (0: the server's own); same answers either way",
    )
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m judgepanel_sim") -> int:
    args = build_parser(prog).parse_args(argv)
    if args.command == "synth":
        from judgepanel_sim.world.world import synth_command  # renders: heavy, only here

        return synth_command(
            args.out,
            n_images=args.n_images,
            seed=args.seed,
            only=args.only,
            force=args.force,
            quick=args.quick,
            replace_changed=args.replace_changed,
            jobs=args.jobs,
        )
    if args.command == "pool":
        from judgepanel_sim.pool import pool_command  # renders and scores: heavy, only here

        return pool_command(args.out, n_images=args.n_images, seed=args.seed, n_jobs=args.jobs)
    from judgepanel_sim.judges.server import serve_command  # the server stack, only here

    return serve_command(
        host=args.host,
        port=args.port,
        port_file=args.port_file,
        seed=args.seed,
        latency_ms=args.latency_ms,
        error_rate=args.error_rate,
        malformed_rate=args.malformed_rate,
        timeout_rate=args.timeout_rate,
        echo_key=args.echo_key,
        ledger=args.ledger,
        rpm=args.rpm,
        tpm=args.tpm,
        burst_seconds=args.burst_seconds,
        count_refused=args.count_refused,
        cache_window=args.cache_window,
        report_cost=args.report_cost,
        prices=args.prices,
        batch_delay_s=args.batch_delay,
        batch_fail_share=args.batch_fail_share,
        batch_expire_after=args.batch_expire_after,
        batch_invalid=args.batch_invalid,
        batch_workers=args.batch_workers,
    )
