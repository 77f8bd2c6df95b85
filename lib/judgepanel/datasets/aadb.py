"""AADB (Kong et al., 2016): the authors' label files in any of their forms, the raw crowd
file where present, and ``datasetImages_originalSize/``.

The labels come in three forms; the first found is read:

1. ``imgListFiles_label/imgList<Split>Regression_<attribute>.txt``, lines
   ``<image> <value>``: the overall ``score`` in [0, 1] and eleven attribute means in
   [-1, 1], per image; the ``score`` files define the split;
2. ``imgList<Split>Regression_.csv``, one per split (how mirrors merge the lists):
   ``ImageFile``, the eleven attributes, ``score``;
3. ``AADBinfo.mat``: ``trainNameList``, ``trainScore``, ``testNameList``, ``testScore``
   (the overall score only).

``<Split>`` is ``Train``, ``Validation`` and ``TestNew`` (the authors' regression lists)
or ``Test`` (elsewhere). The authors spell one attribute ``BalacingElements``; it is read
as ``BalancingElements`` and the description says so. An unknown attribute is an error.
127 images of ``TestNew`` are also in ``Validation`` with identical labels; ``overlap``
says where they go (default ``test``: the 1,000 images of the authors' test list).
The raw file (`judgepanel.datasets.aadb_raw`) gives per-rater ratings and the ceiling;
``mean_score`` stays the released [0, 1] score. Rubric mapping: colour -> ColorHarmony,
composition -> RuleOfThirds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import Dataset, DatasetError, numeric_column, require_columns
from judgepanel.datasets._tables import fail_unless_unique, read_table, text_lines
from judgepanel.datasets.aadb_raw import RAW_FILE, raw_ratings
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute
from judgepanel.datasets.presence import apply_policy, check_policy

KIND = "aadb"
LIST_DIRS = ("imgListFiles_label", "AADB_imgListFiles_label/imgListFiles_label")
SPLITS = {"Train": "train", "Validation": "validation", "TestNew": "test", "Test": "test"}
MAT_FILE = "AADBinfo.mat"
IMAGE_DIR = "datasetImages_originalSize"
SPELLINGS = {"BalacingElements": "BalancingElements"}
"""The authors' spellings -> the attribute's name."""
OVERLAPS = ("test", "validation", "error")
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
BY_NAME = {a.name: a for a in ATTRIBUTES}
CITATION = (
    "Kong, S., Shen, X., Lin, Z., Mech, R., Fowlkes, C. (2016). Photo aesthetics ranking "
    "network with attributes and content adaptation. ECCV."
)
LICENCE = "not stated in the files: the terms of the authors' AADB page (research use)"
LONG = ["image", "split", "attribute", "value", "where"]
"""A label source's long table: image, split, attribute name, value, file:line."""


def load_aadb(root: str | Path, *, missing_images: str = "error", overlap: str = "test") -> Dataset:
    """Read an AADB folder as released into a checked `Dataset`.

    Args:
        overlap: where an image listed in both Validation and Test goes (``test``,
            ``validation``), or ``error``.
        missing_images: see `judgepanel.datasets.presence`.

    Raises:
        DatasetError: no label files, a line or cell is malformed or out of range, an
            attribute is unknown or lacks a split, an image is in two splits with other
            labels (or at all, with ``overlap='error'``), or (``error``) an image is absent.
    """
    root = Path(root).expanduser().resolve()
    check_policy(missing_images)
    if overlap not in OVERLAPS:
        raise DatasetError(f"overlap={overlap!r}: expected one of {', '.join(OVERLAPS)}")
    source, labels, notes = _labels(root)
    labels, moved = _resolve_overlap(labels, overlap)
    if moved:
        notes.append(
            f"{moved} image(s) listed in both Validation and Test with identical labels "
            f"are counted as {overlap} (overlap={overlap!r})"
        )
    first = labels.drop_duplicates("image")
    images = pd.DataFrame(
        {
            "image_id": first["image"].to_numpy(),
            "path": [str(root / IMAGE_DIR / i) for i in first["image"]],
            "split": first["split"].map(SPLITS).to_numpy(),
        }
    )
    present = [a for a in ATTRIBUTES if a.name in set(labels["attribute"])]
    summary = pd.DataFrame(
        {
            "image_id": labels["image"],
            "attribute": labels["attribute"].map({a.name: a.column for a in ATTRIBUTES}),
            "mean": labels["value"].astype(float),
            "sd": np.nan,
            "n": np.nan,
        }
    )
    raw_path = root / RAW_FILE
    ratings = None
    if raw_path.is_file():
        notes.append(f"per-rater ratings of score (1-5) from {RAW_FILE}")
        ratings = raw_ratings(raw_path, set(images["image_id"]), notes)
    ds = assemble(
        KIND, root, images, present, source, ratings=ratings, summary=summary,
        licence=LICENCE, citation=CITATION, notes=notes,
    )  # fmt: skip
    return apply_policy(ds, missing_images)


