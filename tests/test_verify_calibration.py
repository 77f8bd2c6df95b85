"""``judgepanel verify`` of a report extended by ``make calibrate`` (issue 56).

``make calibrate`` reports profile ``calibration`` into the demo's output folder, so its
manifest names that profile, lists the demo's tables and adds notebook 08's; no reference
of that profile is committed. The test builds such a folder from the committed demo-quick
tables (``make calibrate`` takes nine minutes) and checks that verify passes on the demo's
tables, lists 08's as unchecked, still catches a changed demo table, and says in one line
what to do when no reference is committed at all.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from judgepanel.core.paths import project_root
from judgepanel.report.manifest import MANIFEST_NAME, read_manifest, write_manifest

DEMO = project_root() / "tests" / "reference" / "demo-quick"
CALIBRATION_TABLE = "calibration-eva/tables/table_calibration_recovery.csv"


def calibrated(tmp_path: Path) -> Path:
    """The demo's quick report with a calibration run added and the manifest rewritten as
    the calibration profile's report writes it."""
    outputs = tmp_path / "outputs"
    shutil.copytree(DEMO / "tables", outputs)
    table = outputs / CALIBRATION_TABLE
    table.parent.mkdir(parents=True)
    pd.DataFrame({"effect": ["planted"], "recovered": [0.93]}).to_csv(table, index=False)
    write_manifest(outputs, "quick", "calibration")
    assert read_manifest(outputs / MANIFEST_NAME).profile == "calibration"
    return outputs


def jp_verify(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgepanel.cli", "verify", *map(str, args)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_a_calibration_manifest_verifies_the_demo_tables(tmp_path: Path) -> None:
    outputs = calibrated(tmp_path)
    done = jp_verify(outputs)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout.splitlines()
    assert said[0].startswith(f"{outputs}: its manifest names profile 'calibration', which has")
    assert f"{CALIBRATION_TABLE}: of profile calibration, not checked (no reference)" in said
    assert f"every table of {outputs} matches the committed manifest" in said
    assert "Errno" not in done.stdout + done.stderr


@pytest.mark.slow
def test_a_changed_demo_table_still_fails_under_the_calibration_profile(tmp_path: Path) -> None:
    outputs = calibrated(tmp_path)
    rel = next(r for r in read_manifest(DEMO / MANIFEST_NAME).digests if r.endswith("cost.csv"))
    table = pd.read_csv(outputs / rel, dtype=str, keep_default_na=False)
    table.iloc[0, -1] = "12345"
    table.to_csv(outputs / rel, index=False)
    done = jp_verify(outputs)
    assert done.returncode == 1
    assert f"{rel}: differs; row 1" in done.stdout


def test_a_missing_reference_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    outputs = calibrated(tmp_path)
    nowhere = tmp_path / "reference"
    done = jp_verify(outputs, "--reference", nowhere)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"error: {nowhere / MANIFEST_NAME}: no committed reference")
    assert "--reference DIR" in done.stderr and "judgepanel verify --update" in done.stderr
    assert "Errno" not in done.stderr
