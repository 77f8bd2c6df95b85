"""``judgepanel data describe``: what a rated-image dataset holds, and its noise ceiling.

``data synth`` belongs to the synthetic world and is forwarded to it before parsing
(:mod:`judgepanel.cli.sim_server`); ``data describe`` is parsed here and calls
:mod:`judgepanel.core.describe`. Bad input (a malformed ``--dataset``, a missing folder, a
malformed file or rubric) is one line on stderr and bad input's exit code.
"""

from __future__ import annotations

import argparse
from typing import Any

from judgepanel.cli.common import SubParsers, print_info
from judgepanel.core.errors import ConfigError


def add_parser(sub: SubParsers) -> None:
    """``data`` and its two subcommands (``synth`` listed for its help only)."""
    data = sub.add_parser(
        "data", help="describe a rated dataset; synthetic datasets (`data synth --help`)"
    )
    what = data.add_subparsers(dest="data_command", required=True)
    what.add_parser("synth", help="the synthetic world in the real formats (its own --help)")
    describe = what.add_parser(
        "describe",
        help="images, raters or votes, attributes, splits and the noise ceiling of a dataset",
        description=(
            "Read a rated-image dataset with its loader and say what it holds: images, "
            "raters or votes per image, attributes with range, direction and the rubric "
            "dimension each validates, splits, and the noise ceiling of the overall rating "
            "with the method the data supports and its 95% interval over images."
        ),
    )
    describe.add_argument(
        "--dataset",
        required=True,
        metavar="KIND:PATH",
        help="e.g. ratings:data/mine, ava:data/ava, eva:data/eva",
    )
    describe.add_argument(
        "--rubric",
        metavar="PATH",
        help="a rubric YAML file or folder: which attribute validates each of its questions, "
        "with that attribute's noise ceiling",
    )
    describe.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a loader option the kind declares (e.g. mos_scale=1-5 for koniq, overlap=error "
        "for aadb, sd_ddof=1 for para); repeatable. The images need not be on disk",
    )
    describe.add_argument("--json", action="store_true", help="machine-readable output")
    describe.add_argument("--splits", type=int, default=100, help="splits of the ceiling")
    describe.add_argument("--resamples", type=int, default=200, help="resamples of its interval")
    describe.add_argument("--seed", type=int, default=0, help="seed of splits and resamples")
    data.set_defaults(handler=data_command)


def loader_options(kind: str, pairs: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as the kind's declared loader options or keys (whole numbers
    as int).

    Raises:
        ConfigError: not ``KEY=VALUE``, or a key the kind does not declare.
    """
    from judgepanel.datasets.kinds import get_kind

    declared = {**get_kind(kind).keys, **get_kind(kind).options}
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in declared:
            known = ", ".join(declared) or "none"
            raise ConfigError(f"--option {pair!r}: expected KEY=VALUE, KEY one of {known}")
        options[key] = int(value) if value.lstrip("-").isdigit() else value
    return options


def data_command(args: argparse.Namespace) -> int:
    """``judgepanel data describe``; exit 0, or bad input with one line on stderr."""
    from judgepanel.core.describe import describe_dataset, describe_lines, parse_dataset_spec
    from judgepanel.core.rubric import RubricError, load_rubric
    from judgepanel.datasets import DatasetError

    def compute() -> dict[str, Any]:
        kind, root = parse_dataset_spec(args.dataset)
        if args.splits < 1 or args.resamples < 1:
            raise ConfigError("--splits and --resamples must be at least 1")
        rubric = load_rubric(args.rubric) if args.rubric else None
        return describe_dataset(
            kind,
            root,
            n_splits=args.splits,
            n_resamples=args.resamples,
            seed=args.seed,
            rubric=rubric,
            options=loader_options(kind, args.option),
        )

    errors = (ConfigError, DatasetError, RubricError, OSError)
    return print_info(compute, describe_lines, args.json, errors)