def _labels(root: Path) -> tuple[Path, pd.DataFrame, list[str]]:
    """The first label form found: its file or folder, long labels, and notes."""
    folder = next((root / d for d in LIST_DIRS if (root / d).is_dir()), None)
    if folder is not None and any(folder.glob("imgList*Regression_score.txt")):
        labels, notes = _list_files(folder)
        return folder, labels, [f"read the list files of {folder.name}/", *notes]
    for where in (root, *(root / d for d in LIST_DIRS)):
        if any(where.glob("imgList*Regression_.csv")):
            labels, notes = _split_csvs(where)
            return where, labels, ["read the per-split CSVs imgList<Split>Regression_.csv", *notes]
    if (root / MAT_FILE).is_file():
        return root / MAT_FILE, _mat(root / MAT_FILE), [f"read {MAT_FILE} (overall score only)"]
    raise DatasetError(
        f"{root}: no AADB labels; expected {LIST_DIRS[0]}/imgList<Split>Regression_score.txt, "
        f"imgList<Split>Regression_.csv or {MAT_FILE}"
    )


def _split_names(found: list[str], where: Path, pattern: str) -> tuple[list[str], list[str]]:
    """The splits present: Train and Validation, and TestNew or Test (TestNew, the
    authors' regression test list, if both: the Test files are then listed as unread)."""
    unknown = [s for s in found if s not in SPLITS]
    if unknown:
        raise DatasetError(
            f"{where}: {pattern.format(unknown[0])}: unknown split {unknown[0]!r}; "
            f"expected {', '.join(SPLITS)}"
        )
    splits = [s for s in ("Train", "Validation") if s in found]
    test = "TestNew" if "TestNew" in found else ("Test" if "Test" in found else None)
    unread = []
    if test == "TestNew" and "Test" in found:
        unread.append(f"{pattern.format('Test')} not read: TestNew is the test split")
    return splits + ([test] if test else []), unread


def _list_files(folder: Path) -> tuple[pd.DataFrame, list[str]]:
    """Every ``imgList<Split>Regression_<attribute>.txt``; score files name the images."""
    files: dict[tuple[str, str], Path] = {}
    for path in sorted(folder.glob("imgList*Regression_*.txt")):
        split, _, name = path.stem[len("imgList") :].partition("Regression_")
        files[(split, name)] = path
    splits, unread = _split_names(
        sorted({s for s, _ in files}), folder, "imgList{}Regression_*.txt"
    )
    names = sorted({n for _, n in files}, key=lambda n: (n != "score", n))
    first = {n: p for (_, n), p in reversed(files.items())}
    notes = unread + _spelling_notes(names, lambda n: str(first[n]))
    parts = []
    for name in names:
        attribute = BY_NAME[SPELLINGS.get(name, name)]
        lacking = [s for s in splits if (s, name) not in files]
        if lacking:
            raise DatasetError(
                f"{folder / f'imgList{lacking[0]}Regression_{name}.txt'}: missing, while "
                f"other splits' {name} files are there; add it or remove the {name} files"
            )
        for split in splits:
            table = _list_file(files[(split, name)], attribute)
            parts.append(table.assign(split=split, attribute=attribute.name))
    labels = pd.concat(parts, ignore_index=True)
    _splits_of(labels)
    _check_same_images(labels, folder)
    return labels[LONG], notes


def _spelling_notes(names: list[str], locate: Callable[[str], str]) -> list[str]:
    """Notes on the authors' spellings; an error naming an unknown attribute where
    ``locate`` says it is."""
    unknown = [n for n in names if SPELLINGS.get(n, n) not in BY_NAME]
    if unknown:
        known = ", ".join([*BY_NAME, *SPELLINGS])
        raise DatasetError(
            f"{locate(unknown[0])}: unknown AADB attribute {unknown[0]!r} "
            f"(known: {known}); rename it to the authors' name or remove it"
        )
    return [f"{n} (the authors' spelling) read as {SPELLINGS[n]}" for n in names if n in SPELLINGS]


def _list_file(path: Path, attribute: Attribute) -> pd.DataFrame:
    """A list file's ``<image> <value>`` lines as image, value and where."""
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
    low, high = attribute.low, attribute.high
    table["value"] = numeric_column(table, "value", low, high, path, ["image"], first_line=1)
    table["where"] = [f"{path}:{i + 1}" for i in table.index]
    return table


def _check_same_images(labels: pd.DataFrame, where: Path) -> None:
    """Every attribute of a split lists the images of its score file."""
    for (split, name), rows in labels.groupby(["split", "attribute"], sort=False):
        if name == "score":
            continue
        of_split = labels[labels["split"] == split]
        scored = set(of_split.loc[of_split["attribute"] == "score", "image"])
        extra, lacking = sorted(set(rows["image"]) - scored), sorted(scored - set(rows["image"]))
        if extra or lacking:
            which, first = ("lists", extra[0]) if extra else ("lacks", lacking[0])
            raise DatasetError(
                f"{where}: imgList{split}Regression_{name}: {which} image {first}, unlike "
                f"the score file of {split}"
            )


