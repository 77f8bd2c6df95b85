"""LAPIS (Maerten et al., 2025): the individual-ratings CSV, ``images/`` and ``imageset/``.

``annotation/LAPIS_individualratings_metaANDdemodata.csv`` has one row per participant and
image: ``image_id``, ``file`` (``<art_type>/<image>.jpg`` under ``images/``), ``response``
(the aesthetic rating, 0-100), ``participant_id``, the participant's demographics (age,
nationality, ``demo_gender``, ``demo_edu``, ...) and the image's ``style`` and ``genre``.
About 24 participants rate each image; the noise ceiling splits them as raters.
``imageset/{Train,Val,Test}ImageSet.txt`` name each split's images, one file name a line
(an image id is accepted too); without that folder there is no split.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import (
    Dataset,
    DatasetError,
    check_duplicates,
    numeric_column,
    release_paths,
    require_file,
)
from judgepanel.datasets._tables import fail_rows, read_table, require_image_files, text_lines
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute
from judgepanel.datasets.presence import apply_policy

KIND = "lapis"
LICENCE = "not stated in the files: the terms of the LAPIS release page (research use)"
RATINGS_FILE = "annotation/LAPIS_individualratings_metaANDdemodata.csv"
IMAGE_DIR = "images"
SET_FILES = {
    "train": "TrainImageSet.txt",
    "validation": "ValImageSet.txt",
    "test": "TestImageSet.txt",
}
SET_DIR = "imageset"
REQUIRED = ["image_id", "file", "response", "participant_id"]
RATER_COLUMNS = ("age", "nationality", "demo_gender", "demo_edu")
"""Participant columns kept beside each rating when the file has them."""
IMAGE_COLUMNS = ("style", "genre")
"""Image columns kept per image when the file has them (their most frequent value)."""
ATTRIBUTES = (Attribute("response", "score", 0.0, 100.0, True, HOLISTIC),)
CITATION = (
    "Maerten, A.-S., Chen, L.-W., De Winter, S., Bossens, C., Wagemans, J. (2025). LAPIS: "
    "A novel dataset for personalized image aesthetic assessment. CVPR Workshops."
)


def load_lapis(root: str | Path, *, missing_images: str = "error") -> Dataset:
    """Read a LAPIS folder as released into a checked `Dataset` (per-rater ratings).

    Raises:
        DatasetError: the ratings file or an image is missing, a column is missing, a
            response is not a number in 0-100, an id is empty, one image id names two
            files, a participant rated an image twice, or a split file names an unknown
            image or one image twice, or (``missing_images="error"``, see
            `judgepanel.datasets.presence`) an image is absent.
    """
    root, ratings = release_paths(root, RATINGS_FILE)
    path = require_file(ratings, f"the LAPIS ratings file ({RATINGS_FILE})")
    raw = read_table(path, REQUIRED, None)
    ids = ["image_id", "participant_id"]
    for column in ("image_id", "file", "participant_id"):
        fail_rows(path, raw, raw[column] == "", column, "an empty cell", ids)
    response = numeric_column(raw, "response", 0, 100, path, ids)
    check_duplicates(raw, ["image_id", "participant_id"], path)
    files = raw.groupby("image_id", sort=False)["file"].transform("first")
    fail_rows(path, raw, raw["file"] != files, "file", "another file for the same image_id", ids)

    first = raw.drop_duplicates("image_id")
    paths = [str(root / IMAGE_DIR / f) for f in first["file"]]
    require_image_files(path, first, paths, "file", ["image_id"], policy=missing_images)
    images = pd.DataFrame({"image_id": first["image_id"].to_numpy(), "path": paths})
    images["art_type"] = [Path(f).parent.as_posix() for f in first["file"]]
    for column in IMAGE_COLUMNS:
        if column in raw.columns:
            modes = raw.groupby("image_id")[column].agg(lambda v: v.value_counts().index[0])
            images[column] = images["image_id"].map(modes).to_numpy()
    if (root / SET_DIR).is_dir():
        images["split"] = _splits(root / SET_DIR, first)

    ratings = pd.DataFrame(
        {
            "image_id": raw["image_id"],
            "attribute": "score",
            "value": response,
            "rater_id": raw["participant_id"],
        }
    )
    ds = assemble(
        KIND, root, images, ATTRIBUTES, path, ratings=ratings, licence=LICENCE,
        citation=CITATION, notes=(f"read {Path(RATINGS_FILE).name}",),
    )  # fmt: skip
    ds = apply_policy(ds, missing_images)
    extra = [c for c in RATER_COLUMNS if c in raw.columns]
    if not extra:
        return ds
    people = raw[["image_id", "participant_id", *extra]].rename(
        columns={"participant_id": "rater_id"}
    )
    wide = ds.ratings.merge(people, on=["image_id", "rater_id"], how="left")
    return dataclasses.replace(ds, ratings=wide)


def _splits(folder: Path, first: pd.DataFrame) -> np.ndarray:
    """Each image's split from the image-set files (NaN where none names it)."""
    by_name = {Path(f).name: i for i, f in zip(first["image_id"], first["file"], strict=True)}
    by_name.update({str(i): i for i in first["image_id"]})
    split: dict[str, str] = {}
    for name, file_name in SET_FILES.items():
        path = folder / file_name
        if not path.is_file():
            continue
        for lineno, text in text_lines(path):
            image_id = by_name.get(Path(text).name, by_name.get(text))
            if image_id is None:
                raise DatasetError(f"{path}:{lineno}: image {text!r} is not in the ratings file")
            if image_id in split and split[image_id] != name:
                raise DatasetError(
                    f"{path}:{lineno}: image {text!r} is also in the {split[image_id]} set"
                )
            split[image_id] = name
    return first["image_id"].map(split).to_numpy()
