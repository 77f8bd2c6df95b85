"""The posters world: a second study in the ``ratings`` format, its latents in the pixels.

Four properties on mixed scales, five raters per poster, no overall rating; the judges
see only the pixels, so each property must be readable from them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from judgepanel.datasets import load_ratings
from judgepanel_sim.world.posters import SCALES, draw, write_posters


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    out = tmp_path_factory.mktemp("posters")
    folder = write_posters(out, n_images=40, seed=5)
    truth = pd.read_csv(out / "truth" / "synth-posters-latents.csv").set_index("image_id")
    return folder, truth


def test_the_world_loads_as_a_study_without_an_overall_rating(world) -> None:
    folder, truth = world
    ds = load_ratings(folder)
    assert len(ds) == 40 and not ds.has_overall
    assert ds.attribute_ranges == {k: (float(lo), float(hi)) for k, (lo, hi) in SCALES.items()}
    assert {a.dimension for a in ds.attributes.values()} == set(SCALES)
    assert (ds.images["n_raters"] == 5).all() and ds.ratings["rater_id"].nunique() <= 25
    for name, (low, high) in SCALES.items():
        values = ds.ratings[name]
        assert values.between(low, high).all() and (values == values.round()).all()
        rho = spearmanr(ds.images[name], truth.loc[ds.images["image_id"], name])[0]
        assert rho > 0.8, (name, rho)  # people see the latent through their noise


def test_the_latents_are_in_the_pixels() -> None:
    rng = np.random.default_rng(0)
    levels = np.linspace(0, 1, 12)

    def mirror(a: np.ndarray) -> float:
        y = a.mean(axis=2)
        y = y - y.mean(axis=1, keepdims=True)
        return float((y * y[:, ::-1]).sum() / (y * y).sum())

    measured = {
        "brightness": [draw(0.5, 0.5, v, 0.5, int(rng.integers(1e9))).mean() for v in levels],
        "symmetry": [mirror(draw(v, 0.5, 0.5, 0.5, int(rng.integers(1e9)))) for v in levels],
    }
    for name, values in measured.items():
        assert spearmanr(levels, values)[0] > 0.9, name


def test_the_same_seed_writes_the_same_world(world, tmp_path) -> None:
    folder, _ = world
    again = write_posters(tmp_path, n_images=40, seed=5)

    def digest(root: Path) -> str:
        files = sorted(p for p in root.rglob("*") if p.is_file())
        return hashlib.sha256(b"".join(p.read_bytes() for p in files)).hexdigest()

    assert digest(folder) == digest(again)


def test_the_world_card_says_how_the_judges_answer_each_posters_dimension() -> None:
    """The card's section on any other rubric is what the simulator says of itself."""
    from judgepanel.core.paths import project_root
    from judgepanel.core.rubric import load_rubric
    from judgepanel_sim.judges.anyrubric import describe_dimension
    from judgepanel_sim.judges.latents import latents_table

    card = (project_root() / "data" / "world_card.md").read_text(encoding="utf-8")
    assert latents_table() in card
    rubric = load_rubric(project_root() / "rubric" / "posters.yaml")
    for dim in rubric.dimensions.values():
        said = describe_dimension(dim.title, dim.asks)
        assert f"- {said}" in card and "latent cue" in said, said
