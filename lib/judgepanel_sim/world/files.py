"""Writing a synthetic world's files: rendered images, the truth table, manifests, publishing.

Shared by every image world (`judgepanel_sim.world.world`, `judgepanel_sim.world.ava`).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pandas as pd

from judgepanel_sim.world.aesthetic import picture
from judgepanel_sim.world.render import render, to_jpeg

FORMAT_VERSION = 1


def write_images(images: pd.DataFrame, folder: Path) -> None:
    """Render every image and write it as JPEG at the quality its execution calls for."""
    made: set[Path] = set()
    for row in images.to_dict("records"):
        scene, execution = picture(row["content"], row)
        img = render(scene, replace(execution, jpeg_quality=100))
        target = folder / row["file"]
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        target.write_bytes(to_jpeg(img, execution.jpeg_quality))


def write_truth_table(images: pd.DataFrame, truth: Path, name: str, seed: int) -> None:
    """Latents and knobs, outside the dataset folder: for tests and the world card only."""
    truth.mkdir(parents=True, exist_ok=True)
    tmp = truth / f".{name}-latents.csv.partial"
    images.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")
    tmp.replace(truth / f"{name}-latents.csv")
    write_manifest(truth, name, {"seed": seed, "n_images": len(images)})


def write_manifest(truth: Path, name: str, params: dict) -> None:
    truth.mkdir(parents=True, exist_ok=True)
    body = {"world": name, "format_version": FORMAT_VERSION, **params}
    tmp = truth / f".{name}.json.partial"
    tmp.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(truth / f"{name}.json")


def read_manifest(truth: Path, name: str) -> dict | None:
    try:
        return json.loads((truth / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def publish(tmp: Path, final: Path) -> None:
    """Move a finished world into place; the old one (if any) is removed only afterwards."""
    old = final.with_name(f".{final.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    if old.exists():
        shutil.rmtree(old)
