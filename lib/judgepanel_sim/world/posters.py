"""A second synthetic study: abstract posters rated on four properties on mixed scales.

The seed study is one rubric among many; this world is another, so that the report shows
a study the seed's code was not written for. Each poster is drawn from four latent
properties, each rendered into the pixels where a judge can see it:

- ``symmetry`` (0-1): how much of the right half mirrors the left;
- ``saturation`` (0-1): how pure the hues of the shapes and the ground are;
- ``brightness`` (0-1): how light the whole poster is;
- ``clutter`` (0-1): how many shapes, and how small, compete in the frame.

Five people of a pool of 25 rate every poster on every property, on the scales of the
study's rubric (``rubric/posters.yaml``): symmetry 0-2, saturation 1-5, brightness 1-7
and clutter as three named levels (values 0-2), each rating the latent on its scale plus
the rater's own bias and noise. There is no overall rating and no holistic question. The
latents go to the truth folder, which no loader reads; the judges see only the pixels.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from PIL import Image, ImageDraw

from judgepanel_sim.world.files import publish, write_manifest, write_truth_table
from judgepanel_sim.world.layout import TRUTH_DIR
from judgepanel_sim.world.render import to_jpeg

FOLDER = "synth-posters"
N_IMAGES = 300
N_RATERS, RATERS_PER_IMAGE = 25, 5
SIZE = (384, 288)
SCALES: dict[str, tuple[int, int]] = {
    "symmetry": (0, 2),
    "saturation": (1, 5),
    "brightness": (1, 7),
    "clutter": (0, 2),
}
"""Each property's rating scale (clutter's values are its three levels)."""
NOISE_SD, BIAS_SD = 0.22, 0.07
"""A rater's noise and the spread of raters' biases, as shares of a scale's span."""
CARD = {
    "name": "synth-posters",
    "images": "images",
    "licence": "synthetic, CC0 1.0",
    "citation": "judgepanel's synthetic world (simulated, not a real dataset)",
    "attributes": {
        name: {"range": list(span), "higher": "better", "dimension": name}
        for name, span in SCALES.items()
    },
}


def latents(n_images: int, seed: int) -> pd.DataFrame:
    """Each poster's four latents, independent and uniform on [0, 1], and its drawing seed."""
    rng = np.random.default_rng([seed, 7])
    table = pd.DataFrame({k: rng.uniform(0.0, 1.0, n_images) for k in SCALES})
    table.insert(0, "image_id", [f"poster{i:04d}" for i in range(n_images)])
    table["draw_seed"] = rng.integers(0, 2**31 - 1, n_images)
    table["file"] = [f"images/{i}.jpg" for i in table["image_id"]]
    return table


def _hsv(h: float, s: float, v: float) -> tuple[int, int, int]:
    rgb = Image.new("HSV", (1, 1), (int(h * 255) % 256, int(s * 255), int(v * 255)))
    return rgb.convert("RGB").getpixel((0, 0))


def draw(symmetry: float, saturation: float, brightness: float, clutter: float, seed: int):
    """One poster as an RGB array: shapes on a ground, the right half mirrored in part."""
    rng = np.random.default_rng(seed)
    width, height = SIZE
    value = 0.2 + 0.75 * brightness
    purity = 0.04 + 0.9 * saturation
    ground = _hsv(rng.uniform(), purity * 0.55, value)
    img = Image.new("RGB", SIZE, ground)
    pen = ImageDraw.Draw(img)
    n_shapes = 2 + round(clutter * 30)
    largest = 0.45 - 0.3 * clutter  # a busy poster has many small shapes
    for _ in range(n_shapes):
        radius = rng.uniform(0.3, 1.0) * largest * height
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        colour = _hsv(
            rng.uniform(),
            float(np.clip(purity + rng.normal(0, 0.05), 0, 1)),
            float(np.clip(value + rng.normal(0, 0.12), 0, 1)),
        )
        box = (cx - radius, cy - radius * rng.uniform(0.5, 1.5), cx + radius, cy + radius)
        edge = _hsv(rng.uniform(), purity, 1.0 - value)  # outlines: a busy poster's edges
        shape = pen.ellipse if rng.uniform() < 0.5 else pen.rectangle
        shape(box, fill=colour, outline=edge, width=1 + round(2 * clutter))
    free = np.asarray(img, dtype=np.float64)
    mirrored = free.copy()
    half = width // 2
    mirrored[:, width - half :] = free[:, :half][:, ::-1]
    out = symmetry * mirrored + (1.0 - symmetry) * free
    return np.clip(np.round(out), 0, 255).astype(np.uint8)


def ratings(images: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Five raters of the pool rate every poster on every property, long."""
    rng = np.random.default_rng([seed, 11])
    bias = {k: rng.normal(0, BIAS_SD, N_RATERS) for k in SCALES}
    rows = []
    for row in images.itertuples():
        raters = rng.choice(N_RATERS, RATERS_PER_IMAGE, replace=False)
        for r in sorted(raters):
            for name, (low, high) in SCALES.items():
                span = high - low
                raw = (
                    low
                    + getattr(row, name) * span
                    + span * (bias[name][r] + rng.normal(0, NOISE_SD))
                )
                value = int(np.clip(np.round(raw), low, high))
                rows.append((row.image_id, name, value, f"rater{r:02d}"))
    return pd.DataFrame(rows, columns=["image_id", "attribute", "value", "rater_id"])


def write_posters(out: Path, n_images: int = N_IMAGES, seed: int = 20261204) -> Path:
    """Write the posters world into ``out/synth-posters`` (a ``ratings`` folder) through a
    partial folder, and its latents into ``out/truth``."""
    out = Path(out)
    final, tmp = out / FOLDER, out / f".{FOLDER}.partial"
    table = latents(n_images, seed)
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "images").mkdir(parents=True)
    for row in table.itertuples():
        pixels = draw(row.symmetry, row.saturation, row.brightness, row.clutter, row.draw_seed)
        (tmp / row.file).write_bytes(to_jpeg(Image.fromarray(pixels), 92))
    (tmp / "dataset.yaml").write_text(yaml.safe_dump(CARD, sort_keys=False), encoding="utf-8")
    images = pd.DataFrame(
        {"image_id": table["image_id"], "path": [f"{i}.jpg" for i in table["image_id"]]}
    )
    images.to_csv(tmp / "images.csv", index=False, lineterminator="\n")
    ratings(table, seed).to_csv(tmp / "ratings.csv", index=False, lineterminator="\n")
    write_truth_table(table, out / TRUTH_DIR, FOLDER, seed)
    publish(tmp, final)
    write_manifest(out / TRUTH_DIR, FOLDER, {"seed": seed, "n_images": n_images})
    return final
