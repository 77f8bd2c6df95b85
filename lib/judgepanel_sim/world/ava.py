"""The synthetic AVA-like world: anonymous vote histograms, written in AVA's released format.

AVA's images come from photo challenges, and each was voted on by about 200 members of a
photography site. The release keeps only each image's histogram of votes for the scores
1 to 10, two semantic tags and the challenge id. There are no rater ids and no attribute
ratings. This world draws its images like the EVA-like and PARA-like worlds
(`judgepanel_sim.world.aesthetic`), with its own consensus weights. Each vote comes from a
fresh anonymous voter, with a bias, a taste for the image's content and noise of its own,
so the votes on an image are exchangeable, as the histogram ceiling assumes.

The files are ``AVA.txt`` (15 space-separated columns), ``tags.txt``, ``challenges.txt``,
``aesthetics_image_lists/generic_test.jpgl`` and ``images/<image_id>.jpg``. The latents
go to the ``truth`` folder, which no loader reads.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets import load_dataset
from judgepanel.stats import noise_ceiling, spearman
from judgepanel_sim import portable as P
from judgepanel_sim.world.aesthetic import LATENTS, knob_table, sample_latents, unit_mix
from judgepanel_sim.world.files import publish, write_images, write_manifest, write_truth_table
from judgepanel_sim.world.layout import TRUTH_DIR
from judgepanel_sim.world.render import CONTENTS

NAME = "ava"
FOLDER = f"synth-{NAME}"
TAG = 3
"""Separates this world's random streams from the EVA-like (1) and PARA-like (2) worlds'."""

WEIGHTS = {
    "quality": 0.30,
    "composition": 0.30,
    "colour": 0.25,
    "distinctiveness": 0.35,
    "emotion": 0.30,
    "hidden": 0.35,
}
"""Weight of each latent in the consensus: a challenge audience rewards originality and
impact about as much as technique, and the image's meaning is not in its pixels."""

CONTENT_EFFECT_SD = 0.25
VOTES_PER_IMAGE = (80, 320)
"""Inclusive range of votes an image receives (AVA's images have about 200)."""
VOTER_BIAS_SD = 0.50
VOTER_TASTE_SD = 0.40
VOTE_NOISE_SD = 1.70
"""Scales of one vote's voter bias, content taste and noise, in consensus-sd units."""
SCORE_CENTRE = 5.4
SCORE_SLOPE = 0.75
"""A vote is ``clip(round(SCORE_CENTRE + SCORE_SLOPE * impression), 1, 10)``."""
TEST_SHARE = 0.1
"""Share of the images on the official test list."""
N_CHALLENGES = 1400

TAGS = {
    "landscape": (14, "Landscape"),
    "figure": (19, "Portraiture"),
    "architecture": (21, "Architecture"),
    "still_life": (1, "Still Life"),
    "pattern": (2, "Abstract"),
}
"""The semantic tag (id, name) of each content category; a second tag is sometimes added."""
EXTRA_TAGS = {15: "Nature", 38: "Black and White", 20: "Interior", 7: "Macro"}


@dataclass(frozen=True)
class AvaWorld:
    """A drawn AVA-like world: per-image truth and histograms, before any file is written."""

    seed: int
    images: pd.DataFrame  # image_id, file, content, LATENTS, knobs, consensus
    votes: np.ndarray  # (n_images, 10) vote counts for the scores 1..10
    tags: np.ndarray  # (n_images, 2) semantic tag ids, 0 for none
    challenges: np.ndarray  # (n_images,) challenge ids
    test: np.ndarray  # (n_images,) bool: on the official test list


