"""EVA (Kang et al., 2020): ``data/votes_filtered.csv`` and ``EVA_together/<image_id>.jpg``.

The votes file has one row per rater and image, ``=`` as its delimiter and possibly a UTF-8
byte-order mark. ``score`` is the overall rating (integers 0-10); ``difficulty`` runs from 1
(very difficult) to 4 (very easy); ``visual`` (light and colour), ``composition``,
``quality`` and ``semantic`` run 1-4; the columns ``1``-``4`` are 0/1 checkboxes saying
whether light and colour, composition, quality or semantics mattered to the rater.

Rubric mapping: technical quality -> ``quality``, composition -> ``composition``, colour
and tone -> ``visual`` (called ``colour`` in the tables returned here).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgepanel.datasets._common import (
    Dataset,
    DatasetError,
    check_duplicates,
    first_line,
    image_table,
    numeric_column,
    release_paths,
    require_columns,
    require_file,
    unread_note,
)
from judgepanel.datasets.presence import apply_policy, check_policy

VOTES_FILE = "data/votes_filtered.csv"
IMAGE_DIRS = ("EVA_together", "images/EVA_together")
DELIMITER = "="
SCORE_RANGE = (0.0, 10.0)

# file column -> (table column, lowest, highest)
_RATED = {
    "score": ("score", 0, 10),
    "quality": ("quality", 1, 4),
    "composition": ("composition", 1, 4),
    "visual": ("colour", 1, 4),
    "difficulty": ("difficulty", 1, 4),
    "semantic": ("semantic", 1, 4),
}
# checkbox column -> table column (the share of raters who ticked it, per image)
_FACTORS = {
    "1": "mattered_colour",
    "2": "mattered_composition",
    "3": "mattered_quality",
    "4": "mattered_semantic",
}
REQUIRED = ["image_id", "user_id", *_RATED]
LICENCE = "CC0 1.0"
CITATION = (
    "Kang, C., Valenzise, G., Dufaux, F. (2020). EVA: An explainable visual aesthetics "
    "dataset. Joint Workshop on Aesthetic and Technical Quality Assessment of Multimedia "
    "and Media Analytics for Societal Trends (ATQAM/MAST), ACM Multimedia."
)


def load_eva(root: str | Path, *, missing_images: str = "error") -> Dataset:
    """Read an EVA folder (real or synthetic) into a checked `Dataset`.

    Raises:
        DatasetError: the votes file or image folder is missing, the delimiter is not
            ``=``, columns are missing, a rating is out of range or not a whole number, a
            rater rated an image twice, or (``missing_images="error"``, see
            `judgepanel.datasets.presence`) rated images are absent from disk.
    """
    root, given = release_paths(root, VOTES_FILE)
    check_policy(missing_images)
    votes = require_file(given, f"the EVA votes file ({VOTES_FILE})")
    header = first_line(votes)
    if DELIMITER not in header:
        guess = next((d for d in (",", ";", "\t", "|") if d in header), None)
        seen = f"it looks {guess!r}-delimited" if guess else "no delimiter was found"
        raise DatasetError(
            f"{votes}: the delimiter is expected to be '=' as in the EVA release, but "
            f"{seen} (header: {header[:120]!r})"
        )
    try:
        raw = pd.read_csv(
            votes,
            sep=DELIMITER,
            encoding="utf-8-sig",
            dtype={"image_id": str, "user_id": str, "vote_time": str},
            keep_default_na=False,
        )
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{votes}: cannot be parsed as '='-delimited text ({exc})") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    require_columns(raw, REQUIRED, votes)
    if raw.empty:
        raise DatasetError(f"{votes}: has a header but no votes")

    ids = ["image_id", "user_id"]
    ratings = pd.DataFrame(
        {
            "image_id": raw["image_id"].astype(str).str.strip(),
            "rater_id": raw["user_id"].astype(str).str.strip(),
        }
    )
    # Every EVA rating is a whole number (the overall score 0-10, attributes 1-4, boxes 0/1).
    for column, (name, lo, hi) in _RATED.items():
        ratings[name] = numeric_column(raw, column, lo, hi, votes, ids, step=1)
    for column, name in _FACTORS.items():
        if column in raw.columns:
            ratings[name] = numeric_column(raw, column, 0, 1, votes, ids, step=1)
    if "vote_time" in raw.columns:
        ratings["vote_time"] = raw["vote_time"]
    check_duplicates(
        raw.assign(image_id=ratings["image_id"], user_id=ratings["rater_id"]), ids, votes
    )

    image_dir = next((root / d for d in IMAGE_DIRS if (root / d).is_dir()), None)
    if image_dir is None and missing_images == "error":
        raise DatasetError(
            f"{root}: no image folder; expected {' or '.join(d + '/' for d in IMAGE_DIRS)} "
            "holding <image_id>.jpg, or load with missing_images='keep' (labels alone)"
        )
    image_dir = image_dir or root / IMAGE_DIRS[0]
    unique_ids = ratings["image_id"].drop_duplicates()
    paths = pd.Series([str(image_dir / f"{i}.jpg") for i in unique_ids], index=unique_ids)
    means = {"mean_score": "score", "quality": "quality", "composition": "composition"}
    means |= {"colour": "colour", "difficulty": "difficulty", "semantic": "semantic"}
    means |= {name: name for name in _FACTORS.values() if name in ratings.columns}
    images = image_table(ratings, paths, means, {})
    known = {*REQUIRED, *_FACTORS, "vote_time"}
    ds = Dataset(
        name="eva",
        root=root,
        images=images,
        ratings=ratings,
        score_range=SCORE_RANGE,
        attribute_ranges={name: (float(lo), float(hi)) for name, lo, hi in _RATED.values()},
        licence=LICENCE,
        citation=CITATION,
        notes=unread_note(votes, [c for c in raw.columns if c not in known]),
    )
    return apply_policy(ds, missing_images)
