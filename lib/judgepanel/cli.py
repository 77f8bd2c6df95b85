"""The ``judgepanel`` command: parses arguments, builds typed settings, calls the library.

Nothing imports this module. ``data synth`` and ``sim-server`` belong to the embedded
synthetic world (``judgepanel_sim``) and are forwarded to it before any parsing here;
``data describe`` is parsed here (``cli_data``).

Exit codes of ``judgepanel score``: 0 done (calls may have failed; they are recorded),
1 bad input or configuration, 3 stopped by the budget, 4 stopped early: by an error every
call would meet (a rejected API key, an unknown model), an unreachable endpoint, or more
failed calls than ``--max-failure-share``. A stopped run ends with the command to resume.
``judgepanel report`` exits 2 when a run it scores is stopped so (the library raises
:class:`judgepanel.core.errors.RunStopped`; its message is printed as it is).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import yaml

import judgepanel.studies  # noqa: F401  (registers each study's planner)
from judgepanel import __version__
from judgepanel.cli_agree import add_agree_parser, agree_command
from judgepanel.cli_answers import add_import_answers_parser, export_long, import_answers_command
from judgepanel.cli_batch import add_batch_parser, batch_command
from judgepanel.cli_data import add_data_parser, data_command
from judgepanel.cli_study import add_study_arguments, study_request
from judgepanel.core.batch import BatchBook
from judgepanel.core.client import ClientError, scrub
from judgepanel.core.config import Config, load_config
from judgepanel.core.coverage import describe_mix
from judgepanel.core.describe import parse_dataset_spec
from judgepanel.core.errors import ConfigError, RunStopped
from judgepanel.core.frames import skipped_images
from judgepanel.core.paths import NOTEBOOK_DIR, project_root
from judgepanel.core.preflight import preflight
from judgepanel.core.rubric import RubricError, load_rubric
from judgepanel.core.scoring import closing_note, dry_run, score_settings
from judgepanel.core.sendconfig import (
    COMMAND_LINE,
    DEFAULT,
    Declared,
    declared_options,
    default_of,
    resolve_options,
    without_none,
)
from judgepanel.core.settings import ScoreRequest, ScoreSettings, resolve_settings
from judgepanel.core.store import ModelCost, Store, StoreError, StoreSummary
from judgepanel.datasets import DatasetError, load_dataset
from judgepanel.datasets.comparators import load_scores
from judgepanel.datasets.visionq import load_questions
from judgepanel.errors import JudgepanelError
from judgepanel.report.execute import ReportError, ReportRequest, run_report, selected
from judgepanel.report.manifest import publish_reference, verify
from judgepanel.report.verdict_check import check_report
from judgepanel.studies.fusion import deploy
from judgepanel.studies.fusion.deploy import plan as deploy_plan
from judgepanel.studies.vab import imports as vab_imports
from judgepanel.studies.visionq import imports as visionq_imports
from judgepanel.studies.visionq.pairs import REJECTED_CHOICES, build_pairs, write_pairs

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BUDGET = 3
EXIT_ABORTED = 4
EXIT_STOPPED = 2
"""``judgepanel report``: a run it scored was stopped (by the budget or an abort)."""

SIM_COMMANDS = {"data": "synth", "sim-server": "serve"}
"""judgepanel's names for the synthetic world's commands -> its own names."""


def _default_text(name: str, declared: Declared, command: str) -> str:
    """The end of a send option's help: its default, and what the runs file may set."""
    if declared.default_from != DEFAULT:
        return f"default: from the {declared.default_from}"
    value = default_of(name)
    shown = "none" if value is None else str(value)
    if command == "score" and declared.run:
        return f"default: the run's or the profile's `{name}`, else {shown}"
    if command == "score" and declared.profile:
        return f"default: the profile's `{name}`, else {shown}"
    return f"default: {shown}"


def add_option_flags(p: argparse.ArgumentParser, command: str) -> None:
    """The flags of the send options ``command`` takes, generated from their declarations
    (`judgepanel.core.sendconfig.ClientOptions`); each is unset unless given, so that the
    run's, the profile's or the declared value applies (:func:`option_flags`)."""
    for name, (declared, annotation) in declared_options().items():
        if declared.flag is None or command not in declared.commands:
            continue
        default = _default_text(name, declared, command)
        if without_none(annotation) is bool and declared.flag.startswith("--no-"):
            p.add_argument(
                declared.flag, dest=name, action="store_const", const=False, help=declared.help
            )
        elif without_none(annotation) is bool:
            p.add_argument(
                declared.flag,
                dest=name,
                action=argparse.BooleanOptionalAction,
                help=f"{declared.help} ({default})",
            )
        else:
            p.add_argument(
                declared.flag,
                dest=name,
                type=declared.arg_type or without_none(annotation),
                metavar=declared.flag.removeprefix("--").replace("-", "_").upper(),
                help=f"{declared.help} ({default})",
            )
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and its cost, send nothing"
    )


