"""``judgepanel verify``: every table of a report as in the committed reference of its
kind, and every verdict of its pages a ledger row."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import BAD_INPUT, OK


def add_parser(sub: SubParsers) -> None:
    """``verify`` and its flags."""
    p = sub.add_parser(
        "verify", help="compare a report's tables with the committed demo report of its size"
    )
    p.add_argument("outputs", nargs="?", type=Path, default=Path("outputs"))
    p.add_argument(
        "--reference", type=Path, help="the reference folder (default: the committed demo's)"
    )
    p.add_argument(
        "--update",
        action="store_true",
        help="after a deliberate change of a table: make this report the committed reference",
    )
    p.set_defaults(handler=verify_command)


def verify_command(args: argparse.Namespace) -> int:
    """``judgepanel verify``: every table as in the committed demo report, and every verdict
    of its pages a ledger row (:func:`~judgepanel.report.verdict_check.check_report`); exit
    ``BAD_INPUT`` if not."""
    from judgepanel.report.manifest import publish_reference, verify
    from judgepanel.report.verdict_check import check_report

    try:
        if args.update:
            print(f"wrote the reference {publish_reference(args.outputs)}")
            return OK
        problems = verify(args.outputs, args.reference, say=print)
    except (OSError, ValueError) as exc:
        return fail(exc)
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} tables differ from the committed report", file=sys.stderr)
        return BAD_INPUT
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
        return BAD_INPUT
    print(f"every verdict of {args.outputs} is a ledger row, and every family's q is its own")
    return OK
