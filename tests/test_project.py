"""Project-level promises: pins agree, the rubric is frozen, notebooks are committed clean."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import yaml

from judgepanel.core.config import load_config
from judgepanel.core.prompts import DIMENSIONS, sha256sums_text
from judgepanel.core.rubric import load_rubric

ROOT = Path(__file__).resolve().parents[1]


def _pins_from_pyproject() -> dict[str, str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = meta["dependencies"] + meta["optional-dependencies"]["dev"]
    return dict(d.split("==") for d in deps)


def test_every_dependency_is_pinned_exactly():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dep in meta["dependencies"] + meta["optional-dependencies"]["dev"]:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+==[0-9][0-9A-Za-z.]*", dep), dep


def test_environment_yml_mirrors_pyproject_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d for d in env["dependencies"] if isinstance(d, dict))["pip"]
    conda_pins = dict(d.split("==") for d in pip if "==" in d)
    assert conda_pins == _pins_from_pyproject()
    assert "python=3.11" in env["dependencies"]


def test_rubric_matches_committed_sha256sums():
    committed = (ROOT / "rubric" / "SHA256SUMS").read_text()
    assert sha256sums_text(ROOT / "rubric") == committed, "a rubric file changed: it is frozen"


def test_rubric_shape():
    rubric = load_rubric(str(ROOT / "rubric"))
    assert tuple(rubric.dimensions) == DIMENSIONS
    for dim in rubric.dimensions.values():
        assert [band for band, _ in dim.tiers] == ["9-10", "7-8", "5-6", "3-4", "1-2"]
        for _, criteria in dim.tiers:
            assert 3 <= len(criteria) <= 4
        system = rubric.dimension_messages(dim.key, "x")[0]["content"]
        assert system.startswith(dim.role)
        assert system.count(". ") + system.endswith(".") == 2  # two sentences
    assert len(rubric.holistic_text.splitlines()) == 5
    assert len(rubric.sha256) == 64


def test_prompt_hash_changes_with_prompt_and_not_with_image():
    rubric = load_rubric(str(ROOT / "rubric"))
    hashes = {rubric.prompt_hash("dimension", d) for d in DIMENSIONS}
    hashes.add(rubric.prompt_hash("holistic"))
    assert len(hashes) == 6


def test_runs_file_resolves():
    config = load_config(ROOT / "papermill_runs.yaml")
    demo = config.runs_of("demo")
    assert {r.name for r in demo} >= {"demo-eva", "demo-para", "demo-headroom"}
    for run in config.runs.values():
        for family, model in run.profile.families.items():
            assert config.price(model).input >= 0, family
        for nb in run.notebooks:
            assert (ROOT / "notebooks" / f"{nb}.ipynb").exists(), nb
    assert config.design("eva").calls_per_image == 25 + 5 * 3
    assert config.design("para").calls_per_image == 5 + 5 * 3


def test_notebooks_are_committed_without_outputs():
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    listed = {
        name
        for run in yaml.safe_load((ROOT / "papermill_runs.yaml").read_text())["runs"].values()
        for name in run["notebooks"]
    }
    assert {p.stem for p in notebooks} == listed  # every notebook runs, every run's exists
    for path in notebooks:
        nb = json.loads(path.read_text())
        tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: exactly one cell tagged parameters"
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs"), f"{path.name} has outputs"
                assert cell.get("execution_count") is None, f"{path.name} has execution counts"
