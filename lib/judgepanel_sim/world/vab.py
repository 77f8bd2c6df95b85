"""Synthetic VAB sets: same-subject image sets with expert-consensus best and worst labels.

Written in the released layout (``data/test-00000-of-00001.parquet``, read by
:func:`judgepanel.datasets.load_vab`). The generative truth (latent quality, defect
severities and vote counts per image) goes to ``truth/synth-vab-latents.csv`` BESIDE the
dataset folder, never inside it, as for the other worlds: no loader and no simulated judge
reads it.

Generative model (everything drawn from generators seeded by ``seed``):

1. Candidate set. A domain is drawn from ``DOMAIN_MIX`` (fine-art 0.40, photograph 0.35,
   illustration 0.25), a substyle uniformly within it (each substyle fixes the renderer's
   content: landscape, still life, figure, pattern, architecture), and the set size k from
   the fixed mix ``K_MIX`` (k=2 0.38, 3 0.30, 4 0.22, 5 0.07, 6 0.03). The k variants share
   ONE rendered subject (the same :class:`Scene`) and differ only in execution.
2. Variants. Each variant i has a skill s_i ~ N(0, 1); the set has a spread tau ~ U(0.1,
   0.7). On each execution axis j (focus, exposure, colour, framing, clutter, noise) the
   variant's defect severity is d_ij = min(2.5, max(0, 0.6 - 0.7 tau s_i + 0.45 e_ij)),
   e_ij ~ N(0, 1), and 0 on axes the domain does not weigh. A hidden expressiveness
   h_i ~ N(0, 1) does not show in the pixels at all. The latent execution quality is
   q_i = -sum_j W[domain, j] d_ij + 0.35 h_i, with the domain weights in ``AXIS_WEIGHTS``.
3. Pixels. Severities become `Execution` settings in natural units with random
   directions: blur sigma 1.6 d px (focus); exposure +-0.8 d stops; white balance
   +-0.35 d and saturation x(1 +- 0.3 d) (colour); subject moved off the thirds point by
   0.22 d of the frame, or rolled 4 d degrees, or rescaled by 25 d % (framing, one of the
   three at random); round(2.5 d) distracting objects (clutter); sensor noise 7 d levels
   (noise). Each domain then has its own look, applied equally to every variant:
   photograph = a little base sensor noise, slight vignetting and JPEG; fine-art = a 3x3
   median "brush" filter and a canvas weave (which partly masks blur and noise);
   illustration = flat colours (a 16-colour palette PNG). So focus shows clearly in
   photographs and faintly in the other domains, and the hidden component not at all.
4. Experts. A pool of 40 experts, each with a noise sd ~ U(0.8, 1.6) in quality units;
   10 are drawn for each set. Each weighs axis j by W[domain, j] x exp(0.3 z) and misses
   the axis entirely with probability 0.15 (partial visibility), weighs h by
   0.35 x exp(0.3 z), adds their noise, and votes the best (argmax) and, for k >= 3, the
   worst (argmin, distinct from the best) variant.
5. Consensus filter. Under the null that an expert votes uniformly at random, a label's
   vote count is Binomial(10, 1/k). The threshold t_k is the smallest count whose upper
   tail P(X >= t_k) is at most ``VAB_ALPHA[k]`` (0.05 for every k), which gives
   t = 9, 7, 6, 5, 5 votes for k = 2..6. A candidate is kept only if its plurality best has
   at least t_k votes and, for k >= 3, its plurality worst too (each unique and the two
   distinct). Candidates are generated until ``N_TASKS`` (150) are kept. About a third of
   the candidates pass at k = 2-4 and about half at k = 5 (sets of six are too few to
   say), so the kept mix stays close to the candidate mix: many pairs and triples, few
   sets of five or six.
6. Labels. The kept variants are shuffled (a seeded permutation) before labelling A, B,
   C..., so the best image sits in any slot. Every set has a worst label, as in the
   release: for k = 2 it is the image that is not the best (the official harness asks
   pick-worst on pairs and scores it against ``ground_truth_worst``).

Nothing here is tuned to reproduce a number from the benchmark's paper.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from judgepanel_sim import portable as P
from judgepanel_sim.world.layout import TRUTH_DIR
from judgepanel_sim.world.render import Execution, Scene, render, to_jpeg

N_TASKS = 150
N_EXPERTS = 10
EXPERT_POOL = 40
MAX_CANDIDATES = 20_000
SIZE: tuple[int, int] = (384, 288)

DOMAIN_MIX: dict[str, float] = {"fine-art": 0.40, "photograph": 0.35, "illustration": 0.25}
SUBSTYLES: dict[str, dict[str, str]] = {
    "fine-art": {
        "oil_landscape": "landscape",
        "still_life": "still_life",
        "portrait": "figure",
        "abstract": "pattern",
    },
    "photograph": {
        "landscape": "landscape",
        "architecture": "architecture",
        "portrait": "figure",
        "still_life": "still_life",
    },
    "illustration": {
        "character": "figure",
        "concept_architecture": "architecture",
        "motif": "pattern",
        "scenery": "landscape",
    },
}
K_MIX: dict[int, float] = {2: 0.38, 3: 0.30, 4: 0.22, 5: 0.07, 6: 0.03}
VAB_ALPHA: dict[int, float] = {2: 0.05, 3: 0.05, 4: 0.05, 5: 0.05, 6: 0.05}
"""Consensus alpha per set size: the largest upper-tail probability a kept vote count may
have under uniformly random voting."""

AXES: tuple[str, ...] = ("focus", "exposure", "colour", "framing", "clutter", "noise")
AXIS_WEIGHTS: dict[str, dict[str, float]] = {
    "photograph": {
        "focus": 1.0, "exposure": 1.0, "colour": 0.7, "framing": 0.8, "clutter": 0.6,
        "noise": 0.6,
    },
    "fine-art": {
        "focus": 0.7, "exposure": 0.6, "colour": 1.0, "framing": 0.9, "clutter": 0.7,
        "noise": 0.0,
    },
    "illustration": {
        "focus": 0.6, "exposure": 0.5, "colour": 1.0, "framing": 0.9, "clutter": 0.8,
        "noise": 0.0,
    },
}  # fmt: skip
HIDDEN_WEIGHT = 0.35
MISS_PROB = 0.15
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LATENTS_FILE = "synth-vab-latents.csv"
"""File name of the generative truth, in the ``truth`` folder beside the dataset folder."""


def consensus_threshold(k: int, n_experts: int = N_EXPERTS, alpha: float | None = None) -> int:
    """Smallest vote count v with P(Binomial(n_experts, 1/k) >= v) <= alpha.

    The tail is summed in exact rationals: a floating-point tail that falls on alpha would
    decide the threshold by its last bit.
    """
    a = Fraction(VAB_ALPHA[k] if alpha is None else alpha)
    for v in range(n_experts + 1):
        ways = range(v, n_experts + 1)
        tail = sum(math.comb(n_experts, j) * (k - 1) ** (n_experts - j) for j in ways)
        if Fraction(tail, k**n_experts) <= a:
            return v
    return n_experts + 1


@dataclass(frozen=True)
class SynthSet:
    """One kept set, variants already in label order (A, B, ...).

    Attributes:
        task_id: ``{domain}_{substyle}_{candidate index}``.
        domain, substyle: as released.
        scene: the shared subject.
        executions: one per variant.
        severities: defect severity per variant and axis (``AXES`` order).
        quality: latent execution quality per variant.
        best_votes, worst_votes: expert votes per variant (worst all 0 for k = 2).
        best, worst: indices of the consensus best and worst (for k = 2 the worst is the
            other image).
    """

    task_id: str
    domain: str
    substyle: str
    scene: Scene
    executions: tuple[Execution, ...]
    severities: tuple[tuple[float, ...], ...]
    quality: tuple[float, ...]
    best_votes: tuple[int, ...]
    worst_votes: tuple[int, ...]
    best: int
    worst: int

    @property
    def k(self) -> int:
        return len(self.executions)


def _execution(domain: str, sev: np.ndarray, rng: np.random.Generator) -> Execution:
    """Natural-unit settings for one variant's severities (random directions)."""
    d = dict(zip(AXES, (float(x) for x in sev), strict=True))
    sign = lambda: 1.0 if rng.random() < 0.5 else -1.0  # noqa: E731
    base_noise = 2.0 if domain == "photograph" else 0.0
    sat_base = 1.15 if domain == "illustration" else 1.0
    framing = int(rng.integers(3))
    fr = d["framing"]
    subject_x, tilt, scale = 1.0 / 3.0, 0.0, 0.45
    if framing == 0:
        subject_x = 1.0 / 3.0 + sign() * 0.22 * fr
    elif framing == 1:
        tilt = sign() * 4.0 * fr
    else:
        scale = 0.45 * max(0.3, 1.0 + sign() * 0.25 * fr)
    return Execution(
        blur_sigma=round(1.6 * d["focus"], 3),
        noise_sd=round(base_noise + 7.0 * d["noise"], 3),
        jpeg_quality=90 if domain == "photograph" else 95,
        exposure=round(sign() * 0.8 * d["exposure"], 3),
        saturation=round(min(2.5, max(0.2, sat_base * (1.0 + sign() * 0.3 * d["colour"]))), 3),
        cast_warmth=round(max(-1.0, min(1.0, sign() * 0.35 * d["colour"])), 3),
        cast_tint=round(max(-1.0, min(1.0, 0.1 * d["colour"] * rng.standard_normal())), 3),
        subject_x=round(subject_x, 4),
        subject_scale=round(scale, 4),
        tilt_deg=round(tilt, 3),
        clutter=round(2.5 * d["clutter"]),
        vignette=0.12 if domain == "photograph" else 0.0,
        light_warmth=0.15 if domain == "fine-art" else 0.0,
    )


