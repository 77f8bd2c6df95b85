"""Synthetic VisionQ-Bench: comparison-figure questions in the released layout.

Generative model (everything drawn from one ``numpy`` generator seeded by ``seed``):

* **Papers.** About 100 pseudo-papers (``cvpr2025_0123``-style ids). Each has a
  difficulty ``h ~ U(0.3, 1.2)`` that scales every gap between methods in its figures
  (small h: subtle differences), a claim visibility ``rho ~ U(0.8, 1)`` (the chance that
  an author's claim shows in the pixels at all), a favourite content category, and one
  primary criterion that most of its figures test (papers concentrate on one or two).
* **Figures.** 1-4 per paper. A figure fixes the criterion (the primary one with
  probability 0.7), the compared methods (2, 3 or 4 with probabilities 0.4/0.3/0.3, with
  invented names, the paper's own marked "(ours)") and their column order, drawn at
  random, so the gold position is uniform across figures but shared by a figure's rows.
* **Rows.** 1-3 per figure, each a different input (``Scene``: same content for every
  method of the row). Every method renders that scene through ``Execution`` with small
  nuisance jitter (blur, noise, exposure, JPEG quality). On the named criterion the
  authors' method sits at a base level ``b ~ U(0, 0.15)`` and each other method at
  ``b + h * g * u`` with a row gap ``g ~ U(0.2, 1.2)`` and ``u ~ U(0.35, 1)``; the level is
  mapped to the criterion's knob (``CRITERIA``). With probability ``1 - rho`` the row is
  *invisible*: every method gets the same level, so the claim cannot be checked from
  pixels. On a criterion with a related one (sharpness, noise, compression artifacts,
  fine detail) the row has, with probability 0.35, a *trade-off*: the best method on the
  named criterion is a little worse on the related one (e.g. the least noisy output is
  softer), so a judge that answers by overall quality is misled.
* **Visibility.** Some knobs show clearly in generic pixel statistics (blur, noise,
  over-exposure, contrast, vignetting, JPEG blocking, clutter), some faintly (colour cast
  against the scene's own colours, over-saturation, texture detail, subject placement,
  size and truncation, mild under-exposure, tilt on scenes without straight lines) and
  one hardly at all (silhouette shape).
* **Eligibility.** About 6% of rows carry an annotation defect: one competitor's panel is
  really a reference panel (its crop is a copy of the authors' crop, its label
  "Reference"). They are written to the question file; their data point in
  ``data/benchmark/data_points.jsonl`` says ``benchmark_eligible: false`` with the reasons
  the official ``--tag-quality`` gives (``choice_is_context_panel``, and on a pair also
  ``single_method_family_after_ref_strip``), as the release keeps eligibility outside the
  question file.

The layout is the release's: questions and data points under ``data/benchmark/``, crops
(256x192 PNGs) at ``bench/<paper>/figures/<fig>/crops/bbox_NN_<method>.png``, which is
where the official harness resolves ``image_paths`` when its data root is the output
folder. Nothing here is tuned to reproduce a published number.
"""

from __future__ import annotations

import io
import json
import math
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from judgepanel.datasets.taxonomy import load_taxonomy
from judgepanel.datasets.visionq import DATA_POINTS_FILE, IMAGE_DIR, LETTERS, QUESTIONS_FILE
from judgepanel_sim import portable as P
from judgepanel_sim.world.render import CONTENTS, Execution, Scene, render

CROP_SIZE: tuple[int, int] = (256, 192)
N_PAPERS = 100
P_TRADEOFF = 0.35
P_DEFECT = 0.06
N_CHOICES_P: dict[int, float] = {2: 0.4, 3: 0.3, 4: 0.3}
FIGURES_P: tuple[float, ...] = (0.45, 0.30, 0.15, 0.10)  # 1, 2, 3, 4 figures
ROWS_P: tuple[float, ...] = (0.5, 0.3, 0.2)  # 1, 2, 3 rows

Knob = Callable[[float, float, Scene, Execution], tuple[Scene, Execution]]
"""(level, sign in [-1, 1], scene, execution) -> degraded (scene, execution)."""


