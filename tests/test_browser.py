"""The small project's shared report, opened in headless Chromium as a reader would.

Without Chromium the tests skip with the install command; in CI (``CI`` set) a missing
Chromium is a failure, because `.ci/run` installs it.
"""

from __future__ import annotations

import os
import re
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

from judgepanel.claims.wording import prose_problems

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


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


def test_every_page_reads_well_offline(
    browser, small_report: Path, small_project, tmp_path: Path
) -> None:
    pages = pages_of(small_report)
    explorers = [p for p in pages if p.parent.name == "explorer"]
    notebooks = [p for p in pages if p.parent.name.startswith("test-")]
    assert len(notebooks) == 14 and explorers, [p.name for p in pages]
    screens = tmp_path / "_screens"  # the shared report is only read
    for path in pages:
        r = inspect(browser, path, screens)
        where = path.relative_to(small_report)
        assert r.console_errors == [], (where, r.console_errors)
        assert r.remote_requests == [], (where, r.remote_requests)
        assert r.title and r.title != "Notebook", where
        assert r.banner_top is not None and r.banner_top < 900, (where, r.banner_top)
        assert r.tallest_flat_table <= 1200, (where, r.tallest_flat_table)
        # nothing wider than the 1280 px window: a wide table scrolls inside its own box
        assert r.page_width <= 1280, (where, r.page_width, r.widest)
        assert r.broken_links == [], (where, r.broken_links)
    for path in notebooks:
        html = path.read_text(encoding="utf-8")
        assert "Quick run." not in html  # a full report (the quick banner: test_report_schedule)
        assert str(small_report) not in html and str(small_report.parent) not in html
        # the project's own folder is shown as .
        assert str(small_project.root) not in html, path.name
    index = (small_report / "index.html").read_text(encoding="utf-8")
    assert str(small_project.root) not in index
    # the index answers first: one small figure per page that draws one, each a real file
    thumbs = re.findall(r'<img class="jp-thumb" src="([^"]+)"', index)
    assert len(thumbs) == len(notebooks), (len(thumbs), len(notebooks))
    assert all((small_report / t).is_file() for t in thumbs), thumbs
    assert len(list(screens.glob("*.png"))) == len(pages)


def test_every_computed_sentence_of_the_report_keeps_the_conventions(small_report: Path):
    """The wording conventions (README), over every headline and computed sentence."""
    problems, read = [], 0
    for executed in sorted(small_report.glob("test-*/*.ipynb")):
        for where, text in computed_sentences(executed.parent, executed.stem):
            read += 1
            problems += [
                f"{executed.parent.name}/{executed.stem} {where}: {p}" for p in prose_problems(text)
            ]
    assert read > 50, read  # the report was read, not skipped
    assert problems == [], "\n".join(problems)


def test_the_explorer_filters_when_typed_into(browser, small_report: Path) -> None:
    page = small_report / "explorer" / "test-visionq.html"
    before, after = filters_on_typing(browser, page, "Gold: (A)")
    assert 0 < after < before