def option_flags(args: argparse.Namespace) -> dict[str, object]:
    """The send options a command's flags set (name -> value; ``None``: not given)."""
    return {name: getattr(args, name, None) for name in declared_options()}


MISSING_CHOICES = ("error", "skip")
"""``--missing-images``: a run's rated images absent from disk fail it, or are left out."""


def add_missing_images_flag(p: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """``--missing-images error|skip``; with no ``default`` the runs file's entry decides."""
    where = (
        f" (default: {default})"
        if default
        else " (default: each dataset entry's missing_images, else error)"
    )
    p.add_argument(
        "--missing-images",
        choices=MISSING_CHOICES,
        default=default,
        help="rated images absent from disk: an error naming them, or skip them (score the "
        f"images present){where}",
    )


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
    p.add_argument("--rubric", type=Path, help="a rubric YAML file or folder (default: the run's)")
    add_missing_images_flag(p)
    add_option_flags(p, "score")


def _add_deploy_parsers(sub: argparse._SubParsersAction) -> None:
    fit = sub.add_parser(
        "fit",
        help="fit an arm of the fusion study on every labelled image of a run, for keeps",
        description=(
            "Fit one arm (H+P_gb, best single, ...) with the study's combiner on every "
            "labelled image of a scored run and write a model file (arrays and JSON) that "
            "`judgepanel predict` reads. Its out-of-fold accuracy is printed and recorded."
        ),
    )
    fit.add_argument("--run", required=True, help="a scored run of papermill_runs.yaml")
    fit.add_argument("--arm", required=True, help=f"one of: {', '.join(deploy.ARMS)}")
    fit.add_argument("--out", type=Path, required=True, help="the model file to write (.npz)")
    fit.add_argument("--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)")
    fit.add_argument("--dataset", help="the run's dataset (when it has several rated ones)")
    fit.add_argument(
        "--families", help="the panel, comma-separated (default: the pre-declared families)"
    )
    fit.add_argument("--n-resamples", type=int, help="bootstrap resamples of the accuracy")

    pred = sub.add_parser(
        "predict",
        help="score new images with a fitted model: plan, send what the store lacks, rank",
        description=(
            "Plan exactly the calls the model's features need (same store keys as its "
            "training calls, so stored calls are reused), send the rest, and write one row "
            "per image: score, rank, features, and any missing feature with its failed calls."
        ),
    )
    pred.add_argument("--model", type=Path, required=True, help="a model file from `fit`")
    where = pred.add_mutually_exclusive_group(required=True)
    where.add_argument("--images", type=Path, help="a folder of images (same as folder:DIR)")
    where.add_argument("--dataset", help="KIND:PATH: folder:DIR, eva:PATH or para:PATH")
    pred.add_argument("--out", type=Path, required=True, help="the scores to write (.csv)")
    pred.add_argument("--store", type=Path, help="the store (default: the training run's)")
    pred.add_argument("--store-dataset", help="the dataset key of the calls in the store")
    pred.add_argument(
        "--models", help="FAMILY=ID,... model ids to send (refused unless they are the model's)"
    )
    pred.add_argument(
        "--rubric", type=Path, help="the rubric the model was fitted with (default: rubric/)"
    )
    add_missing_images_flag(pred, default="error")
    add_option_flags(pred, "predict")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgepanel",
        description="Vision-language models as judges of images: scoring, analyses, report.",
    )
    parser.add_argument("--version", action="version", version=f"judgepanel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    add_data_parser(sub)
    add_agree_parser(sub)
    sub.add_parser("sim-server", help="the simulated judge server (OpenAI protocol)")
    _add_score_parser(sub)
    _add_deploy_parsers(sub)

    status = sub.add_parser("status", help="what a store holds: counts, failures, spend")
    status.add_argument("--store", type=Path, required=True)
    status.add_argument("--json", action="store_true", help="machine-readable output")

    export = sub.add_parser("export", help="write one row per call to CSV or Parquet")
    export.add_argument("--store", type=Path, required=True)
    export.add_argument("--out", type=Path, required=True, help="F.csv or F.parquet")
    export.add_argument(
        "--long",
        action="store_true",
        help="only the rubric answers, in the shape `import answers` reads (CSV)",
    )
    export.add_argument("--dataset", help="with --long: the dataset (when the store has several)")

    visionq = sub.add_parser("visionq", help="VisionQ tools that call no model")
    vq_sub = visionq.add_subparsers(dest="visionq_command", required=True)
    pairs = vq_sub.add_parser(
        "pairs",
        help="symmetric evidence preference pairs (DPO) from question metadata, split by paper",
    )
    pairs.add_argument("--out", type=Path, required=True, help="the pairs file, F.jsonl")
    where = pairs.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", help="a VisionQ run of papermill_runs.yaml (its dataset)")
    where.add_argument("--root", type=Path, help="a VisionQ benchmark folder")
    pairs.add_argument(
        "--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)"
    )
    pairs.add_argument(
        "--rejected", choices=REJECTED_CHOICES, default="all", help="wrong letters to pair"
    )
    pairs.add_argument("--test-share", type=float, default=0.15, help="share of papers in test")
    pairs.add_argument("--seed", type=int, default=0, help="seed of the paper split")

    imp = sub.add_parser(
        "import",
        help="bring scores and predictions made elsewhere into the analyses",
        description=(
            "Check off-the-shelf model scores against a dataset (scores), read judges' rubric "
            "answers collected elsewhere into a store (answers), or turn outputs of "
            "the official VAB or VisionQ harness into the tidy predictions table that "
            "notebooks 05 and 06 read through their 'predictions' parameter."
        ),
    )
    what = imp.add_subparsers(dest="what", required=True)
    vab = what.add_parser("vab-results", help="VAB eval.py results JSON (one model a file)")
    vis = what.add_parser(
        "visionq-predictions", help="VisionQ bench_run.py predictions JSONL (one model a file)"
    )
    for p in (vab, vis):
        p.add_argument("files", nargs="+", type=Path, help="the harness's output files")
        p.add_argument("--out", type=Path, required=True, help="the tidy table to write (.csv)")
        p.add_argument("--judge", help="the judge's name (one file only; default: from the file)")
    vis.add_argument(
        "--slice",
        choices=("all", "eligible"),
        default="all",
        help="keep every row with its eligibility flag (all) or only benchmark_eligible ones",
    )
    scores = what.add_parser(
        "scores",
        help="an off-the-shelf aesthetics model's scores: CSV image_id, model, score",
        description=(
            "Check a comparator score file against a rated-image dataset and write it where a "
            "run's 'comparators' parameter points (02 and 04 read it)."
        ),
    )
    add_import_answers_parser(what)
    scores.add_argument("file", type=Path, help="CSV with image_id, model, score")
    scores.add_argument("--dataset", required=True, help="KIND:PATH, e.g. eva:data/eva")
    scores.add_argument("--out", type=Path, required=True, help="the checked CSV to write")

    add_batch_parser(sub)

    report = sub.add_parser("report", help="execute the notebooks of a profile into HTML")
    report.add_argument("--profile", default="demo")
    report.add_argument("--run", action="append", help="only this run (repeatable)")
    report.add_argument("--only", help="comma-separated notebook prefixes, for example 00,02")
    report.add_argument("--runs-file", type=Path)
    report.add_argument("--rubric", type=Path, help="a rubric YAML file or folder for every run")
    add_missing_images_flag(report)
    report.add_argument(
        "--outputs",
        "--out",
        type=Path,
        help="the output folder (default: outputs, or outputs/study-<dataset> with --dataset)",
    )
    add_study_arguments(report)
    report.add_argument("--start-sim", action="store_true", help="start the simulated server")
    report.add_argument("--score", action="store_true", help="score each run before its notebooks")
    report.add_argument(
        "-p",
        "--parameter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a notebook parameter for this command (repeatable), e.g. -p n_resamples=500",
    )
    report.add_argument(
        "--quick", action="store_true", help="mark every page as a quick run of shrunk worlds"
    )
    report.add_argument(
        "--no-progress", action="store_true", help="no per-cell progress bar (shown with --jobs 1)"
    )
    report.add_argument(
        "--tables-only",
        action="store_true",
        help="execute the notebooks and write their tables and the manifest, without HTML "
        "pages, call explorers or index (to check that the tables reproduce)",
    )
    report.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="notebooks executed at once, each scoring process counted as one (default: the "
        "usable cores)",
    )
    report.add_argument(
        "--score-lanes",
        type=int,
        metavar="N",
        help="runs scored side by side, each in its own process (default: 2 for simulated "
        "profiles on 2+ cores, else 1)",
    )

    listing = sub.add_parser("list", help="profiles, runs, datasets and notebooks")
    listing.add_argument("--runs-file", type=Path)

    check = sub.add_parser(
        "check", help="check datasets, key and model ids before anything is spent"
    )
    check.add_argument("--profile", required=True)
    check.add_argument("--run", action="append", help="only this run's datasets (repeatable)")
    check.add_argument("--runs-file", type=Path)
    check.add_argument(
        "--explain",
        action="store_true",
        help="also show how each run sends its calls: every send option, its value and "
        "where it came from (default, environment, profile or run)",
    )

    verify = sub.add_parser(
        "verify", help="compare a report's tables with the committed demo report of its kind"
    )
    verify.add_argument("outputs", nargs="?", type=Path, default=Path("outputs"))
    verify.add_argument(
        "--reference", type=Path, help="the reference folder (default: the committed demo's)"
    )
    verify.add_argument(
        "--update",
        action="store_true",
        help="after a deliberate change of a table: make this report the committed reference",
    )
    return parser


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(t.strip() for t in (text or "").split(",") if t.strip())


