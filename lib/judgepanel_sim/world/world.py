"""The two synthetic aesthetic worlds (EVA-like and PARA-like): raters, ratings and files.

Images come from `judgepanel_sim.world.aesthetic` (latent properties -> pixels). Here human
raters judge them. Each rater has a bias, a stretch or compression of the scale, a noise
level, a taste for each content category, a favourite scale point, and a halo tendency that
pulls attribute ratings toward the rater's overall impression. The overall impression is a
weighted sum of the latents (the part that is not in the pixels included) plus content
taste plus the rater's noise; it is then mapped to the dataset's scale.

The worlds differ in how much of the judgement rests on what the pixels show, and in how
noisy their raters are. The files are written in the real formats of EVA and PARA, and the
latents go to a separate ``truth`` folder that no loader reads. Everything is determined by
the seed. The world card (``data/world_card.md``) documents every parameter.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets import load_dataset
from judgepanel.stats import noise_ceiling, spearman
from judgepanel_sim import portable as P
from judgepanel_sim.exit_codes import BAD_INPUT
from judgepanel_sim.world import files, posters
from judgepanel_sim.world.aesthetic import (
    LATENT_CORRELATION,
    LATENTS,
    knob_table,
    sample_latents,
    unit_mix,
)
from judgepanel_sim.world.ava import write_ava_world
from judgepanel_sim.world.files import publish, read_manifest, write_manifest, write_truth_table
from judgepanel_sim.world.layout import TRUTH_DIR
from judgepanel_sim.world.mechanism import Mechanism
from judgepanel_sim.world.memory import keep_freed_memory
from judgepanel_sim.world.render import CONTENTS
from judgepanel_sim.world.vab import write_vab
from judgepanel_sim.world.visionq import write_visionq

WORLDS_ORDER: tuple[str, ...] = ("eva", "para", "ava", "vab", "visionq", "posters")


@dataclass(frozen=True)
class RaterSpec:
    """How the raters of a world behave; scales are in units of the image consensus sd.

    Attributes:
        pool_size: raters in the pool.
        per_image: inclusive range of raters per image (per session for PARA).
        noise_sd: median sd of a rater's noise on one rating.
        noise_spread: log-sd of the noise level across raters.
        bias_sd: sd of a rater's additive bias.
        stretch_sd: log-sd of a rater's scale stretch (>1 uses the extremes, <1 the middle).
        taste_sd: sd of a rater's liking of each content category.
        halo: Beta(a, b) of the halo weight pulling attributes toward the overall impression.
        attribute_noise_sd: sd of the perception noise on an attribute rating.
        favourite_prob: Beta(a, b) of how often a rater snaps to a favourite scale point.
    """

    pool_size: int
    per_image: tuple[int, int]
    noise_sd: float
    noise_spread: float
    bias_sd: float
    stretch_sd: float
    taste_sd: float
    halo: tuple[float, float]
    attribute_noise_sd: float
    favourite_prob: tuple[float, float]


@dataclass(frozen=True)
class WorldSpec:
    """One synthetic aesthetic world.

    Attributes:
        name: ``eva`` or ``para``; the folder is ``synth-<name>``.
        tag: separates the world's random streams from the other world's.
        weights: weight of each latent in the overall impression (rescaled so that the
            weighted sum has unit variance).
        attributes: attribute rating -> latent mix it perceives (rescaled to unit variance).
        content_effect_sd: sd of the population's liking of each content category.
        raters: the rater model.
        mechanism: calibration knobs replacing ``weights`` and scaling the raters' noise
            (`judgepanel_sim.world.mechanism`); None, as in the demo worlds, keeps both.
    """

    name: str
    tag: int
    weights: dict[str, float]
    attributes: dict[str, dict[str, float]]
    content_effect_sd: float
    raters: RaterSpec
    extra: dict[str, float] = field(default_factory=dict)
    mechanism: Mechanism | None = None

    @property
    def folder(self) -> str:
        return f"synth-{self.name}"


EVA_WORLD = WorldSpec(
    name="eva",
    tag=1,
    weights={
        "quality": 0.30,
        "composition": 0.30,
        "colour": 0.25,
        "distinctiveness": 0.30,
        "emotion": 0.30,
        "hidden": 0.35,
    },
    attributes={
        "quality": {"quality": 1.0},
        "composition": {"composition": 1.0},
        "visual": {"colour": 0.75, "emotion": 0.35},
        "semantic": {"hidden": 0.6, "distinctiveness": 0.45},
    },
    content_effect_sd=0.20,
    raters=RaterSpec(
        pool_size=400,
        per_image=(30, 40),
        noise_sd=1.5,
        noise_spread=0.35,
        bias_sd=0.45,
        stretch_sd=0.30,
        taste_sd=0.35,
        halo=(4.0, 4.0),
        attribute_noise_sd=0.9,
        favourite_prob=(1.2, 8.0),
    ),
)

PARA_WORLD = WorldSpec(
    name="para",
    tag=2,
    weights={
        "quality": 0.45,
        "composition": 0.35,
        "colour": 0.30,
        "distinctiveness": 0.15,
        "emotion": 0.20,
        "hidden": 0.15,
    },
    attributes={
        "quality": {"quality": 1.0},
        "composition": {"composition": 1.0},
        "color": {"colour": 1.0},
        "dof": {"quality": 0.6, "composition": 0.5},
        "content": {"hidden": 0.6, "distinctiveness": 0.45},
        "light": {"colour": 0.5, "emotion": 0.5, "quality": 0.3},
    },
    content_effect_sd=0.20,
    raters=RaterSpec(
        pool_size=300,
        per_image=(22, 28),
        noise_sd=0.9,
        noise_spread=0.30,
        bias_sd=0.35,
        stretch_sd=0.20,
        taste_sd=0.30,
        halo=(3.0, 5.0),
        attribute_noise_sd=0.7,
        favourite_prob=(1.2, 8.0),
    ),
    extra={"session_size": 20},
)

WORLDS: dict[str, WorldSpec] = {"eva": EVA_WORLD, "para": PARA_WORLD}

SIZED_WORLDS: tuple[str, ...] = ("eva", "para", "ava")
"""The worlds whose size is ``n_images`` (the AVA-like one is in `judgepanel_sim.world.ava`)."""

PARA_SEMANTIC = {
    "landscape": "scenery",
    "still_life": "still life",
    "figure": "portrait",
    "pattern": "abstract",
    "architecture": "architecture",
}


@dataclass(frozen=True)
class SimulatedWorld:
    """A world in memory: per-image truth (latents, knobs) and the rating rows to write."""

    spec: WorldSpec
    seed: int
    images: pd.DataFrame  # image_id, content, LATENTS, consensus, knobs, file location
    ratings: pd.DataFrame  # the rows of the dataset file, in its own column names


def _streams(seed: int, tag: int) -> dict[str, np.random.Generator]:
    names = ("latents", "knobs", "raters", "assignment", "responses", "ids")
    children = np.random.SeedSequence([seed, tag]).spawn(len(names))
    return {n: np.random.default_rng(s) for n, s in zip(names, children, strict=True)}


_sigmoid = P.sigmoid


def _raters(spec: RaterSpec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    m = spec.pool_size
    return {
        "bias": rng.normal(0.0, spec.bias_sd, m),
        "stretch": P.exp(rng.normal(0.0, spec.stretch_sd, m)),
        "noise": spec.noise_sd * P.exp(rng.normal(0.0, spec.noise_spread, m)),
        "taste": rng.normal(0.0, spec.taste_sd, (m, len(CONTENTS))),
        "halo": rng.beta(*spec.halo, m),
        "fav_prob": rng.beta(*spec.favourite_prob, m),
        "fav_pick": rng.random(m),
        "tick": rng.normal(-0.6, 0.7, m),
        "pace": P.exp(rng.normal(P.log_scalar(8.0), 0.4, m)),
    }


def _assign_eva(n_images: int, spec: RaterSpec, rng: np.random.Generator):
    """Each image gets its own random subset of the pool."""
    lo, hi = spec.per_image
    counts = rng.integers(lo, hi + 1, n_images)
    order = np.argsort(rng.random((n_images, spec.pool_size)), axis=1)
    img = np.repeat(np.arange(n_images), counts)
    rater = np.concatenate([order[i, : counts[i]] for i in range(n_images)])
    return img, rater, None


def _assign_para(n_images: int, spec: RaterSpec, size: int, rng: np.random.Generator):
    """Images come in sessions; one group of raters rates every image of its session."""
    lo, hi = spec.per_image
    session = np.arange(n_images) // size
    n_sessions = int(session.max()) + 1
    counts = rng.integers(lo, hi + 1, n_sessions)
    order = np.argsort(rng.random((n_sessions, spec.pool_size)), axis=1)
    imgs, raters = [], []
    for i in range(n_images):
        s = session[i]
        imgs.append(np.full(counts[s], i))
        raters.append(order[s, : counts[s]])
    return np.concatenate(imgs), np.concatenate(raters), session


def _snap(values: np.ndarray, fav: np.ndarray, prob: np.ndarray, reach: float, rng):
    """Pull a response to the rater's favourite point when it is within ``reach`` of it."""
    near = np.abs(values - fav) <= reach
    return np.where(near & (rng.random(len(values)) < prob), fav, values)


