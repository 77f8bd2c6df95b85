"""JupyterLab in headless Chromium: open a notebook, Run All from the menu, no cell fails.

The server is the one `make lab` starts (the project root as its root, the project's
kernel); the notebook is 01 with only its run and runs file changed to the small project,
saved beside the interactive outputs, as a person would save an edited copy. The screenshot
of the finished notebook goes to ``outputs/_screens/``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from browse import CHROMIUM_FLAGS, INSTALL_HINT, chromium

from judgepanel.core.paths import project_root

# It writes under outputs/interactive/, as test_jupyterlab does: the same worker runs both.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.xdist_group("interactive-outputs"),
]

TOKEN = "judgepanel-lab-test"
NOTEBOOK = "01_mtmm_validity"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server at the project root, as `make lab` starts it; its base URL."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    settings = tmp_path_factory.mktemp("lab-settings")
    env.update(JUPYTER_CONFIG_DIR=str(settings / "config"), JUPYTERLAB_WORKSPACES_DIR=str(settings))
    jupyter = Path(sys.executable).with_name("jupyter")
    proc = subprocess.Popen(
        [
            str(jupyter),
            "lab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "-y",
            f"--ServerApp.root_dir={project_root()}",
            f"--IdentityProvider.token={TOKEN}",
            "--allow-root",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=5)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"JupyterLab did not start: {proc.stderr.read()[-2000:]}")
            time.sleep(0.5)
    yield base
    proc.terminate()
    proc.wait(timeout=30)


def test_run_all_in_jupyterlab_shows_no_error(lab, small_project):
    exe = chromium()
    if exe is None:
        message = f"BROWSER TESTS SKIPPED: Chromium not found; install it with: {INSTALL_HINT}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    folder = project_root() / "outputs" / "interactive" / "_lab"
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / f"{NOTEBOOK}.ipynb"
    nb = nbformat.read(project_root() / "notebooks" / f"{NOTEBOOK}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    nb_rest = cell.source.splitlines()[3:]
    cell.source = f'run = "test-eva"\nruns_file = "{small_project.runs_file}"\noverrides = {{}}'
    # the rest of the cell as committed: what only a report passes stays None
    cell.source += "\n" + "\n".join(nb_rest)
    nbformat.write(nb, copy)
    screens = project_root() / "outputs" / "_screens"
    screens.mkdir(parents=True, exist_ok=True)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        rel = copy.relative_to(project_root()).as_posix()
        page.goto(f"{lab}/lab/tree/{rel}?token={TOKEN}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        # The status bar names the kernel and says Idle once it is connected.
        page.get_by_text("judgepanel (Python 3.11) | Idle").wait_for(timeout=180_000)
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        # Save every few seconds until the saved file has every code cell executed (the
        # page itself keeps only the cells in view).
        deadline = time.monotonic() + 600
        while True:
            page.keyboard.press("Control+s")
            time.sleep(3)
            saved = nbformat.read(copy, as_version=4)
            code = [c for c in saved.cells if c.cell_type == "code"]
            failed = any(o.output_type == "error" for c in code for o in c.get("outputs", []))
            if failed or all(c.get("execution_count") for c in code):
                break
            assert time.monotonic() < deadline, "Run All did not finish within 10 minutes"
        page.screenshot(path=str(screens / f"lab-{NOTEBOOK}.png"), full_page=False)
        browser.close()
    errors = [
        o for c in saved.cells if c.cell_type == "code" for o in c.get("outputs", [])
        if o.output_type == "error"
    ]  # fmt: skip
    assert all(c.get("execution_count") for c in saved.cells if c.cell_type == "code")
    assert not errors, errors[0].get("evalue") if errors else ""
    assert (project_root() / "outputs" / "interactive" / "test-eva" / "tables").is_dir()
