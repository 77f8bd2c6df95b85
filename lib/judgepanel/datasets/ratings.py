"""The generic ``ratings`` format: a folder any rated image dataset can be written into.

``dataset.yaml`` (:mod:`judgepanel.datasets.card`) describes the dataset and its
attributes; ``images.csv`` lists the images (``image_id``, ``path`` under the card's
images folder, optional ``split`` and ``group``). The ratings come in one or both of:

- ``ratings.csv``, long: ``image_id``, ``attribute``, ``value``, optional ``rater_id`` and
  ``count``. A row with a rater id is one rater's rating (count empty or 1); rows without
  are anonymous votes, ``count`` of them at that value (empty: 1). One file so holds
  per-rater ratings and vote histograms alike; within one attribute, every row has a
  rater id or none has.
- ``summary.csv``: ``image_id``, ``attribute``, ``mean``, optional ``sd`` and ``n``, for
  releases that give only these. Within one attribute, ``sd`` (and ``n``) is given on
  every row or on none. Where ``ratings.csv`` also holds the attribute, the summary's
  mean is the image's released mean and the ratings give the noise ceiling.

Every bad cell is a `DatasetError` naming the file, the column and its lines.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import Dataset, DatasetError, numeric_column, require_file
from judgepanel.datasets._tables import (
    fail_rows,
    fail_unless_unique,
    read_table,
    require_image_files,
)
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import Attribute
from judgepanel.datasets.card import read_card
from judgepanel.datasets.presence import apply_policy, check_policy

KIND = "ratings"
CARD_FILE = "dataset.yaml"
IMAGES_FILE = "images.csv"
RATINGS_FILE = "ratings.csv"
SUMMARY_FILE = "summary.csv"


def load_ratings(root: str | Path, *, missing_images: str = "error") -> Dataset:
    """Read a folder in the generic ``ratings`` format into a checked `Dataset`.

    Raises:
        DatasetError: the card, a table or an image file is missing or malformed; the
            message names the file, and the key and line or the column and lines.
            Images absent from disk are handled by ``missing_images``
            (`judgepanel.datasets.presence`).
    """
    check_policy(missing_images)
    root = Path(root).expanduser().resolve()
    if not root.is_dir():
        raise DatasetError(f"{root}: not a folder (expected {CARD_FILE}, {IMAGES_FILE}, ...)")
    card = read_card(require_file(root / CARD_FILE, f"the dataset card ({CARD_FILE})"))
    listed = require_file(root / IMAGES_FILE, "the image list")
    images = image_list(listed, card.images, missing_images)
    attributes = {a.name: a for a in card.attributes}
    have_ratings = (root / RATINGS_FILE).is_file()
    if not have_ratings and not (root / SUMMARY_FILE).is_file():
        raise DatasetError(f"{root}: holds neither {RATINGS_FILE} nor {SUMMARY_FILE}")
    ratings = votes = summary = None
    if have_ratings:
        ratings, votes = _ratings(root / RATINGS_FILE, attributes, images)
    notes = []
    if (root / SUMMARY_FILE).is_file():
        summary = _summary(root / SUMMARY_FILE, attributes, images)
        if card.sd_ddof == 0:
            n = summary["n"].to_numpy(float)
            summary["sd"] = summary["sd"] * np.sqrt(n / np.where(n > 1, n - 1, np.nan))
        if summary["sd"].notna().any():
            kind = "population SDs (ddof 0)" if card.sd_ddof == 0 else "sample SDs (ddof 1)"
            notes.append(f"{SUMMARY_FILE}: SDs read as {kind}, by the card's sd_ddof")
    ds = assemble(
        card.name,
        root,
        images,
        card.attributes,
        root,
        ratings=ratings,
        votes=votes,
        summary=summary,
        licence=card.licence,
        citation=card.citation,
        notes=notes,
    )
    return apply_policy(ds, missing_images)


def image_list(path: Path, image_root: Path, policy: str = "error") -> pd.DataFrame:
    """``images.csv``: ``image_id`` and ``path`` (under ``image_root``, made absolute),
    optional ``split`` and ``group``; ids unique, files on disk as ``policy`` says."""
    raw = read_table(path, ["image_id", "path"], ["split", "group"])
    ids = ["image_id"]
    fail_unless_unique(path, raw, "image_id")
    fail_rows(path, raw, raw["path"] == "", "path", "an empty path", ids)
    paths = [str(image_root / p) for p in raw["path"]]
    require_image_files(path, raw, paths, "path", ids, policy=policy)
    images = pd.DataFrame({"image_id": raw["image_id"].to_numpy(), "path": paths})
    for column in ("split", "group"):
        if column in raw.columns and (raw[column] != "").any():
            images[column] = raw[column].replace("", np.nan).to_numpy()
    return images


def _checked_keys(
    path: Path, raw: pd.DataFrame, attributes: dict[str, Attribute], images: pd.DataFrame
) -> None:
    ids = ["image_id", "attribute"]
    stray = ~raw["image_id"].isin(set(images["image_id"]))
    fail_rows(path, raw, stray, "image_id", f"an image id not in {IMAGES_FILE}", ids)
    unknown = ~raw["attribute"].isin(set(attributes))
    known = ", ".join(attributes)
    fail_rows(path, raw, unknown, "attribute", f"an attribute not in {CARD_FILE} ({known})", ids)


def _in_range(
    path: Path, raw: pd.DataFrame, column: str, attributes: dict[str, Attribute]
) -> pd.Series:
    """``column`` as numbers within each row's attribute range, or an error."""
    values = pd.Series(np.nan, index=raw.index)
    for name, a in attributes.items():
        rows = raw[raw["attribute"] == name]
        ids = ["image_id", "attribute"]
        values[rows.index] = numeric_column(rows, column, a.low, a.high, path, ids)
    return values


