"""The report's table manifest and `judgepanel verify` (on small report folders)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgepanel.cli import main
from judgepanel.report.manifest import (
    MANIFEST_NAME,
    publish_reference,
    read_manifest,
    table_digest,
    verify,
    write_manifest,
    write_table,
)


def _report(root: Path, rho: float = 0.71234567, elapsed: float = 3.2) -> Path:
    tables = root / "demo-eva" / "tables"
    tables.mkdir(parents=True)
    write_table(
        pd.DataFrame({"arm": ["verdicts", "dimensions"], "rho": [rho, 0.5], "n": [500, 500]}),
        tables / "ablation.csv",
    )
    write_table(
        pd.DataFrame({"planned": [10], "sent": [4], "skipped": [6], "elapsed": [elapsed]}),
        tables / "scoring_run.csv",
    )
    interactive = root / "interactive" / "demo-eva" / "tables"
    interactive.mkdir(parents=True)
    write_table(pd.DataFrame({"x": [1.0]}), interactive / "ablation.csv")
    write_manifest(root, "quick")
    return root


def test_floats_are_written_to_six_significant_digits(tmp_path):
    path = tmp_path / "t.csv"
    write_table(pd.DataFrame({"a": [1 / 3, 12345.678901, 1e-7 / 3], "n": [1, 2, 3]}), path)
    assert path.read_text().splitlines() == ["a,n", "0.333333,1", "12345.7,2", "3.33333e-08,3"]


def test_a_last_bit_difference_does_not_reach_the_table(tmp_path):
    x = 0.1 + 0.2
    y = np.nextafter(x, 1.0)
    write_table(pd.DataFrame({"v": [x]}), tmp_path / "a.csv")
    write_table(pd.DataFrame({"v": [y]}), tmp_path / "b.csv")
    assert table_digest(tmp_path / "a.csv") == table_digest(tmp_path / "b.csv")


def test_manifest_lists_report_tables_but_not_interactive_ones(tmp_path):
    manifest = read_manifest(_report(tmp_path) / MANIFEST_NAME)
    assert manifest.size == "quick"
    assert sorted(manifest.digests) == [
        "demo-eva/tables/ablation.csv",
        "demo-eva/tables/scoring_run.csv",
    ]


def test_run_measures_stay_out_of_the_digest(tmp_path):
    one = _report(tmp_path / "one", elapsed=3.2)
    two = _report(tmp_path / "two", elapsed=99.0)
    assert verify(two, reference=publish_reference(one, root=tmp_path / "repo")) == []


def test_verify_names_the_table_and_its_first_differing_cell(tmp_path, capsys):
    reference = publish_reference(_report(tmp_path / "ref"), root=tmp_path / "repo")
    other = _report(tmp_path / "other", rho=0.7124)
    problems = verify(other, reference=reference)
    assert problems == [
        "demo-eva/tables/ablation.csv: differs; row 1 (arm = verdicts), column rho: "
        "'0.7124', expected '0.712346'"
    ]
    assert main(["verify", str(other), "--reference", str(reference)]) == 1
    out = capsys.readouterr()
    assert "ablation.csv: differs" in out.out and "1 tables differ" in out.err
    assert main(["verify", str(tmp_path / "ref"), "--reference", str(reference)]) == 0


def test_verify_reports_missing_and_extra_tables_and_a_kind_mismatch(tmp_path):
    reference = publish_reference(_report(tmp_path / "ref"), root=tmp_path / "repo")
    other = _report(tmp_path / "other")
    (other / "demo-eva" / "tables" / "ablation.csv").rename(
        other / "demo-eva" / "tables" / "renamed.csv"
    )
    write_manifest(other, "quick")
    assert verify(other, reference=reference) == [
        "demo-eva/tables/ablation.csv: missing from " + str(other),
        "demo-eva/tables/renamed.csv: not in the committed quick manifest",
    ]
    write_manifest(other, "full")
    assert "is the quick one" in verify(other, reference=reference)[0]


def test_a_malformed_manifest_names_its_line(tmp_path):
    bad = tmp_path / MANIFEST_NAME
    bad.write_text("# kind: full\nnot-a-digest  x.csv\n")
    with pytest.raises(ValueError, match=r"MANIFEST.sha256:2"):
        read_manifest(bad)
    assert main(["verify", str(tmp_path / "nothing")]) == 1


def test_another_studys_report_has_its_own_reference(tmp_path):
    """A second profile's report names its profile, is published to a reference of its
    own, and is not checked against the demo's."""
    root = tmp_path / "project"
    demo = _report(tmp_path / "demo")
    study = tmp_path / "posters"
    tables = study / "posters-study" / "tables"
    tables.mkdir(parents=True)
    write_table(pd.DataFrame({"dimension": ["symmetry"], "rho": [0.61]}), tables / "cells.csv")
    write_manifest(study, "quick", "posters")
    assert read_manifest(study / MANIFEST_NAME).profile == "posters"
    assert read_manifest(demo / MANIFEST_NAME).profile == "demo"
    assert "# profile:" not in (demo / MANIFEST_NAME).read_text()  # the demo's is as before
    assert publish_reference(study, root) == root / "tests" / "reference" / "posters-quick"
    assert publish_reference(demo, root) == root / "tests" / "reference" / "demo-quick"
    assert verify(study, root / "tests" / "reference" / "posters-quick") == []
    assert verify(study, root / "tests" / "reference" / "demo-quick") == [
        f"{study} holds the report of profile 'posters'; "
        f"{root / 'tests' / 'reference' / 'demo-quick'} is of profile 'demo'"
    ]


def test_the_index_links_the_reports_of_other_profiles(tmp_path):
    from test_report import runs_file

    from judgepanel.core.config import load_config
    from judgepanel.report.index import other_studies

    config = load_config(runs_file(tmp_path, tmp_path / "eva"))
    outputs = tmp_path / "outputs"
    study = outputs / "second"
    (study / "r" / "tables").mkdir(parents=True)
    write_table(pd.DataFrame({"x": [1]}), study / "r" / "tables" / "t.csv")
    write_manifest(study, "quick", next(iter(config.profiles)))
    assert other_studies(outputs, config) == []  # no page yet: nothing to link
    (study / "index.html").write_text("<html></html>")
    (outputs / "half").mkdir()  # a folder without a manifest is no report
    (outputs / "half" / "index.html").write_text("<html></html>")
    found = other_studies(outputs, config)
    assert [s["href"] for s in found] == ["second/index.html"]
    assert found[0]["description"] == config.profile(found[0]["profile"]).description


def test_a_table_without_columns_is_listed_not_a_crash(tmp_path):
    """A notebook that failed after writing an empty frame leaves a CSV with no columns;
    the manifest lists it (its digest differs from any real table's) instead of stopping
    the report before it says which notebook failed."""
    root = _report(tmp_path)
    write_table(pd.DataFrame(), root / "demo-eva" / "tables" / "empty.csv")
    write_manifest(root, "quick")
    digests = read_manifest(root / MANIFEST_NAME).digests
    assert "demo-eva/tables/empty.csv" in digests
    assert digests["demo-eva/tables/empty.csv"] != digests["demo-eva/tables/ablation.csv"]