@dataclass(frozen=True)
class Criterion:
    """A synthesised criterion: its taxonomy leaf, question phrasings and pixel knob.

    Attributes:
        axis: taxonomy axis.
        leaf: taxonomy leaf.
        phrases: criterion phrases for the question; the first is the taxonomy's.
        knob: how a degradation level moves the picture.
        tradeoff: the knob the best method pays on in a trade-off row (or None).
        contents: content categories that suit the criterion (empty: any).
    """

    axis: str
    leaf: str
    phrases: tuple[str, ...]
    knob: Knob
    tradeoff: Knob | None = None
    contents: tuple[str, ...] = ()


def _clip(x: float, lo: float, hi: float) -> float:
    return float(min(max(x, lo), hi))


def _blur(d, s, sc, ex):
    return sc, replace(ex, blur_sigma=_clip(ex.blur_sigma + 2.5 * d, 0, 50))


def _noise(d, s, sc, ex):
    return sc, replace(ex, noise_sd=_clip(ex.noise_sd + 18.0 * d, 0, 128))


def _exposure(d, s, sc, ex):
    # Mostly over-exposure (clipping); under-exposure needs more stops to show.
    stops = -2.4 * d if s < -0.5 else 1.6 * d
    return sc, replace(ex, exposure=_clip(ex.exposure + stops, -8, 8))


def _contrast(d, s, sc, ex):
    return sc, replace(ex, contrast=_clip(ex.contrast * (1.0 - 0.55 * min(d, 1.4)), 0.1, 5))


def _colour(d, s, sc, ex):
    angle = math.pi * s
    return sc, replace(
        ex,
        cast_warmth=_clip(0.7 * d * P.cos_scalar(angle), -1, 1),
        cast_tint=_clip(0.7 * d * P.sin_scalar(angle), -1, 1),
    )


def _lighting(d, s, sc, ex):
    return sc, replace(ex, vignette=_clip(0.75 * d, 0, 1))


def _artifact(d, s, sc, ex):
    return sc, replace(ex, jpeg_quality=round(_clip(92 - 80 * d, 5, 95)))


def _realism(d, s, sc, ex):
    # Every method over-saturates somewhat; the most realistic output least.
    return sc, replace(ex, saturation=_clip(1.35 + 1.4 * d, 0, 5))


def _detail(d, s, sc, ex):
    return replace(sc, detail=_clip(0.9 * (1.0 - 0.9 * min(d, 1.0)), 0, 1)), ex


def _texture(d, s, sc, ex):
    return replace(sc, detail=0.8), replace(
        ex,
        blur_sigma=_clip(ex.blur_sigma + 1.2 * d, 0, 50),
        noise_sd=_clip(ex.noise_sd + 6.0 * d, 0, 128),
    )


def _shape(d, s, sc, ex):
    return replace(sc, oddity=_clip(0.9 * d, 0, 1)), ex


def _completeness(d, s, sc, ex):
    return sc, replace(ex, subject_x=_clip(0.5 + math.copysign(0.65 * d, s), -0.5, 1.5))


def _composition(d, s, sc, ex):
    # From a thirds line toward the frame edge (and up or down), monotone in d.
    return sc, replace(
        ex,
        subject_x=_clip(1 / 3 - 0.3 * d, -0.5, 1.5),
        subject_y=_clip(0.55 + math.copysign(0.25 * d, s), -0.5, 1.5),
    )


def _tilt(d, s, sc, ex):
    return sc, replace(ex, tilt_deg=_clip(math.copysign(12.0 * d, s), -90, 90))


def _clutter(d, s, sc, ex):
    return sc, replace(ex, clutter=round(22 * d))


def _scale(d, s, sc, ex):
    return sc, replace(ex, subject_scale=_clip(0.45 * (1.0 - 0.6 * min(d, 1.2)), 0.05, 2))


