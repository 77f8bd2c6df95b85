"""The human label (and a thumbnail) of each item of a dataset, for the call explorer.

Read from the dataset's own files by its loader: rated-image datasets (EVA, PARA, the
generic ``ratings`` format and the adapted releases) give each image's mean human score,
VAB each task's gold best and worst image, VisionQ each question and its gold letter.
Thumbnails are small JPEG data URLs, so a page that shows them stays one file.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgepanel.core.config import DatasetRef
from judgepanel.datasets import DatasetError, load_dataset, load_vab
from judgepanel.datasets.kinds import get_kind
from judgepanel.datasets.visionq import load_questions

THUMB_PX = 72
LabelError = (DatasetError, OSError, ValueError)
"""What reading a dataset's labels may raise: the store alone still gives every answer."""


def _thumbnail(data: bytes | str | Path) -> str:
    """A small JPEG data URL of an image (a file path or its bytes)."""
    from PIL import Image  # heavy: loaded only when thumbnails are made

    with Image.open(io.BytesIO(data) if isinstance(data, bytes) else data) as img:
        img = img.convert("RGB")
        img.thumbnail((THUMB_PX, THUMB_PX))
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=70)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()


def _rated_labels(ref: DatasetRef) -> dict[str, dict[str, Any]]:
    """Each image's human label: its overall mean, or without one its attributes' means."""
    ds = load_dataset(ref.kind, str(ref.root), **dict(ref.options))
    if ds.has_overall:
        labels = ds.images["mean_score"].map(lambda v: f"{v:.2f}")
    else:
        shown = [c for c in ds.attribute_ranges if c in ds.images.columns]
        labels = ds.images[shown].apply(
            lambda row: " · ".join(f"{c} {row[c]:.2f}" for c in shown if row[c] == row[c]),
            axis=1,
        )
    return {
        str(image_id): {"label": label, "thumb": _thumbnail(Path(path))}
        for image_id, path, label in zip(
            ds.images["image_id"], ds.images["path"], labels, strict=True
        )
    }


def _vab_labels(ref: DatasetRef) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for t in load_vab(ref.root).itertuples():
        best, worst = t.ground_truth_best, t.ground_truth_worst
        worst = worst if isinstance(worst, str) and worst else None
        task = f"{t.domain} · {t.substyle}; gold best {best}" + (
            f", gold worst {worst}" if worst else ""
        )
        out[str(t.task_id)] = {"label": task, "thumb": None}
        for letter, data in zip(t.labels, t.images, strict=True):
            role = {t.ground_truth_best: " (gold best)", t.ground_truth_worst: " (gold worst)"}
            out[f"{t.task_id}/{letter}"] = {
                "label": f"image {letter}{role.get(letter, '')} of {t.task_id}",
                "thumb": _thumbnail(bytes(data)),
            }
    return out


def _visionq_labels(ref: DatasetRef) -> dict[str, dict[str, Any]]:
    questions = load_questions(ref.root, ref.questions, ref.eligible)
    return {
        str(q.id): {"label": f"{q.question} Gold: ({q.gold}); axis {q.axis}", "thumb": None}
        for q in questions.itertuples()
    }


LabelReader = Callable[[DatasetRef], dict[str, dict[str, Any]]]

LABELS: dict[str, LabelReader] = {"vab": _vab_labels, "visionq": _visionq_labels}
"""Per task kind: the human label (and thumbnail) of each item, read from its files."""


def label_reader(kind: str) -> LabelReader | None:
    """How the items of a dataset kind get their human labels: every rated-image kind by
    its loader's mean scores, a task kind by its entry in `LABELS`; None: no labels."""
    if kind in LABELS:
        return LABELS[kind]
    try:
        return _rated_labels if get_kind(kind).rated else None
    except KeyError:
        return None


def item_noun(kind: str) -> str:
    """What one item of a dataset kind is called, for the counts a page shows: its
    registration's noun (``tasks`` for VAB, ``questions`` for VisionQ), else images."""
    try:
        return get_kind(kind).noun
    except KeyError:
        return "images"
