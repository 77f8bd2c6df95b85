"""Rubric answers made elsewhere, as a long CSV: checked, then read into the store.

A researcher who collected judges' answers outside judgepanel brings them as rows
``image_id, judge, dimension, score`` (optional ``sample``, ``model`` and ``raw``): one
answer a row, ``dimension`` a key of the rubric or ``holistic``. Every row is checked
against the dataset's images and the rubric's scale of its dimension before anything is
written; the first bad row stops the import with one line naming the file, the line and
the reason, and answers outside a question's scale are refused together with the scale
that would hold them. Each answer is keyed as if it had been asked with the rubric's own prompt
(its hash and prompt hash), so the notebooks read it like a scored call, and the store
records which file and line it came from. :func:`long_answers` writes the same shape
out of a store (``judgepanel export --long``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Sequence
from pathlib import Path

import pandas as pd

from judgepanel.core.calls import CallKey
from judgepanel.core.errors import JudgepanelError
from judgepanel.core.rubric import Rubric, Scale
from judgepanel.core.scales import observed_ranges, rubric_questions
from judgepanel.core.store import CallResult, ImportedRow, ImportSource, Store

REQUIRED: tuple[str, ...] = ("image_id", "judge", "dimension", "score")
OPTIONAL: tuple[str, ...] = ("sample", "model", "raw")
HOLISTIC = "holistic"
"""The ``dimension`` of a holistic answer."""
RUBRIC_KINDS: tuple[str, ...] = ("holistic", "dimension")


class AnswersError(JudgepanelError, ValueError):
    """An answers file cannot be imported; the message names the file, line and reason."""


def read_value(scale: Scale, text: str) -> int | None:
    """The value of one answer cell on ``scale`` (a whole number in range, or a level's
    name or value), or None when it is off the scale."""
    if scale.levels is not None:
        for name, value in scale.levels:
            if text.casefold() == name.casefold():
                return value
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number) or number != int(number):
        return None
    value = int(number)
    if scale.levels is not None:
        return value if value in {v for _, v in scale.levels} else None
    return value if scale.min <= value <= scale.max else None


def scale_words(scale: Scale) -> str:
    if scale.levels is not None:
        return "one of " + ", ".join(name for name, _ in scale.levels)
    return f"a whole number from {scale.min} to {scale.max}"


def _questions(rubric: Rubric) -> dict[str, Scale]:
    """Each question of ``rubric`` by the name an answers file gives it, with its scale."""
    return rubric_questions(rubric)


def _whole(text: str) -> float | None:
    """The number a cell holds, when it is a whole number (else None)."""
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) and number == int(number) else None


def _refuse_off_scale(path: Path, table: pd.DataFrame, rubric: Rubric) -> None:
    """One line for the first question whose whole-number answers fall outside its
    rubric scale: how many, which values, the first line, and the scale that would hold
    them (a scale left out of the rubric is 1-10, which answers on 0-100 do not fit)."""
    for question, scale in _questions(rubric).items():
        if scale.levels is not None:
            continue  # a level's name or value is checked row by row
        rows = table.index[table["dimension"].str.strip() == question]
        values = [(i, _whole(str(table.at[i, "score"]).strip())) for i in rows]
        numbers = [(i, v) for i, v in values if v is not None]
        off = [(i, v) for i, v in numbers if not scale.min <= v <= scale.max]
        if not off:
            continue
        shown = sorted({v for _, v in off})
        listed = ", ".join(f"{v:g}" for v in shown[:5]) + (", ..." if len(shown) > 5 else "")
        low, high = min(v for _, v in numbers), max(v for _, v in numbers)
        default = " (the default: the rubric declares none)" if scale.defaulted else ""
        key = "holistic" if question == HOLISTIC else f"dimensions.{question}"
        raise AnswersError(
            f"{path}: {len(off)} answer(s) to {question} fall outside its rubric scale "
            f"{scale.span()}{default}: values {listed}, first at line {off[0][0] + 2}; if "
            f"the judges answered on {low:g}-{high:g}, declare `scale: {{min: {low:g}, max: "
            f"{high:g}}}` under {key} in {Path(rubric.source).name}, else correct those rows"
        )


def read_answers(
    path: str | Path,
    *,
    dataset: str,
    images: Sequence[str],
    rubric: Rubric,
    temperature: float = 0.0,
) -> list[ImportedRow]:
    """Every row of the answers file ``path`` as a call to import, checked.

    Args:
        dataset: the dataset's name in the store.
        images: the dataset's image ids.
        rubric: the rubric the answers were given under (its questions and scales).
        temperature: the sampling temperature the answers were drawn at, which keys them
            (0.0 when unknown).

    Raises:
        AnswersError: the file is missing or not a CSV of the expected columns, or a row
            names an unknown image or question, has an answer off its scale, a bad sample
            number, or repeats another row's call.
    """
    path = Path(path)
    if not path.is_file():
        raise AnswersError(f"{path}: answers file not found")
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise AnswersError(f"{path}: not a readable CSV ({' '.join(str(exc).split())})") from None
    missing = [c for c in REQUIRED if c not in table.columns]
    unknown = [c for c in table.columns if c not in (*REQUIRED, *OPTIONAL)]
    if missing or unknown:
        what = f"missing column(s) {', '.join(missing)}" if missing else ""
        what += ("; " if what else "") + (
            f"unknown column(s) {', '.join(unknown)}" if unknown else ""
        )
        raise AnswersError(
            f"{path}: {what}; the columns are {', '.join(REQUIRED)} and optionally "
            f"{', '.join(OPTIONAL)}"
        )
    if table.empty:
        raise AnswersError(f"{path}: holds no answers")
    _refuse_off_scale(path, table, rubric)
    known_images = set(map(str, images))
    scales = _questions(rubric)
    rows: list[ImportedRow] = []
    seen: dict[CallKey, int] = {}
    for index, record in enumerate(table.to_dict("records")):
        line = index + 2
        where = f"{path}, line {line}"
        cells = {k: str(v).strip() for k, v in record.items()}
        for column in REQUIRED:
            if not cells[column]:
                raise AnswersError(f"{where}: empty {column}")
        if cells["image_id"] not in known_images:
            raise AnswersError(f"{where}: image {cells['image_id']!r} is not in {dataset}")
        question = cells["dimension"]
        if question not in scales:
            raise AnswersError(
                f"{where}: {question!r} is not a question of the rubric; its questions are: "
                f"{', '.join(scales)}"
            )
        value = read_value(scales[question], cells["score"])
        if value is None:
            raise AnswersError(
                f"{where}: score {cells['score']!r} of {question} is not "
                f"{scale_words(scales[question])}"
            )
        sample_text = cells.get("sample", "") or "0"
        if not sample_text.isdigit():
            raise AnswersError(f"{where}: sample {sample_text!r} is not a whole number 0 or more")
        kind = HOLISTIC if question == HOLISTIC else "dimension"
        dimension = "" if question == HOLISTIC else question
        key = CallKey(
            dataset=dataset,
            item=cells["image_id"],
            family=cells["judge"],
            model=cells.get("model", "") or cells["judge"],
            kind=kind,
            dimension=dimension,
            repetition=int(sample_text),
            temperature=float(temperature),
            rubric_sha=rubric.sha_of(kind),
            prompt_hash=rubric.prompt_hash(kind, dimension),
        )
        if key in seen:
            raise AnswersError(
                f"{where}: repeats line {seen[key]} (the same judge, image, {question} and "
                "sample); give repeated answers distinct sample numbers"
            )
        seen[key] = line
        result = CallResult(
            status="ok",
            answer=cells.get("raw", "") or cells["score"],
            parsed={"score": value},
            value=float(value),
            attempts=0,
        )
        rows.append(ImportedRow(key, result, line))
    return rows


def answer_ranges(rows: Sequence[ImportedRow]) -> dict[str, tuple[float, float]]:
    """The lowest and highest answer to each question of read rows (for
    :func:`judgepanel.core.scales.scale_notes`)."""
    return observed_ranges(
        (HOLISTIC if r.key.kind == HOLISTIC else r.key.dimension, float(r.result.value))
        for r in rows
        if r.result.value is not None
    )


def write_answers(
    rows: Sequence[ImportedRow], path: str | Path, store: str | Path, *, dataset: str
) -> tuple[int, int]:
    """Write rows read by :func:`read_answers` from ``path`` into ``store``, with the
    file's name and digest as their provenance.

    Returns:
        (answers written, answers already stored with the same value).

    Raises:
        StoreError: a call is stored with another answer; nothing is written.
    """
    source = ImportSource(
        file=Path(path).name,
        sha256=hashlib.sha256(Path(path).read_bytes()).hexdigest(),
        dataset=dataset,
    )
    with Store(store) as db:
        written = db.record_import(list(rows), source)
    return written, len(rows) - written


def import_answers(
    path: str | Path,
    store: str | Path,
    *,
    dataset: str,
    images: Sequence[str],
    rubric: Rubric,
    temperature: float = 0.0,
    leave_out: Collection[str] = (),
) -> tuple[int, int]:
    """Check the answers file and write it into ``store`` with its provenance.

    Args:
        leave_out: images whose answers are checked but not written (those a run skips
            as absent from disk); ``images`` should name them too.

    Returns:
        (answers written, answers of the file already stored with the same value).

    Raises:
        AnswersError: see :func:`read_answers`; nothing is written.
        StoreError: a call of the file is stored with another answer; nothing is written.
    """
    rows = read_answers(
        path, dataset=dataset, images=images, rubric=rubric, temperature=temperature
    )
    dropped = set(map(str, leave_out))
    kept = [r for r in rows if r.key.item not in dropped]
    return write_answers(kept, path, store, dataset=dataset)


def long_answers(calls: pd.DataFrame, dataset: str | None = None) -> pd.DataFrame:
    """The ok rubric answers of a store frame in the shape :func:`read_answers` reads.

    Args:
        calls: ``Store.frame()`` rows.
        dataset: the dataset to write (needed when the store holds several).

    Raises:
        AnswersError: several datasets or rubrics, and ``dataset`` does not pick one.
    """
    rows = calls[calls["kind"].isin(RUBRIC_KINDS) & (calls["status"] == "ok")]
    present = sorted(rows["dataset"].unique())
    if dataset is None and len(present) > 1:
        raise AnswersError(
            f"the store holds rubric answers of several datasets ({', '.join(present)}); "
            "choose one with --dataset"
        )
    if dataset is not None:
        if dataset not in present:
            raise AnswersError(
                f"the store holds no rubric answers of {dataset!r}; it has: "
                f"{', '.join(present) or 'none'}"
            )
        rows = rows[rows["dataset"] == dataset]
    for kind in RUBRIC_KINDS:
        shas = rows.loc[rows["kind"] == kind, "rubric_sha"].unique()
        if len(shas) > 1:
            raise AnswersError(
                f"the store holds {kind} answers under {len(shas)} rubrics; a long file "
                "holds one rubric's answers"
            )
    value = rows["value"].astype(float)
    score = value.map(lambda v: str(int(v)) if float(v).is_integer() else repr(float(v)))
    return pd.DataFrame(
        {
            "image_id": rows["item"].astype(str).to_numpy(),
            "judge": rows["family"].to_numpy(),
            "dimension": rows["dimension"].where(rows["kind"] != HOLISTIC, HOLISTIC).to_numpy(),
            "score": score.to_numpy(),
            "sample": rows["repetition"].astype(int).to_numpy(),
            "model": rows["model"].to_numpy(),
            "raw": rows["answer"].fillna("").to_numpy(),
        }
    )