def score_request(args: argparse.Namespace) -> ScoreRequest:
    """The typed request of ``judgepanel score``'s flags."""
    return ScoreRequest(
        run=args.run,
        runs_file=args.runs_file,
        dataset=args.dataset,
        families=_split(args.families),
        models=_split(args.models),
        holistic_k=args.holistic_k,
        dimension_r=args.dimension_r,
        temperature=args.temperature,
        limit_images=args.limit_images,
        store=args.store,
        options=option_flags(args),
        rubric=args.rubric,
        missing_images=getattr(args, "missing_images", None),
    )


def _print_plan_table(table: pd.DataFrame) -> None:
    """Per family: planned, stored, to send and the cost; then the totals."""
    if not len(table):
        return
    shown = table.copy()
    for col in ("expected_usd", "upper_bound_usd"):
        shown[col] = shown[col].map(lambda v: f"{v:.4f}")
    print(shown.to_string(index=False))
    print(
        f"total: {int(table['to_send'].sum())} to send, "
        f"{int(table['stored'].sum())} already stored, expected "
        f"${table['expected_usd'].sum():.4f}, upper bound "
        f"${table['upper_bound_usd'].sum():.4f}"
    )


def _print_dry_run(settings: ScoreSettings) -> None:
    for target, n_planned, table in dry_run(settings):
        print(f"{target.name} ({target.kind}, {target.root}): {n_planned} calls planned")
        _print_plan_table(table)
    send = settings.send
    ceiling = "none" if send.max_cost is None else f"${send.max_cost:.2f}"
    total = "none" if send.max_total_cost is None else f"${send.max_total_cost:.2f}"
    print(
        f"ceiling (--max-cost): {ceiling}; store ceiling (--max-total-cost): {total}; "
        "nothing was sent (dry run)"
    )


