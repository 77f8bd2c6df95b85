"""SPAQ (Fang et al., 2020): ``Annotations/MOS and Image attribute scores.xlsx``, ``TestImage/``.

The workbook's first sheet has one image a row: ``Image name``, ``MOS`` and the attribute
scores ``Brightness``, ``Colorfulness``, ``Contrast``, ``Noisiness``, ``Sharpness``, all
0-100. Only means are released (no SD, no vote count, no rater), so no noise ceiling can
be computed. Rubric mapping: technical quality -> Sharpness, colour -> Colorfulness.
Noisiness is read as higher-is-worse, as the authors' code reads it (100 - Noisiness).
SPAQ has no official split. Reading the workbook needs ``openpyxl``.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd

from judgepanel.datasets._common import Dataset, DatasetError, numeric_column, require_file
from judgepanel.datasets._tables import fail_unless_unique, require_image_files
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute

KIND = "spaq"
SCORES_FILE = "Annotations/MOS and Image attribute scores.xlsx"
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


def load_spaq(root: str | Path) -> Dataset:
    """Read a SPAQ folder as released into a checked `Dataset` (means only).

    Raises:
        DatasetError: the workbook or an image is missing or unreadable, a column is
            missing, a score is not a number in 0-100, or an image appears twice; rows
            are named by their line in the sheet.
    """
    root = Path(root).expanduser().resolve()
    path = require_file(root / SCORES_FILE, f"the SPAQ scores workbook ({SCORES_FILE})")
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
    missing = [a.name for a in ATTRIBUTES if a.name not in raw.columns]
    if NAME_COLUMN not in raw.columns or missing:
        need = ", ".join([NAME_COLUMN, *(a.name for a in ATTRIBUTES)])
        raise DatasetError(f"{path}: missing column(s) in the first sheet; expected {need}")
    raw = raw.dropna(how="all")
    if raw.empty:
        raise DatasetError(f"{path}: has a header but no rows")
    raw[NAME_COLUMN] = raw[NAME_COLUMN].fillna("").astype(str).str.strip()
    ids = [NAME_COLUMN]
    fail_unless_unique(path, raw, NAME_COLUMN)
    files = [str(root / IMAGE_DIR / name) for name in raw[NAME_COLUMN]]
    require_image_files(path, raw, files, NAME_COLUMN, ids)
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
    return assemble(
        KIND,
        root,
        pd.DataFrame({"image_id": names, "path": files}),
        ATTRIBUTES,
        path,
        summary=summary,
        citation=CITATION,
    )