def simulate_ava(n_images: int, seed: int) -> AvaWorld:
    """Draw the images, their votes, tags, challenges and test split (no files written)."""
    if n_images < 1:
        raise ValueError(f"n_images must be positive, got {n_images}")
    names = ("latents", "knobs", "votes", "ids")
    children = np.random.SeedSequence([seed, TAG]).spawn(len(names))
    rs = {n: np.random.default_rng(s) for n, s in zip(names, children, strict=True)}
    lat = sample_latents(n_images, rs["latents"])
    knobs = knob_table(lat, rs["knobs"])
    content_idx = np.array([CONTENTS.index(c) for c in lat["content"]])
    content_effect = rs["latents"].normal(0.0, CONTENT_EFFECT_SD, len(CONTENTS))
    consensus = P.matvec(lat[list(LATENTS)].to_numpy(), unit_mix(WEIGHTS))
    consensus = consensus + content_effect[content_idx]

    rng = rs["votes"]
    lo, hi = VOTES_PER_IMAGE
    counts = rng.integers(lo, hi + 1, n_images)
    image = np.repeat(np.arange(n_images), counts)
    n = len(image)
    impression = (
        consensus[image]
        + rng.normal(0.0, VOTER_BIAS_SD, n)
        + rng.normal(0.0, VOTER_TASTE_SD, n)
        + rng.normal(0.0, VOTE_NOISE_SD, n)
    )
    score = np.clip(np.round(SCORE_CENTRE + SCORE_SLOPE * impression), 1, 10).astype(int)
    votes = np.zeros((n_images, 10), dtype=np.int64)
    np.add.at(votes, (image, score - 1), 1)

    ids = rs["ids"]
    image_ids = (ids.choice(950_000, n_images, replace=False) + 1_000).astype(str)
    first = np.array([TAGS[c][0] for c in lat["content"]])
    extra = np.asarray(list(EXTRA_TAGS))[ids.integers(0, len(EXTRA_TAGS), n_images)]
    second = np.where(ids.random(n_images) < 0.4, extra, 0)
    challenges = ids.integers(1, N_CHALLENGES + 1, n_images)
    test = np.zeros(n_images, dtype=bool)
    test[ids.choice(n_images, max(1, round(TEST_SHARE * n_images)), replace=False)] = True

    images = pd.concat([lat, knobs], axis=1)
    images.insert(0, "image_id", image_ids)
    images.insert(1, "file", [f"images/{i}.jpg" for i in image_ids])
    images["consensus"] = consensus
    return AvaWorld(
        seed=seed,
        images=images,
        votes=votes,
        tags=np.column_stack([first, second]),
        challenges=challenges,
        test=test,
    )


def _write_files(world: AvaWorld, folder: Path) -> None:
    """AVA.txt, tags.txt, challenges.txt and the test list, as the release lays them out."""
    img = world.images
    lines = [
        " ".join(
            [str(k + 1), img["image_id"].iloc[k]]
            + [str(v) for v in world.votes[k]]
            + [str(t) for t in world.tags[k]]
            + [str(world.challenges[k])]
        )
        for k in range(len(img))
    ]
    (folder / "AVA.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tags = {**{i: name for i, name in TAGS.values()}, **EXTRA_TAGS}
    (folder / "tags.txt").write_text(
        "".join(f"{i} {tags[i]}\n" for i in sorted(tags)), encoding="utf-8"
    )
    used = sorted(set(world.challenges.tolist()))
    (folder / "challenges.txt").write_text(
        "".join(f"{c} challenge_{c}\n" for c in used), encoding="utf-8"
    )
    lists = folder / "aesthetics_image_lists"
    lists.mkdir(parents=True, exist_ok=True)
    test_ids = img["image_id"][world.test]
    (lists / "generic_test.jpgl").write_text("".join(f"{i}\n" for i in test_ids), encoding="utf-8")


def measure_ava(world: AvaWorld, folder: Path) -> dict:
    """What the written world turned out to be, read back through the AVA loader."""
    ds = load_dataset(NAME, str(folder))
    img = ds.images
    truth = world.images.set_index(world.images["image_id"].astype(str))
    truth = truth.reindex(img["image_id"].astype(str))
    ceiling = noise_ceiling(ds, n_resamples=200, seed=0)
    y = img["mean_score"].to_numpy(float)
    votes = world.votes.sum(axis=1)
    return {
        "votes": int(votes.sum()),
        "votes_per_image": [int(votes.min()), int(votes.max())],
        "mean_of_image_means": round(float(y.mean()), 3),
        "sd_of_image_means": round(float(y.std(ddof=1)), 3),
        "noise_ceiling": round(float(ceiling.ceiling), 3),
        "noise_ceiling_method": ceiling.method,
        "spearman_mean_score_with_latents": {
            k: round(spearman(y, truth[k].to_numpy(float)), 3) for k in LATENTS
        },
    }


def write_ava_world(out: Path, n_images: int, seed: int) -> Path:
    """Draw the AVA-like world and write ``out/synth-ava`` atomically, with its truth."""
    out = Path(out)
    world = simulate_ava(n_images, seed)
    final = out / FOLDER
    tmp = out / f".{FOLDER}.partial"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    _write_files(world, tmp)
    write_images(world.images, tmp)
    write_truth_table(world.images, out / TRUTH_DIR, FOLDER, seed)
    publish(tmp, final)
    write_manifest(
        out / TRUTH_DIR,
        FOLDER,
        {"seed": seed, "n_images": n_images, "measured": measure_ava(world, final)},
    )
    return final