def simulate(spec: WorldSpec, n_images: int, seed: int) -> SimulatedWorld:
    """Draw the images' latents and knobs and every rating of a world (no files written)."""
    if n_images < 1:
        raise ValueError(f"n_images must be positive, got {n_images}")
    rs = _streams(seed, spec.tag)
    lat = sample_latents(n_images, rs["latents"])
    knobs = knob_table(lat, rs["knobs"])
    x = lat[list(LATENTS)].to_numpy()
    content_idx = np.array([CONTENTS.index(c) for c in lat["content"]])
    content_effect = rs["latents"].normal(0.0, spec.content_effect_sd, len(CONTENTS))
    mix = unit_mix(spec.weights) if spec.mechanism is None else spec.mechanism.consensus_mix()
    consensus = P.matvec(x, mix) + content_effect[content_idx]

    raters = _raters(spec.raters, rs["raters"])
    if spec.mechanism is not None:
        raters["noise"] = raters["noise"] * spec.mechanism.rater_noise
    if spec.name == "eva":
        img, who, session = _assign_eva(n_images, spec.raters, rs["assignment"])
    else:
        size = int(spec.extra.get("session_size", 20))
        img, who, session = _assign_para(n_images, spec.raters, size, rs["assignment"])
    rng = rs["responses"]
    n = len(img)
    taste = raters["taste"][who, content_idx[img]]
    impression = consensus[img] + taste + raters["noise"][who] * rng.standard_normal(n)
    stretch, bias, halo = raters["stretch"][who], raters["bias"][who], raters["halo"][who]
    overall = stretch * impression + bias

    attrs: dict[str, np.ndarray] = {}
    for name, mix in spec.attributes.items():
        percept = P.matvec(x[img], unit_mix(mix))
        if "hidden" in mix:  # meaning and content judgements carry the rater's content taste
            percept = percept + taste
        percept = percept + spec.raters.attribute_noise_sd * rng.standard_normal(n)
        attrs[name] = stretch * ((1.0 - halo) * percept + halo * impression) + 0.7 * bias

    ids = rs["ids"]
    if spec.name == "eva":
        span = max(950_000, 4 * n_images)
        image_ids = (ids.choice(span, n_images, replace=False) + 1_000).astype(str)
        rater_ids = (ids.choice(40_000, spec.raters.pool_size, replace=False) + 1).astype(str)
        rows = _eva_rows(img, who, raters, overall, attrs, impression, image_ids, rater_ids, rng)
        files = pd.Series([f"EVA_together/{i}.jpg" for i in image_ids])
    else:
        numbers = ids.choice(max(40_000, 4 * n_images), n_images, replace=False) + 1
        names = np.array([f"iaa_pub{k}_.jpg" for k in numbers])
        sessions = np.array([f"session{s + 1}" for s in session])
        image_ids = names
        hexes = ids.integers(0, 2**48, spec.raters.pool_size)
        rater_ids = np.array([f"{h:012x}" for h in hexes])
        rows = _para_rows(
            img, who, raters, overall, attrs, impression, x, content_idx, taste, rng, spec
        )
        rows.insert(0, "userId", rater_ids[who])
        rows.insert(0, "imageName", names[img])
        rows.insert(0, "sessionId", sessions[img])
        files = pd.Series([f"imgs/{s}/{m}" for s, m in zip(sessions, names, strict=True)])

    images = pd.concat([lat, knobs], axis=1)
    images.insert(0, "image_id", image_ids)
    images.insert(1, "file", files)
    images["consensus"] = consensus
    return SimulatedWorld(spec=spec, seed=seed, images=images, ratings=rows)


