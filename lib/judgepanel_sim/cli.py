"""The synthetic world's commands: ``synth`` (write the datasets), ``serve`` (the judges)
and ``pool`` (the calibration study's scored pool).

``judgepanel data synth`` and ``judgepanel sim-server`` forward here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judgepanel.core.local_sim import SimConfig
from judgepanel_sim.exit_codes import BAD_INPUT


def build_parser(prog: str = "python -m judgepanel_sim") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="The embedded synthetic world.")
    sub = parser.add_subparsers(dest="command", required=True)

    synth = sub.add_parser("synth", help="write the synthetic datasets in the real formats")
    synth.add_argument("--out", type=Path, required=True, help="folder to write into")
    synth.add_argument("--n-images", type=int, default=500, help="images per scoring world")
    synth.add_argument("--seed", type=int, default=20261130)
    synth.add_argument(
        "--only",
        default="eva,para,ava,vab,visionq,posters",
        help="comma-separated subset of eva,para,ava,vab,visionq,posters",
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
    SimConfig.add_flags(serve)  # one flag per option of the server, from its fields
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
    try:
        config = SimConfig.from_args(args)
    except ValueError as exc:
        print(f"judgepanel sim-server: {exc}", file=sys.stderr)
        return BAD_INPUT
    from judgepanel_sim.judges.server import serve_command  # the server stack, only here

    return serve_command(config, host=args.host, port=args.port, port_file=args.port_file)