def _plurality(votes: np.ndarray) -> tuple[int, int, bool]:
    """Index of the most-voted variant, its count, and whether it is unique."""
    top = int(votes.max())
    winners = np.flatnonzero(votes == top)
    return int(winners[0]), top, len(winners) == 1


def generate_sets(seed: int, n_tasks: int = N_TASKS) -> list[SynthSet]:
    """Draw candidate sets until ``n_tasks`` pass the consensus filter (no rendering)."""
    rng = np.random.default_rng([seed, 7001])
    pool_noise = rng.uniform(0.8, 1.6, EXPERT_POOL)
    domains = list(DOMAIN_MIX)
    dom_p = np.array([DOMAIN_MIX[d] for d in domains])
    ks = list(K_MIX)
    k_p = np.array([K_MIX[k] for k in ks])
    kept: list[SynthSet] = []
    for cand in range(MAX_CANDIDATES):
        if len(kept) == n_tasks:
            return kept
        domain = domains[int(rng.choice(len(domains), p=dom_p))]
        substyle = list(SUBSTYLES[domain])[int(rng.integers(len(SUBSTYLES[domain])))]
        k = ks[int(rng.choice(len(ks), p=k_p))]
        scene = Scene(
            content=SUBSTYLES[domain][substyle],
            seed=int(rng.integers(2**31 - 1)),
            harmony=round(float(rng.uniform(0.55, 1.0)), 3),
            detail=round(float(rng.uniform(0.0, 0.7)), 3),
            oddity=round(float(rng.uniform(0.0, 0.35)), 3),
        )
        weights = np.array([AXIS_WEIGHTS[domain][a] for a in AXES])
        tau = rng.uniform(0.1, 0.7)
        skill = rng.standard_normal(k)
        sev = 0.6 - 0.7 * tau * skill[:, None] + 0.45 * rng.standard_normal((k, len(AXES)))
        sev = np.clip(sev, 0.0, 2.5) * (weights > 0)
        hidden = rng.standard_normal(k)
        quality = -P.matvec(sev, weights) + HIDDEN_WEIGHT * hidden
        experts = rng.choice(EXPERT_POOL, N_EXPERTS, replace=False)
        w_e = weights * P.exp(0.3 * rng.standard_normal((N_EXPERTS, len(AXES))))
        w_e *= rng.random((N_EXPERTS, len(AXES))) >= MISS_PROB
        h_e = HIDDEN_WEIGHT * P.exp(0.3 * rng.standard_normal(N_EXPERTS))
        noise = pool_noise[experts][:, None] * rng.standard_normal((N_EXPERTS, k))
        utility = -P.matmul(w_e, sev.T) + h_e[:, None] * hidden[None, :] + noise
        best_votes = np.bincount(utility.argmax(axis=1), minlength=k)
        worst_votes = np.zeros(k, int)
        if k >= 3:
            worst_votes = np.bincount(utility.argmin(axis=1), minlength=k)
        execs = [_execution(domain, sev[i], rng) for i in range(k)]
        perm = rng.permutation(k)
        t = consensus_threshold(k)
        b, nb, ub = _plurality(best_votes)
        ok = ub and nb >= t
        w = 1 - b  # a pair's worst is the image that is not the best
        if k >= 3:
            w, nw, uw = _plurality(worst_votes)
            ok = ok and uw and nw >= t and w != b
        if not ok:
            continue
        inv = np.argsort(perm)  # new position of each original variant
        kept.append(
            SynthSet(
                task_id=f"{domain}_{substyle}_{cand}",
                domain=domain,
                substyle=substyle,
                scene=scene,
                executions=tuple(execs[i] for i in perm),
                severities=tuple(tuple(round(float(x), 4) for x in sev[i]) for i in perm),
                quality=tuple(round(float(quality[i]), 4) for i in perm),
                best_votes=tuple(int(best_votes[i]) for i in perm),
                worst_votes=tuple(int(worst_votes[i]) for i in perm),
                best=int(inv[b]),
                worst=int(inv[w]),
            )
        )
    if len(kept) < n_tasks:
        raise RuntimeError(
            f"only {len(kept)} of {n_tasks} synthetic VAB sets passed the consensus filter "
            f"in {MAX_CANDIDATES} candidates"
        )
    return kept


