"""A large scored pool of EVA-like images for the calibration study, one file per knob.

The calibration study draws hundreds of replicate studies of 500 images. Rendering and
scoring those images afresh for every replicate would take hours, and nothing a replicate
changes touches them: the pictures depend only on the seed, the judges' answers only on
the pictures and the families' share of common error, the human ratings only on the
mechanism's consensus and rater noise. So the pool is made once:

- ``images/EVA_together/<id>.jpg``: the rendered pool (written as the EVA-like world does);
- ``scores-shared<e>.csv``: per image, each family's holistic mean over k runs (``h:<f>``)
  and over the first 5 (``h5:<f>``, the recipe's probe), and for the pre-declared
  families each dimension mean (``<f>:<dim>``). Scored in-process with the simulator's own
  code (`judgepanel_sim.judges.inprocess`), once per share of common error;
- ``world-<label>.csv``: per image, the human mean score (``y``) under one mechanism, and
  the half-means of ``N_SPLITS`` random splits of its raters (``a<j>``, ``b<j>``) for the
  noise ceiling;
- ``pool.json``: what was made and how (seed, sizes, design, the worlds and their knobs).

``python -m judgepanel_sim pool --out DIR`` writes it; files already made with the same
parameters are kept.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from judgepanel.core.config import ScoringDesign
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel_sim.exit_codes import BAD_INPUT
from judgepanel_sim.judges.inprocess import score_specs
from judgepanel_sim.world.files import write_images
from judgepanel_sim.world.mechanism import Mechanism
from judgepanel_sim.world.world import EVA_WORLD, SimulatedWorld, simulate

POOL_FORMAT = 1
N_SPLITS = 5
PROBE_K = 5
FAMILIES: dict[str, str] = {
    "aurora": "sim-aurora-v1",
    "basalt": "sim-basalt-v1",
    "cobalt": "sim-cobalt-v1",
    "dune": "sim-dune-v1",
    "ember": "sim-ember-v1",
}
PREDECLARED: tuple[str, ...] = ("aurora", "basalt", "cobalt")
DESIGN = ScoringDesign(holistic_k=25, dimension_r=3, temperature=0.3)

WORLDS: tuple[Mechanism, ...] = (
    *(Mechanism(dimension_evidence=s) for s in (0.0, 0.5, 0.8, 0.9, 0.95, 0.98, 1.0)),
    Mechanism(dimension_evidence=0.9, rater_noise=0.5),
    Mechanism(dimension_evidence=0.9, rater_noise=2.0),
    Mechanism(dimension_evidence=0.9, shared_error=0.8),
)
"""The calibration worlds: a curve over the planted dimension evidence (0 is the null),
then headroom (rater noise halved and doubled) and strongly correlated judges."""


def scores_file(shared_error: float) -> str:
    return f"scores-shared{shared_error:.2f}.csv"


def world_file(mechanism: Mechanism) -> str:
    return f"world-{mechanism.label}.csv"


def _spec(mechanism: Mechanism):
    return replace(EVA_WORLD, mechanism=mechanism)


def _render_chunk(sim: SimulatedWorld, rows: np.ndarray, folder: Path) -> None:
    write_images(sim.images.iloc[rows], folder)


def _score_chunk(images: pd.DataFrame, shared_error: float) -> pd.DataFrame:
    probe = {f: m for f, m in FAMILIES.items() if f not in PREDECLARED}
    full = {f: FAMILIES[f] for f in PREDECLARED}
    specs = plan_images(images, full, DESIGN, dataset="pool")
    probe_design = DESIGN.model_copy(update={"holistic_k": PROBE_K, "dimension_r": 0})
    specs += plan_images(images, probe, probe_design, dataset="pool")
    return score_specs(specs, shared_error=shared_error)


def wide_scores(long: pd.DataFrame) -> pd.DataFrame:
    """Per image: ``h:<f>`` (all holistic runs), ``h5:<f>`` (first 5) and ``<f>:<dim>``."""
    h = long[long["kind"] == "holistic"]
    out = {}
    for fam, g in h.groupby("family", sort=False):
        out[f"h:{fam}"] = g.groupby("item")["value"].mean()
        out[f"h5:{fam}"] = g[g["repetition"] < PROBE_K].groupby("item")["value"].mean()
    d = long[long["kind"] == "dimension"]
    for (fam, dim), g in d.groupby(["family", "dimension"], sort=False):
        out[f"{fam}:{dim}"] = g.groupby("item")["value"].mean()
    table = pd.DataFrame(out)
    order = [f"h:{f}" for f in FAMILIES] + [f"h5:{f}" for f in FAMILIES]
    order += [f"{f}:{dim}" for f in PREDECLARED for dim in DIMENSIONS]
    table = table[order]
    table.index.name = "image_id"
    return table


def human_table(sim: SimulatedWorld, seed: int) -> pd.DataFrame:
    """Per image: the human mean ``y`` and ``N_SPLITS`` random split-half means."""
    r = sim.ratings[["image_id", "score"]].copy()
    table = pd.DataFrame({"y": r.groupby("image_id", sort=False)["score"].mean()})
    rng = np.random.default_rng([seed, 7])
    counts = r.groupby("image_id", sort=False)["score"].transform("size").to_numpy()
    for j in range(N_SPLITS):
        key = pd.Series(rng.random(len(r)), index=r.index)
        rank = key.groupby(r["image_id"], sort=False).rank(method="first").to_numpy()
        first = rank <= counts // 2
        table[f"a{j}"] = r[first].groupby("image_id", sort=False)["score"].mean()
        table[f"b{j}"] = r[~first].groupby("image_id", sort=False)["score"].mean()
    table.index.name = "image_id"
    return table


def _chunks(n: int, parts: int) -> list[np.ndarray]:
    return [c for c in np.array_split(np.arange(n), parts) if c.size]


def build_pool(
    out: Path,
    *,
    n_images: int = 4000,
    seed: int = 20261201,
    worlds: Sequence[Mechanism] = WORLDS,
    n_jobs: int = 2,
    log: Callable[[str], None] = print,
) -> Path:
    """Render, score and rate the pool under every mechanism of ``worlds`` (see module doc)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "pool.json"
    params = {"format": POOL_FORMAT, "seed": seed, "n_images": n_images}
    old = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    if {k: old.get(k) for k in params} != params:
        for stale in [*out.glob("scores-*.csv"), *out.glob("world-*.csv")]:
            stale.unlink()
        old = {}
    base = simulate(_spec(Mechanism()), n_images, seed)
    images_dir = out / "images"
    started = time.perf_counter()
    if not old.get("rendered"):
        parts = _chunks(n_images, 8 * n_jobs)
        Parallel(n_jobs=n_jobs)(delayed(_render_chunk)(base, rows, images_dir) for rows in parts)
        log(f"rendered {n_images} images in {time.perf_counter() - started:.0f} s")
        # Recorded at once, so an interrupted build keeps its renders and finished scores.
        manifest_path.write_text(json.dumps({**params, "rendered": True}) + "\n", "utf-8")
    table = pd.DataFrame(
        {
            "image_id": base.images["image_id"].astype(str),
            "path": [str(images_dir / f) for f in base.images["file"]],
        }
    )
    for shared in sorted({m.shared_error for m in worlds}):
        target = out / scores_file(shared)
        if target.exists():
            continue
        t0 = time.perf_counter()
        parts = _chunks(n_images, 8 * n_jobs)
        longs = Parallel(n_jobs=n_jobs)(
            delayed(_score_chunk)(table.iloc[rows], shared) for rows in parts
        )
        wide_scores(pd.concat(longs, ignore_index=True)).to_csv(target, float_format="%.6g")
        log(f"{target.name}: scored in {time.perf_counter() - t0:.0f} s")
    for mech in worlds:
        target = out / world_file(mech)
        if not target.exists():
            human_table(simulate(_spec(mech), n_images, seed), seed).to_csv(
                target, float_format="%.6g"
            )
    body = {
        **params,
        "rendered": True,
        "families": FAMILIES,
        "predeclared": list(PREDECLARED),
        "design": {
            "holistic_k": DESIGN.holistic_k,
            "dimension_r": DESIGN.dimension_r,
            "temperature": DESIGN.temperature,
            "probe_k": PROBE_K,
        },
        "worlds": [
            {
                **asdict(m),
                "label": m.label,
                "ratings": world_file(m),
                "scores": scores_file(m.shared_error),
            }
            for m in worlds
        ],
        "seconds": round(time.perf_counter() - started, 1),
    }
    manifest_path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return out


def pool_command(out: Path, *, n_images: int, seed: int, n_jobs: int) -> int:
    """``python -m judgepanel_sim pool``: write the calibration pool (see `build_pool`)."""
    try:
        build_pool(out, n_images=n_images, seed=seed, n_jobs=n_jobs)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", flush=True)
        return BAD_INPUT
    return 0