CRITERIA: tuple[Criterion, ...] = (
    Criterion("Image Appearance", "Blur", ("sharpness", "image sharpness", "focus"), _blur, _noise),
    Criterion(
        "Image Appearance",
        "Noise",
        ("noise suppression", "denoising", "clean, noise-free output"),
        _noise,
        _blur,
    ),
    Criterion(
        "Image Appearance", "Exposure", ("exposure balance", "well-exposed brightness"), _exposure
    ),
    Criterion("Image Appearance", "Contrast", ("contrast", "tonal contrast"), _contrast),
    Criterion(
        "Image Appearance", "Color", ("colour fidelity", "natural colour without casts"), _colour
    ),
    Criterion("Image Appearance", "Lighting", ("lighting quality", "even illumination"), _lighting),
    Criterion(
        "Image Appearance",
        "Global Artifact",
        ("freedom from compression artifacts", "absence of blocking artifacts"),
        _artifact,
        _blur,
    ),
    Criterion("Image Appearance", "Realism", ("realism", "photorealistic colour"), _realism),
    Criterion(
        "Object Form", "Detail", ("fine detail", "preservation of fine details"), _detail, _noise
    ),
    Criterion("Object Form", "Texture", ("texture quality", "texture fidelity"), _texture),
    Criterion("Object Form", "Shape", ("shape accuracy", "object shape"), _shape),
    Criterion(
        "Object Form", "Completeness", ("object completeness", "complete objects"), _completeness
    ),
    Criterion("Scene Layout", "Composition", ("composition", "subject placement"), _composition),
    Criterion(
        "Scene Layout",
        "Camera Geometry",
        ("level camera geometry", "horizon alignment"),
        _tilt,
        None,
        ("architecture", "landscape", "still_life"),
    ),
    Criterion(
        "Scene Layout",
        "Spatial Distribution",
        ("uncluttered layout", "clean scene layout"),
        _clutter,
    ),
    Criterion("Scene Layout", "Scale", ("subject scale", "object scale"), _scale),
)
"""The criteria the synthetic benchmark asks about, with their pixel knobs."""

_PREFIXES = (
    "Neu",
    "Lumi",
    "Vox",
    "Spa",
    "Geo",
    "Hyper",
    "Flux",
    "Ray",
    "Mesh",
    "Pix",
    "Tex",
    "Warp",
    "Deep",
    "Ortho",
    "Tri",
    "Gau",
    "Pho",
    "Cas",
    "Holo",
    "Quanta",
    "Sil",
    "Aero",
    "Iris",
    "Nova",
)
_SUFFIXES = (
    "Net",
    "Former",
    "GAN",
    "Fusion",
    "Diff",
    "NeRF",
    "Splat",
    "Flow",
    "Gen",
    "Rec",
    "SR",
    "Edit",
    "Mixer",
    "Field",
    "Diffusion",
    "Match",
    "Prior",
    "Lift",
)
REFERENCE_LABEL = "Reference"
"""The label of a defect row's copied panel: a reference panel offered as a choice."""
_VENUES = ("cvpr2023", "iccv2023", "cvpr2024", "cvpr2025", "iccv2025")
_PAPER_ID = re.compile(r"(cvpr|iccv)\d{4}_\d{4}")


def _method_name(rng: np.random.Generator) -> str:
    name = str(rng.choice(_PREFIXES)) + str(rng.choice(_SUFFIXES))
    roll = rng.random()
    if roll < 0.3:
        name += f" [{int(rng.integers(3, 70))}]"
    elif roll < 0.4:
        name += "++"
    return name


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "method"


def _pick(rng: np.random.Generator, probs: tuple[float, ...]) -> int:
    return int(rng.choice(len(probs), p=np.asarray(probs) / sum(probs)))


def _nuisance(rng: np.random.Generator) -> Execution:
    """A clean capture with small method-specific jitter."""
    return Execution(
        blur_sigma=float(rng.uniform(0.0, 0.35)),
        noise_sd=float(rng.uniform(0.0, 1.5)),
        exposure=float(rng.uniform(-0.08, 0.08)),
        jpeg_quality=int(rng.integers(88, 96)),
    )


