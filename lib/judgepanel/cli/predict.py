"""``judgepanel predict``: new images scored with a model ``fit`` wrote: plan exactly the
calls its features need (under its training calls' keys, so stored calls are reused),
send what the store lacks, and write one row per image. Exit codes as ``score``'s
(:mod:`judgepanel.cli.score`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from judgepanel.cli import common
from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import OK
from judgepanel.core.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from judgepanel.core.calls import CallSpec
    from judgepanel.core.client import RunSummary
    from judgepanel.core.config import Price
    from judgepanel.core.rubric import Rubric
    from judgepanel.core.sendconfig import ClientOptions
    from judgepanel.studies.fusion import deploy
    from judgepanel.studies.fusion.deploy import plan as deploy_plan


def add_parser(sub: SubParsers) -> None:
    """``predict`` and its flags, the send options' among them."""
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
    common.add_missing_images_flag(pred, default="error")
    common.add_option_flags(pred, "predict")
    pred.set_defaults(handler=predict_command)


def _models_flag(text: str | None) -> dict[str, str]:
    """``--models FAMILY=ID,...`` as family -> model id."""
    out = {}
    for pair in common.split(text):
        fam, sep, model = pair.partition("=")
        if not sep or not fam or not model:
            raise ConfigError(f"--models {pair!r}: expected FAMILY=MODEL_ID")
        out[fam.strip()] = model.strip()
    return out


@dataclasses.dataclass(frozen=True)
class _Plan:
    """What ``predict`` will send and read: the model, its images, their calls and cost."""

    options: ClientOptions
    model: deploy.DeployedModel
    source: deploy_plan.ImageSource
    store: Path
    specs: list[CallSpec]
    prices: dict[str, Price]
    table: pd.DataFrame


def _plan(args: argparse.Namespace) -> _Plan:
    """The model checked against the flags, its images resolved, and the calls its
    features need, estimated against the store (printed with their cost)."""
    from judgepanel.core.rubric import load_rubric
    from judgepanel.core.sendconfig import COMMAND_LINE, resolve_options
    from judgepanel.studies.fusion import deploy
    from judgepanel.studies.fusion.deploy import plan as deploy_plan

    options = resolve_options((COMMAND_LINE, common.option_flags(args)))
    model = deploy.load_model(args.model)
    rubric: Rubric | None = load_rubric(args.rubric) if getattr(args, "rubric", None) else None
    deploy_plan.check_identity(model, _models_flag(args.models), rubric)
    spec = args.dataset or f"folder:{args.images}"
    policy = getattr(args, "missing_images", None) or "error"
    source = deploy_plan.resolve_source(model, spec, args.store_dataset, policy)
    if source.skipped:
        print(common.skipped_line(source.name, source.skipped), flush=True)
    store = args.store or Path(model.meta["training"]["store"])
    specs = deploy_plan.plan_predict(model, source, rubric)
    prices = deploy_plan.model_prices(model)
    table = deploy_plan.estimate(specs, store, prices, max_reasks=options.max_reasks)
    print(
        f"{len(source.images)} images (store dataset {source.name}): "
        f"{int(table['planned'].sum())} calls planned"
    )
    common.print_plan_table(table)
    return _Plan(options, model, source, store, specs, prices, table)


def _write(out: Path, result: deploy_plan.Prediction) -> None:
    """The scores and the shift check per feature, written and summed up."""
    from judgepanel.studies.fusion import deploy

    out.parent.mkdir(parents=True, exist_ok=True)
    result.table.to_csv(out, index=False)
    shift_csv = out.with_name(out.stem + ".shift.csv")
    result.shift.to_csv(shift_csv, index=False)
    scored = int(result.table["score"].notna().sum())
    print(f"wrote {len(result.table)} images to {out}: {scored} scored, "
          f"{len(result.table) - scored} with a missing feature (no score)")  # fmt: skip
    warning = deploy.describe_shift(result.shift)
    print(warning or "shift check: no feature of the new images differs from training "
          "(KS test, BH q >= 0.05 for every feature)")  # fmt: skip
    print(f"the shift check per feature: {shift_csv}")


def predict_errors() -> tuple[type[Exception], ...]:
    """What ``predict`` reports as bad input, one line on stderr (imported here, when the
    command runs, so that building the parser imports no study)."""
    from judgepanel.core.client import ClientError
    from judgepanel.core.store import StoreError
    from judgepanel.datasets import DatasetError
    from judgepanel.studies.fusion import deploy
    from judgepanel.studies.fusion.deploy import plan as deploy_plan

    return (
        deploy.ModelFileError,
        deploy_plan.ModelMismatch,
        ConfigError,
        ClientError,
        DatasetError,
        StoreError,
        ValueError,
    )


def predict_command(args: argparse.Namespace) -> int:
    """``judgepanel predict``: score new images; exit codes as ``judgepanel score``'s."""
    if args.out.suffix.lower() != ".csv":
        return fail(f"{args.out}: expected a .csv file name")
    from judgepanel.core.client import scrub
    from judgepanel.core.scoring import closing_note
    from judgepanel.studies.fusion.deploy import plan as deploy_plan

    errors = predict_errors()
    try:
        plan = _plan(args)
        if args.dry_run:
            max_cost = plan.options.max_cost
            ceiling = "none" if max_cost is None else f"${max_cost:.2f}"
            print(f"ceiling (--max-cost): {ceiling}; nothing was sent (dry run)")
            return OK
        summary: RunSummary | None = None
        if int(plan.table["to_send"].sum()):
            summary = deploy_plan.send(plan.specs, plan.store, plan.prices, plan.options)
            print(f"predict: {summary.line()}", flush=True)
        result = deploy_plan.predict_source(plan.model, plan.source, plan.specs, plan.store)
    except errors as exc:
        return fail(exc)
    _write(args.out, result)
    if summary is None:
        return OK
    note = closing_note(summary, common.resume_command(args), {"--max-cost": plan.options.max_cost})
    if note:
        print(scrub(note), file=sys.stderr, flush=True)
    return common.summary_code(summary)
