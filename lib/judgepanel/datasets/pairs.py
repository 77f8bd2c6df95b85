"""The generic ``pairs`` format: human pairwise preferences, or a rated dataset to pair.

A ``pairs`` folder holds ``images.csv`` (``image_id``, ``path`` relative to the folder) and
``pairs.csv``: one comparison a line, ``image_a``, ``image_b``, ``winner`` (``a``, ``b`` or
``tie``) and an optional ``rater``. Every bad line is a `DatasetError` naming the file and
its line: an image not listed in ``images.csv``, an image paired with itself, a winner
other than ``a``, ``b`` or ``tie``. Nothing is written.

With ``rated: KIND`` the folder is instead a rated dataset of that kind (an EVA or a
``ratings`` folder): its images and human means are read by the kind's own loader, and
the pairwise study samples the pairs from them
(:func:`judgepanel.studies.pairwise.sampling.sample_pairs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgepanel.datasets._common import Dataset, DatasetError, require_file
from judgepanel.datasets._tables import fail_rows, read_table
from judgepanel.datasets.kinds import get_kind
from judgepanel.datasets.presence import check_policy, on_disk
from judgepanel.datasets.ratings import image_list

KIND = "pairs"
IMAGES_FILE = "images.csv"
PAIRS_FILE = "pairs.csv"
WINNERS: tuple[str, ...] = ("a", "b", "tie")
"""The values ``winner`` takes: the first image, the second, or neither."""


@dataclass(frozen=True)
class PairLabels:
    """A ``pairs`` dataset: its images and its human comparisons, or a rated dataset.

    Attributes:
        name: the dataset's short name (its folder's, or the rated dataset's).
        root: the folder.
        images: ``image_id`` and ``path`` (absolute), one row per image; for a rated
            source, the rated dataset's image table (human means included).
        pairs: one row per human comparison: ``image_a``, ``image_b``, ``winner``,
            ``rater`` ("" where not given) and ``line`` (its line in ``pairs.csv``);
            empty for a rated source, whose pairs the study samples.
        rated: the rated dataset the pairs are drawn from, or None.
    """

    name: str
    root: Path
    images: pd.DataFrame
    pairs: pd.DataFrame
    rated: Dataset | None = None


def load_pairs(
    root: str | Path,
    *,
    pairs: str = PAIRS_FILE,
    rated: str | None = None,
    missing_images: str = "error",
) -> PairLabels:
    """Read a ``pairs`` folder (or, with ``rated``, a rated dataset of that kind to pair).

    Raises:
        DatasetError: a missing file or column, an unknown image, a self-pair or a bad
            winner (naming the file and the line), or ``rated`` naming no rated kind.
    """
    check_policy(missing_images)
    root = Path(root).expanduser().resolve()
    if rated is not None:
        return _rated_source(root, rated, missing_images)
    if not root.is_dir():
        raise DatasetError(f"{root}: not a folder (expected {IMAGES_FILE} and {PAIRS_FILE})")
    listed = require_file(root / IMAGES_FILE, "the image list")
    images = image_list(listed, root, missing_images)
    path = require_file(root / pairs, "the pairwise labels")
    table = read_pair_table(path, set(images["image_id"]))
    data = PairLabels(root.name, root, images, table)
    if missing_images == "skip":
        return _without_missing(data)
    return data


def read_pair_table(path: Path, known: set[str]) -> pd.DataFrame:
    """``pairs.csv`` checked against the image ids ``known``: the table of `PairLabels`.

    Raises:
        DatasetError: naming ``path`` and the first bad lines.
    """
    raw = read_table(path, ["image_a", "image_b", "winner"], ["rater"])
    ids = ["image_a", "image_b"]
    for column in ids:
        fail_rows(path, raw, raw[column] == "", column, "an empty image id", ids)
        unknown = ~raw[column].isin(known)
        fail_rows(path, raw, unknown, column, f"an image not listed in {IMAGES_FILE}", ids)
    same = raw["image_a"] == raw["image_b"]
    fail_rows(path, raw, same, "image_b", "an image paired with itself", ids)
    winner = raw["winner"].str.lower()
    bad = ~winner.isin(WINNERS)
    fail_rows(path, raw, bad, "winner", f"a winner other than {', '.join(WINNERS)}", ids)
    rater = raw["rater"] if "rater" in raw.columns else pd.Series("", index=raw.index)
    return pd.DataFrame(
        {
            "image_a": raw["image_a"].to_numpy(),
            "image_b": raw["image_b"].to_numpy(),
            "winner": winner.to_numpy(),
            "rater": rater.to_numpy(),
            "line": (raw.index.to_numpy() + 2).astype(int),
        }
    )


def _rated_source(root: Path, rated: str, missing_images: str) -> PairLabels:
    try:
        kind = get_kind(rated)
    except KeyError as exc:
        raise DatasetError(f"{root}: rated: {exc.args[0]}") from None
    if not kind.rated:
        raise DatasetError(f"{root}: rated: kind {rated!r} has no per-image human ratings")
    data = kind.loader(root, missing_images=missing_images)
    empty = pd.DataFrame(columns=["image_a", "image_b", "winner", "rater", "line"])
    return PairLabels(data.name, root, data.images, empty, rated=data)


def _without_missing(data: PairLabels) -> PairLabels:
    """``missing_images: skip``: the images on disk, and the pairs of two of them."""
    kept = _on_disk(data.images)
    ids = set(kept["image_id"])
    keep = data.pairs["image_a"].isin(ids) & data.pairs["image_b"].isin(ids)
    return PairLabels(
        data.name, data.root, kept, data.pairs[keep].reset_index(drop=True), data.rated
    )


def _on_disk(images: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``images`` whose file is on disk."""
    return images[on_disk(images["path"].tolist())].reset_index(drop=True)
