"""Every error the library raises for the command line to report is a ``JudgepanelError``.

The command line turns a ``JudgepanelError`` into a one-line message and an exit code, so
an error class outside it would reach the user as a traceback. The few exceptions that
never leave the library (control flow between two of its own functions) are listed here
with the reason.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import judgepanel
from judgepanel.errors import JudgepanelError

INTERNAL = {
    # a value the fit cache cannot key; the caller computes instead of caching
    "judgepanel.studies.common.fitcache.Uncacheable",
    # raised by a call inside the client's loop and caught by the loop itself
    "judgepanel.core.client.outcome.RunAborted",
}


def _error_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(judgepanel.__path__, "judgepanel."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, Exception) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_library_error_is_a_judgepanel_error():
    classes = _error_classes()
    assert len(classes) >= 15  # the walk found the library's errors
    outside = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, JudgepanelError) and name not in INTERNAL
    )
    assert not outside, f"errors the command line would show as a traceback: {outside}"


def test_the_internal_list_names_existing_classes():
    assert set(_error_classes()) >= INTERNAL


def test_the_command_line_reports_an_uncaught_library_error_as_one_line(capsys):
    import argparse

    from judgepanel.cli import guarded
    from judgepanel.cli.exit_codes import BAD_INPUT
    from judgepanel.datasets import DatasetError

    def command(args: argparse.Namespace) -> int:
        raise DatasetError("ratings.csv, line 4: score 'x' is not a number")

    with guarded() as outcome:
        outcome.code = command(argparse.Namespace())
    assert outcome.code == BAD_INPUT
    err = capsys.readouterr().err
    assert err == "error: ratings.csv, line 4: score 'x' is not a number\n"
