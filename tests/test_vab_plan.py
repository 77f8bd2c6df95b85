"""The VAB plan: what score-then-rank reads, and nothing else, scored by the real simulator."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgepanel.core.endpoint import Endpoint
from judgepanel.core.frames import read_calls, score_table
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.core.rubric import load_rubric
from judgepanel.core.scoring import plan_target, score_settings
from judgepanel.core.settings import ScoreRequest, resolve_settings
from judgepanel.datasets import load_vab
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel.studies.vab import FUSED, PANEL, panel_families, ranker_name, score_then_rank
from judgepanel.studies.vab.plan import plan_dataset
from judgepanel_sim.world.vab import LATENTS_FILE, write_vab

FAMILIES = {"aurora": "sim-aurora-v1", "basalt": "sim-basalt-v1", "dune": "sim-dune-v1"}


def _project(tmp_path: Path, predeclared: list[str]) -> Path:
    """A small VAB world and a runs file whose profile scores it (k=1, R=1)."""
    write_vab(tmp_path / "synth-vab", seed=3, n_tasks=10)
    runs = {
        "profiles": {
            "t": {
                "description": "test", "simulated": True, "store": str(tmp_path / "s.sqlite"),
                "datasets": {"vab": {"kind": "vab", "root": str(tmp_path / "synth-vab")}},
                "families": FAMILIES, "predeclared": predeclared, "concurrency": 8,
            }
        },
        "scoring": {"vab": {"holistic_k": 1, "dimension_r": 1, "temperature": 0.3}},
        "prices": {m: {"input": 0.1, "output": 0.1} for m in FAMILIES.values()},
        "parameters": {"seed": 0, "vab_balanced": False},
        "runs": {"t-vab": {"profile": "t", "dataset": "vab", "notebooks": ["05_vab"]}},
    }  # fmt: skip
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump(runs))
    return path


def _rubric_families(specs) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for s in specs:
        if s.key.call_type in ("holistic", "dimension"):
            out.setdefault(s.key.call_type, set()).add(s.key.family)
    return out


def test_panel_is_the_predeclared_families_or_all():
    assert panel_families(["a", "b", "c"], ["c", "a"]) == ["c", "a"]
    assert panel_families(["a", "b"], ["x"]) == ["a", "b"]
    assert panel_families(["a", "b"], []) == ["a", "b"]


def test_plan_scores_dimensions_for_the_panel_only(tmp_path):
    runs = _project(tmp_path, ["aurora", "basalt"])
    settings = resolve_settings(ScoreRequest(run="t-vab", runs_file=runs))
    specs = plan_dataset(settings.targets[0], settings)
    n_images = int(load_vab(tmp_path / "synth-vab")["n_images"].sum())
    assert _rubric_families(specs) == {
        "holistic": set(FAMILIES),
        "dimension": {"aurora", "basalt"},
    }
    kinds = Counter(s.key.call_type for s in specs)
    assert kinds["holistic"] == n_images * len(FAMILIES)
    assert kinds["dimension"] == n_images * 2 * len(DIMENSIONS)
    # Image-major: every rubric call of an image comes before the next image's.
    items = [s.key.item for s in specs if s.key.call_type in ("holistic", "dimension")]
    assert items == sorted(items, key=items.index)
    assert len(set(items)) == n_images


def test_plan_without_a_predeclared_family_scores_every_family(tmp_path):
    runs = _project(tmp_path, ["aurora"])
    settings = resolve_settings(ScoreRequest(run="t-vab", runs_file=runs))
    settings = type(settings)(**{**settings.__dict__, "predeclared": ()})
    specs = plan_dataset(settings.targets[0], settings)
    assert _rubric_families(specs)["dimension"] == set(FAMILIES)


def test_only_names_planned_kinds_and_families():
    from judgepanel.core.config import ScoringDesign

    images = pd.DataFrame({"image_id": ["a"], "path": ["a.jpg"]})
    design = ScoringDesign(holistic_k=1, dimension_r=1, temperature=0.3)
    with pytest.raises(ValueError, match="not planned"):
        plan_images(images, {"f": "m"}, design, dataset="d", only={"sham": ["f"]})
    with pytest.raises(ValueError, match=r"families not planned for 'dimension': \['g'\]"):
        plan_images(images, {"f": "m"}, design, dataset="d", only={"dimension": ["g"]})


def test_score_then_rank_finds_every_score_it_reads(tmp_path, sim_server, monkeypatch):
    """Score the plan against the simulator, then rank as notebook 05 does: every family's
    ranker, the panel mean and the fused panel find all their scores."""
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    runs = _project(tmp_path, ["aurora", "basalt"])
    send = {"endpoint": Endpoint.at(sim_server.base_url), "progress": False}
    settings = resolve_settings(ScoreRequest(run="t-vab", runs_file=runs, options=send))
    summary = score_settings(settings, echo=False)
    assert summary.failed == 0 and summary.sent == len(plan_target(settings.targets[0], settings))
    tasks = load_vab(tmp_path / "synth-vab")
    calls = read_calls(settings.store, "vab")
    assert not ((calls["kind"] == "dimension") & (calls["family"] == "dune")).any()
    fams = list(FAMILIES)
    panel = panel_families(fams, settings.predeclared)
    scores = score_table(calls, "vab", families=fams, rubric_sha=load_rubric().sha256)
    # The fused panel trains here on the set images' latent quality (a stand-in for a
    # rated world): what matters is that every feature it reads is in the store.
    truth = pd.read_csv(tmp_path / "truth" / LATENTS_FILE)
    target = pd.Series(truth["quality"].to_numpy(), index=truth["task_id"] + "/" + truth["label"])
    ranked = score_then_rank(
        scores, tasks, families=fams, panel=panel, train_scores=scores, train_target=target
    )
    assert ranked.rankers == (*[ranker_name(f) for f in fams], PANEL, FUSED)
    assert ranked.fused is not None and ranked.fused.n_train == len(target)
    assert (ranked.ties["n_tasks"] == len(tasks)).all()
    assert (ranked.ties["n_failed"] == 0).all()


def test_a_plan_given_is_the_plan_scored(tmp_path, sim_server, monkeypatch):
    """``score_settings(plans=...)`` sends the plan it is given (00 plans once for scoring
    and coverage); a dataset it is not given is planned as before."""
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    runs = _project(tmp_path, ["aurora", "basalt"])
    send = {"endpoint": Endpoint.at(sim_server.base_url), "progress": False}
    settings = resolve_settings(ScoreRequest(run="t-vab", runs_file=runs, options=send))
    plan = plan_target(settings.targets[0], settings)
    given = score_settings(settings, echo=False, plans={"vab": plan[:5]})
    assert (given.planned, given.sent, given.failed) == (5, 5, 0)
    rest = score_settings(settings, echo=False, plans={"elsewhere": plan[:1]})
    assert (rest.planned, rest.skipped, rest.sent) == (len(plan), 5, len(plan) - 5)
