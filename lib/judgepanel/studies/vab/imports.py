"""Results written by the VAB official harness, as a tidy predictions table.

The harness (``eval.py``) saves ``results/<model>.json``: ``metadata`` (``model`` among
others), ``summary`` and ``results``, one object per trial with ``task_id``,
``prompt_type`` (``pick_best``, ``pick_worst``, ``pick_best_and_worst``), ``trial``,
``permutation`` (slot i shows original image ``permutation[i]``), ``parsed_answer``
(ORIGINAL labels, or null when unparseable), ``ground_truth``, ``domain``, ``n_images``
and ``all_labels``; a failed trial carries ``error`` instead of an answer. Rows the
harness derives for pairs (``derived_from``) are skipped: the metrics derive TB-1 for
pairs from the Top-1 answer themselves.

:func:`read_official_results` turns such files into the study's predictions table
(:data:`~judgepanel.studies.vab.columns.PRED_COLUMNS`), the ``judge`` named by a flag, else
by the file's ``metadata.model``, and :func:`tasks_of` gives the task table the analyses
need from the same rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.datasets._common import DatasetError
from judgepanel.studies.vab.columns import PRED_COLUMNS

QUESTION_OF_PROMPT_TYPE: dict[str, str] = {
    "pick_best": "vab_top1",
    "pick_worst": "vab_bot1",
    "pick_best_and_worst": "vab_tb1",
}
"""The harness's prompt types -> our questions (call kinds)."""


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DatasetError(f"{path}: results file not found")
    try:
        obj = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON: {exc.msg} (line {exc.lineno})") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("results"), list):
        raise DatasetError(f"{path}: expected an object with a 'results' list")
    return obj


def _gold(rows: list[dict[str, Any]], path: Path) -> dict[str, dict[str, Any]]:
    """Per task: labels, k, domain, substyle and gold, from the rows that carry them."""
    out: dict[str, dict[str, Any]] = {}
    for i, r in enumerate(rows):
        gt = r.get("ground_truth") or {}
        task = out.setdefault(str(r.get("task_id")), {})
        for key, value in (
            ("labels", r.get("all_labels")),
            ("k", r.get("n_images")),
            ("domain", r.get("domain")),
            ("substyle", r.get("substyle")),
            ("best", gt.get("best")),
            ("worst", gt.get("worst")),
        ):
            if value is None:
                continue
            if task.get(key, value) != value:
                raise DatasetError(
                    f"{path}: results[{i}] (task {r.get('task_id')!r}): {key} {value!r} "
                    f"disagrees with {task[key]!r} in another trial"
                )
            task[key] = value
    for task_id, t in out.items():
        if "k" in t and "labels" not in t:
            t["labels"] = [chr(65 + i) for i in range(int(t["k"]))]
        missing = [f for f in ("labels", "k", "domain", "best") if f not in t]
        if missing:
            raise DatasetError(f"{path}: task {task_id!r}: no trial gives its {', '.join(missing)}")
        if t.get("worst") is None and int(t["k"]) == 2:
            t["worst"] = next(lab for lab in t["labels"] if lab != t["best"])  # the other one
    return out


def _pred_row(r: dict[str, Any], i: int, gold: dict[str, Any], judge: str, path: Path):
    where = f"{path}: results[{i}] (task {r.get('task_id')!r})"
    question = QUESTION_OF_PROMPT_TYPE.get(r.get("prompt_type"))  # type: ignore[arg-type]
    if question is None:
        raise DatasetError(f"{where}: unknown prompt_type {r.get('prompt_type')!r}")
    trial = r.get("trial", 0)
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 0:
        raise DatasetError(f"{where}: trial {trial!r} is not a non-negative integer")
    labels = list(gold["labels"])
    perm = r.get("permutation")
    order = None
    if perm is not None:
        if sorted(perm) != list(range(len(labels))):
            raise DatasetError(f"{where}: permutation {perm} is not one of 0..{len(labels) - 1}")
        order = ",".join(labels[j] for j in perm)
    answer = r.get("parsed_answer") or {}
    failed = "error" in r
    for field in ("best", "worst"):
        value = answer.get(field)
        if value is not None and value not in labels:
            raise DatasetError(f"{where}: parsed {field} {value!r} is not one of {labels}")
    return {
        "task_id": str(r["task_id"]),
        "judge": judge,
        "kind": question,
        "repetition": trial,
        "order": order,
        "pred_best": None if failed else answer.get("best"),
        "pred_worst": None if failed else answer.get("worst"),
        "status": "failed" if failed else "ok",
        "gold_best": gold["best"],
        "gold_worst": gold.get("worst"),
        "k": int(gold["k"]),
        "domain": gold["domain"],
    }