def _canvas(width: int, height: int, seed: int) -> np.ndarray:
    """A faint canvas weave, the same for every variant of a set."""
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    phase = (seed % 7) * 0.3
    weave = P.sin(xs * 2 * math.pi / 3.0 + phase) * P.sin(ys * 2 * math.pi / 3.0)
    return (1.0 + 0.035 * weave)[..., None]


_MEDIAN9 = (
    (1, 2), (4, 5), (7, 8), (0, 1), (3, 4), (6, 7), (1, 2), (4, 5), (7, 8), (0, 3),
    (5, 8), (4, 7), (3, 6), (1, 4), (2, 5), (4, 7), (4, 2), (6, 4), (4, 2),
)  # fmt: skip
"""Compare-exchanges that leave the median of nine values in position 4."""


def median_filter3(img: Image.Image) -> Image.Image:
    """Pillow's ``MedianFilter(3)`` on an RGB image, pixel for pixel, in a few passes.

    The same 3x3 median per channel with the border replicated, as Pillow computes it,
    taken by a fixed network of 19 elementwise min/max steps over the nine shifted
    copies of the image instead of one selection per pixel: about five times faster,
    and exact, since a median of integers needs no arithmetic.
    """
    a = np.asarray(img.convert("RGB"))
    h, w = a.shape[:2]
    padded = np.pad(a, ((1, 1), (1, 1), (0, 0)), mode="edge")
    v = [padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)]
    for i, j in _MEDIAN9:
        v[i], v[j] = np.minimum(v[i], v[j]), np.maximum(v[i], v[j])
    return Image.fromarray(np.ascontiguousarray(v[4]), "RGB")


