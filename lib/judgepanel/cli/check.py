"""``judgepanel check``: before anything is spent, the datasets readable, the key set and
the model ids served; with ``--explain``, how each run sends its calls."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import BAD_INPUT, OK
from judgepanel.core.errors import ConfigError

if TYPE_CHECKING:
    from judgepanel.core.config import Config


def add_parser(sub: SubParsers) -> None:
    """``check`` and its flags."""
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
    check.set_defaults(handler=check_command)


def _explain(config: Config, profile: str, runs: tuple[str, ...]) -> None:
    """Per run: each send option's value and where it came from (``check --explain``)."""
    for run in [config.run(r) for r in runs] if runs else config.runs_of(profile):
        print(f"run {run.name}: how its calls are sent (flags of `score` go over these)")
        for name, value, source in run.send.explain():
            print(f"  {name:<20} {value:<24} {source}")
        print()


def check_command(args: argparse.Namespace) -> int:
    """``judgepanel check``: datasets readable, key set, model ids served; exit
    ``BAD_INPUT`` if not."""
    from judgepanel.core.config import load_config
    from judgepanel.core.preflight import preflight

    try:
        config = load_config(args.runs_file)
        if getattr(args, "explain", False):
            _explain(config, args.profile, tuple(args.run or ()))
        found = preflight(config, args.profile, tuple(args.run or ()))
    except ConfigError as exc:
        return fail(exc)
    for f in found:
        print(f.line())
    failed = sum(not f.ok for f in found)
    print(f"{len(found) - failed} of {len(found)} checks passed")
    return BAD_INPUT if failed else OK
