"""The runnable examples (``>>>``) of the headline statistics run, and give what they show.

Each module below carries short examples in its functions' docstrings (a rank correlation
and its bootstrap interval, the paired bootstrap difference, BH and BY q-values, the noise
ceiling, Krippendorff's alpha, the ICC, QWK, the alternative annotator test, the Wilson
interval and the max-T leader test). Here doctest runs them all, as ``make test`` does.
"""

from __future__ import annotations

import doctest
import importlib
import io
from functools import cache

import pytest

MODULES = (
    "judgepanel.stats.correlation",
    "judgepanel.stats.bootstrap",
    "judgepanel.stats.multitest",
    "judgepanel.stats.ceiling",
    "judgepanel.stats.reliability",
    "judgepanel.stats.agreement",
    "judgepanel.stats.alt_test",
    "judgepanel.stats.intervals",
    "judgepanel.studies.common.leader",
)
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
MIN_EXAMPLES = 10
"""Docstrings with a runnable example, over all of ``MODULES`` (issue 54 asks for ten)."""

pytestmark = pytest.mark.xdist_group("doctest-examples")


@cache
def run_examples(name: str) -> tuple[int, int, int, str]:
    """(docstrings with examples, examples run, examples failed, doctest's report)."""
    module = importlib.import_module(name)
    tests = [t for t in doctest.DocTestFinder().find(module) if t.examples]
    runner = doctest.DocTestRunner(optionflags=FLAGS, verbose=False)
    report = io.StringIO()
    for test in sorted(tests, key=lambda t: t.name):
        runner.run(test, out=report.write)
    failed, attempted = runner.summarize(verbose=False)
    return len(tests), attempted, failed, report.getvalue()


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_pass(name: str) -> None:
    docstrings, attempted, failed, report = run_examples(name)
    assert docstrings >= 1, f"{name} has no runnable example"
    assert attempted >= docstrings
    assert failed == 0, f"{failed} of {attempted} examples of {name} failed:\n{report}"


def test_enough_examples() -> None:
    results = {name: run_examples(name) for name in MODULES}
    docstrings = sum(r[0] for r in results.values())
    assert docstrings >= MIN_EXAMPLES, (
        f"{docstrings} docstrings with examples, want {MIN_EXAMPLES}: "
        + ", ".join(f"{name} {r[0]}" for name, r in results.items())
    )
    assert all(r[2] == 0 for r in results.values())
