"""CADB (Zhang et al., 2021): ``composition_scores.json`` and ``images/``.

One JSON object maps each image's file name to ``{"scores": [five raters' 1-5 scores],
"dist": [the five levels' fractions], "mean": m}``. Rater positions are consistent within
an image but not named across images, which the per-rater split-half needs no more than
(it splits each image's raters). The composition score validates the rubric's
composition dimension; there is no overall rating.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import Dataset, DatasetError, release_paths, require_file
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import Attribute
from judgepanel.datasets.presence import apply_policy, check_policy

KIND = "cadb"
SCORES_FILE = "composition_scores.json"
IMAGE_DIR = "images"
ATTRIBUTES = (Attribute("scores", "composition", 1.0, 5.0, True, "composition"),)
MEAN_TOLERANCE = 0.051
"""How far a released mean (rounded to 0.1) may be from its scores' mean."""
CITATION = (
    "Zhang, B., Niu, L., Zhang, L. (2021). Image composition assessment with "
    "saliency-augmented multi-pattern pooling. BMVC."
)
LICENCE = "not stated in the files: the terms of the CADB repository (research use)"


def load_cadb(root: str | Path, *, missing_images: str = "error") -> Dataset:
    """Read a CADB folder as released into a `Dataset` of per-rater composition scores.

    Raises:
        DatasetError: the file is missing or not a JSON object of images, an entry lacks
            ``scores``, a score is not a whole number in 1-5, a released mean disagrees
            with its scores, or (``error``) an image is absent.
    """
    root, scores = release_paths(root, SCORES_FILE)
    check_policy(missing_images)
    path = require_file(scores, f"the CADB scores file ({SCORES_FILE})")
    try:
        entries = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(entries, dict) or not entries:
        raise DatasetError(f"{path}: expected one object mapping image names to their scores")
    rows = []
    for name, entry in entries.items():
        scores = entry.get("scores") if isinstance(entry, dict) else None
        if not isinstance(scores, list) or not scores:
            keys = ", ".join(entry) if isinstance(entry, dict) else type(entry).__name__
            raise DatasetError(
                f"{path}: image {name!r} has no list 'scores' (found: {keys}); each image is "
                '{"scores": [...], "dist": [...], "mean": m}'
            )
        values = np.asarray(scores, dtype=float)
        if ((values < 1) | (values > 5) | (values != np.round(values))).any():
            raise DatasetError(
                f"{path}: image {name!r} has a score outside the whole numbers 1-5: {scores}"
            )
        mean = entry.get("mean")
        if isinstance(mean, int | float) and abs(mean - values.mean()) > MEAN_TOLERANCE:
            raise DatasetError(
                f"{path}: image {name!r} has mean {mean} but its scores average "
                f"{values.mean():.3f}; fix the mean or the scores"
            )
        rows += [(name, v, str(k + 1)) for k, v in enumerate(values)]
    ratings = pd.DataFrame(rows, columns=["image_id", "value", "rater_id"])
    ratings["attribute"] = "composition"
    names = list(entries)
    images = pd.DataFrame({"image_id": names, "path": [str(root / IMAGE_DIR / n) for n in names]})
    notes = (f"read {SCORES_FILE}: raters are positions 1-5 within each image",)
    ds = assemble(
        KIND, root, images, ATTRIBUTES, path, ratings=ratings,
        licence=LICENCE, citation=CITATION, notes=notes,
    )  # fmt: skip
    return apply_policy(ds, missing_images)
