"""KonIQ-10k (Hosu et al., 2020): ``koniq10k_distributions_sets.csv`` and ``1024x768/``.

The file has one image a row: ``image_name``, ``c1``..``c5`` (the *fractions* of the
image's ``c_total`` votes given to the scores 1..5), ``c_total``, ``MOS`` and ``SD`` (on
the file's 1-100 scale) and ``set`` (training, validation, test). The votes carry no rater
ids; the histogram is rebuilt as round(c_k * c_total), and the noise ceiling splits it as
exchangeable votes. The overall ``score`` is the mean vote on 1-5; the released MOS, SD and
``c_total`` stay as the attribute ``mos``. KonIQ rates technical quality, not aesthetics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import Dataset, numeric_column, require_file
from judgepanel.datasets._tables import (
    fail_rows,
    fail_unless_unique,
    read_table,
    require_image_files,
)
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute

KIND = "koniq"
SCORES_FILE = "koniq10k_distributions_sets.csv"
IMAGE_DIR = "1024x768"
FRACTIONS = ["c1", "c2", "c3", "c4", "c5"]
REQUIRED = ["image_name", *FRACTIONS, "c_total", "MOS", "SD", "set"]
SETS = ("training", "validation", "test")
SUM_TOLERANCE = 0.01
"""How far the five fractions of one image may sum from 1 (they are rounded decimals)."""
CITATION = (
    "Hosu, V., Lin, H., Sziranyi, T., Saupe, D. (2020). KonIQ-10k: An ecologically valid "
    "database for deep learning of blind image quality assessment. IEEE TIP 29."
)
ATTRIBUTES = (
    Attribute("c1..c5", "score", 1.0, 5.0, True, HOLISTIC),
    Attribute("MOS", "mos", 1.0, 100.0, True, None),
)


def load_koniq(root: str | Path) -> Dataset:
    """Read a KonIQ-10k folder as released into a checked `Dataset` (votes, no raters).

    Raises:
        DatasetError: the file or an image is missing, a column is missing, a fraction is
            not in [0, 1], an image's fractions do not sum to 1, ``c_total`` is not a
            whole number, MOS or SD is out of range, ``set`` is unknown, or an image
            appears twice.
    """
    root = Path(root).expanduser().resolve()
    path = require_file(root / SCORES_FILE, f"the KonIQ-10k scores file ({SCORES_FILE})")
    raw = read_table(path, REQUIRED, None)
    ids = ["image_name"]
    fail_unless_unique(path, raw, "image_name")
    fractions = np.column_stack(
        [numeric_column(raw, c, 0, 1, path, ids).to_numpy() for c in FRACTIONS]
    )
    raw["c1+c2+c3+c4+c5"] = fractions.sum(axis=1).round(6)
    off = np.abs(fractions.sum(axis=1) - 1) > SUM_TOLERANCE
    fail_rows(path, raw, off, "c1+c2+c3+c4+c5", "fractions that do not sum to 1", ids)
    total = numeric_column(raw, "c_total", 1, np.inf, path, ids, step=1).to_numpy()
    mos = numeric_column(raw, "MOS", 1, 100, path, ids).to_numpy()
    sd = numeric_column(raw, "SD", 0, np.inf, path, ids).to_numpy()
    fail_rows(path, raw, ~raw["set"].isin(SETS), "set", f"a set other than {SETS}", ids)
    files = [str(root / IMAGE_DIR / name) for name in raw["image_name"]]
    require_image_files(path, raw, files, "image_name", ids)

    names = raw["image_name"].to_numpy()
    counts = np.rint(fractions * total[:, None]).astype(np.int64)
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
    images = pd.DataFrame({"image_id": names, "path": files, "split": raw["set"].to_numpy()})
    return assemble(
        KIND, root, images, ATTRIBUTES, path, votes=votes, summary=summary, citation=CITATION
    )
