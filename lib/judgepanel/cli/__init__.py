"""The ``judgepanel`` command: parses arguments, builds typed settings, calls the library.

One module per command, each with its parser (``add_parser``, which names its handler)
and its handler together; :data:`COMMANDS` lists them, and :func:`main` builds the parser
from that list and dispatches to the handler the arguments name. Every command returns an
exit code of :mod:`judgepanel.cli.exit_codes`. Nothing outside this package imports it.
``data synth`` and ``sim-server`` belong to the embedded synthetic world
(``judgepanel_sim``) and are forwarded to it before any parsing here
(:mod:`judgepanel.cli.sim_server`).

Building the parser stays cheap: a command module imports at its top only what its
``add_parser`` needs, and its handler imports the library it runs (the studies, which
register their planners on import, only where planning happens), so each command pays
for its own imports alone, inside :class:`guarded` (``tests/test_cli_imports.py``).
"""

from __future__ import annotations

import argparse
import os
import sys

from judgepanel import __version__
from judgepanel.cli import (
    agree,
    batch,
    check,
    data,
    export,
    fit,
    imports,
    listing,
    predict,
    report,
    score,
    sim_server,
    status,
    verify,
    visionq,
)
from judgepanel.cli.common import fail
from judgepanel.cli.exit_codes import BAD_INPUT, OK
from judgepanel.errors import JudgepanelError

COMMANDS = (
    data,
    agree,
    sim_server,
    score,
    fit,
    predict,
    status,
    export,
    visionq,
    imports,
    batch,
    report,
    listing,
    check,
    verify,
)
"""Every command's module, in the order ``judgepanel --help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="judgepanel",
        description="Vision-language models as judges of images: scoring, analyses, report.",
    )
    parser.add_argument("--version", action="version", version=f"judgepanel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


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


class guarded:
    """The command's exit code, kept when the command ends in an error the command line
    reports itself: when the reader of its output leaves early (``status | head``) it ends
    with ``BAD_INPUT`` and no traceback, as Python's documentation advises for pipes; a
    library error no command catches ends the same way, as its message alone on one line,
    and so does a path that is missing, unreadable or of the wrong kind
    (:func:`path_error`). A context manager rather than a wrapper, so a command runs one
    frame below ``main``::

        with guarded() as outcome:
            outcome.code = command(args)
    """

    def __init__(self) -> None:
        self.code = OK

    def __enter__(self) -> guarded:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object
    ) -> bool:
        if exc is None:
            try:
                sys.stdout.flush()  # a closed pipe shows here rather than at interpreter exit
            except BrokenPipeError as pipe:
                exc = pipe
            else:
                return False
        if isinstance(exc, JudgepanelError):
            self.code = fail(exc)
        elif isinstance(exc, BrokenPipeError):
            # What is still buffered goes nowhere instead of failing again at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            self.code = BAD_INPUT
        elif isinstance(exc, OSError):  # a path given that is missing, unreadable or wrong
            self.code = fail(path_error(exc))
        else:
            return False
        return True


def main(argv: list[str] | None = None) -> int:
    """``judgepanel ARGS``: the exit code of the command ``argv`` names."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if sim_server.forwarded(argv):
        return sim_server.forward(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv  # the exact command, repeated in the hint to resume a stopped run
    with guarded() as outcome:
        outcome.code = args.handler(args)
    return outcome.code
