"""A quick report of the small project, opened in headless Chromium as a reader would.

Without Chromium the tests skip with the install command; in CI (``CI`` set) a missing
Chromium is a failure, because `.ci/run` installs it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browse import (
    CHROMIUM_FLAGS,
    INSTALL_HINT,
    chromium,
    filters_on_typing,
    inspect,
    pages_of,
)
from report_checks import computed_sentences

from judgepanel.report.execute import ReportRequest, run_report
from judgepanel.stats.wording import prose_problems

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

RUNS = ("test-eva", "test-headroom", "test-vab", "test-visionq")


@pytest.fixture(scope="module")
def browser():
    exe = chromium()
    if exe is None:
        message = f"BROWSER TESTS SKIPPED: Chromium not found; install it with: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(message)
        print(f"\n{message}")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def quick_report(small_project, tmp_path_factory) -> Path:
    """Every notebook of the small project (para's are eva's), as a quick report."""
    outputs = tmp_path_factory.mktemp("browser") / "outputs"
    saved = os.environ.pop("OPENAI_BASE_URL", None)
    try:
        code = run_report(
            ReportRequest(
                profile="test",
                runs=RUNS,
                runs_file=small_project.runs_file,
                outputs=outputs,
                overrides={"n_resamples": 200},
                quick=True,
            )
        )
    finally:
        if saved is not None:
            os.environ["OPENAI_BASE_URL"] = saved
    assert code == 0
    return outputs


def test_every_page_reads_well_offline(browser, quick_report: Path, small_project) -> None:
    pages = pages_of(quick_report)
    explorers = [p for p in pages if p.parent.name == "explorer"]
    notebooks = [p for p in pages if p.parent.name.startswith("test-")]
    assert len(notebooks) == 7 and explorers, [p.name for p in pages]
    screens = quick_report / "_screens"
    for path in pages:
        r = inspect(browser, path, screens)
        where = path.relative_to(quick_report)
        assert r.console_errors == [], (where, r.console_errors)
        assert r.remote_requests == [], (where, r.remote_requests)
        assert r.title and r.title != "Notebook", where
        assert r.banner_top is not None and r.banner_top < 900, (where, r.banner_top)
        assert r.tallest_flat_table <= 1200, (where, r.tallest_flat_table)
        assert r.broken_links == [], (where, r.broken_links)
    for path in notebooks:
        html = path.read_text(encoding="utf-8")
        assert "Quick run." in html
        assert str(quick_report) not in html and str(quick_report.parent) not in html
        # the quick runs file is a copy under outputs; the project's own folder is shown as .
        assert str(small_project.root) not in html, path.name
    index = (quick_report / "index.html").read_text(encoding="utf-8")
    assert str(small_project.root) not in index
    assert len(list(screens.glob("*.png"))) == len(pages)


def test_every_computed_sentence_of_the_quick_report_keeps_the_conventions(quick_report: Path):
    """The wording conventions (README), over every headline and computed sentence."""
    problems, read = [], 0
    for executed in sorted(quick_report.glob("test-*/*.ipynb")):
        for where, text in computed_sentences(executed.parent, executed.stem):
            read += 1
            problems += [
                f"{executed.parent.name}/{executed.stem} {where}: {p}" for p in prose_problems(text)
            ]
    assert read > 50, read  # the report was read, not skipped
    assert problems == [], "\n".join(problems)


def test_the_explorer_filters_when_typed_into(browser, quick_report: Path) -> None:
    page = quick_report / "explorer" / "test-visionq.html"
    before, after = filters_on_typing(browser, page, "Gold: (A)")
    assert 0 < after < before