def _split_csvs(where: Path) -> tuple[pd.DataFrame, list[str]]:
    """The mirrors' ``imgList<Split>Regression_.csv``: ImageFile, attributes, score."""
    paths = where.glob("imgList*Regression_.csv")
    found = {p.name[len("imgList") : -len("Regression_.csv")]: p for p in paths}
    splits, notes = _split_names(sorted(found), where, "imgList{}Regression_.csv")
    parts = []
    for split in splits:
        path = found[split]
        raw = read_table(path, [], None)
        fix = "the header is ImageFile, the eleven attributes (as the authors spell them), score"
        require_columns(raw, ["ImageFile", "score"], path, fix)
        names = [c for c in raw.columns if c != "ImageFile"]
        spelt = _spelling_notes(names, lambda n, p=path: f"{p}: column {n!r}")
        notes += [n for n in spelt if n not in notes]
        fail_unless_unique(path, raw, "ImageFile")
        for name in names:
            attribute = BY_NAME[SPELLINGS.get(name, name)]
            values = numeric_column(raw, name, attribute.low, attribute.high, path, ["ImageFile"])
            parts.append(
                pd.DataFrame(
                    {
                        "image": raw["ImageFile"].to_numpy(),
                        "split": split,
                        "attribute": attribute.name,
                        "value": values.to_numpy(),
                        "where": [f"{path}:{i + 2}" for i in raw.index],
                    }
                )
            )
    if not splits or "Train" not in splits:
        raise DatasetError(f"{where}: imgListTrainRegression_.csv is missing")
    return pd.concat(parts, ignore_index=True)[LONG], notes


def _mat(path: Path) -> pd.DataFrame:
    """``AADBinfo.mat``: the train and test names with their overall scores."""
    from scipy.io import loadmat  # only this form needs it

    try:
        mat = loadmat(path)
    except (ValueError, OSError, NotImplementedError) as exc:
        raise DatasetError(f"{path}: cannot be read as a MATLAB file ({exc})") from None
    need = ["trainNameList", "trainScore", "testNameList", "testScore"]
    missing = [k for k in need if k not in mat]
    if missing:
        found = [k for k in mat if not k.startswith("__")]
        raise DatasetError(
            f"{path}: missing variable(s) {', '.join(missing)} (found: {', '.join(found)}); "
            "use the authors' AADBinfo.mat"
        )
    parts = []
    for split, prefix in (("Train", "train"), ("Test", "test")):
        cells = mat[f"{prefix}NameList"].reshape(-1)
        names = [str(np.asarray(x).reshape(-1)[0]).strip() for x in cells]
        scores = np.asarray(mat[f"{prefix}Score"], dtype=float).reshape(-1)
        if len(names) != len(scores):
            raise DatasetError(
                f"{path}: {prefix}NameList has {len(names)} names but {prefix}Score "
                f"{len(scores)} scores"
            )
        bad = (scores < 0) | (scores > 1) | ~np.isfinite(scores)
        if bad.any():
            k = int(np.argmax(bad))
            raise DatasetError(f"{path}: {prefix}Score[{k}] = {scores[k]} is not in [0, 1]")
        parts.append(
            pd.DataFrame(
                {
                    "image": names,
                    "split": split,
                    "attribute": "score",
                    "value": scores,
                    "where": [f"{path} {prefix}NameList[{k}]" for k in range(len(names))],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _splits_of(labels: pd.DataFrame) -> pd.Series:
    """Each image's splits; an error where an image is in two splits other than
    validation and test (the one overlap the release has)."""
    scores = labels[labels["attribute"] == "score"]
    splits = scores.groupby("image")["split"].agg(lambda s: frozenset(SPLITS[v] for v in s))
    other = splits[splits.map(len) > 1]
    other = other[other != frozenset({"validation", "test"})]
    if len(other):
        image = other.index[0]
        where = scores.loc[scores["image"] == image, "where"].tolist()
        first = scores.loc[scores["image"] == image, "split"].iloc[0]
        raise DatasetError(
            f"{where[-1]}: image {image} is also in the {SPLITS[first]} set; list each image "
            "in one split"
        )
    return splits


def _resolve_overlap(labels: pd.DataFrame, overlap: str) -> tuple[pd.DataFrame, int]:
    """Labels with each image in one split; how many images were in two."""
    splits = _splits_of(labels)
    twice = splits[splits.map(len) > 1].index
    if not len(twice):
        return labels, 0
    rows = labels[labels["image"].isin(twice)]
    spread = rows.groupby(["image", "attribute"])["value"].agg(lambda v: v.max() - v.min())
    if overlap == "error" or (spread > 1e-9).any():
        image = (spread[spread > 1e-9].index[0][0]) if (spread > 1e-9).any() else twice[0]
        where = " and ".join(rows.loc[rows["image"] == image, "where"].drop_duplicates().head(2))
        differ = "with other labels " if (spread > 1e-9).any() else ""
        raise DatasetError(
            f"{where}: image {image} is listed in two splits {differ}({len(twice)} image(s) "
            "in all); keep one of its lines, or load with overlap='test' or 'validation' "
            "(where identical labels go)"
        )
    keep = "Validation" if overlap == "validation" else None
    drop = rows["split"] != keep if keep else rows["split"] == "Validation"
    return labels.drop(index=rows.index[drop.to_numpy()]), len(twice)
