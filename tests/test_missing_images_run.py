"""A run whose dataset lacks some images: ``--missing-images`` and ``missing_images:``.

A small EVA-format world with two of its six images deleted: by default (``error``) the
command stops with one line naming a missing image and the count; with ``skip`` the four
images present are scored and the two absent are listed in the run's provenance. The runs
file's key sets the policy, the flag overrides it, and a bad value names file and key.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from test_scoring_cli import jp_inline, write_eva, write_runs_file

from judgepanel.cli import build_parser
from judgepanel.cli.report import report_request
from judgepanel.core.config import load_config
from judgepanel.core.errors import ConfigError
from judgepanel.core.preflight import check_dataset
from judgepanel.core.store import Store
from judgepanel.datasets import DatasetError
from judgepanel.report.execute import rubric_runs_file
from judgepanel.report.page import _ENV
from judgepanel.report.provenance import provenance
from judgepanel.report.study import STUDY_PROFILE, StudyRequest, prepare_study
from judgepanel.studies.fusion.deploy.plan import resolve_source

NOWHERE = "http://127.0.0.1:9/v1"
"""Nothing listens here: a call sent by mistake fails."""
ABSENT = ("1001", "1003")
"""The images deleted from the world."""
PRESENT = ("1000", "1002", "1004", "1005")


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """Six EVA images rated, two of them deleted from disk."""
    root = write_eva(tmp_path / "eva", n_images=6)
    for image_id in ABSENT:
        (root / "EVA_together" / f"{image_id}.jpg").unlink()
    return root


def runs_file(tmp_path: Path, root: Path, policy: object = None) -> Path:
    """The scoring tests' runs file over ``root``, every image in the design, and the eva
    entry's ``missing_images`` set to ``policy`` (None: left out)."""
    path = write_runs_file(tmp_path, root)
    runs = yaml.safe_load(path.read_text(encoding="utf-8"))
    del runs["scoring"]["eva"]["n_images"]
    if policy is not None:
        runs["profiles"]["t"]["datasets"]["eva"]["missing_images"] = policy
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    return path


def score(monkeypatch: pytest.MonkeyPatch, url: str, runs: Path, *flags: str) -> int:
    return jp_inline(monkeypatch, url, "score", "--run", "t-eva", "--runs-file", str(runs), *flags)


def test_by_default_the_run_fails_naming_a_missing_image_and_the_count(
    tmp_path, world, monkeypatch, capsys
):
    runs = runs_file(tmp_path, world)
    for flags in ((), ("--dry-run",), ("--missing-images", "error")):
        assert score(monkeypatch, NOWHERE, runs, *flags) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert "2 of 6 rated image(s) are missing on disk" in err
        assert "first: 1001, 1003" in err and "--missing-images skip" in err


@pytest.mark.timeout(240)
def test_skip_scores_the_images_present_and_lists_the_rest(
    sim_server, tmp_path, world, monkeypatch, capsys
):
    runs = runs_file(tmp_path, world)
    flags = ("--missing-images", "skip", "--no-progress")
    code = score(monkeypatch, sim_server.base_url, runs, *flags)
    out = capsys.readouterr().out
    assert code == 0
    assert "eva: 2 image(s) absent from disk left out (missing_images: skip): 1001, 1003" in out
    assert "56 calls planned" in out  # 4 images x 2 families x (2 holistic + 5 dimensions)
    with Store(tmp_path / "store.sqlite", readonly=True) as store:
        items = set(store.frame(dataset="eva")["item"])
    assert items == set(PRESENT)