SHOWN_SKIPPED = 10
"""How many skipped image ids a command prints (the report's provenance lists them all)."""


def _skipped_line(dataset: str, skipped: tuple[str, ...]) -> str:
    """One line: the images of ``dataset`` left out as absent from disk, the first few."""
    first = ", ".join(skipped[:SHOWN_SKIPPED]) + (", ..." if len(skipped) > SHOWN_SKIPPED else "")
    return (
        f"{dataset}: {len(skipped)} image(s) absent from disk left out "
        f"(missing_images: skip): {first}"
    )


def score_command(args: argparse.Namespace) -> int:
    """``judgepanel score``: plan, skip what is stored, send the rest; see the exit codes."""
    try:
        settings = resolve_settings(score_request(args))
        for target in settings.targets:
            skipped = skipped_images(target)
            if skipped:
                print(_skipped_line(target.name, skipped), flush=True)
        if args.dry_run:
            _print_dry_run(settings)
            return EXIT_OK
        base_url = settings.send.endpoint.base_url
        print(f"endpoint: {base_url or '(SDK default)'}; store: {settings.store}", flush=True)
        summary = score_settings(settings)
    except (ConfigError, ClientError, StoreError, FileNotFoundError, ValueError) as exc:
        print(f"error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    resume = "judgepanel " + shlex.join(getattr(args, "argv", None) or sys.argv[1:])
    send = settings.send
    ceilings = {"--max-cost": send.max_cost, "--max-total-cost": send.max_total_cost}
    note = closing_note(summary, resume, ceilings)
    if note:
        stopped = summary.aborted or summary.stopped_by_budget
        print(scrub(note), file=sys.stderr if stopped else sys.stdout, flush=True)
    if summary.aborted:
        return EXIT_ABORTED
    if summary.stopped_by_budget:
        return EXIT_BUDGET
    return EXIT_OK


def fit_command(args: argparse.Namespace) -> int:
    """``judgepanel fit``: the arm fitted on every labelled image, with its accuracy."""
    try:
        model = deploy.fit_run(
            args.run,
            args.arm,
            runs_file=args.runs_file,
            dataset=args.dataset,
            families=_split(args.families),
            n_resamples=args.n_resamples,
        )
        path = deploy.save_model(model, args.out)
    except (ConfigError, DatasetError, StoreError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    m = model.meta
    print(
        f"fitted {m['arm']} on {m['n_train']} labelled images of {m['training']['dataset']} "
        f"(families {', '.join(m['families'])}; {len(m['feature_columns'])} features)"
    )
    for row in m["oof_accuracy"]:
        print(
            f"  out of fold: {row['metric']:<14} {row['value']:.3f} "
            f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        )
    print(f"wrote {path}")
    return EXIT_OK


def _models_flag(text: str | None) -> dict[str, str]:
    out = {}
    for pair in _split(text):
        fam, sep, model = pair.partition("=")
        if not sep or not fam or not model:
            raise ConfigError(f"--models {pair!r}: expected FAMILY=MODEL_ID")
        out[fam.strip()] = model.strip()
    return out


def predict_command(args: argparse.Namespace) -> int:
    """``judgepanel predict``: score new images; exit codes as ``judgepanel score``'s."""
    if args.out.suffix.lower() != ".csv":
        print(f"error: {args.out}: expected a .csv file name", file=sys.stderr)
        return EXIT_ERROR
    try:
        options = resolve_options((COMMAND_LINE, option_flags(args)))
        model = deploy.load_model(args.model)
        rubric = load_rubric(args.rubric) if getattr(args, "rubric", None) else None
        deploy_plan.check_identity(model, _models_flag(args.models), rubric)
        spec = args.dataset or f"folder:{args.images}"
        policy = getattr(args, "missing_images", None) or "error"
        source = deploy_plan.resolve_source(model, spec, args.store_dataset, policy)
        if source.skipped:
            print(_skipped_line(source.name, source.skipped), flush=True)
        store = args.store or Path(model.meta["training"]["store"])
        specs = deploy_plan.plan_predict(model, source, rubric)
        prices = deploy_plan.model_prices(model)
        table = deploy_plan.estimate(specs, store, prices, max_reasks=options.max_reasks)
        print(
            f"{len(source.images)} images (store dataset {source.name}): "
            f"{int(table['planned'].sum())} calls planned"
        )
        _print_plan_table(table)
        if args.dry_run:
            ceiling = "none" if options.max_cost is None else f"${options.max_cost:.2f}"
            print(f"ceiling (--max-cost): {ceiling}; nothing was sent (dry run)")
            return EXIT_OK
        summary = None
        if int(table["to_send"].sum()):
            summary = deploy_plan.send(specs, store, prices, options)
            print(f"predict: {summary.line()}", flush=True)
        result = deploy_plan.predict_source(model, source, specs, store)
    except (
        deploy.ModelFileError,
        deploy_plan.ModelMismatch,
        ConfigError,
        ClientError,
        DatasetError,
        StoreError,
        ValueError,
    ) as exc:
        print(f"error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result.table.to_csv(args.out, index=False)
    shift_csv = args.out.with_name(args.out.stem + ".shift.csv")
    result.shift.to_csv(shift_csv, index=False)
    scored = int(result.table["score"].notna().sum())
    print(f"wrote {len(result.table)} images to {args.out}: {scored} scored, "
          f"{len(result.table) - scored} with a missing feature (no score)")  # fmt: skip
    warning = deploy.describe_shift(result.shift)
    print(warning or "shift check: no feature of the new images differs from training "
          "(KS test, BH q >= 0.05 for every feature)")  # fmt: skip
    print(f"the shift check per feature: {shift_csv}")
    if summary is not None:
        resume = "judgepanel " + shlex.join(getattr(args, "argv", None) or sys.argv[1:])
        note = closing_note(summary, resume, {"--max-cost": options.max_cost})
        if note:
            print(scrub(note), file=sys.stderr, flush=True)
        if summary.aborted:
            return EXIT_ABORTED
        if summary.stopped_by_budget:
            return EXIT_BUDGET
    return EXIT_OK


def _tokens(n: int | None) -> str:
    return "unknown" if n is None else f"{n:,}"


def _reported(m: ModelCost) -> str:
    """A model's reported cost, and on how many of its billed calls when not all."""
    if m.cost_reported is None:
        return "not reported"
    text = f"${m.cost_reported:.4f}"
    if m.reported_calls < m.billed_calls:
        text += f" ({m.reported_calls} of {m.billed_calls} billed calls)"
    return text


def _cost_lines(info: StoreSummary) -> list[str]:
    """Per model: calls, tokens, cost as estimated and as reported; mixed samples per request."""
    if not info.models:
        return []
    table = pd.DataFrame(
        [
            {
                "model": m.model,
                "calls": m.calls,
                "input tokens": _tokens(m.input_tokens),
                "cached tokens": _tokens(m.cached_tokens),
                "output tokens": _tokens(m.output_tokens),
                "cost estimated": f"${m.cost_estimated:.4f}",
                "cost reported": _reported(m),
            }
            for m in info.models
        ]
    )
    lines = ["", "cost per model", table.to_string(index=False)]
    for m in info.models:
        if len(m.samples_per_request) > 1:
            lines.append(f"{m.model} holds {describe_mix(m.samples_per_request)}")
    return lines


def status_command(args: argparse.Namespace) -> int:
    """``judgepanel status``: counts by dataset, family, kind and status; failures; spend;
    tokens and cost per model, as estimated and as the provider reported it."""
    try:
        store = Store(args.store, readonly=True)
    except (FileNotFoundError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with store:
        info = store.summary()
        batches = BatchBook(store).summary()
    if args.json:
        print(json.dumps({**info.as_dict(), "batches": batches}, indent=2))
        return 0
    print(f"store   {info.store}  (schema {info.schema_version}, {info.journal_mode})")
    print(
        f"calls   {info.calls}  ok {info.ok}  failed {info.failed} "
        f"(retryable {info.retryable}, final {info.final})  attempts {info.attempts}"
    )
    print(f"spend   ${info.spend:.4f} over {info.billed_answers} billed answers")
    if info.cost_reported is not None:
        print(
            f"reported by the provider ${info.cost_reported:.4f} on "
            f"{info.reported_calls} of {info.billed_calls} billed calls"
        )
    if info.unanswered_calls:
        print(
            f"possibly billed, unanswered: {info.unanswered_calls} calls sent whose answer "
            f"never arrived (in flight at an interruption), up to "
            f"${info.unanswered_bound:.4f}"
        )
    if info.batched_calls:
        print(
            f"in batches: {info.batched_calls} calls in {len(batches)} open batches, "
            f"reserved up to ${info.batched_bound:.4f} (collect them: score --batch)"
        )
        for b in batches:
            print(
                f"  {b['chunk']}  {b['state']:<9} {b['status'] or '-':<11} {b['calls']:>6} calls "
                f"{b['model']}  run {b['run']}  {b['batch_id'] or ''}"
            )
    if info.first:
        print(f"written {info.first} .. {info.last}")
    if info.counts:
        table = pd.DataFrame(list(info.counts))  # one column per field
        wide = (
            table.pivot_table(
                index=["dataset", "family", "kind"],
                columns="status",
                values="n",
                aggfunc="sum",
                fill_value=0,
            )
            .reset_index()
            .rename_axis(None, axis=1)
        )
        print()
        print(wide.to_string(index=False))
    for line in _cost_lines(info):
        print(line)
    if info.failures:
        print("\nfailures by reason")
        for f in info.failures:
            print(f"  {f.n:>7}  {f.failure:<9}  {f.reason}")
    if info.rubrics:
        print("\nrubric hashes")
        for r in info.rubrics:
            label = r.rubric_sha or "(none)"
            print(f"  {r.n:>7}  {label}")
    return 0


def export_command(args: argparse.Namespace) -> int:
    """``judgepanel export``: one row per call to ``.csv`` or ``.parquet``."""
    out = Path(args.out)
    if getattr(args, "long", False):
        return export_long(args.store, out, args.dataset)
    suffix = out.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        print(f"error: {out}: expected a .csv or .parquet file name", file=sys.stderr)
        return 1
    try:
        store = Store(args.store, readonly=True)
    except (FileNotFoundError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    with store:
        df = store.frame()
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        df.to_csv(out, index=False)
    else:
        df.to_parquet(out, index=False)
    print(f"wrote {len(df)} calls to {out}")
    return 0


def _import_scores(args: argparse.Namespace) -> int:
    """``judgepanel import scores``: a checked comparator score file for 02 and 04."""
    try:
        kind, root = parse_dataset_spec(args.dataset)
        images = load_dataset(kind, str(root)).images["image_id"].astype(str)
        table = load_scores(args.file, known_images=images)
    except (ConfigError, DatasetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    covered = table.groupby("model")["image_id"].nunique()
    print(
        f"wrote {len(table)} scores to {args.out}: "
        + ", ".join(f"{m} {n}/{len(images)} images" for m, n in covered.items())
    )
    return EXIT_OK


def import_command(args: argparse.Namespace) -> int:
    """``judgepanel import``: checked comparator scores, or harness outputs as predictions."""
    if args.what == "scores":
        return _import_scores(args)
    if args.what == "answers":
        return import_answers_command(args)
    if args.out.suffix.lower() != ".csv":
        print(f"error: {args.out}: expected a .csv file name", file=sys.stderr)
        return EXIT_ERROR
    try:
        if args.what == "vab-results":
            table = vab_imports.import_results(args.files, args.out, judge=args.judge)
        else:
            table = visionq_imports.import_predictions(
                args.files, args.out, judge=args.judge, slice_name=args.slice
            )
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    names = ", ".join(dict.fromkeys(table["judge"]))
    print(f"wrote {len(table)} predictions of {names} to {args.out}")
    return EXIT_OK


def parse_overrides(pairs: list[str]) -> dict[str, object]:
    """``-p key=value`` pairs as parameters; the value is read as YAML (numbers, lists...)."""
    out: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ReportError(f"-p {pair}: expected KEY=VALUE, for example -p n_resamples=500")
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            out[key.strip()] = value
    return out


def report_command(args: argparse.Namespace) -> int:
    """``judgepanel report``: the typed request of its flags, run by the report package
    (with ``--dataset``, on a runs file of the study's own: `judgepanel.cli_study`)."""
    try:
        request = report_request(args)
        if getattr(args, "dataset", None):  # nothing is sent to check unless it scores
            request, config = study_request(args, request)
            return run_checked(request, config, sends=args.score)
        if getattr(args, "answers", None):
            raise ReportError("--answers goes with --dataset KIND:PATH, the images they answer")
        return run_checked(request, load_config(args.runs_file))
    except (ReportError, ConfigError, RubricError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def report_request(args: argparse.Namespace) -> ReportRequest:
    """The typed request of ``judgepanel report``'s flags."""
    return ReportRequest(
        profile=args.profile,
        runs=tuple(args.run or ()),
        only=_split(args.only),
        runs_file=args.runs_file,
        outputs=args.outputs or Path("outputs"),
        start_sim=args.start_sim,
        score=args.score,
        overrides=parse_overrides(getattr(args, "parameter", [])),
        quick=getattr(args, "quick", False),
        progress=not getattr(args, "no_progress", True),
        jobs=getattr(args, "jobs", None),
        score_lanes=getattr(args, "score_lanes", None),
        pages=not getattr(args, "tables_only", False),
        rubric=getattr(args, "rubric", None),
        missing_images=getattr(args, "missing_images", None),
    )


def run_checked(request: ReportRequest, config: Config, *, sends: bool = True) -> int:
    """Check a report request (rubric, selection, and a real endpoint's preflight when it
    ``sends``) and run it; exit 0, 1, or 2 when a scored run was stopped.

    Raises:
        ReportError, ConfigError, RubricError: the request cannot run as asked.
    """
    if request.rubric is not None:
        load_rubric(request.rubric)  # a bad rubric stops here, before anything runs
    selected(config, request)  # an unknown run, a mismatch or an empty --only stop here
    if sends and not config.profile(request.profile).simulated:
        problems = [f for f in preflight(config, request.profile, request.runs) if not f.ok]
        if problems:
            for f in problems:
                print(f"error: {f.what}: {f.detail}", file=sys.stderr)
            print(
                f"error: `judgepanel check --profile {request.profile}` lists every check; "
                "nothing was sent",
                file=sys.stderr,
            )
            return EXIT_ERROR
    try:
        return run_report(request, config)
    except RunStopped as exc:  # its message is whole: the run, why, and how to resume
        print(exc, file=sys.stderr)
        return EXIT_STOPPED


def list_command(args: argparse.Namespace) -> int:
    """``judgepanel list``: what the runs file offers, and the notebooks it can execute."""
    try:
        config = load_config(args.runs_file)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    print(f"runs file: {config.path.name}")
    print("\nprofiles")
    for p in config.profiles.values():
        kind = "simulated" if p.simulated else "endpoint"
        print(f"  {p.name:<10} {kind:<9}  {p.description}")
    print("\ndatasets")
    for p in config.profiles.values():
        for d in p.datasets.values():
            here = "present" if d.root.exists() else "missing"
            print(f"  {p.name:<10} {d.name:<9} {d.kind:<8} {here:<8} {_shown(d.root)}")
    print("\nruns")
    for r in config.runs.values():
        print(f"  {r.name:<16} profile {r.profile.name:<7} {'+'.join(r.datasets):<10} "
              f"{', '.join(r.notebooks)}")  # fmt: skip
    print("\nnotebooks")
    for nb in sorted((project_root() / NOTEBOOK_DIR).glob("[0-9]*.ipynb")):
        print(f"  {nb.stem}")
    print("\nparameters (override with `report -p key=value`)")
    for k, v in config.parameters.items():
        print(f"  {k} = {v}")
    return EXIT_OK


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(project_root()).as_posix()
    except ValueError:
        return str(path)


def _explain(config: Config, profile: str, runs: tuple[str, ...]) -> None:
    """Per run: each send option's value and where it came from (``check --explain``)."""
    for run in [config.run(r) for r in runs] if runs else config.runs_of(profile):
        print(f"run {run.name}: how its calls are sent (flags of `score` go over these)")
        for name, value, source in run.send.explain():
            print(f"  {name:<20} {value:<24} {source}")
        print()


def check_command(args: argparse.Namespace) -> int:
    """``judgepanel check``: datasets readable, key set, model ids served; exit 1 if not."""
    try:
        config = load_config(args.runs_file)
        if getattr(args, "explain", False):
            _explain(config, args.profile, tuple(args.run or ()))
        found = preflight(config, args.profile, tuple(args.run or ()))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for f in found:
        print(f.line())
    failed = sum(not f.ok for f in found)
    print(f"{len(found) - failed} of {len(found)} checks passed")
    return EXIT_ERROR if failed else EXIT_OK


def visionq_command(args: argparse.Namespace) -> int:
    """``judgepanel visionq pairs``: write the preference pairs and their per-leaf report."""
    try:
        if args.run:
            run = load_config(args.runs_file).run(args.run)
            ref = run.profile.dataset(run.dataset)
            if ref.kind != "visionq":
                raise ConfigError(f"run {args.run!r} reads a {ref.kind} dataset, not VisionQ")
            questions = load_questions(ref.root, ref.questions, ref.eligible)
        else:
            questions = load_questions(args.root)
        pair_set = build_pairs(
            questions, rejected=args.rejected, test_share=args.test_share, seed=args.seed
        )
        path, report = write_pairs(pair_set, args.out)
    except (ConfigError, DatasetError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for split, row in pair_set.totals.set_index("split").iterrows():
        print(
            f"{split}: {row['pairs']} pairs from {row['questions']} questions of "
            f"{row['papers']} papers"
        )
    print(f"wrote {path} and the per-leaf counts to {report}")
    return EXIT_OK


def verify_command(args: argparse.Namespace) -> int:
    """``judgepanel verify``: every table as in the committed demo report, and every verdict
    of its pages a ledger row (:func:`~judgepanel.report.verdict_check.check_report`); exit 1
    if not."""
    try:
        if args.update:
            print(f"wrote the reference {publish_reference(args.outputs)}")
            return EXIT_OK
        problems = verify(args.outputs, args.reference, say=print)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} tables differ from the committed report", file=sys.stderr)
        return EXIT_ERROR
    print(f"every table of {args.outputs} matches the committed manifest")
    unsaid = check_report(args.outputs)
    for line in unsaid:
        print(line)
    if unsaid:
        print(
            f"{len(unsaid)} verdicts outside a ledger row, float noise or families whose q is "
            "not their own rows' correction",
            file=sys.stderr,
        )
        return EXIT_ERROR
    print(f"every verdict of {args.outputs} is a ledger row, and every family's q is its own")
    return EXIT_OK


COMMANDS = {
    "score": score_command,
    "fit": fit_command,
    "predict": predict_command,
    "status": status_command,
    "export": export_command,
    "import": import_command,
    "report": report_command,
    "visionq": visionq_command,
    "list": list_command,
    "check": check_command,
    "verify": verify_command,
    "batch": batch_command,
    "data": data_command,
    "agree": agree_command,
}


def _quiet_on_closed_pipe(
    command: Callable[[argparse.Namespace], int], args: argparse.Namespace
) -> int:
    """Run ``command``; when the reader of its output leaves early (``status | head``),
    end with exit 1 and no traceback, as Python's documentation advises for pipes. A
    library error no command catches itself ends the same way, as its message alone, and
    so does a path that is missing, unreadable or of the wrong kind (:func:`path_error`)."""
    try:
        code = command(args)
        sys.stdout.flush()  # a closed pipe shows here rather than at interpreter exit
    except JudgepanelError as exc:
        print(f"error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # What is still buffered goes nowhere instead of failing again at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except OSError as exc:  # a path given that is missing, unreadable or of the wrong kind
        print(f"error: {scrub(path_error(exc))}", file=sys.stderr)
        return EXIT_ERROR
    return code


_PATH_FIXES: tuple[tuple[type[OSError], str], ...] = (
    (FileNotFoundError, "not found; check the path (or create what it names)"),
    (IsADirectoryError, "is a folder where a file is expected; name the file"),
    (NotADirectoryError, "is a file (or lies under one) where a folder is expected; name a folder"),
    (FileExistsError, "already exists as a file where a folder is expected; name a folder"),
    (PermissionError, "cannot be read or written (permission denied); check its permissions"),
)


def path_error(exc: OSError) -> str:
    """One line for a path a command could not use: the path and the fix."""
    name = exc.filename if exc.filename is not None else ""
    for kind, fix in _PATH_FIXES:
        if isinstance(exc, kind):
            return f"{name}: {fix}" if name else f"{exc.strerror or exc}; {fix}"
    return f"{name}: {exc.strerror or exc}" if name else str(exc)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SIM_COMMANDS and argv[:2] != ["data", "describe"]:
        # The synthetic world is an optional part with heavy imports (renderer, server);
        # it is loaded only when one of its commands runs.
        from judgepanel_sim.cli import main as sim_main

        rest = argv[2:] if argv[0] == "data" and argv[1:2] == ["synth"] else argv[1:]
        return sim_main([SIM_COMMANDS[argv[0]], *rest], prog=f"judgepanel {argv[0]}")
    args = build_parser().parse_args(argv)
    args.argv = argv  # the exact command, repeated in the hint to resume a stopped run
    return _quiet_on_closed_pipe(COMMANDS[args.command], args)


if __name__ == "__main__":
    sys.exit(main())
