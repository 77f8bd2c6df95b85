"""The pre-registered temperature rule: its file, its grid plan and its verdicts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from judgepanel.claims.rows import NOT_TESTED
from judgepanel.claims.wording import BEATS, FALLS_BELOW, NO_DIFFERENCE, NO_LOSS
from judgepanel.core.config import DatasetRef, ScoringDesign
from judgepanel.core.paths import project_root
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.core.settings import ScoreSettings
from judgepanel.datasets import load_dataset
from judgepanel.studies.fusion import temperature as tr
from judgepanel.studies.fusion.plan import plan_dataset

RULE = project_root() / "rubric" / "prereg" / "temperature_rule.yaml"


def test_the_shipped_rule_loads_with_its_design():
    rule = tr.load_rule(RULE)
    assert rule.grid() == (0.0, 0.3, 1.0)
    assert (rule.exploratory, rule.confirmatory) == ("eva", "para")
    assert rule.family_of(["x", "y"]) == "x" and len(rule.sha256) == 64
    assert set(rule.claims) == {"tolerates_high", "inverted_beats_differentiated"}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("confirmatory"), "missing field 'confirmatory'"),
        (lambda d: d["temperatures"].pop("high"), r"temperatures lacks \['high'\]"),
        (lambda d: d["temperatures"].update(low=0.5), "low < base < high"),
        (lambda d: d["claims"].pop("tolerates_high"), "claims lacks 'tolerates_high'"),
    ],
)
def test_a_broken_rule_names_the_file_and_the_field(tmp_path, edit, message):
    data = yaml.safe_load(RULE.read_text())
    edit(data)
    path = tmp_path / "rule.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(tr.RuleError, match=message) as info:
        tr.load_rule(path)
    assert str(path) in str(info.value)
    with pytest.raises(tr.RuleError, match="cannot read"):
        tr.load_rule(tmp_path / "absent.yaml")


def test_the_grid_is_planned_for_the_rules_family_once_per_key(small_project):
    config = small_project.config
    profile = config.profile("test")
    rule = tr.load_rule(RULE)
    design = config.design("para")
    target = DatasetRef("para", "para", profile.dataset("para").root)
    settings = ScoreSettings(
        targets=(target,),
        families=dict(profile.families),
        store=small_project.store,
        prices={},
        parameters={"temperature_rule": str(RULE)},
        designs={"para": design},
        predeclared=tuple(profile.predeclared),
    )
    specs = plan_dataset(target, settings)
    base = plan_dataset(target, ScoreSettings(**{**settings.__dict__, "parameters": {}}))
    keys = [s.key for s in specs]
    assert len(keys) == len(set(keys))  # the base temperature's keys are not planned twice
    extra = specs[len(base) :]
    n_images = min(rule.n_images, 40)  # the small world has 40 images
    # low and high in full; at the base temperature only repetitions the design lacks
    at_base = max(0, rule.dimension_r - design.dimension_r)
    assert design.temperature == rule.temperatures["base"]
    assert len(extra) == len(DIMENSIONS) * n_images * (2 * rule.dimension_r + at_base)
    assert {s.key.family for s in extra} == {profile.predeclared[0]}
    assert {s.key.temperature for s in extra} == ({0.0, 0.3, 1.0} if at_base else {0.0, 1.0})
    eva = DatasetRef("eva-other", "eva", profile.dataset("eva").root)
    other = ScoreSettings(**{**settings.__dict__, "designs": {"eva-other": design}})
    assert len(plan_dataset(eva, other)) == len(
        plan_dataset(eva, ScoreSettings(**{**other.__dict__, "parameters": {}}))
    )  # fmt: skip  (not a dataset of the rule)


def _grid(n=300, seed=0):
    """Dimension means whose accuracy depends on temperature in a known way."""
    rng = np.random.default_rng(seed)
    y = pd.Series(rng.normal(size=n), index=[f"i{k:03d}" for k in range(n)])
    noise = {0.0: 0.3, 0.3: 0.3, 1.0: 3.0}  # high temperature drowns every dimension
    grid = {}
    for t, sd in noise.items():
        cols = {}
        for j, d in enumerate(DIMENSIONS):
            signal = y if j < 2 else 0.05 * y  # quality and composition are "confident"
            cols[d] = signal + rng.normal(scale=sd, size=n)
        grid[t] = pd.DataFrame(cols, index=y.index)
    return grid, y


def test_a_rule_fails_where_high_temperature_hurts():
    rule = tr.load_rule(RULE)
    rule = tr.TemperatureRule(**{**rule.__dict__, "n_resamples": 500})
    grid, y = _grid()
    res = tr.evaluate_rule(grid, y, rule, dataset="toy")
    dims = res.dimensions.set_index("dimension")
    assert dims.loc[["quality", "composition"], "confident"].all()
    assert not dims.loc[["colour", "distinctiveness", "emotion"], "confident"].any()
    assert (dims.loc[["quality", "composition"], "ci_high"] < 0).all()
    assert not res.tolerates_high
    claims = tr.rule_claims(res, rule, family="f", role="confirmatory")
    # one registered test per confident dimension, one-sided for a loss at 0.025, alone
    assert [c.scope.split("'s ")[1].split(" ")[0] for c in claims.dimensions] == [
        "quality", "composition"]  # fmt: skip
    for c in claims.dimensions:
        assert (c.kind, c.alternative, c.alpha, c.level, c.family) == (
            "difference", "less", 0.025, 0.95, "")  # fmt: skip
        assert c.verdict == FALLS_BELOW
    # the first claim is the count of losing dimensions, a row of its own
    assert claims.tolerates.kind == "count" and claims.tolerates.extra["n"] == 2
    assert claims.tolerates.verdict == "2 of 2 with q < 0.025"
    # inverted keeps the confident dimensions at low temperature: it must win clearly
    assert res.inverted_beats and claims.inverted.verdict == BEATS
    assert (claims.inverted.alternative, claims.inverted.family) == ("greater", "")
    table = tr.verdicts({"toy": claims}, {"toy": "confirmatory"}).set_index("registered_claim")
    assert table.loc["tolerates_high", "verdict"] == "2 of 2 with q < 0.025"
    assert table.loc["inverted_beats_differentiated", "claim"] == claims.inverted.id


def test_no_confident_dimension_makes_the_first_claim_untestable():
    rule = tr.load_rule(RULE)
    rule = tr.TemperatureRule(**{**rule.__dict__, "n_resamples": 200, "confident_rho": 0.99})
    grid, y = _grid(n=120, seed=1)
    res = tr.evaluate_rule(grid, y, rule, dataset="toy")
    claims = tr.rule_claims(res, rule, family="f", role="confirmatory")
    assert not claims.dimensions and not res.tolerates_high
    assert claims.tolerates.excluded.startswith("no dimension is confident on toy")
    assert claims.tolerates.verdict == NOT_TESTED and not claims.tolerates.family


def test_commit_time_and_first_grid_score(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    rule_file = repo / "rule.yaml"
    rule_file.write_text(RULE.read_text())
    assert tr.committed_at(rule_file) is None  # not a checkout
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "rule.yaml"], check=True)
    subprocess.run([*git, "commit", "-qm", "rule"], check=True)
    stamp = tr.committed_at(rule_file)
    assert stamp is not None and pd.Timestamp(stamp).year >= 2020
    rule = tr.load_rule(rule_file)
    calls = pd.DataFrame(
        {
            "dataset": ["eva", "para", "para", "eva"],
            "family": ["f", "f", "f", "g"],
            "kind": ["dimension"] * 4,
            "temperature": [0.3, 1.0, 0.0, 1.0],
            "created_at": ["2020-01-01", "2031-05-01", "2030-01-01", "2019-01-01"],
        }
    )
    assert tr.first_grid_score(calls, rule, "f") == "2030-01-01"
    assert tr.first_grid_score(calls.iloc[:1], rule, "f") is None


def test_grid_means_keep_only_complete_images(small_project):
    ds = load_dataset("eva", str(small_project.config.profile("test").dataset("eva").root))
    ids = ds.images["image_id"].astype(str).tolist()[:12]
    rows = [
        {"dataset": "eva", "item": i, "family": "f", "kind": "dimension", "dimension": d,
         "repetition": 0, "temperature": t, "rubric_sha": "r", "status": "ok", "value": 5.0}
        for i in ids for d in DIMENSIONS for t in (0.0, 0.3, 1.0)
    ]  # fmt: skip
    calls = pd.DataFrame(rows)
    calls = calls[~((calls["item"] == ids[0]) & (calls["temperature"] == 1.0))]
    grid = tr.grid_means(
        calls, "eva", family="f", temperatures=(0.0, 0.3, 1.0), rubric_sha="r", images=ids
    )
    assert all(len(t) == 11 and ids[0] not in t.index for t in grid.values())
    with pytest.raises(ValueError, match="score the temperature run first"):
        tr.grid_means(calls, "eva", family="g", temperatures=(0.0,), rubric_sha="r", images=ids)


def test_scored_dataset_is_the_base_of_the_subset():
    assert ScoringDesign(0, 3, 1.0).calls_per_image == 3 * len(DIMENSIONS)
    assert Path(RULE).parent.name == "prereg"


def test_a_met_non_rejection_criterion_is_no_loss_detected_never_no_worse():
    rule = tr.load_rule(RULE)
    rule = tr.TemperatureRule(**{**rule.__dict__, "n_resamples": 300})
    grid, y = _grid(seed=3)
    grid[max(grid)] = grid[min(grid)].copy()  # high temperature scores equal to low ones
    res = tr.evaluate_rule(grid, y, rule, dataset="toy")
    claims = tr.rule_claims(res, rule, family="f", role="confirmatory")
    assert res.tolerates_high
    # one-sided rows for a loss that find none, and a count of 0: never "no worse"
    assert {c.verdict for c in claims.dimensions} <= {NO_LOSS, NO_DIFFERENCE}
    assert claims.tolerates.verdict == "0 of 2 with q < 0.025"
    words = claims.tolerates.words()
    assert "no worse" not in words and "not worse" not in words
    assert "no loss was detected" in claims.tolerates.note