def _eva_rows(img, who, raters, overall, attrs, impression, image_ids, rater_ids, rng):
    n = len(img)
    fav = np.array([5, 6, 7, 8])[np.minimum((raters["fav_pick"] * 4).astype(int), 3)][who]
    score = np.clip(np.round(5.6 + 1.0 * overall), 0, 10)
    score = _snap(score, fav, raters["fav_prob"][who], 1.0, rng).astype(int)

    def four(z: np.ndarray) -> np.ndarray:
        return np.clip(np.round(2.6 + 0.8 * z), 1, 4).astype(int)

    confidence = -P.log(raters["noise"][who] / np.median(raters["noise"]))
    ease = 0.45 * np.abs(impression) + 0.3 * confidence + 0.8 * rng.standard_normal(n)
    difficulty = np.clip(np.round(2.6 + 0.7 * (ease - 0.4)), 1, 4).astype(int)
    rows = pd.DataFrame(
        {
            "image_id": image_ids[img],
            "user_id": rater_ids[who],
            "score": score,
            "difficulty": difficulty,
            "visual": four(attrs["visual"]),
            "composition": four(attrs["composition"]),
            "quality": four(attrs["quality"]),
            "semantic": four(attrs["semantic"]),
        }
    )
    seconds = raters["pace"][who] * P.exp(0.25 * (4 - difficulty) + 0.5 * rng.standard_normal(n))
    seconds = np.maximum(1, np.round(seconds)).astype(int)
    rows["vote_time"] = [f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" for s in seconds]
    tick = raters["tick"][who]
    for col, attr in zip(
        ("1", "2", "3", "4"), ("visual", "composition", "quality", "semantic"), strict=True
    ):
        p = _sigmoid(tick + 0.9 * np.abs(attrs[attr]) - 0.4)
        rows[col] = (rng.random(n) < p).astype(int)
    return rows


def _para_rows(img, who, raters, overall, attrs, impression, x, content_idx, taste, rng, spec):
    n = len(img)
    fav = np.array([3.0, 3.5, 4.0])[np.minimum((raters["fav_pick"] * 3).astype(int), 2)][who]
    aesthetic = np.clip(np.round(2 * (3.0 + 0.55 * overall)) / 2, 1, 5)
    aesthetic = _snap(aesthetic, fav, raters["fav_prob"][who], 0.5, rng)
    quality = np.clip(np.round(2 * (3.0 + 0.6 * attrs["quality"])) / 2, 1, 5)

    def five(z: np.ndarray) -> np.ndarray:
        return np.clip(np.round(3.0 + 0.7 * z), 1, 5).astype(int)

    col = {name: LATENTS.index(name) for name in LATENTS}
    emphasis = rng.random(n) < _sigmoid(0.8 + 0.9 * attrs["composition"])
    valence = (
        0.6 * x[img, col["emotion"]]
        + 0.3 * x[img, col["colour"]]
        + 0.3 * x[img, col["hidden"]]
        + 0.6 * rng.standard_normal(n)
    )
    arousal = 0.6 * x[img, col["distinctiveness"]] + 0.7 * rng.standard_normal(n)
    emotion = np.select(
        [
            (valence > 0.6) & (arousal > 0.3),
            valence > 0.6,
            (valence > -0.1) & (arousal < 0),
            valence > -0.1,
            (valence > -0.9) & (arousal < 0),
            valence > -0.9,
            arousal < 0,
        ],
        ["Excited", "Happy", "Calm", "Neutral", "Sad", "Fearful", "Sad"],
        default="Disgusted",
    )
    confidence = -P.log(raters["noise"][who] / np.median(raters["noise"]))
    hard = -0.45 * np.abs(impression) - 0.3 * confidence + 0.7 * rng.standard_normal(n)
    judgment = np.digitize(hard, [-0.6, 0.3]) + 1
    preference = (
        0.7 * taste / spec.raters.taste_sd
        + 0.3 * x[img, col["hidden"]]
        + 0.6 * rng.standard_normal(n)
    )
    share = 0.8 * overall + 0.5 * rng.standard_normal(n)
    semantic = np.array([PARA_SEMANTIC[c] for c in CONTENTS])[content_idx[img]]
    return pd.DataFrame(
        {
            "aestheticScore": aesthetic,
            "qualityScore": quality,
            "compositionScore": five(attrs["composition"]),
            "colorScore": five(attrs["color"]),
            "dofScore": five(attrs["dof"]),
            "contentScore": five(attrs["content"]),
            "lightScore": five(attrs["light"]),
            "isObjectEmphasis": emphasis.astype(int),
            "imgEmotion": emotion,
            "difficultyOfJudgment": judgment.astype(int),
            "contentPreference": np.clip(np.round(3.0 + 0.9 * preference), 1, 5).astype(int),
            "willingnessToShare": np.clip(np.round(2.8 + 0.9 * share), 1, 5).astype(int),
            "semantic": semantic,
        }
    )


# --- files -----------------------------------------------------------------------------------


def _write_ratings(sim: SimulatedWorld, folder: Path) -> Path:
    if sim.spec.name == "eva":
        path = folder / "data" / "votes_filtered.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        # The EVA release is '='-delimited and starts with a UTF-8 byte-order mark.
        sim.ratings.to_csv(path, sep="=", index=False, encoding="utf-8-sig", lineterminator="\n")
    else:
        path = folder / "annotation" / "PARA-Images.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        sim.ratings.to_csv(path, index=False, lineterminator="\n")
    return path


def write_world(spec: WorldSpec, out: Path, n_images: int, seed: int) -> Path:
    """Simulate ``spec`` and write ``out/synth-<name>`` in its real format, atomically.

    The world is written to a hidden partial folder and renamed into place at the end, so
    an interrupted run never leaves a half world that looks complete.
    """
    out = Path(out)
    final = out / spec.folder
    tmp = out / f".{spec.folder}.partial"
    sim = simulate(spec, n_images, seed)  # bad parameters fail before anything is written
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    _write_ratings(sim, tmp)
    files.write_images(sim.images, tmp)
    write_truth_table(sim.images, out / TRUTH_DIR, spec.folder, seed)
    publish(tmp, final)
    write_manifest(
        out / TRUTH_DIR,
        spec.folder,
        {"seed": seed, "n_images": n_images, "measured": measure(spec, sim, final)},
    )
    return final


def visible_share(spec: WorldSpec) -> float:
    """Share of the variance of the consensus (``w . latents``) explained by the three
    clearly visible latents, from the weights and the latent correlations."""
    w = unit_mix(spec.weights)
    vis = [LATENTS.index(k) for k in ("quality", "composition", "colour")]
    cov = LATENT_CORRELATION
    sub = cov[np.ix_(vis, vis)]
    beta = P.solve(sub, P.matvec(cov[vis], w))
    return P.dot(beta, P.matvec(sub, beta))


def measure(spec: WorldSpec, sim: SimulatedWorld, folder: Path) -> dict:
    """What the written world turned out to be, read back through the real loader.

    Nothing here is a target: the numbers are measured after the fact and kept in the
    truth manifest, so the world card can point at them instead of quoting them.
    """
    ds = load_dataset(spec.name, str(folder))
    img = ds.images
    per_image = img["n_raters"]
    truth = sim.images.set_index(sim.images["image_id"].astype(str))
    if spec.name == "para":  # PARA's loader keys images by their file name
        truth = sim.images.set_index(sim.images["file"].astype(str).str.split("/").str[-1])
    truth = truth.reindex(img["image_id"].astype(str))
    ceiling = noise_ceiling(ds.ratings, n_splits=50, seed=0)
    y = img["mean_score"].to_numpy(float)
    return {
        "ratings": len(ds.ratings),
        "raters_per_image": [int(per_image.min()), int(per_image.max())],
        "mean_of_image_means": round(float(y.mean()), 3),
        "sd_of_image_means": round(float(y.std(ddof=1)), 3),
        "split_half_spearman": round(ceiling.split_half_r, 3),
        "noise_ceiling": round(ceiling.ceiling, 3),
        "visible_share_of_consensus_variance": round(visible_share(spec), 3),
        "spearman_mean_score_with_attribute_means": {
            a: round(spearman(y, img[a].to_numpy(float)), 3)
            for a in ("quality", "composition", "colour")
        },
        "spearman_mean_score_with_latents": {
            k: round(spearman(y, truth[k].to_numpy(float)), 3) for k in LATENTS
        },
    }


QUICK_SIZES = {"vab": {"n_tasks": 16}, "visionq": {"n_papers": 12}}
"""How far ``--quick`` shrinks the VAB and VisionQ worlds (tasks; papers of questions). A quick
world's manifest records its size, so a changed size rewrites it."""


def _external_params(kind: str, seed: int, quick: bool) -> dict[str, object]:
    """What a VAB or VisionQ world is made from: its seed, and its size when quick."""
    return {"seed": seed, "quick": quick, **(QUICK_SIZES[kind] if quick else {})}


def _write_external(kind: str, out: Path, seed: int, quick: bool = False) -> Path:
    """VAB and VisionQ worlds come from their own modules, written through a partial folder."""
    writer = {"vab": write_vab, "visionq": write_visionq}[kind]
    final = out / f"synth-{kind}"
    tmp = out / f".synth-{kind}.partial"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    writer(tmp, seed, **(QUICK_SIZES[kind] if quick else {}))
    write_manifest(out / TRUTH_DIR, f"synth-{kind}", _external_params(kind, seed, quick))
    publish(tmp, final)
    return final


def write_worlds(
    out: Path,
    *,
    n_images: int = 500,
    seed: int = 20261130,
    only: tuple[str, ...] = WORLDS_ORDER,
    force: bool = False,
    quick: bool = False,
    replace_changed: bool = False,
    jobs: int = 1,
    log=print,
) -> dict[str, Path]:
    """Write the selected worlds into ``out``; complete worlds are kept unless ``force``.

    ``quick`` shrinks the VAB and VisionQ worlds (:data:`QUICK_SIZES`); ``replace_changed``
    rewrites a world made with other parameters instead of refusing, so a changed
    ``N_IMAGES`` or ``QUICK`` regenerates exactly the worlds it changes. ``jobs`` worlds
    are written at once, each in a worker process (a world is drawn from its own seed and
    written to its own folder, so the files are the same either way).

    Raises:
        ValueError: an unknown world name, or an existing world made with other
            parameters (rewrite it with ``force`` or ``replace_changed``).
    """
    unknown = [w for w in only if w not in WORLDS_ORDER]
    if unknown:
        raise ValueError(
            f"unknown world(s) {', '.join(unknown)}; choose from {', '.join(WORLDS_ORDER)}"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    todo: list[str] = []
    for kind in WORLDS_ORDER:
        if kind not in only:
            continue
        folder = out / f"synth-{kind}"
        params: dict[str, object] = (
            {"seed": seed, "n_images": n_images}
            if kind in SIZED_WORLDS
            else {"seed": seed, "n_images": min(n_images, posters.N_IMAGES)}
            if kind == "posters"
            else _external_params(kind, seed, quick)
        )
        if folder.exists() and not force:
            manifest = read_manifest(out / TRUTH_DIR, folder.name)
            # Worlds written before quick mode existed are full-size ones.
            made = None
            if manifest:
                made = {k: manifest.get(k, False if k == "quick" else None) for k in params}
            changed = made is not None and made != params
            if changed and not replace_changed:
                raise ValueError(
                    f"{folder} exists but was made with {made}, not {params}; "
                    "pass --force (or --replace-changed) to rewrite it; from make, add FORCE=1"
                )
            if not changed:
                log(f"{folder}: complete, kept (pass --force to rewrite)")
                written[kind] = folder
                continue
            log(f"{folder}: made with {made}, rewriting it for {params}")
        todo.append(kind)
    write = partial(_write_one, out=out, n_images=n_images, seed=seed, quick=quick)
    with contextlib.ExitStack() as stack:
        mapper: Callable = map
        if jobs > 1 and len(todo) > 1:
            workers = min(jobs, len(todo))
            pool = ProcessPoolExecutor(max_workers=workers, initializer=keep_freed_memory)
            mapper = stack.enter_context(pool).map
        for kind, (folder, seconds) in zip(todo, mapper(write, todo), strict=True):
            written[kind] = folder
            log(f"{folder}: written in {seconds:.1f} s")
    return {k: written[k] for k in WORLDS_ORDER if k in written}


def _write_one(kind: str, out: Path, n_images: int, seed: int, quick: bool) -> tuple[Path, float]:
    """Write one world; returns its folder and the seconds it took."""
    start = time.perf_counter()
    if kind in WORLDS:
        folder = write_world(WORLDS[kind], out, n_images, seed)
    elif kind == "ava":
        folder = write_ava_world(out, n_images, seed)
    elif kind == "posters":  # a second study: its own size, at most that of the others
        folder = posters.write_posters(out, min(n_images, posters.N_IMAGES), seed)
    else:
        folder = _write_external(kind, out, seed, quick)
    return folder, time.perf_counter() - start


def synth_command(
    out: Path,
    *,
    n_images: int,
    seed: int,
    only: str,
    force: bool,
    quick: bool = False,
    replace_changed: bool = False,
    jobs: int = 1,
) -> int:
    """``judgepanel data synth``: write the synthetic worlds (see `write_worlds`)."""
    keep_freed_memory()
    worlds = tuple(w.strip() for w in only.split(",") if w.strip())
    try:
        write_worlds(
            Path(out),
            n_images=n_images,
            seed=seed,
            only=worlds,
            force=force,
            quick=quick,
            replace_changed=replace_changed,
            jobs=jobs,
        )
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return BAD_INPUT
    return 0
