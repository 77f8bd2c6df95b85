"""Open report pages in headless Chromium and check what a reader meets.

Used by tests/test_browser.py, and as a script to screenshot a report and measure each
page's height: ``python tests/browse.py outputs`` writes ``outputs/_screens/``.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL_HINT = "apt-get update && apt-get install -y chromium"


def chromium() -> str | None:
    """The Chromium executable: ``$JUDGEPANEL_CHROMIUM`` or Debian's ``chromium`` on PATH."""
    found = os.environ.get("JUDGEPANEL_CHROMIUM") or shutil.which("chromium")
    return found if found and Path(found).exists() else None


@dataclass
class PageReport:
    """What one page showed in the browser."""

    path: Path
    title: str = ""
    height: int = 0
    console_errors: list[str] = field(default_factory=list)
    remote_requests: list[str] = field(default_factory=list)
    banner_top: float | None = None
    tallest_flat_table: float = 0.0
    page_width: int = 0
    widest: str = ""
    broken_links: list[str] = field(default_factory=list)


def _link_target(page: Path, href: str) -> Path | None:
    """The file a relative or file:// link points to (None for an in-page anchor)."""
    url = urlparse(href)
    if url.scheme == "file":
        return Path(unquote(url.path))
    if url.scheme or href.startswith("#"):
        return None
    return (page.parent / unquote(url.path)).resolve()


def inspect(browser, path: Path, screens: Path | None = None) -> PageReport:
    """Load ``path`` and record errors, remote requests, banner, tables, links, height."""
    report = PageReport(path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on(
        "console",
        lambda m: report.console_errors.append(m.text) if m.type == "error" else None,
    )
    page.on("pageerror", lambda e: report.console_errors.append(str(e)))

    def request(r) -> None:
        if not r.url.startswith(("file:", "data:", "about:", "blob:")):
            report.remote_requests.append(r.url)

    page.on("request", request)
    page.goto(path.resolve().as_uri())
    page.wait_for_load_state("load")
    report.title = page.title()
    report.height = int(page.evaluate("document.documentElement.scrollHeight"))
    report.page_width = int(page.evaluate("document.documentElement.scrollWidth"))
    report.widest = page.evaluate(
        """() => { let w = null, r = 0;
             for (const e of document.body.querySelectorAll('*')) {
               const right = e.getBoundingClientRect().right;
               if (right > r) { r = right; w = e; } }
             return w ? `${w.tagName}.${w.className} (right edge ${Math.round(r)} px)` : ''; }"""
    )
    banner = page.query_selector(".jp-sim-banner")
    if banner is not None:
        box = banner.bounding_box()
        report.banner_top = None if box is None else box["y"]
    report.tallest_flat_table = float(
        page.evaluate(
            """() => Math.max(0, ...Array.from(document.querySelectorAll('table'))
                 .filter(t => !t.closest('.jp-long'))
                 .map(t => t.getBoundingClientRect().height))"""
        )
    )
    for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))"):
        target = _link_target(path, href)
        if href.startswith("#") and len(href) > 1:
            found = "ids => ids.some(id => document.getElementById(id) !== null)"
            if not page.evaluate(found, [href[1:], unquote(href[1:])]):
                report.broken_links.append(href)
        elif target is not None and not target.exists():
            report.broken_links.append(href)
    if screens is not None:
        screens.mkdir(parents=True, exist_ok=True)
        name = f"{path.parent.name}_{path.stem}.png"
        page.screenshot(path=str(screens / name))
    page.close()
    return report


def filters_on_typing(browser, path: Path, text: str) -> tuple[int, int]:
    """Visible rows of the first paged table before and after typing ``text`` in its box."""
    page = browser.new_page()
    page.goto(path.resolve().as_uri())
    count = "() => document.querySelector('.jp-count').textContent"
    before = page.evaluate(count)
    page.fill(".jp-table-tools input", text)
    after = page.evaluate(count)
    page.close()
    return int(before.split()[0]), int(after.split()[0])


def pages_of(outputs: Path) -> list[Path]:
    """The index, every notebook page and every explorer of a report folder."""
    found = [outputs / "index.html"]
    found += sorted(p for p in outputs.glob("*/*.html") if p.parent.name != "_screens")
    return [p for p in found if p.exists()]


def main(argv: list[str]) -> int:
    """Screenshot every page of a report into ``<outputs>/_screens`` and print its height."""
    from playwright.sync_api import sync_playwright

    outputs = Path(argv[0] if argv else "outputs")
    exe = chromium()
    if exe is None:
        print(f"Chromium not found; install it with: {INSTALL_HINT}", file=sys.stderr)
        return 1
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        for path in pages_of(outputs):
            r = inspect(browser, path, outputs / "_screens")
            print(f"{r.height:>7} px  {path.relative_to(outputs)}  {r.title}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
