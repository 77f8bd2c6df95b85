"""PARA's GIAA files: one row per image with vote histograms, means and SDs.

``annotation/PARA-GiaaTrain.csv`` and ``annotation/PARA-GiaaTest.csv`` (comma-separated,
CRLF line ends) hold ``imageName``, ``sessionId``, ``semantic``, the aesthetic vote
histogram ``aestheticScore_1.0`` ... ``aestheticScore_5.0`` (nine half-point levels) with
``aestheticScore_mean`` and ``aestheticScore_std``, ``qualityScore_mean`` and
``qualityScore_std`` (no histogram), and for composition, colour, depth of field, light,
content, content preference and willingness to share a 1-5 histogram ``<name>_1..5`` with
``<name>_mean`` and ``<name>_std``; emotion, difficulty and rater-trait columns follow.

Histograms become anonymous votes (their ceiling splits exchangeable votes). The quality
score has a mean and SD only: its n is the image's number of aesthetic votes (every rater
gives every score), and its SD is PARA's population SD (``sd_ddof=0``), converted to the
sample SD the noise ceiling reads. The file names the split (train, test).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import (
    Dataset,
    DatasetError,
    numeric_column,
    require_columns,
    unread_note,
)
from judgepanel.datasets._tables import fail_rows, read_table, require_image_files
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute

FILES = {"train": "annotation/PARA-GiaaTrain.csv", "test": "annotation/PARA-GiaaTest.csv"}
IMAGE_DIR = "imgs"
AESTHETIC = [f"aestheticScore_{k / 2:.1f}" for k in range(2, 11)]
QUALITY = ["qualityScore_mean", "qualityScore_std"]
HISTOGRAMS = {
    "compositionScore": Attribute("compositionScore", "composition", 1.0, 5.0, True, "composition"),
    "colorScore": Attribute("colorScore", "colour", 1.0, 5.0, True, "colour"),
    "dofScore": Attribute("dofScore", "dof", 1.0, 5.0, True, None),
    "lightScore": Attribute("lightScore", "light", 1.0, 5.0, True, None),
    "contentScore": Attribute("contentScore", "content", 1.0, 5.0, True, None),
    "contentPreference": Attribute("contentPreference", "content_preference", 1.0, 5.0, True, None),
    "willingnessToShare": Attribute(
        "willingnessToShare", "willingness_to_share", 1.0, 5.0, True, None
    ),
}
SCORE = Attribute("aestheticScore", "score", 1.0, 5.0, True, HOLISTIC)
QUALITY_ATTRIBUTE = Attribute("qualityScore", "quality", 1.0, 5.0, True, "quality")
REQUIRED = ["imageName", "sessionId", *AESTHETIC]
MEAN_TOLERANCE = 0.01
"""How far a released mean may be from its histogram's (rounding)."""
FIX = "PARA's GIAA files have imageName, sessionId, aestheticScore_1.0 ... aestheticScore_5.0"


def giaa_present(root: Path) -> bool:
    """Whether ``root`` holds PARA's GIAA files (either split)."""
    return any((root / f).is_file() for f in FILES.values())


def load_giaa(
    root: Path, *, missing_images: str, sd_ddof: int, licence: str, citation: str
) -> Dataset:
    """Read PARA's GIAA files into a `Dataset` of vote histograms and quality summaries.

    Raises:
        DatasetError: a column is missing, a count is not a whole number, an image has
            no aesthetic vote or appears twice, a mean or SD is off its scale, or
            (``missing_images='error'``) an image is absent.
    """
    if sd_ddof not in (0, 1):
        raise DatasetError(f"sd_ddof={sd_ddof!r}: expected 0 (PARA's population SD) or 1")
    tables, notes = [], []
    for split, name in FILES.items():
        path = root / name
        if not path.is_file():
            notes.append(f"{name} is absent: no {split} images")
            continue
        raw = read_table(path, [], None)
        require_columns(raw, REQUIRED, path, FIX)
        tables.append((split, path, raw))
    votes, summary, images = [], [], []
    for split, path, raw in tables:
        table, histograms, quality, unread = _read_split(root, split, path, raw, missing_images)
        images.append(table)
        votes += histograms
        summary += [] if quality is None else [_sample_sd(quality, sd_ddof)]
        notes += list(unread_note(path, unread))
    if not tables:
        raise DatasetError(f"{root}: no PARA GIAA file; expected {' or '.join(FILES.values())}")
    all_images = pd.concat(images, ignore_index=True)
    repeated = all_images["image_id"].duplicated()
    if repeated.any():
        raise DatasetError(
            f"{root}: image {all_images.loc[repeated, 'image_id'].iloc[0]} is in both GIAA "
            "files; keep it in one"
        )
    long_votes = pd.concat(votes, ignore_index=True)
    present = set(long_votes["attribute"])
    attributes = [SCORE]
    if summary:
        attributes.append(QUALITY_ATTRIBUTE)
    attributes += [a for a in HISTOGRAMS.values() if a.column in present]
    ddof = "a population SD (ddof 0, as PARA documents)" if sd_ddof == 0 else "a sample SD"
    notes = [
        "read the GIAA files (vote histograms per image)",
        f"qualityScore: mean and SD only, the SD read as {ddof}, n = the image's aesthetic votes",
        *notes,
    ]
    return assemble(
        "para", root, all_images, attributes, root / FILES["train"],
        votes=long_votes, summary=pd.concat(summary, ignore_index=True) if summary else None,
        licence=licence, citation=citation, notes=notes,
    )  # fmt: skip