def read_official_results(
    files: Sequence[str | Path], *, judge: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tidy predictions, tasks) from official results files, one judge a file.

    Raises:
        DatasetError: a missing or bad file, a trial with an unknown prompt type, a bad
            permutation or label (naming the file, the result's index and the task), a
            task whose gold differs between files, or two files for one judge.
    """
    if judge is not None and len(files) != 1:
        raise DatasetError("a judge name can be given for one results file only")
    preds, golds, seen = [], {}, {}
    for file in files:
        path = Path(file)
        obj = _read(path)
        model = str((obj.get("metadata") or {}).get("model") or path.stem)
        name = judge or model.rsplit("/", 1)[-1]
        if name in seen:
            raise DatasetError(f"{path}: judge {name!r} already read from {seen[name]}")
        seen[name] = path
        rows = [r for r in obj["results"] if isinstance(r, dict) and "derived_from" not in r]
        if not rows:
            raise DatasetError(f"{path}: no trials in 'results'")
        gold = _gold(rows, path)
        for task_id, g in gold.items():
            if task_id in golds and golds[task_id]["best"] != g["best"]:
                raise DatasetError(f"{path}: task {task_id!r} has another gold than in {file}")
            golds.setdefault(task_id, g)
        preds += [_pred_row(r, i, gold[str(r["task_id"])], name, path) for i, r in enumerate(rows)]
    pred = pd.DataFrame(preds, columns=list(PRED_COLUMNS))
    pred = pred.drop_duplicates(["task_id", "judge", "kind", "repetition"], keep="last")
    return pred.reset_index(drop=True), tasks_of(golds)


def tasks_of(golds: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The task table (``load_vab``'s columns that the analyses read) of the gold records."""
    rows = []
    for task_id, g in sorted(golds.items()):
        rows.append(
            {
                "task_id": task_id,
                "domain": g["domain"],
                "substyle": g.get("substyle") or "",
                "n_images": int(g["k"]),
                "labels": tuple(g["labels"]),
                "ground_truth_best": g["best"],
                "ground_truth_worst": g.get("worst"),
            }
        )
    return pd.DataFrame(rows)


def _tidy_tasks(pred: pd.DataFrame) -> pd.DataFrame:
    """The task table of a tidy predictions table (labels A, B, ... as VAB names them)."""
    first = pred.drop_duplicates("task_id")
    golds = {
        r.task_id: {
            "labels": [chr(65 + i) for i in range(int(r.k))],
            "k": int(r.k),
            "domain": r.domain,
            "best": r.gold_best,
            "worst": None if pd.isna(r.gold_worst) else r.gold_worst,
        }
        for r in first.itertuples(index=False)
    }
    return tasks_of(golds)


def load_predictions(
    files: Sequence[str | Path], *, judge: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(predictions, tasks) from official results (``.json``) or tables written by
    ``judgepanel import vab-results`` (``.csv``), mixed freely.

    Raises:
        DatasetError: as :func:`read_official_results`, or a table lacking columns.
    """
    official = [f for f in files if Path(f).suffix.lower() != ".csv"]
    frames = []
    if official:
        frames.append(read_official_results(official, judge=judge)[0])
    for f in files:
        if Path(f).suffix.lower() == ".csv":
            table = pd.read_csv(f, dtype={"order": "string"})
            if "judge" not in table.columns:  # written before the judge column had its name
                table = table.rename(columns={"family": "judge"})
            missing = [c for c in PRED_COLUMNS if c not in table.columns]
            if missing:
                raise DatasetError(f"{f}: lacks column(s) {', '.join(missing)}")
            frames.append(table[list(PRED_COLUMNS)])
    if not frames:
        raise DatasetError("no predictions files given")
    pred = pd.concat(frames, ignore_index=True)
    pred = pred.astype({"repetition": int, "k": int}).replace({float("nan"): None})
    return pred, _tidy_tasks(pred)


def import_results(
    files: Sequence[str | Path], out: str | Path, *, judge: str | None = None
) -> pd.DataFrame:
    """``judgepanel import vab-results``: write the tidy table of official results to CSV."""
    pred, _ = read_official_results(files, judge=judge)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pred.to_csv(out, index=False)
    return pred
