"""``judgepanel report``: the notebooks of a profile executed into pages, as a typed
request run by the report package (:func:`judgepanel.report.execute.run_report`).

With ``--dataset KIND:PATH --rubric PATH [--answers FILE]`` it reports an ad-hoc study, on
a runs file of its own written under the output folder (:mod:`judgepanel.report.study`),
so the project's runs file is never edited. A run it scores that is stopped (by its
ceiling or early) ends the command with ``RUN_STOPPED`` (:mod:`judgepanel.cli.exit_codes`).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from judgepanel.cli.common import SubParsers, add_missing_images_flag, fail, split
from judgepanel.cli.exit_codes import BAD_INPUT, RUN_STOPPED
from judgepanel.core.errors import ConfigError, RunStopped

if TYPE_CHECKING:
    from judgepanel.core.config import Config
    from judgepanel.report.execute import ReportRequest


def add_parser(sub: SubParsers) -> None:
    """``report`` and its flags: what to execute, where, and how."""
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
    _add_study_arguments(report)
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
    _add_execution_arguments(report)
    report.set_defaults(handler=report_command)


def _add_study_arguments(report: argparse.ArgumentParser) -> None:
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


def _add_execution_arguments(report: argparse.ArgumentParser) -> None:
    """The flags of ``report`` that say how the notebooks are executed."""
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
        "--fresh-kernels",
        action="store_true",
        help="start a kernel for every notebook instead of reusing warm ones, put back to "
        "their fresh state, between the notebooks of a lane (the pages are the same)",
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


def parse_overrides(pairs: list[str]) -> dict[str, object]:
    """``-p key=value`` pairs as parameters; the value is read as YAML (numbers, lists...)."""
    import yaml

    from judgepanel.report.execute import ReportError

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
    """``judgepanel report``: the typed request of its flags, checked, then run by the
    report package (with ``--dataset``, on a runs file of the study's own:
    :func:`study_request`); exit 0, bad input, or ``RUN_STOPPED`` when a scored run was
    stopped."""
    from judgepanel.core.config import load_config
    from judgepanel.core.rubric import RubricError
    from judgepanel.report.execute import ReportError, run_report

    try:
        request = report_request(args)
        sends = True
        if getattr(args, "dataset", None):  # nothing is sent to check unless it scores
            request, config = study_request(args, request)
            sends = args.score
        elif getattr(args, "answers", None):
            raise ReportError("--answers goes with --dataset KIND:PATH, the images they answer")
        else:
            config = load_config(args.runs_file)
        if refused(request, config, sends=sends):
            return BAD_INPUT
        return run_report(request, config)
    except (ReportError, ConfigError, RubricError) as exc:
        return fail(exc)
    except RunStopped as exc:  # its message is whole: the run, why, and how to resume
        print(exc, file=sys.stderr)
        return RUN_STOPPED


def report_request(args: argparse.Namespace) -> ReportRequest:
    """The typed request of ``judgepanel report``'s flags."""
    from judgepanel.report.execute import ReportRequest

    return ReportRequest(
        profile=args.profile,
        runs=tuple(args.run or ()),
        only=split(args.only),
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
        fresh_kernels=getattr(args, "fresh_kernels", False),
    )


def study_request(args: argparse.Namespace, request: ReportRequest) -> tuple[ReportRequest, Config]:
    """The report request of an ad-hoc study and its runs file, parsed: the study is
    checked, its skipped notebooks named and its answers imported on the way.

    Raises:
        ReportError, ConfigError: the flags do not describe a study that can run.
    """
    from judgepanel.core.config import load_config
    from judgepanel.core.describe import parse_dataset_spec
    from judgepanel.report.execute import ReportError
    from judgepanel.report.study import STUDY_PROFILE, StudyRequest, prepare_study

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


def refused(request: ReportRequest, config: Config, *, sends: bool = True) -> bool:
    """Whether a real endpoint's preflight refuses ``request`` (each failed check printed);
    a bad rubric raises here, before anything runs. On a simulated endpoint the report
    selects its runs and notebooks once, itself; before a real endpoint's preflight they
    are checked here first, so an unknown run, a profile mismatch or an empty ``--only``
    is named before any check of the endpoint.

    Raises:
        RubricError: the request's rubric cannot be read.
        ReportError: the selection cannot run (see :func:`select_notebooks`).
    """
    from judgepanel.core.preflight import preflight
    from judgepanel.core.rubric import load_rubric
    from judgepanel.report.execute import select_notebooks

    if request.rubric is not None:
        load_rubric(request.rubric)
    if not sends or config.profile(request.profile).simulated:
        return False
    select_notebooks(config, request)
    problems = [f for f in preflight(config, request.profile, request.runs) if not f.ok]
    for f in problems:
        print(f"error: {f.what}: {f.detail}", file=sys.stderr)
    if problems:
        print(
            f"error: `judgepanel check --profile {request.profile}` lists every check; "
            "nothing was sent",
            file=sys.stderr,
        )
    return bool(problems)