def render_variant(s: SynthSet, i: int, size: tuple[int, int] = SIZE) -> tuple[bytes, str]:
    """Encoded bytes and file suffix of variant ``i`` in its domain's look."""
    img = render(s.scene, s.executions[i], size=size)
    if s.domain == "fine-art":
        img = median_filter3(img)
        arr = np.asarray(img, dtype=np.float32) * _canvas(img.width, img.height, s.scene.seed)
        img = Image.fromarray(np.clip(arr + 0.5, 0, 255).astype(np.uint8), "RGB")
        return to_jpeg(img, 92), "jpg"
    if s.domain == "illustration":
        flat = img.quantize(colors=16, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
        buf = io.BytesIO()
        flat.save(buf, format="PNG", optimize=False, compress_level=6)  # a 16-colour palette PNG
        return buf.getvalue(), "png"
    return to_jpeg(img, 92), "jpg"


_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
SCHEMA = pa.schema(
    [
        ("task_id", pa.string()),
        ("domain", pa.string()),
        ("substyle", pa.string()),
        ("n_images", pa.int64()),
        ("images", pa.list_(_IMAGE)),
        ("labels", pa.list_(pa.string())),
        ("ground_truth_best", pa.string()),
        ("ground_truth_worst", pa.string()),
    ]
)
# The feature description the ``datasets`` library stores next to the schema.
_HF_FEATURES = {
    "task_id": {"dtype": "string", "_type": "Value"},
    "domain": {"dtype": "string", "_type": "Value"},
    "substyle": {"dtype": "string", "_type": "Value"},
    "n_images": {"dtype": "int64", "_type": "Value"},
    "images": {"feature": {"_type": "Image"}, "_type": "List"},
    "labels": {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"},
    "ground_truth_best": {"dtype": "string", "_type": "Value"},
    "ground_truth_worst": {"dtype": "string", "_type": "Value"},
}


def write_vab(out_dir: Path, seed: int, *, n_tasks: int = N_TASKS) -> Path:
    """Generate, render and write the synthetic VAB world under ``out_dir``.

    Args:
        out_dir: the world's folder (e.g. ``DIR/synth-vab``, or the hidden partial folder
            the world is written through); the truth goes to ``DIR/truth``.
        seed: seeds every draw; the same seed writes the same bytes.
        n_tasks: sets to keep (150 for the world; fewer for quick tests).

    Returns:
        The Parquet file written (``out_dir/data/test-00000-of-00001.parquet``). The latents
        are written to ``out_dir.parent/truth/synth-vab-latents.csv``.
    """
    out_dir = Path(out_dir)
    sets = generate_sets(seed, n_tasks)
    rows, latent = [], []
    for s in sets:
        labels = list(LETTERS[: s.k])
        images = []
        for i, label in enumerate(labels):
            data, suffix = render_variant(s, i)
            images.append({"bytes": data, "path": f"{label}.{suffix}"})
            latent.append(
                {
                    "task_id": s.task_id,
                    "label": label,
                    "quality": s.quality[i],
                    "best_votes": s.best_votes[i],
                    "worst_votes": s.worst_votes[i],
                    "is_best": i == s.best,
                    "is_worst": i == s.worst,
                    **{f"sev_{a}": s.severities[i][j] for j, a in enumerate(AXES)},
                }
            )
        rows.append(
            {
                "task_id": s.task_id,
                "domain": s.domain,
                "substyle": s.substyle,
                "n_images": s.k,
                "images": images,
                "labels": labels,
                "ground_truth_best": labels[s.best],
                "ground_truth_worst": labels[s.worst],
            }
        )
    meta = {b"huggingface": json.dumps({"info": {"features": _HF_FEATURES}}).encode()}
    table = pa.Table.from_pylist(rows, schema=SCHEMA.with_metadata(meta))
    path = out_dir / "data" / "test-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="snappy")
    tmp.replace(path)
    truth = out_dir.parent / TRUTH_DIR
    truth.mkdir(parents=True, exist_ok=True)
    tmp_truth = truth / f".{LATENTS_FILE}.partial"
    pd.DataFrame(latent).to_csv(tmp_truth, index=False, lineterminator="\n")
    tmp_truth.replace(truth / LATENTS_FILE)
    return path