def _read_split(
    root: Path, split: str, path: Path, raw: pd.DataFrame, missing_images: str
) -> tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame | None, list[str]]:
    """One GIAA file: its images, its histograms as long votes, the quality summary (SD
    as released, n the aesthetic votes) and the columns it leaves unread."""
    ids = ["sessionId", "imageName"]
    pairs = zip(raw["sessionId"], raw["imageName"], strict=True)
    files = [str(root / IMAGE_DIR / s / n) for s, n in pairs]
    require_image_files(path, raw, files, "imageName", ids, policy=missing_images)
    image_id = raw["imageName"].to_numpy()
    images = pd.DataFrame({"image_id": image_id, "path": files, "split": split})
    counts = _histogram(raw, AESTHETIC, path, ids)
    empty = counts.sum(axis=1) == 0
    fail_rows(path, raw, empty, AESTHETIC[0], "an image without aesthetic votes", ids)
    _check_mean(path, raw, "aestheticScore_mean", counts, np.arange(2, 11) / 2, ids)
    votes = [_long(image_id, counts, np.arange(2, 11) / 2, "score")]
    used = {*REQUIRED, "aestheticScore_mean", "aestheticScore_std"}
    for name, attribute in HISTOGRAMS.items():
        columns = [c for c in (f"{name}_{k}" for k in range(1, 6)) if c in raw.columns]
        if len(columns) == 5:
            histogram = _histogram(raw, columns, path, ids)
            _check_mean(path, raw, f"{name}_mean", histogram, np.arange(1.0, 6.0), ids)
            votes.append(_long(image_id, histogram, np.arange(1.0, 6.0), attribute.column))
            used |= {*columns, f"{name}_mean", f"{name}_std"}
    quality = None
    if all(c in raw.columns for c in QUALITY):
        quality = pd.DataFrame(
            {
                "image_id": image_id,
                "attribute": "quality",
                "mean": numeric_column(raw, QUALITY[0], 1, 5, path, ids).to_numpy(),
                "sd": numeric_column(raw, QUALITY[1], 0, 2.5, path, ids).to_numpy(),
                "n": counts.sum(axis=1).astype(float),
            }
        )
        used |= set(QUALITY)
    return images, votes, quality, [c for c in raw.columns if c not in used]


def _check_mean(
    path: Path,
    raw: pd.DataFrame,
    column: str,
    counts: np.ndarray,
    levels: np.ndarray,
    ids: list[str],
) -> None:
    """Raise, naming the lines, where a released mean is not its histogram's mean."""
    if column not in raw.columns:
        return
    released = numeric_column(raw, column, 1, 5, path, ids).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        measured = counts @ levels / counts.sum(axis=1)
    off = np.abs(released - measured) > MEAN_TOLERANCE
    what = "a mean other than its histogram's"
    fix = "the histogram columns or the mean are shifted; check the header against the release"
    fail_rows(path, raw, off & np.isfinite(measured), column, what, ids, fix=fix)


def _sample_sd(summary: pd.DataFrame, sd_ddof: int) -> pd.DataFrame:
    """``summary`` with a population SD (ddof 0) turned into a sample SD (ddof 1)."""
    if sd_ddof == 1:
        return summary
    n = summary["n"].to_numpy(float)
    factor = np.where(n > 1, np.sqrt(n / np.maximum(n - 1, 1)), np.nan)
    sd = summary["sd"].to_numpy(float) * factor
    return summary.assign(sd=sd)


def _histogram(raw: pd.DataFrame, columns: list[str], path: Path, ids: list[str]) -> np.ndarray:
    """Whole-number vote counts of ``columns``, images x levels."""
    return np.column_stack(
        [numeric_column(raw, c, 0, np.inf, path, ids, step=1).to_numpy() for c in columns]
    ).astype(np.int64)


def _long(
    image_id: np.ndarray, counts: np.ndarray, levels: np.ndarray, column: str
) -> pd.DataFrame:
    """A histogram as long votes: image_id, attribute, value, count (non-zero only)."""
    image, level = np.nonzero(counts)
    return pd.DataFrame(
        {
            "image_id": image_id[image],
            "attribute": column,
            "value": levels[level].astype(float),
            "count": counts[image, level].astype(float),
        }
    )
