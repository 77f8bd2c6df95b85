"""AADB's raw crowd file ``AADB_AllinAll.csv``: one overall rating per worker and image.

The Mechanical Turk results file has one row per worker and task: ``WorkerId`` and, for
each of the task's images k, ``Input.image_url<k>`` and ``Answer.overallScore<k>`` (1-5,
about five workers an image). An image's name is rebuilt from its Flickr URL as
``<farm>_<server>_<file>``, as AADB's own code does.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pandas as pd

from judgepanel.datasets._common import DatasetError, numeric_column
from judgepanel.datasets._tables import fail_rows, read_table

RAW_FILE = "AADB_AllinAll.csv"
_URL = re.compile(r"Input\.image_url(\d+)")


def _image_name(url: str) -> str | None:
    """AADB's file name of a Flickr URL: ``<farm>_<server>_<file>``; None if it is none."""
    parts = url.split("/")
    if len(parts) < 5 or not parts[-1]:
        return None
    return f"{parts[2].split('.')[0]}_{parts[3]}_{parts[-1]}"


def raw_ratings(path: Path, images: set[str], notes: list[str] | None = None) -> pd.DataFrame:
    """The raw file's overall ratings of the listed images, one per worker and image; a
    worker's repeated ratings of one image are averaged, with a warning and a note added
    to ``notes``."""
    raw = read_table(path, ["WorkerId"], None)
    slots = sorted(
        int(m.group(1))
        for c in raw.columns
        if (m := _URL.fullmatch(c)) and f"Answer.overallScore{m.group(1)}" in raw.columns
    )
    if not slots:
        raise DatasetError(
            f"{path}: no columns Input.image_url<k> with Answer.overallScore<k>; expected "
            "Mechanical Turk results"
        )
    fail_rows(path, raw, raw["WorkerId"] == "", "WorkerId", "an empty worker id", ["WorkerId"])
    parts = []
    for k in slots:
        url, score = f"Input.image_url{k}", f"Answer.overallScore{k}"
        rows = raw[(raw[url] != "") | (raw[score] != "")]
        names = rows[url].map(_image_name)
        what = "a URL that names no image (http://farmN.staticflickr.com/SERVER/FILE)"
        fail_rows(path, rows, names.isna(), url, what, ["WorkerId"])
        values = numeric_column(rows, score, 1, 5, path, ["WorkerId", url], step=1)
        parts.append(
            pd.DataFrame({"image_id": names, "value": values, "rater_id": rows["WorkerId"]})
        )
    long = pd.concat(parts, ignore_index=True)
    long = long[long["image_id"].isin(images)]
    repeated = long.duplicated(["image_id", "rater_id"])
    if repeated.any():
        said = (
            f"{path.name}: {int(repeated.sum())} repeated (worker, image) rating(s) averaged to one"
        )
        warnings.warn(f"{path.parent}/{said}", RuntimeWarning, stacklevel=3)
        if notes is not None:
            notes.append(said)
    long = long.groupby(["image_id", "rater_id"], as_index=False, sort=False)["value"].mean()
    return long.assign(attribute="score")
