"""The synthetic AVA-like world: AVA's released layout, read back by the AVA adapter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from judgepanel.cli import main
from judgepanel.datasets import load_ava
from judgepanel.stats import noise_ceiling
from judgepanel_sim.world import ava as ava_world
from judgepanel_sim.world.world import write_worlds


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """`judgepanel data synth --only ava` with 30 images."""
    out = tmp_path_factory.mktemp("synth")
    assert main(["data", "synth", "--out", str(out), "--n-images", "30", "--only", "ava"]) == 0
    return out


def test_the_files_are_avas_released_layout(written):
    root = written / "synth-ava"
    lines = (root / "AVA.txt").read_text().splitlines()
    assert len(lines) == 30
    fields = [line.split(" ") for line in lines]
    assert {len(f) for f in fields} == {15}
    assert [int(f[0]) for f in fields] == list(range(1, 31))
    ids = [f[1] for f in fields]
    assert all((root / "images" / f"{i}.jpg").is_file() for i in ids)
    test = (root / "aesthetics_image_lists" / "generic_test.jpgl").read_text().split()
    assert 1 <= len(test) < 30 and set(test) <= set(ids)
    tags = dict(line.split(" ", 1) for line in (root / "tags.txt").read_text().splitlines())
    used = {f[k] for f in fields for k in (12, 13)} - {"0"}
    assert used <= set(tags)
    assert not (root / "truth").exists() and (written / "truth" / "synth-ava-latents.csv").exists()


def test_the_adapter_reads_it_as_votes_without_raters(written):
    ds = load_ava(written / "synth-ava")
    lo, hi = ava_world.VOTES_PER_IMAGE
    votes = ds.votes.groupby("image_id")["count"].sum()
    assert len(ds.images) == 30 and votes.between(lo, hi).all()
    assert ds.ratings.empty and ds.votes["value"].between(1, 10).all()
    assert set(ds.images["split"]) == {"train", "test"}
    # the image mean is the histogram's mean
    one = ds.votes[ds.votes["image_id"] == ds.images["image_id"].iloc[0]]
    mean = float((one["value"] * one["count"]).sum() / one["count"].sum())
    assert ds.images["mean_score"].iloc[0] == pytest.approx(mean)
    assert noise_ceiling(ds, n_resamples=50).method == "vote_split_half"


def test_same_seed_same_bytes(tmp_path):
    a = ava_world.write_ava_world(tmp_path / "a", n_images=6, seed=3)
    b = ava_world.write_ava_world(tmp_path / "b", n_images=6, seed=3)
    c = ava_world.simulate_ava(6, seed=4)
    files = {p.relative_to(a): p.read_bytes() for p in sorted(a.rglob("*")) if p.is_file()}
    again = {p.relative_to(b): p.read_bytes() for p in sorted(b.rglob("*")) if p.is_file()}
    assert files == again
    assert not np.array_equal(ava_world.simulate_ava(6, seed=3).votes, c.votes)


def test_a_changed_size_rewrites_only_with_replace_changed(tmp_path):
    log: list[str] = []
    write_worlds(tmp_path, n_images=5, seed=1, only=("ava",), log=log.append)
    with pytest.raises(ValueError, match="--force"):
        write_worlds(tmp_path, n_images=6, seed=1, only=("ava",), log=log.append)
    write_worlds(tmp_path, n_images=6, seed=1, only=("ava",), replace_changed=True, log=log.append)
    assert len(load_ava(tmp_path / "synth-ava").images) == 6


def test_the_votes_follow_the_consensus_and_voters_disagree():
    world = ava_world.simulate_ava(400, seed=7)
    levels = np.arange(1, 11)
    n = world.votes.sum(axis=1)
    means = world.votes @ levels / n
    rho = spearmanr(means, world.images["consensus"]).statistic
    assert rho > 0.9  # about 200 votes an image: the mean is close to the consensus
    assert abs(float(means.mean()) - ava_world.SCORE_CENTRE) < 0.5
    # one image's voters disagree more than image means differ, as anonymous crowds do
    within = np.sqrt(world.votes @ levels**2 / n - means**2)
    assert float(np.median(within)) > float(np.std(means))
    assert pd.Series(world.tags[:, 0]).isin([t for t, _ in ava_world.TAGS.values()]).all()


def test_bad_size_fails_before_anything_is_written(tmp_path):
    with pytest.raises(ValueError, match="n_images must be positive"):
        ava_world.write_ava_world(tmp_path, n_images=0, seed=1)
    assert list(tmp_path.iterdir()) == []
