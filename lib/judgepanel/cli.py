"""The ``judgepanel`` command: data, sim-server, score, status, export, report.

Each subcommand's work lives in the module it is named after; this file only parses
arguments, so that ``judgepanel --help`` is quick and the modules stay importable alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judgepanel import __version__


def _add_score_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="send planned judge calls and checkpoint every answer",
        description=(
            "Plan the calls of a run (or of explicit flags), skip those already in the store, "
            "and send the rest. The endpoint comes from OPENAI_BASE_URL (or --base-url) and "
            "the key from OPENAI_API_KEY."
        ),
    )
    p.add_argument("--run", help="a run from papermill_runs.yaml (for example demo-eva)")
    p.add_argument("--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)")
    p.add_argument("--dataset", help="KIND:PATH, for example eva:data/eva or para:data/para")
    p.add_argument("--families", help="comma-separated family names of the profile")
    p.add_argument("--models", help="comma-separated model ids, matching --families one to one")
    p.add_argument("--holistic-k", type=int, help="holistic repetitions per image and family")
    p.add_argument("--dimension-r", type=int, help="repetitions per rubric dimension")
    p.add_argument("--temperature", type=float, help="sampling temperature")
    p.add_argument("--limit-images", type=int, help="score only the first N images of the plan")
    p.add_argument("--store", type=Path, help="the SQLite checkpoint store")
    p.add_argument("--concurrency", type=int, help="requests in flight")
    p.add_argument("--max-cost", type=float, help="hard ceiling in USD for this command")
    p.add_argument("--base-url", help="endpoint base URL (the key still comes from the env)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per attempt")
    p.add_argument("--max-attempts", type=int, default=6, help="HTTP attempts per call")
    p.add_argument("--max-reasks", type=int, default=2, help="re-asks after an unreadable answer")
    p.add_argument(
        "--retry-failed", action="store_true", help="send calls recorded as failed again"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and its cost, send nothing"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress line")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgepanel",
        description="Vision-language models as judges of images: scoring, analyses, report.",
    )
    parser.add_argument("--version", action="version", version=f"judgepanel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="synthetic datasets in the real on-disk formats")
    data_sub = data.add_subparsers(dest="data_command", required=True)
    synth = data_sub.add_parser("synth", help="write the synthetic world")
    synth.add_argument("--out", type=Path, required=True, help="folder to write into")
    synth.add_argument("--n-images", type=int, default=500, help="images per scoring world")
    synth.add_argument("--seed", type=int, default=20261130)
    synth.add_argument(
        "--only",
        default="eva,para,vab,visionq",
        help="comma-separated subset of eva,para,vab,visionq",
    )
    synth.add_argument("--force", action="store_true", help="rewrite worlds that already exist")

    sim = sub.add_parser("sim-server", help="the simulated judge server (OpenAI protocol)")
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=int, default=0, help="0 picks a free port")
    sim.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    sim.add_argument("--latency-ms", type=float, default=0.0, help="added latency per request")
    sim.add_argument("--error-rate", type=float, default=0.0, help="share of 429/500 answers")
    sim.add_argument("--malformed-rate", type=float, default=0.0, help="share of bad answers")
    sim.add_argument("--timeout-rate", type=float, default=0.0, help="share of stalled requests")
    sim.add_argument("--seed", type=int, default=0)

    _add_score_parser(sub)

    status = sub.add_parser("status", help="what a store holds: counts, failures, spend")
    status.add_argument("--store", type=Path, required=True)
    status.add_argument("--json", action="store_true", help="machine-readable output")

    export = sub.add_parser("export", help="write one row per call to CSV or Parquet")
    export.add_argument("--store", type=Path, required=True)
    export.add_argument("--out", type=Path, required=True, help="F.csv or F.parquet")

    report = sub.add_parser("report", help="execute the notebooks of a profile into HTML")
    report.add_argument("--profile", default="demo")
    report.add_argument("--run", action="append", help="only this run (repeatable)")
    report.add_argument("--only", help="comma-separated notebook prefixes, for example 00,02")
    report.add_argument("--runs-file", type=Path)
    report.add_argument("--outputs", type=Path, default=Path("outputs"))
    report.add_argument("--start-sim", action="store_true", help="start the simulated server")
    report.add_argument("--score", action="store_true", help="score each run before its notebooks")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "data":
        from judgepanel.synth import synth_command

        return synth_command(args)
    if args.command == "sim-server":
        from judgepanel.sim import serve_command

        return serve_command(args)
    if args.command == "score":
        from judgepanel.scoring import score_command

        return score_command(args)
    if args.command == "status":
        from judgepanel.store import status_command

        return status_command(args)
    if args.command == "export":
        from judgepanel.store import export_command

        return export_command(args)
    if args.command == "report":
        from judgepanel.report import report_command

        return report_command(args)
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