def test_the_runs_file_key_sets_the_policy_and_the_flag_overrides_it(
    tmp_path, world, monkeypatch, capsys
):
    runs = runs_file(tmp_path, world, "skip")
    assert load_config(runs).profile("t").dataset("eva").missing_images == "skip"
    assert score(monkeypatch, NOWHERE, runs, "--dry-run") == 0
    assert "56 calls planned" in capsys.readouterr().out
    assert score(monkeypatch, NOWHERE, runs, "--dry-run", "--missing-images", "error") == 1
    assert "2 of 6 rated image(s) are missing on disk" in capsys.readouterr().err
    # a whole world needs neither
    whole = runs_file(tmp_path / "whole", write_eva(tmp_path / "whole" / "eva", n_images=6))
    assert score(monkeypatch, NOWHERE, whole, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "84 calls planned" in out and "absent from disk" not in out


def test_a_bad_value_names_the_file_and_the_key(tmp_path, world, monkeypatch, capsys):
    runs = runs_file(tmp_path, world, "sometimes")
    with pytest.raises(ConfigError) as info:
        load_config(runs)
    message = str(info.value)
    assert len(message.splitlines()) == 1
    assert f"{runs}:" in message and "profiles.t.datasets.eva.missing_images:" in message
    assert "'error' or 'skip'" in message
    assert score(monkeypatch, NOWHERE, runs, "--dry-run") == 1
    assert "profiles.t.datasets.eva.missing_images" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:  # the flag's value is checked by the parser
        score(monkeypatch, NOWHERE, runs_file(tmp_path, world), "--missing-images", "keep")
    assert stop.value.code == 2
    assert "invalid choice: 'keep'" in capsys.readouterr().err


def test_the_provenance_lists_the_skipped_images_only_under_skip(tmp_path, world):
    config = load_config(runs_file(tmp_path, world, "skip"))
    record = provenance(config, config.run("t-eva"), tmp_path)
    assert record["missing_images"] == {"eva": "skip"}
    assert record["skipped_images"] == {"eva": list(ABSENT)}
    assert record["n_skipped"] == {"eva": 2}
    box = _box(record)
    assert "<dt>skipped images</dt>" in box and "eva 2 absent from disk left out" in box
    plain = load_config(runs_file(tmp_path, world))
    record = provenance(plain, plain.run("t-eva"), tmp_path)
    assert not {"missing_images", "skipped_images", "n_skipped"} & set(record)
    assert "skipped images" not in _box(record)  # a page without skips reads as before


def _box(record: dict) -> str:
    """The page's provenance box of ``record``."""
    return _ENV.from_string("{% from '_provenance.html.j2' import box %}{{ box(p) }}").render(
        p=record
    )


def test_the_report_flag_rewrites_every_rated_entry(tmp_path, world):
    args = build_parser().parse_args(["report", "--profile", "t", "--missing-images", "skip"])
    assert report_request(args).missing_images == "skip"
    assert report_request(build_parser().parse_args(["report"])).missing_images is None
    config = load_config(runs_file(tmp_path, world))
    copy = load_config(rubric_runs_file(config, tmp_path / "out", None, "skip"))
    assert copy.profile("t").dataset("eva").missing_images == "skip"
    assert copy.run("t-eva").rubric is None  # no --rubric: the runs' own stay


def test_predict_and_check_read_the_dataset_under_the_policy(world):
    model = SimpleNamespace(meta={"training": {}})
    with pytest.raises(DatasetError, match=r"2 of 6 rated image\(s\) are missing on disk"):
        resolve_source(model, f"eva:{world}")
    source = resolve_source(model, f"eva:{world}", missing_images="skip")
    assert tuple(source.images["image_id"]) == PRESENT and source.skipped == ABSENT
    ref = load_config(runs_file(world.parent, world, "skip")).profile("t").dataset("eva")
    found = check_dataset(ref)
    assert found.ok and "2 absent from disk left out" in found.detail
    assert not check_dataset(ref.with_missing_images("error")).ok


def test_a_study_report_reads_its_dataset_under_the_flag(tmp_path, world):
    config = load_config(runs_file(tmp_path, world))
    request = StudyRequest(kind="eva", root=world, outputs=tmp_path / "study", profile="t")
    with pytest.raises(DatasetError, match=r"2 of 6 rated image\(s\) are missing on disk"):
        prepare_study(config, request, echo=lambda _: None)
    skip = dataclasses.replace(request, missing_images="skip")
    prepared = prepare_study(config, skip, echo=lambda _: None)
    (ref,) = load_config(prepared.runs_file).profile(STUDY_PROFILE).datasets.values()
    assert ref.missing_images == "skip"
