"""``judgepanel report --dataset KIND:PATH --rubric PATH [--answers FILE]``: the report of
an ad-hoc study, on a runs file of its own written under the output folder
(:mod:`judgepanel.report.study`), so the project's runs file is never edited."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from judgepanel.core.config import Config, load_config
from judgepanel.core.describe import parse_dataset_spec
from judgepanel.report.execute import ReportError, ReportRequest
from judgepanel.report.study import STUDY_PROFILE, StudyRequest, prepare_study


def add_study_arguments(report: argparse.ArgumentParser) -> None:
    """The flags of ``report`` that describe an ad-hoc study."""
    report.add_argument(
        "--dataset",
        metavar="KIND:PATH",
        help="report an ad-hoc study of this dataset (with --rubric, --answers) on a runs "
        "file of its own; --profile names the profile it starts from",
    )
    report.add_argument(
        "--answers",
        type=Path,
        metavar="FILE",
        help="with --dataset: a CSV of the judges' answers (image_id, judge, dimension, "
        "score), imported into the study's store; nothing is sent unless --score",
    )
    report.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help="with --answers: the temperature the answers were drawn at (default 0.0: unknown)",
    )


def study_request(args: argparse.Namespace, request: ReportRequest) -> tuple[ReportRequest, Config]:
    """The report request of an ad-hoc study and its runs file, parsed: the study is
    checked, its skipped notebooks named and its answers imported on the way.

    Raises:
        ReportError, ConfigError: the flags do not describe a study that can run.
    """
    if request.runs:
        raise ReportError("--dataset reports one ad-hoc study: give --dataset or --run, not both")
    kind, root = parse_dataset_spec(args.dataset)
    base = load_config(args.runs_file)
    prepared = prepare_study(
        base,
        StudyRequest(
            kind=kind,
            root=root,
            rubric=args.rubric,
            answers=args.answers,
            temperature=args.temperature,
            only=request.only,
            outputs=args.outputs,
            profile=args.profile,
            score=args.score,
            missing_images=getattr(args, "missing_images", None),
        ),
    )
    study = dataclasses.replace(
        request,
        profile=STUDY_PROFILE,
        runs_file=prepared.runs_file,
        outputs=prepared.outputs,
        rubric=None,  # the study's run names it
        missing_images=None,  # and its dataset entry the policy
        only=(),  # the study's run lists the notebooks chosen
    )
    return study, load_config(prepared.runs_file)
