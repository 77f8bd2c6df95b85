"""Predictions written by VisionQ's official harness, as a tidy predictions table.

The harness (``bench_run.py``) writes one JSON object a line with, among others, ``id``,
``axis``, ``leaf``, ``n_choices``, ``gold_letter``, ``pred_letter``, ``correct``,
``status`` and, when run with ``--tag-quality``, ``quality_flags.benchmark_eligible``.
The paper is the id's prefix before the first ``__`` (``paper_0842__fig_4_p6__row_3``).

:func:`read_official_predictions` turns such files into the study's predictions table
(:data:`~judgepanel.studies.visionq.columns.PRED_COLUMNS`), so that every analysis of
notebook 06 runs on them. A row whose
``status`` is not ``ok`` keeps a null ``pred`` and counts as wrong, as in the harness's
scorer. The judge is named by a flag, else by the file name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.datasets._common import DatasetError, jsonl_objects
from judgepanel.datasets.visionq import LETTERS
from judgepanel.studies.visionq.columns import PRED_COLUMNS

FIELDS: tuple[str, ...] = (
    "id",
    "axis",
    "leaf",
    "n_choices",
    "gold_letter",
    "pred_letter",
    "correct",
    "status",
)
"""Fields every official prediction line must have."""
COLUMNS: tuple[str, ...] = (*PRED_COLUMNS, "status", "eligible", "source")
SLICES: tuple[str, ...] = ("eligible", "all")
_PREFIX = "test_questions_"


def judge_from_file(path: str | Path) -> str:
    """The judge a predictions file is named for: its stem without ``test_questions_``."""
    stem = Path(path).name.removesuffix(".jsonl")
    return stem.removeprefix(_PREFIX) or stem


def _letter(value: Any, n: int, field: str, where: str, *, nullable: bool) -> str | None:
    if value is None and nullable:
        return None
    text = str(value).strip().strip("()").strip().upper() if isinstance(value, str) else ""
    if text not in LETTERS[:n] or not text:
        raise DatasetError(f"{where}: {field} {value!r} is not a letter A..{LETTERS[n - 1]}")
    return text


def _row(obj: Any, where: str, judge: str, source: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: expected a JSON object")
    missing = [f for f in FIELDS if f not in obj]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {', '.join(missing)}")
    qid = obj["id"]
    if not isinstance(qid, str) or "__" not in qid:
        raise DatasetError(f"{where}: id {qid!r} does not start with a paper id and '__'")
    where = f"{where} (question {qid!r})"
    n = obj["n_choices"]
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= len(LETTERS):
        raise DatasetError(f"{where}: n_choices {n!r} is not an integer of at least 2")
    status = str(obj["status"])
    pred = _letter(obj["pred_letter"], n, "pred_letter", where, nullable=True)
    flags = obj.get("quality_flags")
    eligible = None
    if flags is not None:
        if not isinstance(flags, dict) or not isinstance(flags.get("benchmark_eligible"), bool):
            raise DatasetError(f"{where}: quality_flags.benchmark_eligible must be true or false")
        eligible = flags["benchmark_eligible"]
    return {
        "id": qid,
        "pred": pred if status == "ok" else None,
        "gold": _letter(obj["gold_letter"], n, "gold_letter", where, nullable=False),
        "n_choices": n,
        "axis": str(obj["axis"] or "_none"),
        "leaf": str(obj["leaf"] or "_none"),
        "paper": qid.split("__", 1)[0],
        "judge": judge,
        "rotation": 0,
        "status": status,
        "eligible": eligible,
        "source": source,
    }


def read_official_predictions(
    files: Sequence[str | Path],
    *,
    judge: str | None = None,
    slice_name: str = "eligible",
) -> pd.DataFrame:
    """One tidy predictions table from official prediction files (one judge a file).

    Args:
        files: the harness's JSON-lines outputs.
        judge: the judge's name for a single file; None names each by its file.
        slice_name: ``eligible`` keeps the rows whose ``quality_flags.benchmark_eligible``
            is true (the harness scorer's default; a file without flags is an error, as
            there), ``all`` keeps every row.

    Raises:
        DatasetError: a missing or unreadable file, a bad line (naming file, line and
            question), a repeated id in a file, two files for one judge, or no rows left.
    """
    if slice_name not in SLICES:
        raise DatasetError(f"unknown slice {slice_name!r}; expected one of {list(SLICES)}")
    if judge is not None and len(files) != 1:
        raise DatasetError("a judge name can be given for one predictions file only")
    frames, seen_judges = [], {}
    for file in files:
        path = Path(file)
        if not path.is_file():
            raise DatasetError(f"{path}: predictions file not found")
        name = judge or judge_from_file(path)
        if name in seen_judges:
            raise DatasetError(f"{path}: judge {name!r} already read from {seen_judges[name]}")
        seen_judges[name] = path
        rows, ids = [], {}
        for lineno, obj in jsonl_objects(path):
            row = _row(obj, f"{path}:{lineno}", name, path.name)
            if row["id"] in ids:
                raise DatasetError(
                    f"{path}:{lineno}: question {row['id']!r} repeats line {ids[row['id']]}"
                )
            ids[row["id"]] = lineno
            rows.append(row)
        if not rows:
            raise DatasetError(f"{path}: no predictions in the file")
        frame = pd.DataFrame(rows, columns=list(COLUMNS))
        if slice_name == "eligible":
            if frame["eligible"].isna().all():
                raise DatasetError(
                    f"{path}: no quality_flags; run the harness with --tag-quality, or read "
                    "the file with the 'all' slice"
                )
            frame = frame[frame["eligible"].fillna(False).astype(bool)]
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
    if out.empty:
        raise DatasetError(f"no predictions left in the {slice_name!r} slice")
    out["n_choices"] = out["n_choices"].astype(int)
    return out.reset_index(drop=True)


def questions_of(preds: pd.DataFrame) -> pd.DataFrame:
    """The questions an imported table covers (``id``, ``paper_id``, ``n_choices``, ``axis``,
    ``leaf``, ``gold``), in the shape the notebook prints."""
    q = preds.drop_duplicates("id")[["id", "paper", "n_choices", "axis", "leaf", "gold"]]
    return q.rename(columns={"paper": "paper_id"}).reset_index(drop=True)


def load_predictions(
    files: Sequence[str | Path], *, judge: str | None = None, slice_name: str = "eligible"
) -> pd.DataFrame:
    """Predictions from official files (``.jsonl``) or tables written by ``judgepanel
    import visionq-predictions`` (``.csv``), mixed freely, in the ``slice_name`` slice.

    Raises:
        DatasetError: as :func:`read_official_predictions`, or a table lacking columns.
    """
    official = [f for f in files if Path(f).suffix.lower() != ".csv"]
    frames = []
    if official:
        frames.append(read_official_predictions(official, judge=judge, slice_name=slice_name))
    for f in files:
        if Path(f).suffix.lower() != ".csv":
            continue
        table = pd.read_csv(f, dtype={"pred": "string", "gold": "string", "paper": "string"})
        missing = [c for c in COLUMNS if c not in table.columns]
        if missing:
            raise DatasetError(f"{f}: lacks column(s) {', '.join(missing)}")
        if slice_name == "eligible":
            table = table[table["eligible"].astype("boolean").fillna(False).astype(bool)]
        frames.append(table[list(COLUMNS)])
    if not frames:
        raise DatasetError("no predictions files given")
    out = pd.concat(frames, ignore_index=True)
    out["pred"] = out["pred"].astype(object).where(out["pred"].notna(), None)
    return out.astype({"n_choices": int, "rotation": int}).reset_index(drop=True)


def import_predictions(
    files: Sequence[str | Path],
    out: str | Path,
    *,
    judge: str | None = None,
    slice_name: str = "all",
) -> pd.DataFrame:
    """``judgepanel import visionq-predictions``: write the tidy table to CSV (every row,
    with its ``eligible`` flag, unless a slice is asked for)."""
    preds = read_official_predictions(files, judge=judge, slice_name=slice_name)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    preds.to_csv(out, index=False)
    return preds
