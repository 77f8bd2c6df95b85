"""AVA (Murray et al., 2012): ``AVA.txt``, the official test list, ``images/<image_id>.jpg``.

``AVA.txt`` has one image a line and 15 space-separated columns: the line's index, the
image id, the votes for the scores 1 to 10, two semantic tags (0: none; names in
``tags.txt``) and the challenge id (``challenges.txt``). There are no rater ids: an
image's votes (about 200) are a histogram, kept as anonymous votes, and the noise ceiling
splits them as exchangeable votes. ``aesthetics_image_lists/generic_test.jpgl`` lists the
official test ids, one a line; every other image is ``train``. No licence is stated by
the release; the images are their photographers'.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import (
    Dataset,
    DatasetError,
    numeric_column,
    release_paths,
    require_file,
)
from judgepanel.datasets._tables import (
    fail_rows,
    fail_unless_unique,
    require_image_files,
    text_lines,
)
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute
from judgepanel.datasets.presence import apply_policy

KIND = "ava"
VOTES_FILE = "AVA.txt"
TEST_LIST = "aesthetics_image_lists/generic_test.jpgl"
IMAGE_DIR = "images"
LEVELS = tuple(range(1, 11))
COLUMNS = ["index", "image_id", *(f"votes_{k}" for k in LEVELS), "tag1", "tag2", "challenge_id"]
"""AVA.txt's columns, as named in error messages."""
CITATION = (
    "Murray, N., Marchesotti, L., Perronnin, F. (2012). AVA: A large-scale database for "
    "aesthetic visual analysis. CVPR."
)
ATTRIBUTES = (Attribute("score", "score", 1.0, 10.0, True, HOLISTIC),)
LICENCE = "not stated by the release: research use; the images are their photographers'"


def load_ava(root: str | Path, *, missing_images: str = "error") -> Dataset:
    """Read an AVA folder as released into a checked `Dataset` (votes, no raters).

    Raises:
        DatasetError: a file is missing, a line of ``AVA.txt`` does not have 15 columns,
            a count, tag or id is not a whole number, an image has no vote or appears
            twice, a test id is not in ``AVA.txt``, or (``missing_images="error"``, see
            `judgepanel.datasets.presence`) an image file is absent.
    """
    root, votes = release_paths(root, VOTES_FILE)
    path = require_file(votes, f"the AVA votes file ({VOTES_FILE})")
    raw = _votes_table(path)
    ids = ["image_id"]
    for column in COLUMNS:
        if column != "image_id":
            numeric_column(raw, column, 0, np.inf, path, ids, step=1, first_line=1)
    numeric_column(raw, "image_id", 0, np.inf, path, ["index"], step=1, first_line=1)
    fail_unless_unique(path, raw, "image_id", first_line=1)
    counts = raw[[f"votes_{k}" for k in LEVELS]].astype(float).astype(np.int64).to_numpy()
    empty = counts.sum(axis=1) == 0
    fail_rows(path, raw, empty, "image_id", "an image without votes", ids, first_line=1)
    folder = str(root / IMAGE_DIR)
    files = [os.path.join(folder, f"{i}.jpg") for i in raw["image_id"]]
    require_image_files(path, raw, files, "image_id", ids, first_line=1, policy=missing_images)

    test = _test_ids(require_file(root / TEST_LIST, f"the official test list ({TEST_LIST})"), raw)
    images = pd.DataFrame({"image_id": raw["image_id"].to_numpy(), "path": files})
    images["split"] = np.where(images["image_id"].isin(test), "test", "train")
    for column in ("tag1", "tag2", "challenge_id"):
        images[column] = raw[column].astype(int).to_numpy()
    image, level = np.nonzero(counts)
    votes = pd.DataFrame(
        {
            "image_id": images["image_id"].to_numpy()[image],
            "attribute": "score",
            "value": np.asarray(LEVELS, dtype=float)[level],
            "count": counts[image, level].astype(float),
        }
    )
    ds = assemble(
        KIND, root, images, ATTRIBUTES, path, votes=votes, licence=LICENCE, citation=CITATION,
        notes=(f"read {VOTES_FILE} (vote counts for 1..10) and {TEST_LIST}",),
    )  # fmt: skip
    return apply_policy(ds, missing_images)


def _votes_table(path: Path) -> pd.DataFrame:
    """AVA.txt's columns (numbers where they parse), indexed by line number - 1."""
    try:
        raw = pd.read_csv(
            path,
            sep=r"\s+",
            header=None,
            names=COLUMNS,
            dtype={"image_id": str},
            skip_blank_lines=False,
            keep_default_na=False,
            na_values=[""],
        )
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be parsed as {len(COLUMNS)} columns ({exc})") from None
    raw = raw.dropna(how="all")
    if raw.empty:
        raise DatasetError(f"{path}: holds no images")
    short = raw[COLUMNS[-1]].isna().to_numpy()
    if short.any():
        row = int(np.argmax(short))
        found = int(raw.iloc[row].notna().sum())
        raise DatasetError(
            f"{path}:{raw.index[row] + 1}: expected {len(COLUMNS)} space-separated columns "
            f"(index, image_id, 10 vote counts, 2 tags, challenge id), found {found}"
        )
    return raw


def _test_ids(path: Path, raw: pd.DataFrame) -> set[str]:
    """The official test ids; each must be an image of AVA.txt."""
    known = set(raw["image_id"])
    test = set()
    for lineno, text in text_lines(path):
        image_id = text.split()[0]
        if image_id not in known:
            raise DatasetError(f"{path}:{lineno}: test image {image_id!r} is not in {VOTES_FILE}")
        test.add(image_id)
    return test
