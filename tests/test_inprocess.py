"""The in-process judges answer exactly as the simulated server does, call for call."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgepanel.core.client import run_calls
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel_sim.judges.families import FAMILIES, SHARED_ERROR
from judgepanel_sim.judges.inprocess import answer_text, families_with, score_specs
from judgepanel_sim.world.aesthetic import knob_table, picture, sample_latents
from judgepanel_sim.world.render import render, to_jpeg

FAMS = {"aurora": "sim-aurora-v1", "ember": "sim-ember-v1"}
PRICES = {m: Price(0.1, 0.1) for m in FAMS.values()}


def world_images(folder: Path, n: int) -> pd.DataFrame:
    """``n`` pictures of the EVA-like world, written as the world writes them."""
    rng = np.random.default_rng(11)
    latents = sample_latents(n, rng)
    knobs = knob_table(latents, rng)
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(n):
        scene, execution = picture(latents["content"][i], knobs.iloc[i])
        img = render(scene, replace(execution, jpeg_quality=100))
        path = folder / f"{i}.jpg"
        path.write_bytes(to_jpeg(img, execution.jpeg_quality))
        rows.append({"image_id": str(i), "path": str(path)})
    return pd.DataFrame(rows)


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    return "sim-local"


def test_in_process_scores_equal_the_servers(sim_server, tmp_path: Path, api_key: str):
    images = world_images(tmp_path / "img", 3)
    design = ScoringDesign(holistic_k=3, dimension_r=1, temperature=0.3)
    specs = plan_images(images, FAMS, design, dataset="eva")
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=PRICES,
            options=ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False),
        )
        served = store.frame()
    assert summary.ok == len(specs) == 3 * 2 * (3 + 5)
    local = score_specs(specs)
    keys = ["item", "family", "kind", "dimension", "repetition"]
    both = served.merge(local, on=keys, suffixes=("_server", "_local"))
    assert len(both) == len(specs)
    assert both["value_local"].notna().all()
    assert (both["value_server"] == both["value_local"]).all()
    # the answers vary (so equality is not a constant agreeing with a constant)
    assert both["value_local"].nunique() > 3
    # the answer text itself is the server's, reason included
    first = served.sort_values(keys).iloc[0]
    spec = next(
        s
        for s in specs
        if s.key.item == first["item"]
        and s.key.call_type == first["kind"]
        and s.key.family == first["family"]
        and s.key.repetition == first["repetition"]
        and s.key.dimension == first["dimension"]
    )
    assert answer_text(spec) == first["answer"]


def test_shared_error_knob_changes_only_the_copies(tmp_path: Path):
    images = world_images(tmp_path / "img", 2)
    design = ScoringDesign(holistic_k=4, dimension_r=1, temperature=0.3)
    specs = plan_images(images, FAMS, design, dataset="eva")
    default = score_specs(specs)
    same = score_specs(specs, shared_error=SHARED_ERROR)
    other = score_specs(specs, shared_error=0.95)
    assert (default["value"] == same["value"]).all()
    assert (default["value"] != other["value"]).any()
    assert FAMILIES["aurora"].shared_error == SHARED_ERROR  # the server's families untouched
    assert families_with(0.95)["sim-aurora-v1"].shared_error == 0.95


def test_shared_error_sets_the_families_error_correlation():
    digests = [f"{i:032x}" for i in range(3000)]

    def corr(share: float) -> float:
        a = replace(FAMILIES["aurora"], shared_error=share)
        b = replace(FAMILIES["basalt"], shared_error=share)
        ea = [a.systematic_error(d, "quality") for d in digests]
        eb = [b.systematic_error(d, "quality") for d in digests]
        return float(np.corrcoef(ea, eb)[0, 1])

    assert corr(SHARED_ERROR) == pytest.approx(SHARED_ERROR, abs=0.05)
    assert corr(0.8) == pytest.approx(0.8, abs=0.04)
    assert corr(0.0) == pytest.approx(0.0, abs=0.05)