def _whole(path: Path, raw: pd.DataFrame, column: str, lowest: int) -> pd.Series:
    """``column`` as whole numbers of at least ``lowest`` (NaN where empty), or an error."""
    values = pd.Series(np.nan, index=raw.index)
    given = raw[raw[column] != ""]
    ids = ["image_id", "attribute"]
    values[given.index] = numeric_column(given, column, lowest, np.inf, path, ids, step=1)
    return values


def _all_or_none(path: Path, raw: pd.DataFrame, column: str, what: str) -> None:
    """Within each attribute, ``column`` is given on every row or on none."""
    given = raw[column] != ""
    some = given.groupby(raw["attribute"]).transform("any")
    fail_rows(
        path,
        raw,
        some & ~given,
        column,
        f"an empty cell where other rows of the same attribute give {what}",
        ["image_id", "attribute"],
    )


def _ratings(
    path: Path, attributes: dict[str, Attribute], images: pd.DataFrame
) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """Per-rater ratings and anonymous votes of ``ratings.csv``, long, by table column."""
    raw = read_table(path, ["image_id", "attribute", "value"], ["rater_id", "count"])
    for column in ("rater_id", "count"):
        if column not in raw.columns:
            raw[column] = ""
    _checked_keys(path, raw, attributes, images)
    value = _in_range(path, raw, "value", attributes)
    count = _whole(path, raw, "count", 0).fillna(1.0)
    _all_or_none(path, raw, "rater_id", "a rater id")
    rated = (raw["rater_id"] != "").to_numpy()
    fail_rows(
        path,
        raw,
        rated & (count != 1).to_numpy(),
        "count",
        "a count other than 1 on a row with a rater id",
        ["image_id", "attribute", "rater_id"],
    )
    keys = ["image_id", "attribute", "rater_id"]
    repeated = rated & raw.duplicated(keys, keep=False).to_numpy()
    fail_rows(path, raw, repeated, "rater_id", "a rater rating one image twice", keys)
    column = raw["attribute"].map({k: a.column for k, a in attributes.items()})
    long = pd.DataFrame(
        {
            "image_id": raw["image_id"],
            "attribute": column,
            "value": value,
            "rater_id": raw["rater_id"],
            "count": count,
        }
    )
    ratings = long[rated].drop(columns="count")
    votes = long[~rated].groupby(["image_id", "attribute", "value"], as_index=False, sort=False)
    vote_counts = votes["count"].sum()
    return (ratings if len(ratings) else None), (vote_counts if len(vote_counts) else None)


def _summary(path: Path, attributes: dict[str, Attribute], images: pd.DataFrame) -> pd.DataFrame:
    """Each image's mean, SD and n per attribute, long, by table column."""
    raw = read_table(path, ["image_id", "attribute", "mean"], ["sd", "n"])
    for column in ("sd", "n"):
        if column not in raw.columns:
            raw[column] = ""
    _checked_keys(path, raw, attributes, images)
    keys = ["image_id", "attribute"]
    fail_rows(
        path, raw, raw.duplicated(keys, keep=False), "attribute", "an image listed twice", keys
    )
    mean = _in_range(path, raw, "mean", attributes)
    sd = pd.to_numeric(raw["sd"], errors="coerce")
    bad_sd = (raw["sd"] != "") & (sd.isna() | (sd < 0))
    fail_rows(path, raw, bad_sd, "sd", "a value that is not a number of at least 0", keys)
    n = _whole(path, raw, "n", 1)
    _all_or_none(path, raw, "sd", "an SD")
    _all_or_none(path, raw, "n", "a rating count")
    return pd.DataFrame(
        {
            "image_id": raw["image_id"],
            "attribute": raw["attribute"].map({k: a.column for k, a in attributes.items()}),
            "mean": mean,
            "sd": sd.astype(float),
            "n": n,
        }
    )
