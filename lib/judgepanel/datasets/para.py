"""PARA (Yang et al., 2022): ``annotation/PARA-Images.csv`` and ``imgs/<sessionId>/<imageName>``.

The annotation file is a comma-separated table with one row per user and image.
``aestheticScore`` is the overall rating (1-5 in steps of 0.5); ``qualityScore`` (1-5, may
be fractional), ``compositionScore``, ``colorScore``, ``dofScore``, ``contentScore`` and
``lightScore`` (1-5) are attribute ratings; ``isObjectEmphasis``, ``imgEmotion``,
``difficultyOfJudgment``, ``contentPreference``, ``willingnessToShare`` and ``semantic``
follow.

Rubric mapping: technical quality -> ``qualityScore``, composition -> ``compositionScore``,
colour and tone -> ``colorScore`` (``quality``, ``composition``, ``colour`` here). An image
is named by its ``imageName`` when that is unique across sessions, else by
``sessionId/imageName``.
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
from judgepanel.datasets.para_giaa import giaa_present, load_giaa
from judgepanel.datasets.presence import apply_policy, check_policy

ANNOTATION_FILE = "annotation/PARA-Images.csv"
IMAGE_DIR = "imgs"
SCORE_RANGE = (1.0, 5.0)

# file column -> table column; all on 1-5
_RATED = {
    "aestheticScore": "score",
    "qualityScore": "quality",
    "compositionScore": "composition",
    "colorScore": "colour",
    "dofScore": "dof",
    "contentScore": "content",
    "lightScore": "light",
}
# optional columns kept as numbers when they are numbers (booleans become 0/1)
_NUMERIC_EXTRAS = {
    "isObjectEmphasis": "object_emphasis",
    "difficultyOfJudgment": "judgment_difficulty",
    "contentPreference": "content_preference",
    "willingnessToShare": "willingness_to_share",
}
# optional text columns; the image table keeps their most frequent value
_TEXT_EXTRAS = {"imgEmotion": "emotion", "semantic": "semantic"}
REQUIRED = ["sessionId", "imageName", "userId", *_RATED]
LICENCE = "not stated in the files: the terms of the PARA project page (research use)"
CITATION = (
    "Yang, Y., Xu, L., Li, L., Qie, N., Li, Y., Zhang, P., Guo, Y. (2022). Personalized "
    "image aesthetics assessment with rich attributes. CVPR."
)
_BOOLEANS = {"true": "1", "false": "0"}


def load_para(root: str | Path, *, missing_images: str = "error", sd_ddof: int = 0) -> Dataset:
    """Read a PARA folder (real or synthetic) into a checked `Dataset`.

    The per-user file is read where it is there; else the GIAA files
    (`judgepanel.datasets.para_giaa`), whose SDs are of ``sd_ddof`` (PARA's: 0).

    Raises:
        DatasetError: the annotation file is missing, not comma-separated or lacks
            columns, a rating is out of range, a user rated an image twice, or
            (``missing_images="error"``, see `judgepanel.datasets.presence`) rated images
            are absent from disk.
    """
    root, annotations = release_paths(root, ANNOTATION_FILE)
    check_policy(missing_images)
    if not annotations.is_file() and giaa_present(root):
        ds = load_giaa(
            root, missing_images=missing_images, sd_ddof=sd_ddof, licence=LICENCE,
            citation=CITATION,
        )  # fmt: skip
        return apply_policy(ds, missing_images)
    path = require_file(annotations, f"the PARA annotation file ({ANNOTATION_FILE})")
    header = first_line(path)
    if "," not in header:
        guess = next((d for d in ("=", ";", "\t", "|") if d in header), None)
        seen = f"it looks {guess!r}-delimited" if guess else "no delimiter was found"
        raise DatasetError(
            f"{path}: the delimiter is expected to be ',' as in the PARA release, but "
            f"{seen} (header: {header[:120]!r})"
        )
    try:
        text = {c: str for c in ("sessionId", "imageName", "userId", *_TEXT_EXTRAS)}
        raw = pd.read_csv(path, encoding="utf-8-sig", dtype=text, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot be parsed as comma-separated text ({exc})") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    require_columns(raw, REQUIRED, path)
    if raw.empty:
        raise DatasetError(f"{path}: has a header but no ratings")

    session = raw["sessionId"].str.strip()
    name = raw["imageName"].str.strip()
    pairs = pd.DataFrame({"s": session, "n": name}).drop_duplicates()
    unique_names = not pairs["n"].duplicated().any()
    image_id = name if unique_names else session + "/" + name

    ids = ["sessionId", "imageName", "userId"]
    ratings = pd.DataFrame({"image_id": image_id, "rater_id": raw["userId"].str.strip()})
    for column, out in _RATED.items():
        ratings[out] = numeric_column(raw, column, 1, 5, path, ids)
    ratings["session_id"] = session
    ratings["image_name"] = name
    for column, out in _NUMERIC_EXTRAS.items():
        if column in raw.columns:
            values = raw[column]
            if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
                text = values.astype(str).str.strip()
                text = text.str.lower().map(_BOOLEANS).fillna(text)
                parsed = pd.to_numeric(text, errors="coerce")
                values = parsed if parsed.notna().all() else values.astype(str)
            ratings[out] = values
    for column, out in _TEXT_EXTRAS.items():
        if column in raw.columns:
            ratings[out] = raw[column].str.strip()
    check_duplicates(
        pd.DataFrame({"image": image_id, "userId": ratings["rater_id"]}), ["image", "userId"], path
    )

    first = ratings.drop_duplicates("image_id")
    paths = pd.Series(
        [
            str(root / IMAGE_DIR / s / n)
            for s, n in zip(first["session_id"], first["image_name"], strict=True)
        ],
        index=first["image_id"].to_numpy(),
    )
    means = {"mean_score": "score"}
    means |= {out: out for out in _RATED.values() if out != "score"}
    means |= {
        out: out
        for out in _NUMERIC_EXTRAS.values()
        if out in ratings.columns and pd.api.types.is_numeric_dtype(ratings[out])
    }
    modes = {out: out for out in _TEXT_EXTRAS.values() if out in ratings.columns}
    images = image_table(ratings, paths, means, modes | {"session_id": "session_id"})
    known = {*REQUIRED, *_NUMERIC_EXTRAS, *_TEXT_EXTRAS}
    ds = Dataset(
        name="para",
        root=root,
        images=images,
        ratings=ratings,
        score_range=SCORE_RANGE,
        attribute_ranges={out: SCORE_RANGE for out in _RATED.values()},
        licence=LICENCE,
        citation=CITATION,
        notes=unread_note(path, [c for c in raw.columns if c not in known]),
    )
    return apply_policy(ds, missing_images)
