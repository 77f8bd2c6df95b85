"""What several commands share: the one-line error, the send-option and missing-images
flags, and the plan table, skipped-images line, resume hint and exit code of ``score``
and ``predict``.

Imported to build the parser of every command, so it imports nothing heavy at its top:
the client and pandas are imported where a command's run uses them."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from judgepanel.cli.exit_codes import ABORTED, BAD_INPUT, BUDGET, OK
from judgepanel.core.sendconfig import DEFAULT, Declared, declared_options, default_of, without_none

if TYPE_CHECKING:
    import pandas as pd

    from judgepanel.core.client import RunSummary

SubParsers = argparse._SubParsersAction
"""The subcommands of a parser, as ``add_subparsers`` returns them."""


def split(text: str | None) -> tuple[str, ...]:
    """A comma-separated flag's items, stripped; ``()`` for none."""
    return tuple(t.strip() for t in (text or "").split(",") if t.strip())


def fail(error: object) -> int:
    """Say ``error`` as one line on stderr (its whitespace runs joined, any API key
    scrubbed) and return :data:`~judgepanel.cli.exit_codes.BAD_INPUT`."""
    from judgepanel.core.client import scrub

    print(f"error: {' '.join(scrub(str(error)).split())}", file=sys.stderr)
    return BAD_INPUT


def print_info(
    compute: Callable[[], dict[str, Any]],
    lines: Callable[[dict[str, Any]], list[str]],
    as_json: bool,
    errors: tuple[type[Exception], ...],
) -> int:
    """Print what ``compute`` returns as JSON or as ``lines``; on ``errors``, one line on
    stderr and bad input (the shared ending of ``data describe`` and ``agree``)."""
    try:
        info = compute()
    except errors as exc:
        return fail(exc)
    print(json.dumps(info, indent=2) if as_json else "\n".join(lines(info)))
    return OK


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


def print_plan_table(table: pd.DataFrame) -> None:
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


SHOWN_SKIPPED = 10
"""How many skipped image ids a command prints (the report's provenance lists them all)."""


def skipped_line(dataset: str, skipped: tuple[str, ...]) -> str:
    """One line: the images of ``dataset`` left out as absent from disk, the first few."""
    first = ", ".join(skipped[:SHOWN_SKIPPED]) + (", ..." if len(skipped) > SHOWN_SKIPPED else "")
    return (
        f"{dataset}: {len(skipped)} image(s) absent from disk left out "
        f"(missing_images: skip): {first}"
    )


def resume_command(args: argparse.Namespace) -> str:
    """The exact command that was run, to repeat in the hint to resume a stopped run."""
    return "judgepanel " + shlex.join(getattr(args, "argv", None) or sys.argv[1:])


def summary_code(summary: RunSummary) -> int:
    """The exit code of a scoring command's run: stopped early, by its ceiling, or done."""
    if summary.aborted:
        return ABORTED
    if summary.stopped_by_budget:
        return BUDGET
    return OK
