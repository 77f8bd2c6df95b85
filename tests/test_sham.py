"""The sham rubric: a pinned derangement, its own key, and the comparison it feeds."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from judgepanel.core.config import ScoringDesign
from judgepanel.core.paths import project_root
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.core.rubric import load_rubric
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel.studies.fusion.blocks import Blocks
from judgepanel.studies.fusion.sham import compare_sham, sham_means


def test_every_sham_prompt_carries_another_dimensions_criteria():
    rubric = load_rubric()
    assert sorted(rubric.sham.values()) == sorted(DIMENSIONS)
    for d in DIMENSIONS:
        real = rubric.messages("dimension", d, "<image>")
        fake = rubric.messages("sham", d, "<image>")
        other = rubric.dimensions[rubric.sham[d]]
        assert rubric.sham[d] != d
        assert real[0] == fake[0]  # the same role framing
        text = fake[1]["content"][0]["text"]
        assert other.tiers_text() in text and rubric.dimensions[d].tiers_text() not in text
        assert rubric.dimensions[d].title in text
    assert rubric.sham_sha256 != rubric.sha256
    assert (
        rubric.sha_of("sham") == rubric.sham_sha256 and rubric.sha_of("holistic") == rubric.sha256
    )


def test_a_sham_that_keeps_a_dimension_is_refused(tmp_path):
    root = tmp_path / "rubric"
    shutil.copytree(project_root() / "rubric", root)
    (root / "sham.yaml").write_text(
        "derangement: {quality: quality, composition: colour, colour: composition, "
        "distinctiveness: emotion, emotion: distinctiveness}\n"
    )
    with pytest.raises(ValueError, match=r"\['quality'\] keep their own criteria"):
        load_rubric(str(root))


def test_sham_calls_are_keyed_apart_from_the_real_ones(tmp_path):
    images = pd.DataFrame({"image_id": ["a", "b"], "path": [str(tmp_path / "a.jpg")] * 2})
    design = ScoringDesign(holistic_k=2, dimension_r=1, temperature=0.3, sham_r=2)
    real = plan_images(images, {"f": "m"}, design, dataset="eva")
    fake = plan_images(images, {"f": "m"}, design, dataset="eva", call_types=("sham",))
    assert len(real) == 2 * (2 + len(DIMENSIONS)) and len(fake) == 2 * 2 * len(DIMENSIONS)
    assert {s.key.call_type for s in fake} == {"sham"}
    assert {s.key.rubric_sha for s in fake} == {load_rubric().sham_sha256}
    assert not {s.key for s in real} & {s.key for s in fake}
    assert len({s.key.prompt_hash for s in fake}) == len(DIMENSIONS)


def _blocks_and_sham(n=200, seed=0, sham_signal=0.0):
    rng = np.random.default_rng(seed)
    idx = pd.Index([f"i{k:03d}" for k in range(n)], name="item")
    y = pd.Series(rng.normal(size=n), index=idx)
    fams = ["a", "b", "c"]
    H = pd.DataFrame({f: y + rng.normal(scale=2.0, size=n) for f in fams}, index=idx)
    P = pd.DataFrame(
        {f"{f}:{d}": y + rng.normal(scale=1.0, size=n) for f in fams for d in DIMENSIONS}, index=idx
    )
    rows = [
        {"item": i, "family": f, "dimension": d, "value": sham_signal * y[i] + rng.normal()}
        for i in idx for f in fams for d in DIMENSIONS
    ]  # fmt: skip
    blocks = Blocks(y=y, H=H, P=P, H_split=H, H_blocks3=None)
    return blocks, pd.DataFrame(rows), fams


def test_a_sham_without_content_costs_accuracy():
    blocks, rows, fams = _blocks_and_sham()
    block = sham_means(rows, fams, blocks.items)
    table = compare_sham(blocks, block, fams, n_resamples=300, n_jobs=1)
    s = table[table["metric"] == "spearman"].set_index(["arm", "comparator"])
    assert s.loc[("H+P_sham_gb", "H+P_gb"), "ci_high"] < 0  # the real criteria carried signal
    assert set(table["comparator"]) == {"H+P_gb", "best single"}
    assert "q" in table.columns


def test_missing_sham_scores_are_named():
    blocks, rows, fams = _blocks_and_sham(n=30)
    with pytest.raises(ValueError, match="no sham scores"):
        sham_means(rows[rows["family"] != "c"], fams, blocks.items)
    with pytest.raises(ValueError, match="1 image"):
        sham_means(rows[rows["item"] != "i000"], fams, blocks.items)
