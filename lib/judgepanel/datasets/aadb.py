"""AADB (Kong et al., 2016): the label list files, the raw crowd file where present, images.

``imgListFiles_label/imgList{Train,Validation,Test}Regression_{score,<Attribute>}.txt``
have lines ``<image> <value>``: the overall score in [0, 1] and eleven attribute means in
[-1, 1], per image; the three ``score`` files define the official split. They are means
only. ``AADB_AllinAll.csv``, where present, is the Mechanical Turk results file with one
row per worker and task: ``WorkerId`` and, for each of the task's images k,
``Input.image_url<k>`` and ``Answer.overallScore<k>`` (1-5, about five workers an image).
An image's name is rebuilt from its Flickr URL as ``<farm>_<server>_<file>``, as AADB's
own code does. The raw ratings give the noise ceiling; ``mean_score`` stays the released
[0, 1] score. Rubric mapping: colour -> ColorHarmony, composition -> RuleOfThirds.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import Dataset, DatasetError, numeric_column, require_file
from judgepanel.datasets._tables import (
    fail_rows,
    fail_unless_unique,
    read_table,
    require_image_files,
    text_lines,
)
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute

KIND = "aadb"
LIST_DIRS = ("imgListFiles_label", "AADB_imgListFiles_label/imgListFiles_label")
SPLITS = {"Train": "train", "Validation": "validation", "Test": "test"}
RAW_FILE = "AADB_AllinAll.csv"
IMAGE_DIR = "datasetImages_originalSize"
_COLUMNS = {
    "BalancingElements": ("balancing_elements", None),
    "ColorHarmony": ("colour", "colour"),
    "Content": ("content", None),
    "DoF": ("dof", None),
    "Light": ("light", None),
    "MotionBlur": ("motion_blur", None),
    "Object": ("object", None),
    "Repetition": ("repetition", None),
    "RuleOfThirds": ("composition", "composition"),
    "Symmetry": ("symmetry", None),
    "VividColor": ("vivid_color", None),
}
ATTRIBUTES = (
    Attribute("score", "score", 0.0, 1.0, True, HOLISTIC),
    *(Attribute(name, col, -1.0, 1.0, True, dim) for name, (col, dim) in _COLUMNS.items()),
)
CITATION = (
    "Kong, S., Shen, X., Lin, Z., Mech, R., Fowlkes, C. (2016). Photo aesthetics ranking "
    "network with attributes and content adaptation. ECCV."
)
_URL = re.compile(r"Input\.image_url(\d+)")


def load_aadb(root: str | Path) -> Dataset:
    """Read an AADB folder as released into a checked `Dataset`.

    Raises:
        DatasetError: a score list file is missing, a line is not ``<image> <value>`` or
            its value is out of range, an attribute's list files are incomplete or list
            other images than the score files, an image is in two splits or missing on
            disk, or the raw file has a bad worker id, URL or score.
    """
    root = Path(root).expanduser().resolve()
    folder = next((root / d for d in LIST_DIRS if (root / d).is_dir()), None)
    if folder is None:
        raise DatasetError(
            f"{root}: no label list folder; expected {' or '.join(d + '/' for d in LIST_DIRS)}"
        )
    tables, split_of, paths = [], {}, {}
    for split, name in SPLITS.items():
        path = require_file(folder / f"imgList{split}Regression_score.txt", "a score list file")
        scores = _list_file(path, 0.0, 1.0)
        for image in scores["image"]:
            if image in split_of:
                raise DatasetError(f"{path}: image {image} is also in the {split_of[image]} set")
            split_of[image] = name
        files = [str(root / IMAGE_DIR / i) for i in scores["image"]]
        require_image_files(path, scores, files, "image", ["image"], first_line=1)
        paths.update(zip(scores["image"], files, strict=True))
        tables.append(scores.assign(attribute="score"))
    for attribute in ATTRIBUTES[1:]:
        tables += _attribute_files(folder, attribute, tables[:3])
    listed = pd.concat(tables, ignore_index=True)
    summary = pd.DataFrame(
        {
            "image_id": listed["image"],
            "attribute": listed["attribute"],
            "mean": listed["value"],
            "sd": np.nan,
            "n": np.nan,
        }
    )
    images = pd.DataFrame({"image_id": list(split_of), "path": [paths[i] for i in split_of]})
    images["split"] = list(split_of.values())
    raw_path = root / RAW_FILE
    ratings = _raw_ratings(raw_path, set(split_of)) if raw_path.is_file() else None
    return assemble(
        KIND, root, images, ATTRIBUTES, folder, ratings=ratings, summary=summary, citation=CITATION
    )


def _list_file(path: Path, low: float, high: float) -> pd.DataFrame:
    """A list file's ``<image> <value>`` lines, indexed by line number - 1."""
    rows, lines = [], []
    for lineno, text in text_lines(path):
        fields = text.split()
        if len(fields) != 2:
            raise DatasetError(f"{path}:{lineno}: expected '<image> <value>', got {text!r}")
        rows.append(fields)
        lines.append(lineno - 1)
    if not rows:
        raise DatasetError(f"{path}: lists no image")
    table = pd.DataFrame(rows, columns=["image", "value"], index=lines)
    fail_unless_unique(path, table, "image", first_line=1)
    table["value"] = numeric_column(table, "value", low, high, path, ["image"], first_line=1)
    return table


def _attribute_files(
    folder: Path, attribute: Attribute, scores: list[pd.DataFrame]
) -> list[pd.DataFrame]:
    """An attribute's three list files (none: the attribute is left out), checked against
    the score files of the same splits."""
    paths = [folder / f"imgList{split}Regression_{attribute.name}.txt" for split in SPLITS]
    present = [p for p in paths if p.is_file()]
    if not present:
        return []
    if len(present) < len(paths):
        absent = next(p for p in paths if not p.is_file())
        raise DatasetError(f"{absent}: missing, while {present[0].name} is there")
    out = []
    for path, score in zip(paths, scores, strict=True):
        table = _list_file(path, attribute.low, attribute.high)
        extra = sorted(set(table["image"]) - set(score["image"]))
        lacking = sorted(set(score["image"]) - set(table["image"]))
        if extra or lacking:
            which, first = ("lists", extra[0]) if extra else ("lacks", lacking[0])
            raise DatasetError(f"{path}: {which} image {first}, unlike the score file of its split")
        out.append(table.assign(attribute=attribute.column))
    return out


def _image_name(url: str) -> str | None:
    """AADB's file name of a Flickr URL: ``<farm>_<server>_<file>``; None if it is none."""
    parts = url.split("/")
    if len(parts) < 5 or not parts[-1]:
        return None
    return f"{parts[2].split('.')[0]}_{parts[3]}_{parts[-1]}"


def _raw_ratings(path: Path, images: set[str]) -> pd.DataFrame:
    """The raw file's overall ratings of the listed images, one per worker and image."""
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
        warnings.warn(
            f"{path}: {int(repeated.sum())} repeated (worker, image) rating(s) averaged to one",
            RuntimeWarning,
            stacklevel=3,
        )
    long = long.groupby(["image_id", "rater_id"], as_index=False, sort=False)["value"].mean()
    return long.assign(attribute="score")
