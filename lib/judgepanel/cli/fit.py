"""``judgepanel fit``: an arm of the fusion study fitted on every labelled image of a scored
run, for keeps, with its out-of-fold accuracy (:mod:`judgepanel.studies.fusion.deploy`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from judgepanel.cli.common import SubParsers, fail, split
from judgepanel.cli.exit_codes import OK
from judgepanel.core.errors import ConfigError

ARMS: tuple[str, ...] = (
    "H_gb",
    "P_gb",
    "H+P_gb",
    "H_split_gb",
    "H_blocks3_gb",
    "P_validated_gb",
    "H_ridge",
    "P_ridge",
    "best single",
    "panel mean",
)
"""The arms ``--arm`` names, as :data:`judgepanel.studies.fusion.deploy.ARMS` lists them:
written out so that building the parser imports no study (``tests/test_cli_imports.py``
holds them equal)."""


def add_parser(sub: SubParsers) -> None:
    """``fit`` and its flags."""
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
    fit.add_argument("--arm", required=True, help=f"one of: {', '.join(ARMS)}")
    fit.add_argument("--out", type=Path, required=True, help="the model file to write (.npz)")
    fit.add_argument("--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)")
    fit.add_argument("--dataset", help="the run's dataset (when it has several rated ones)")
    fit.add_argument(
        "--families", help="the panel, comma-separated (default: the pre-declared families)"
    )
    fit.add_argument("--n-resamples", type=int, help="bootstrap resamples of the accuracy")
    fit.set_defaults(handler=fit_command)


def fit_command(args: argparse.Namespace) -> int:
    """``judgepanel fit``: the arm fitted on every labelled image, with its accuracy."""
    from judgepanel.core.store import StoreError
    from judgepanel.datasets import DatasetError
    from judgepanel.studies.fusion import deploy

    try:
        model = deploy.fit_run(
            args.run,
            args.arm,
            runs_file=args.runs_file,
            dataset=args.dataset,
            families=split(args.families),
            n_resamples=args.n_resamples,
        )
        path = deploy.save_model(model, args.out)
    except (ConfigError, DatasetError, StoreError, ValueError, FileNotFoundError) as exc:
        return fail(exc)
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
    return OK
