"""``judgepanel batch export|import``: the offline batch round trip on the command line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from judgepanel.cli.common import SubParsers, fail, split
from judgepanel.cli.exit_codes import OK
from judgepanel.core.errors import ConfigError
from judgepanel.core.sendconfig import default_of

if TYPE_CHECKING:
    from judgepanel.core.calls import CallSpec
    from judgepanel.core.config import Price
    from judgepanel.core.settings import ScoreSettings


def add_parser(sub: SubParsers) -> None:
    """``batch export`` and ``batch import``."""
    p = sub.add_parser(
        "batch",
        help="batch files for servers without a batch API (vllm run-batch)",
        description=(
            "export writes the calls a run still needs as a batch input file (the lines "
            "`vllm run-batch` reads); import ingests the output file it wrote, matching each "
            "line to its call by custom_id."
        ),
    )
    what = p.add_subparsers(dest="what", required=True)
    exp = what.add_parser("export", help="write a run's missing calls as batch lines")
    exp.add_argument("--run", required=True, help="a run from papermill_runs.yaml")
    exp.add_argument("--out", type=Path, required=True, help="the batch input file, F.jsonl")
    exp.add_argument("--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)")
    exp.add_argument("--families", help="only these families (comma-separated)")
    exp.add_argument("--limit-images", type=int, help="only the first N images of the plan")
    exp.add_argument("--store", type=Path, help="the store (default: the profile's)")
    imp = what.add_parser("import", help="ingest a batch output file into the store")
    imp.add_argument("file", type=Path, help="the output file of vllm run-batch, OUT.jsonl")
    imp.add_argument("--store", type=Path, help="the store (default: the profile's of --run)")
    imp.add_argument("--run", help="a run of the runs file, to name its profile's store")
    imp.add_argument("--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)")
    imp.add_argument(
        "--max-reasks",
        type=int,
        default=default_of("max_reasks"),
        help="an unreadable answer is exported again this many times at most",
    )
    p.set_defaults(handler=batch_command)


def _settings(run: str, args: argparse.Namespace, **extra: object) -> ScoreSettings:
    from judgepanel.core.settings import ScoreRequest, resolve_settings

    return resolve_settings(
        ScoreRequest(
            run=run,
            runs_file=args.runs_file,
            store=args.store,
            families=split(getattr(args, "families", None)),
            **extra,  # type: ignore[arg-type]
        )
    )


def _plan(settings: ScoreSettings) -> list[CallSpec]:
    import judgepanel.studies  # noqa: F401  (registers each study's planner)
    from judgepanel.core.scoring import plan_target

    return [spec for target in settings.targets for spec in plan_target(target, settings)]


def batch_command(args: argparse.Namespace) -> int:
    """``judgepanel batch export|import``; exit 0, or bad input with one line on stderr."""
    from judgepanel.core.batch.offline import OfflineImportError
    from judgepanel.core.client.outcome import ClientError
    from judgepanel.core.store import StoreError

    try:
        if args.what == "export":
            return _export(args)
        return _import(args)
    except (ConfigError, ClientError, StoreError, OfflineImportError, ValueError) as exc:
        return fail(exc)


def _export(args: argparse.Namespace) -> int:
    from judgepanel.core.batch.offline import export_lines
    from judgepanel.core.store import Store

    settings = _settings(args.run, args, limit_images=args.limit_images)
    specs = _plan(settings)
    with Store(settings.store) as store:
        got = export_lines(specs, store, settings.prices, args.out, run=args.run)
    print(
        f"{args.out}: {got.lines} lines for {', '.join(got.models) or 'no model'} "
        f"({got.skipped} of {len(specs)} planned calls already stored); "
        f"ingest the output with: judgepanel batch import OUT.jsonl --store {settings.store}"
    )
    if len(got.models) > 1:
        print("note: the lines name several models; a vLLM server answers its own model only")
    return OK


def _import(args: argparse.Namespace) -> int:
    from judgepanel.core.batch.offline import import_lines
    from judgepanel.core.settings import ScoreRequest, resolve_settings
    from judgepanel.core.store import Store

    store_path = args.store
    if store_path is None:
        if not args.run:
            raise ConfigError("give --store, or --run to use its profile's store")
        store_path = _settings(args.run, args).store

    def plan_run(run: str) -> tuple[list[CallSpec], dict[str, Price]]:
        settings = resolve_settings(
            ScoreRequest(run=run, runs_file=args.runs_file, store=store_path)
        )
        return _plan(settings), settings.prices

    with Store(store_path) as store:
        got = import_lines(args.file, store, plan_run, max_reasks=args.max_reasks)
    print(
        f"{args.file}: {got.ok} ok, {got.failed} failed ({got.retryable} to send again), "
        f"{got.unanswered} not answered, ${got.spend:.4f} at the batch price, "
        f"{got.chunks} exported chunks closed"
    )
    for note in got.notes:
        print(f"note: {note}")
    return OK
