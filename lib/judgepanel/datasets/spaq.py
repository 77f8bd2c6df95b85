"""SPAQ (Fang et al., 2020): the scores workbook or its CSV export, and ``TestImage/``.

``Annotations/MOS and Image attribute scores.xlsx`` (the authors' workbook) or
``Annotations/MOS and Image attribute scores.csv`` (the comma-separated export most
mirrors carry; also accepted directly in the folder) has, in the first sheet, one image
a row: ``Image name``, ``MOS`` and the attribute scores ``Brightness``,
``Colorfulness``, ``Contrast``, ``Noisiness``, ``Sharpness``, all 0-100. Only means are
released (no SD, no vote count, no rater), so no noise ceiling can be computed. Rubric
mapping: technical quality -> Sharpness, colour -> Colorfulness. Noisiness is read as
higher-is-worse, as the authors' code reads it (100 - Noisiness). SPAQ has no official
split. Reading the workbook needs ``openpyxl``; the CSV does not. ``spaq:PATH`` may also
name the scores file itself, under any name (``mos_scores.csv``); the images are then
looked for in ``TestImage/`` beside it (or beside ``Annotations/`` when it sits there).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd

from judgepanel.datasets._common import (
    Dataset,
    DatasetError,
    numeric_column,
    release_paths,
    require_columns,
    unread_note,
)
from judgepanel.datasets._tables import fail_unless_unique, read_table, require_image_files
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute
from judgepanel.datasets.presence import apply_policy

KIND = "spaq"
SCORES_FILE = "Annotations/MOS and Image attribute scores.xlsx"
CSV_FILES = (
    "Annotations/MOS and Image attribute scores.csv",
    "MOS and Image attribute scores.csv",
)
IMAGE_DIR = "TestImage"
NAME_COLUMN = "Image name"
ATTRIBUTES = (
    Attribute("MOS", "score", 0.0, 100.0, True, HOLISTIC),
    Attribute("Brightness", "brightness", 0.0, 100.0, True, None),
    Attribute("Colorfulness", "colour", 0.0, 100.0, True, "colour"),
    Attribute("Contrast", "contrast", 0.0, 100.0, True, None),
    Attribute("Noisiness", "noisiness", 0.0, 100.0, False, None),
    Attribute("Sharpness", "quality", 0.0, 100.0, True, "quality"),
)
CITATION = (
    "Fang, Y., Zhu, H., Zeng, Y., Ma, K., Wang, Z. (2020). Perceptual quality assessment of "
    "smartphone photography. CVPR."
)
LICENCE = "not stated in the files: the terms of the SPAQ release page (research use)"


def load_spaq(root: str | Path, *, missing_images: str = "error") -> Dataset:
    """Read a SPAQ folder as released into a checked `Dataset` (means only).

    Raises:
        DatasetError: neither the workbook nor its CSV export is there, the file is
            unreadable, a column is missing, a score is not a number in 0-100, an image
            appears twice, or (``error``) an image is absent; rows are named by line.
    """
    root, given = release_paths(root, SCORES_FILE)
    path, raw = _scores(root, given if given.is_file() else None)
    need = [NAME_COLUMN, *(a.name for a in ATTRIBUTES)]
    fix = f"SPAQ's scores file has the columns {', '.join(need)}"
    require_columns(raw, need, path, fix)
    raw[NAME_COLUMN] = raw[NAME_COLUMN].fillna("").astype(str).str.strip()
    ids = [NAME_COLUMN]
    fail_unless_unique(path, raw, NAME_COLUMN)
    files = [str(root / IMAGE_DIR / name) for name in raw[NAME_COLUMN]]
    require_image_files(path, raw, files, NAME_COLUMN, ids, policy=missing_images)
    names = raw[NAME_COLUMN].to_numpy()
    summary = pd.concat(
        [
            pd.DataFrame(
                {
                    "image_id": names,
                    "attribute": a.column,
                    "mean": numeric_column(raw, a.name, a.low, a.high, path, ids).to_numpy(),
                    "sd": float("nan"),
                    "n": float("nan"),
                }
            )
            for a in ATTRIBUTES
        ],
        ignore_index=True,
    )
    ds = assemble(
        KIND,
        root,
        pd.DataFrame({"image_id": names, "path": files}),
        ATTRIBUTES,
        path,
        summary=summary,
        licence=LICENCE,
        citation=CITATION,
        notes=(f"read {path.name}", *unread_note(path, [c for c in raw.columns if c not in need])),
    )
    return apply_policy(ds, missing_images)


def _scores(root: Path, given: Path | None = None) -> tuple[Path, pd.DataFrame]:
    """The workbook's first sheet, or else the CSV export, as a table (line = index + 2);
    ``given``: the scores file named on the command line, a workbook by its suffix
    (``.xlsx``, ``.xlsm``), else read as a CSV."""
    path = given or root / SCORES_FILE
    if given is not None and given.suffix.lower() not in (".xlsx", ".xlsm"):
        return given, read_table(given, [], None)
    if not path.is_file():
        csv = next((root / f for f in CSV_FILES if (root / f).is_file()), None)
        if csv is None:
            raise DatasetError(
                f"{root}: no SPAQ scores file; expected {SCORES_FILE} or {CSV_FILES[0]} "
                "there, or give the scores file's own path under any name "
                "(spaq:path/to/mos_scores.csv)"
            )
        return csv, read_table(csv, [], None)
    try:
        raw = pd.read_excel(
            path,
            sheet_name=0,
            dtype={NAME_COLUMN: str},
            keep_default_na=False,
            na_values=[""],
            engine="openpyxl",
        )
    except (ValueError, OSError, KeyError, zipfile.BadZipFile) as exc:
        raise DatasetError(f"{path}: cannot be read as an Excel workbook ({exc})") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    raw = raw.dropna(how="all")
    if raw.empty:
        raise DatasetError(f"{path}: has a header but no rows")
    return path, raw
