"""VisionQ's predictions table: built from the store, checked, and split for the analyses.

Its columns are those of :mod:`judgepanel.studies.visionq.columns`. Every accuracy divides
by ALL questions: an unparsed answer is a wrong answer, never a dropped one. So is a letter
outside the question's choices ("E" on a four-panel question), which another harness may
record: :func:`check_predictions` keeps it as a wrong answer and flags it
(``out_of_range``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.datasets.visionq import LETTERS
from judgepanel.stats.grouped import require_columns
from judgepanel.studies.visionq.columns import PRED_COLUMNS, REQUIRED
from judgepanel.studies.visionq.protocol import VisionqAnswer, rotations_for


def judge_column(preds: pd.DataFrame) -> str | None:
    """The judge column of a predictions table: ``judge``, or None for a single judge."""
    return "judge" if "judge" in preds.columns else None


def judge_keys(frame: pd.DataFrame) -> list[str]:
    """The judge column as a list of grouping keys (empty for a single-judge table)."""
    judge = judge_column(frame)
    return [judge] if judge else []


def as_list(by: str | Sequence[str] | None) -> list[str]:
    """Grouping columns as a list: None is none, a string is one."""
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def select_rotation(frame: pd.DataFrame, rotation: int | None) -> pd.DataFrame:
    """The rows of one rotation (all rows for None, or when there is no rotation column)."""
    if rotation is None or "rotation" not in frame.columns:
        return frame
    return frame[frame["rotation"] == rotation]


def _letter_or_none(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    text = str(value).strip().strip("()").strip().upper()
    return text or None


def _in_range(letter: str, n_choices: int) -> bool:
    return len(letter) == 1 and letter in LETTERS[:n_choices]


def check_predictions(preds: pd.DataFrame) -> pd.DataFrame:
    """A validated copy with normalised letters and ``parsed`` / ``correct`` columns.

    ``pred`` and ``gold`` may be given as ``"B"`` or ``"(B)"``, any case; a missing pred
    stays null and counts as incorrect. A pred that is not one of the question's letters
    counts as incorrect too, like an unreadable answer: it becomes null and is flagged in
    ``out_of_range``.

    Raises:
        ValueError: a required column is missing, a gold letter is missing or out of range,
            or ``n_choices`` < 2.
    """
    require_columns(preds, REQUIRED, "predictions table")
    out = preds.copy()
    out["n_choices"] = out["n_choices"].astype(int)
    if (out["n_choices"] < 2).any():
        bad = out.loc[out["n_choices"] < 2, "id"].iloc[0]
        raise ValueError(f"question {bad!r}: n_choices must be at least 2")
    out["pred"] = pd.Series(
        [_letter_or_none(v) for v in out["pred"]], index=out.index, dtype=object
    )
    out["gold"] = pd.Series(
        [_letter_or_none(v) for v in out["gold"]], index=out.index, dtype=object
    )
    for idx, letter, n in zip(out.index, out["gold"], out["n_choices"], strict=True):
        if letter is None:
            raise ValueError(f"question {out.at[idx, 'id']!r}: missing gold letter")
        if not _in_range(letter, n):
            raise ValueError(
                f"question {out.at[idx, 'id']!r}: gold {letter!r} is not one of {LETTERS[:n]}"
            )
    pairs = zip(out["pred"], out["n_choices"], strict=True)
    outside = pd.Series(
        [p is not None and not _in_range(p, n) for p, n in pairs], index=out.index, dtype=bool
    )
    if "out_of_range" in out.columns:  # a table checked before keeps its flags
        outside |= out["out_of_range"].fillna(False).astype(bool)
    out["out_of_range"] = outside
    out.loc[outside, "pred"] = None
    out["parsed"] = out["pred"].notna()
    out["correct"] = (out["pred"] == out["gold"]) & out["parsed"]
    if "rotation" in out.columns:
        out["rotation"] = out["rotation"].astype(int)
    return out


def _stored_letter(status: str, parsed: Any) -> str | None:
    """The released letter of a stored answer (``parsed`` is a VisionqAnswer as JSON)."""
    if status != "ok" or not isinstance(parsed, str):
        return None
    answer: VisionqAnswer = json.loads(parsed)
    return answer.get("letter")


def predictions_from_store(
    calls: pd.DataFrame,
    questions: pd.DataFrame,
    *,
    judge: str = "family",
    families: Mapping[str, str] | None = None,
    rotations: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """Predictions table from a store frame (``kind == "visionq"``) and the question table.

    Every (judge, question) gets a row for each rotation it should have been asked in, so
    the denominator stays all questions: calls that failed, could not be read or were never
    made become null predictions.

    Args:
        calls: ``Store.frame(...)`` rows; ``repetition`` is the rotation, ``parsed`` the
            JSON of the :class:`~judgepanel.studies.visionq.protocol.VisionqAnswer`.
        questions: :func:`judgepanel.datasets.load_visionq` output.
        judge: the store column naming the judge (``family`` or ``model``).
        families: family name -> model id. When given, only calls of those families with
            that model count, and every family gets rows even if it has no answer yet.
        rotations: the plan's ``rotations`` (see :func:`~judgepanel.studies.visionq.rotations_for`;
            0 = all). When given, the rotations expected of a question are exactly the
            planned ones and answers at other rotations are ignored; when None, they are
            rotation 0 plus every rotation recorded for the question under any judge.
        seed: the plan's seed (it draws the rotations when ``rotations`` is partial).

    Returns:
        ``PRED_COLUMNS`` (judge, id, rotation, pred: released letter or null, gold,
        n_choices, axis, leaf, paper), then answered (a call is in the store, whatever its
        status).

    Raises:
        ValueError: the store answers an unknown question id, or holds two answers for one
            (judge, question, rotation), e.g. from two temperatures or prompt versions;
            select one of them before calling.
    """
    q = questions.set_index("id")
    calls = calls[calls["kind"] == "visionq"] if "kind" in calls.columns else calls
    if families is not None:
        if judge != "family":
            raise ValueError("families= selects by the family column; use judge='family'")
        wanted = calls["family"].map(lambda f: families.get(f))
        if "model" in calls.columns:
            calls = calls[calls["model"] == wanted]
        else:
            calls = calls[wanted.notna()]
    unknown = sorted(set(calls["item"]) - set(q.index))
    if unknown:
        raise ValueError(f"store holds answers for unknown question id(s): {unknown[:5]}")
    letters: dict[tuple[str, str, int], str | None] = {}
    for row in calls.itertuples(index=False):
        key = (getattr(row, judge), row.item, int(row.repetition))
        if key in letters:
            raise ValueError(
                f"the store holds two answers for {judge} {key[0]!r}, question {key[1]!r}, "
                f"rotation {key[2]} (different temperature or prompt?); select one set first"
            )
        letters[key] = _stored_letter(row.status, row.parsed)
    if rotations is not None:
        expected = {
            qid: set(rotations_for(str(qid), int(n), int(rotations), seed))
            for qid, n in q["n_choices"].items()
        }
    else:
        expected = {qid: {0} for qid in q.index}
        for _, item, rot in letters:
            expected[item].add(rot)
    if families is not None:
        judges = list(families)
    else:
        judges = sorted(set(calls[judge])) if len(calls) else []
    rows = []
    for j in judges:
        for qid, meta in q.iterrows():
            for rot in sorted(expected[qid]):
                rows.append(
                    {
                        "judge": j,
                        "id": qid,
                        "rotation": rot,
                        "pred": letters.get((j, qid, rot)),
                        "gold": meta["gold"],
                        "n_choices": int(meta["n_choices"]),
                        "axis": meta["axis"],
                        "leaf": meta["leaf"],
                        "paper": meta["paper_id"],
                        "answered": (j, qid, rot) in letters,
                    }
                )
    return pd.DataFrame(rows, columns=[*PRED_COLUMNS, "answered"])
