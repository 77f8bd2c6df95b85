"""KonIQ-10k (Hosu et al., 2020): either of the authors' score files, and ``1024x768/``.

Two files circulate, one image a row:

- ``koniq10k_distributions_sets.csv``: ``image_name``, ``c1``..``c5`` (the *fractions* of
  the image's ``c_total`` votes given to the scores 1..5), ``c_total``, ``MOS`` (on 1-100),
  ``SD`` (of the votes, on the 1-5 vote scale, a sample SD) and ``set`` (training,
  validation, test);
- ``koniq10k_scores_and_distributions.csv``: ``image_name``, ``c1``..``c5`` (vote
  *counts*), ``c_total``, ``MOS`` (on 1-5), ``SD`` (1-5) and ``MOS_zscore`` (the authors'
  0-100 score from z-scored votes); no split.

Whether c_k are fractions or counts is read from the numbers (they sum to 1 or to
``c_total``). The votes carry no rater ids: the histogram (rebuilt as round(c_k * c_total)
from fractions) gives the overall ``score``, the mean vote on 1-5, and its noise ceiling
by splitting exchangeable votes. The released MOS is the attribute ``mos`` with its SD put
on the MOS's own scale (x 99/4 for 1-100), so that a ceiling from mean, SD and n compares
like with like. ``mos_scale`` and ``sd_scale`` override the documented scales.
KonIQ rates technical quality, not aesthetics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import (
    Dataset,
    DatasetError,
    numeric_column,
    release_paths,
    require_columns,
    unread_note,
)
from judgepanel.datasets._tables import (
    fail_rows,
    fail_unless_unique,
    read_table,
    require_image_files,
)
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute
from judgepanel.datasets.presence import apply_policy

KIND = "koniq"
SETS_FILE = "koniq10k_distributions_sets.csv"
SCORES_FILE = "koniq10k_scores_and_distributions.csv"
FILES = (SETS_FILE, SCORES_FILE)
IMAGE_DIR = "1024x768"
LEVELS = ["c1", "c2", "c3", "c4", "c5"]
COMMON = ["image_name", *LEVELS, "c_total", "MOS", "SD"]
EXTRA = {SETS_FILE: ["set"], SCORES_FILE: ["MOS_zscore"]}
MOS_SCALES = {"1-100": (1.0, 100.0), "1-5": (1.0, 5.0)}
DOCUMENTED_MOS = {SETS_FILE: "1-100", SCORES_FILE: "1-5"}
SD_SCALES = ("votes", "mos")
MAX_VOTE_SD = 2.1
"""An SD of 1-5 votes is at most 2 * sqrt(n / (n - 1)), about 2.01 for 100 votes."""
SETS = ("training", "validation", "test")
SUM_TOLERANCE = 0.01
"""How far the five fractions of one image may sum from 1 (they are rounded decimals)."""
CITATION = (
    "Hosu, V., Lin, H., Sziranyi, T., Saupe, D. (2020). KonIQ-10k: An ecologically valid "
    "database for deep learning of blind image quality assessment. IEEE TIP 29."
)
LICENCE = "not stated in the files: the terms of the KonIQ-10k page (database.mmsp-kn.de)"


def _form(raw: pd.DataFrame) -> str:
    """Which of the two released files a renamed one is, by its columns: the one with
    ``set`` carries the MOS on 1-100, the other on 1-5."""
    return SETS_FILE if "set" in raw.columns else SCORES_FILE


def load_koniq(
    root: str | Path,
    *,
    missing_images: str = "error",
    mos_scale: str | None = None,
    sd_scale: str = "votes",
) -> Dataset:
    """Read a KonIQ-10k folder as released into a checked `Dataset` (votes, no raters).

    Args:
        mos_scale: ``1-100`` or ``1-5``; None: as the authors document the file read.
        sd_scale: ``votes`` (the documented 1-5 vote scale) or ``mos`` (already on the
            MOS's scale).
        missing_images: see `judgepanel.datasets.presence`.

    Raises:
        DatasetError: no score file, a column is missing, c_k are neither fractions nor
            counts, ``c_total`` is not a whole number, MOS or SD is off its scale, ``set``
            is unknown, an image appears twice, or (``error``) an image is absent.
    """
    root, given = release_paths(root, SCORES_FILE)
    path = given if given.is_file() else None
    path = path or next((root / f for f in FILES if (root / f).is_file()), None)
    if path is None:
        raise DatasetError(f"{root}: no KonIQ-10k score file; expected {' or '.join(FILES)}")
    if mos_scale is not None and mos_scale not in MOS_SCALES:
        raise DatasetError(f"mos_scale={mos_scale!r}: expected one of {', '.join(MOS_SCALES)}")
    if sd_scale not in SD_SCALES:
        raise DatasetError(f"sd_scale={sd_scale!r}: expected one of {', '.join(SD_SCALES)}")
    raw = read_table(path, [], None)
    form = path.name if path.name in FILES else _form(raw)
    scale = mos_scale or DOCUMENTED_MOS[form]
    fix = f"the KonIQ-10k file {form} has the header {','.join(COMMON + EXTRA[form])}"
    require_columns(raw, COMMON, path, fix)
    unread = [c for c in raw.columns if c not in COMMON + EXTRA[form]]
    ids = ["image_name"]
    fail_unless_unique(path, raw, "image_name")
    total = numeric_column(raw, "c_total", 1, np.inf, path, ids, step=1).to_numpy()
    counts = _counts(raw, total, path)
    low, high = MOS_SCALES[scale]
    other = "1-5" if scale == "1-100" else "1-100"
    hint = f"the MOS is on {scale} in {path.name}; if yours is on {other}, pass mos_scale={other!r}"
    try:
        mos = numeric_column(raw, "MOS", low, high, path, ids).to_numpy()
    except DatasetError as exc:
        raise DatasetError(f"{exc}; {hint}") from None
    if scale == "1-100" and mos.max() <= 5:
        raise DatasetError(
            f"{path}: column 'MOS' is at most {mos.max():g}, on 1-5 rather than 1-100; "
            "pass mos_scale='1-5'"
        )
    sd = numeric_column(raw, "SD", 0, np.inf, path, ids).to_numpy()
    if sd_scale == "votes":
        fail_rows(
            path, raw, sd > MAX_VOTE_SD, "SD", f"an SD above {MAX_VOTE_SD} (not of 1-5 votes)",
            ids, fix="if the SD is on the MOS's scale, pass sd_scale='mos'",
        )  # fmt: skip
        sd = sd * (high - low) / 4.0
    names = raw["image_name"].to_numpy()
    files = [str(root / IMAGE_DIR / name) for name in names]
    require_image_files(path, raw, files, "image_name", ids, policy=missing_images)
    images = pd.DataFrame({"image_id": names, "path": files})
    if "set" in raw.columns:
        fail_rows(path, raw, ~raw["set"].isin(SETS), "set", f"a set other than {SETS}", ids)
        images["split"] = raw["set"].to_numpy()
    if "MOS_zscore" in raw.columns:
        images["mos_zscore"] = numeric_column(raw, "MOS_zscore", -np.inf, np.inf, path, ids)
    image, level = np.nonzero(counts)
    votes = pd.DataFrame(
        {
            "image_id": names[image],
            "attribute": "score",
            "value": level + 1.0,
            "count": counts[image, level].astype(float),
        }
    )
    summary = pd.DataFrame(
        {"image_id": names, "attribute": "mos", "mean": mos, "sd": sd, "n": total}
    )
    rescaled = f", rescaled from the 1-5 vote scale (x {high - low:g}/4)"
    rescaled = "" if sd_scale == "mos" else rescaled
    notes = (
        f"read {path.name}",
        f"mos: the released MOS on {scale} and its SD on the same scale{rescaled}; "
        "SD read as a sample SD (ddof 1), n = c_total",
        *unread_note(path, unread),
    )
    attributes = (
        Attribute("c1..c5", "score", 1.0, 5.0, True, HOLISTIC),
        Attribute("MOS", "mos", low, high, True, None),
    )
    ds = assemble(
        KIND, root, images, attributes, path, votes=votes, summary=summary,
        licence=LICENCE, citation=CITATION, notes=notes,
    )  # fmt: skip
    return apply_policy(ds, missing_images)


def _counts(raw: pd.DataFrame, total: np.ndarray, path: Path) -> np.ndarray:
    """Vote counts per image and level, from fractions of ``c_total`` or from counts."""
    ids = ["image_name"]
    values = np.column_stack(
        [numeric_column(raw, c, 0, np.inf, path, ids).to_numpy() for c in LEVELS]
    )
    sums = values.sum(axis=1)
    raw["c1+c2+c3+c4+c5"] = sums.round(6)
    column = "c1+c2+c3+c4+c5"
    if np.all(values <= 1):
        off = np.abs(sums - 1) > SUM_TOLERANCE
        what = "fractions that do not sum to 1"
        fix = "c1..c5 are all fractions of c_total (summing to 1) or all vote counts"
        fail_rows(path, raw, off, column, what, ids, fix=fix)
        return np.rint(values * total[:, None]).astype(np.int64)
    whole = np.isclose(values, np.rint(values)).all(axis=1)
    fail_rows(path, raw, ~whole, column, "vote counts that are not whole", ids)
    fail_rows(path, raw, sums != total, column, "vote counts that do not sum to c_total", ids)
    return values.astype(np.int64)