def _row_levels(rng: np.random.Generator, n: int, h: float, visible: bool) -> list[float]:
    """Degradation levels; index 0 is the authors' (best) method."""
    base = float(rng.uniform(0.0, 0.15))
    if not visible:
        return [base] * n
    gap = h * float(rng.uniform(0.2, 1.2))
    return [base] + [base + gap * float(rng.uniform(0.35, 1.0)) for _ in range(n - 1)]


def write_visionq(out_dir: Path, seed: int, *, n_papers: int = N_PAPERS) -> Path:
    """Write the synthetic benchmark under ``out_dir``; return the question file's path.

    Writes ``data/benchmark/test_questions.jsonl`` (released field names),
    ``data/benchmark/data_points.jsonl`` (one data point a question row, with its
    ``quality_flags``) and the crops under ``bench/``, all relative to ``out_dir``, the
    dataset root the loader (and the official harness's data root) takes. Existing crops
    of earlier runs are replaced. ``n_papers`` (100 by default) lets tests write a small
    benchmark.
    """
    out_dir = Path(out_dir)
    images = out_dir / IMAGE_DIR
    taxonomy = load_taxonomy()
    rng = np.random.default_rng([seed, 0x5651])  # "VQ"
    for base in (out_dir, images):
        for sub in base.glob("*/figures"):
            if _PAPER_ID.fullmatch(sub.parent.name):
                shutil.rmtree(sub.parent)
    old_ids = out_dir / "data" / "benchmark" / "eligible_ids.txt"
    old_ids.unlink(missing_ok=True)
    (out_dir / QUESTIONS_FILE).parent.mkdir(parents=True, exist_ok=True)
    choice_ns = np.array(sorted(N_CHOICES_P))
    choice_p = np.array([N_CHOICES_P[k] for k in choice_ns])
    questions: list[dict] = []
    points: list[dict] = []
    paper_numbers = rng.choice(np.arange(1, 1500), size=n_papers, replace=False)
    for paper_no in paper_numbers:
        paper_id = f"{rng.choice(_VENUES)}_{int(paper_no):04d}"
        h = float(rng.uniform(0.3, 1.2))
        rho = float(rng.uniform(0.8, 1.0))
        content = str(rng.choice(CONTENTS))
        primary = int(rng.integers(len(CRITERIA)))
        own = _method_name(rng).split(" [")[0]
        fig_ids: set[str] = set()
        for f in range(_pick(rng, FIGURES_P) + 1):
            fig_id = f"fig_{f + 2 + int(rng.integers(0, 6))}_p{int(rng.integers(3, 9))}"
            fig_id = f"{fig_id}_{f}" if fig_id in fig_ids else fig_id
            fig_ids.add(fig_id)
            crit = CRITERIA[primary if rng.random() < 0.7 else int(rng.integers(len(CRITERIA)))]
            leaf = taxonomy.leaf(crit.axis, crit.leaf)
            phrase = crit.phrases[0] if rng.random() < 0.6 else str(rng.choice(crit.phrases))
            n = int(rng.choice(choice_ns, p=choice_p))
            names = [f"{own} (ours)" if rng.random() < 0.5 else "Ours"]
            while len(names) < n:
                cand = _method_name(rng)
                if cand not in names:
                    names.append(cand)
            order = rng.permutation(n)  # column j shows method order[j]; method 0 is gold
            bbox_ids = rng.permutation(40)[:n]
            for r in range(_pick(rng, ROWS_P) + 1):
                row = f"row_{r + 1}"
                qid = f"{paper_id}__{fig_id}__{row}"
                contents = crit.contents or CONTENTS
                row_content = content if content in contents else str(rng.choice(contents))
                if rng.random() < 0.3:
                    row_content = str(rng.choice(contents))
                scene = Scene(
                    content=row_content,
                    seed=int(rng.integers(0, 2**31 - 1)),
                    harmony=float(rng.uniform(0.5, 1.0)),
                    detail=float(rng.uniform(0.15, 0.6)),
                )
                visible = rng.random() < rho
                levels = _row_levels(rng, n, h, visible)
                tradeoff = crit.tradeoff is not None and rng.random() < P_TRADEOFF
                defect = rng.random() < P_DEFECT
                pictures = []
                for m in range(n):
                    sc, ex = crit.knob(levels[m], float(rng.uniform(-1, 1)), scene, _nuisance(rng))
                    if tradeoff and m == 0 and crit.tradeoff is not None:
                        sc, ex = crit.tradeoff(float(rng.uniform(0.15, 0.35)), 1.0, sc, ex)
                    pictures.append((sc, ex))
                labels = list(names)
                source = list(range(n))  # the method whose picture each crop shows
                if defect:
                    copied = int(rng.integers(1, n))
                    source[copied] = 0
                    labels[copied] = REFERENCE_LABEL
                # Each picture is rendered and encoded once, even where a defect copies it.
                crops = {m: _png(*pictures[m]) for m in dict.fromkeys(source)}
                paths = []
                folder = images / paper_id / "figures" / fig_id / "crops"
                folder.mkdir(parents=True, exist_ok=True)
                for j, m in enumerate(order):
                    rel = (
                        f"{paper_id}/figures/{fig_id}/crops/"
                        f"bbox_{int(bbox_ids[j]) + 40 * r:02d}_{_slug(labels[m])}.png"
                    )
                    (images / rel).write_bytes(crops[source[m]])
                    paths.append(rel)
                gold = LETTERS[int(np.flatnonzero(order == 0)[0])]
                point_key = f"{paper_id}/{fig_id}::{row}"
                shown = [labels[m] for m in order]
                points.append(_data_point(point_key, paper_id, fig_id, row, r, shown, paths))
                questions.append(
                    {
                        "id": qid,
                        "paper_id": paper_id,
                        "fig_id": fig_id,
                        "row": row,
                        "question": f"Which method demonstrates better {phrase}?",
                        "choices": [f"({c})" for c in LETTERS[:n]],
                        "answer": f"({gold})",
                        "answer_known": True,
                        "methods": shown,
                        "image_paths": paths,
                        "leaf_name": leaf.name,
                        "leaf_path": [leaf.axis, leaf.name],
                        "v5_visual_attr": phrase,
                        "v5_taxonomy_axis": leaf.axis,
                        "v5_taxonomy_leaf": leaf.name,
                        "v5_claim_norm": f"image {gold} shows the better {phrase}",
                        "v5_data_point_key": point_key,
                        "row_raw": row,
                        "source": "synthetic",
                    }
                )
    _write_jsonl(out_dir / DATA_POINTS_FILE, points)
    qfile = out_dir / QUESTIONS_FILE
    _write_jsonl(qfile, questions)
    return qfile


