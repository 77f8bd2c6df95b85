"""``judgepanel list``: what the runs file offers (profiles, datasets, runs, parameters),
and the notebooks it can execute."""

from __future__ import annotations

import argparse
from pathlib import Path

from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import OK
from judgepanel.core.errors import ConfigError
from judgepanel.core.paths import NOTEBOOK_DIR, project_root


def add_parser(sub: SubParsers) -> None:
    """``list`` and its flag."""
    listing = sub.add_parser("list", help="profiles, runs, datasets and notebooks")
    listing.add_argument("--runs-file", type=Path)
    listing.set_defaults(handler=list_command)


def list_command(args: argparse.Namespace) -> int:
    """``judgepanel list``: what the runs file offers, and the notebooks it can execute."""
    from judgepanel.core.config import load_config

    try:
        config = load_config(args.runs_file)
    except ConfigError as exc:
        return fail(exc)
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
    return OK


def _shown(path: Path) -> str:
    """A path as the project names it: relative to its root when it lies inside."""
    try:
        return path.resolve().relative_to(project_root()).as_posix()
    except ValueError:
        return str(path)
