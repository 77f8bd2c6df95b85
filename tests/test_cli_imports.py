"""The command line starts cheap: building its parser imports no heavy package, and each
command imports the library it runs in its handler (``judgepanel.cli``).

Every ``judgepanel`` process builds the parser of every command, so what the command
modules import at their top is paid by every command, ``--help`` included; the parser
read this way must say exactly what it says once the library is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from judgepanel.cli import agree, fit, visionq

HEAVY = ("scipy", "sklearn", "pandas", "matplotlib", "statsmodels", "numpy")
"""Packages whose import costs a noticeable share of a second of CPU."""

HELP_TEXTS = """
import argparse, json, os, sys
for name in sys.argv[1:]:
    __import__(name)
from judgepanel.cli import build_parser

texts = {}
def walk(parser, path):
    texts[" ".join(path)] = parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                walk(sub, [*path, name])
walk(build_parser(), [])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in json.loads(os.environ["HEAVY"]))
print(json.dumps({"texts": texts, "heavy": heavy, "studies": "judgepanel.studies" in sys.modules}))
"""
"""A fresh interpreter's help of every command and subcommand (after importing the modules
its arguments name), with the heavy modules and whether the studies were imported."""

EAGER = (
    "judgepanel.studies",
    "judgepanel.report.execute",
    "judgepanel.report.study",
    "judgepanel.core.scoring",
    "judgepanel.studies.fusion.deploy",
    "judgepanel.studies.visionq.pairs",
    "judgepanel.stats.alt_test",
)
"""What every command module imported at its top before its handler imported it."""


def _help(*first: str) -> dict:
    """:data:`HELP_TEXTS` run in a subprocess, at a fixed width."""
    env = {**os.environ, "COLUMNS": "100", "HEAVY": json.dumps(HEAVY)}
    done = subprocess.run(
        [sys.executable, "-c", HELP_TEXTS, *first],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def lazy() -> dict:
    """The help texts as ``judgepanel`` builds them, from nothing imported."""
    return _help()


def test_building_the_parser_imports_no_heavy_package_and_no_study(lazy: dict) -> None:
    assert lazy["heavy"] == []
    assert lazy["studies"] is False


def test_every_help_text_reads_as_with_the_library_imported(lazy: dict) -> None:
    eager = _help(*EAGER)
    assert eager["heavy"], "the eager reading imports the library"
    assert sorted(lazy["texts"]) == sorted(eager["texts"])
    assert len(lazy["texts"]) >= 25  # judgepanel, its commands and their subcommands
    for command, text in eager["texts"].items():
        assert lazy["texts"][command] == text, command


def test_the_choices_written_out_for_the_parser_are_the_librarys() -> None:
    from judgepanel.stats.alt_test import ALT_METRICS
    from judgepanel.studies.fusion import deploy
    from judgepanel.studies.visionq.pairs import REJECTED_CHOICES

    assert tuple(deploy.ARMS) == fit.ARMS
    assert visionq.REJECTED_CHOICES == REJECTED_CHOICES
    assert agree.ALT_METRICS == ALT_METRICS