def _png(scene: Scene, execution: Execution) -> bytes:
    """One crop, rendered and encoded as the release's PNG crops are."""
    buf = io.BytesIO()
    render(scene, execution, CROP_SIZE).save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def _write_jsonl(path: Path, records: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")


def _data_point(
    key: str, paper: str, fig: str, row: str, r: int, methods: list[str], paths: list[str]
) -> dict:
    """One row's data point: its crops as main RGB boxes on one band, and its flags.

    The flags follow the release's fatal checks: a reference panel offered as a choice
    (``choice_is_context_panel``) and, when that leaves one method family, also
    ``single_method_family_after_ref_strip``.
    """
    reasons = []
    if REFERENCE_LABEL in methods:
        reasons.append("choice_is_context_panel")
        if len([m for m in methods if m != REFERENCE_LABEL]) < 2:
            reasons.append("single_method_family_after_ref_strip")
    w, h = CROP_SIZE
    boxes = [
        {
            "bbox_id": 40 * r + j,
            "bbox": [j * (w + 8), r * (h + 8), j * (w + 8) + w, r * (h + 8) + h],
            "crop_path": path,
            "method": _slug(method),
            "method_raw": method,
            "bbox_type": "main",
            "viz_type": "rgb",
            "row": row,
        }
        for j, (method, path) in enumerate(zip(methods, paths, strict=True))
    ]
    return {
        "data_point_key": key,
        "paper_id": paper,
        "fig_id": fig,
        "row": row,
        "evidence": {"bboxes": boxes},
        "quality_flags": {"benchmark_eligible": not reasons, "ineligible_reasons": reasons},
    }
