"""Rubric answers made elsewhere, as a long CSV: checked, then read into the store.

A researcher who collected judges' answers outside judgepanel brings them as rows
``image_id, judge, dimension, score`` (optional ``sample``, ``model`` and ``raw``): one
answer a row, ``dimension`` a key of the rubric or ``holistic``. Every row is checked
against the dataset's images and the rubric's scale of its dimension before anything is
written; bad rows stop the import with one line naming the file, counting them and
listing the first few with their line and reason, and answers outside a question's scale
are summed up there with the scale that would hold them. The file may be saved as Excel
and crowd platforms save it (comma, semicolon or tab separated; UTF-8 or UTF-16 with its
byte-order mark; a decimal comma in a score). Each answer is keyed as if it had been
asked with the rubric's own prompt (its hash and prompt hash), so the notebooks read it
like a scored call, and the store records which file and line it came from.
:func:`read_answers` checks a file and :func:`write_answers` writes what it read (so a
caller can say what the answers show, or leave some out, in between);
:func:`long_answers` writes the same shape out of a store (``judgepanel export --long``).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import math
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import pandas as pd

from judgepanel.core.calls import CallKey
from judgepanel.core.rubric import Rubric, Scale
from judgepanel.core.scales import observed_ranges, rubric_questions
from judgepanel.core.store import CallResult, ImportedRow, ImportOutcome, ImportSource, Store
from judgepanel.errors import JudgepanelError

REQUIRED: tuple[str, ...] = ("image_id", "judge", "dimension", "score")
OPTIONAL: tuple[str, ...] = ("sample", "model", "raw")
HOLISTIC = "holistic"
"""The ``dimension`` of a holistic answer."""
RUBRIC_CALL_TYPES: tuple[str, ...] = ("holistic", "dimension")


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


def _off_scale(
    question: str, scale: Scale, off: list[tuple[int, float]], numbers: list[float], rubric: Rubric
) -> str:
    """The sentence for a question whose whole-number answers fall outside its rubric
    scale: how many, which values, the first line, and the scale that would hold them (a
    scale left out of the rubric is 1-10, which answers on 0-100 do not fit).

    Args:
        off: (line, value) of each answer outside the scale, in file order.
        numbers: every whole-number answer to the question.
    """
    shown = sorted({v for _, v in off})
    listed = ", ".join(f"{v:g}" for v in shown[:5]) + (", ..." if len(shown) > 5 else "")
    low, high = min(numbers), max(numbers)
    default = " (the default: the rubric declares none)" if scale.defaulted else ""
    key = "holistic" if question == HOLISTIC else f"dimensions.{question}"
    return (
        f"{len(off)} answer(s) to {question} fall outside its rubric scale "
        f"{scale.span()}{default}: values {listed}, first at line {off[0][0]}; if "
        f"the judges answered on {low:g}-{high:g}, declare `scale: {{min: {low:g}, max: "
        f"{high:g}}}` under {key} in {Path(rubric.source).name}, else correct those rows"
    )


SHOWN_PROBLEMS = 5
"""How many bad rows an error lists (it counts them all)."""
_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+$")
_SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}


def _text(path: Path) -> str:
    """The file's text: UTF-8 (with or without a byte-order mark) or UTF-16 with its
    byte-order mark, as Excel's "Unicode text" writes it."""
    data = path.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise AnswersError(
                f"{path}: starts as UTF-16 but is not UTF-16 text throughout; save it again "
                "as CSV UTF-8 (Excel: File > Save As > CSV UTF-8)"
            ) from None
    fix = "save it as CSV UTF-8 (Excel: File > Save As > CSV UTF-8)"
    if b"\x00" in data[:200]:
        raise AnswersError(f"{path}: looks like UTF-16 without a byte-order mark; {fix}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        what = f"is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})"
        raise AnswersError(
            f"{path}: {what}; save it as CSV UTF-8 (Excel: File > Save As > CSV UTF-8)"
        ) from None


def _separator(header: str) -> str:
    """The separator whose split of ``header`` names the required columns: a comma, or a
    semicolon (European Excel) or a tab (Excel's "Unicode text"), which are read as well."""
    best, found = ",", -1
    for sep in _SEPARATORS:
        names = {c.strip().strip('"') for c in header.split(sep)}
        hits = sum(c in names for c in REQUIRED)
        if hits > found:
            best, found = sep, hits
    return best


def read_table(path: str | Path) -> pd.DataFrame:
    """An answers file as a table of stripped text cells, one row per data line, whatever
    Excel or a crowd platform saved it as: UTF-8 or UTF-16 (with a byte-order mark),
    comma-, semicolon- or tab-separated, CRLF or LF line ends; a score written with a
    decimal comma (``4,0``) is read with a point. Its index counts data rows from 0 and
    ``line`` holds each row's line in the file.

    Raises:
        AnswersError: the file is missing, not text, lacks or adds columns, or has rows of
            the wrong number of fields (all counted, the first few listed).
    """
    path = Path(path)
    if path.is_dir():
        raise AnswersError(f"{path}: is a folder; give the answers CSV file itself")
    if not path.is_file():
        raise AnswersError(f"{path}: answers file not found; check the path")
    try:
        text = _text(path)
    except PermissionError:
        raise AnswersError(
            f"{path}: cannot be read (permission denied); check its permissions"
        ) from None
    first = next((line for line in text.splitlines() if line.strip()), "")
    sep = _separator(first)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    numbered = [(reader.line_num, row) for row in reader if any(c.strip() for c in row)]
    if not numbered:
        raise AnswersError(
            f"{path}: is empty; the first line names the columns {', '.join(REQUIRED)}"
        )
    _, header = numbered[0]
    columns = [c.strip() for c in header]
    missing = [c for c in REQUIRED if c not in columns]
    unknown = [c for c in columns if c not in (*REQUIRED, *OPTIONAL)]
    if missing or unknown:
        parts = [f"missing column(s) {', '.join(missing)}"] if missing else []
        parts += [f"unknown column(s) {', '.join(unknown)}"] if unknown else []
        what = "; ".join(parts)
        raise AnswersError(
            f"{path}: {what}; the columns are {', '.join(REQUIRED)} and optionally "
            f"{', '.join(OPTIONAL)}, separated by commas, semicolons or tabs"
        )
    problems = []
    rows = []
    for line, cells in numbered[1:]:
        if len(cells) != len(columns):
            hint = (
                "; a decimal comma (3,5) in a comma-separated file? write 3.5 or quote the cell"
                if sep == "," and len(cells) > len(columns)
                else ""
            )
            problems.append(f"line {line} has {len(cells)} fields, the header {len(columns)}{hint}")
            continue
        rows.append([line, *(c.strip() for c in cells)])
    _raise_problems(path, problems, len(numbered) - 1)
    table = pd.DataFrame(rows, columns=["line", *columns], dtype=str)
    table["line"] = table["line"].astype(int)
    if table.empty:
        raise AnswersError(f"{path}: holds no answers, only its header")
    score = table["score"]
    table["score"] = score.where(~score.str.match(_DECIMAL_COMMA), score.str.replace(",", "."))
    return table


def _raise_problems(
    path: Path, problems: list[str], total: int, off_scale: Sequence[str] = ()
) -> None:
    """Raise one error counting every bad row and listing the first few; one bad row is
    named as ``FILE, line N: reason``. ``off_scale`` sums up the answers outside a
    question's scale (see :func:`_off_scale`), whose rows ``problems`` counts too: it
    leads the line, and a lone bad row it already names is not listed again."""
    if not problems:
        return
    if not off_scale and len(problems) == 1:
        raise AnswersError(f"{path}, {problems[0]}; nothing was imported")
    said = [*off_scale]
    if len(problems) > 1:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = len(problems) - SHOWN_PROBLEMS
        rest = f"; and {more:,} more" if more > 0 else ""
        said.append(
            f"{len(problems):,} bad rows of {total:,}, the first: {shown}{rest}; fix them "
            "and import again"
        )
    raise AnswersError(f"{path}: {'; '.join(said)} (nothing was imported)")


def read_answers(
    path: str | Path,
    *,
    dataset: str,
    images: Sequence[str],
    rubric: Rubric,
    temperature: float = 0.0,
) -> list[ImportedRow]:
    """Every row of the answers file ``path`` as a call to import, checked.

    Every row is checked; the error counts all bad rows and lists the first
    :data:`SHOWN_PROBLEMS` of them with their line and reason.

    Args:
        dataset: the dataset's name in the store.
        images: the dataset's image ids.
        rubric: the rubric the answers were given under (its questions and scales).
        temperature: the sampling temperature the answers were drawn at, which keys them
            (0.0 when unknown).

    Raises:
        AnswersError: the file is missing or not a table of the expected columns (see
            :func:`read_table`), or rows name an unknown image or question, have an
            answer off its scale, a bad sample number, or repeat another row's call.
    """
    path = Path(path)
    table = read_table(path)
    known_images = set(map(str, images))
    scales = _questions(rubric)
    rows: list[ImportedRow] = []
    seen: dict[CallKey, int] = {}
    problems: list[str] = []
    numbers: dict[str, list[float]] = {}  # each question's whole-number answers
    off: dict[str, list[tuple[int, float]]] = {}  # and those outside its scale, with lines
    for record in table.to_dict("records"):
        line = int(record.pop("line"))
        cells = {k: str(v).strip() for k, v in record.items()}
        empty = [c for c in REQUIRED if not cells[c]]
        if empty:
            problems.append(f"line {line}: empty {', '.join(empty)}")
            continue
        if cells["image_id"] not in known_images:
            problems.append(f"line {line}: image {cells['image_id']!r} is not in {dataset}")
            continue
        question = cells["dimension"]
        if question not in scales:
            problems.append(
                f"line {line}: {question!r} is not a question of the rubric; its questions "
                f"are: {', '.join(scales)}"
            )
            continue
        scale = scales[question]
        whole = _whole(cells["score"]) if scale.levels is None else None
        if whole is not None:
            numbers.setdefault(question, []).append(whole)
            if not scale.min <= whole <= scale.max:
                off.setdefault(question, []).append((line, whole))
        value = read_value(scale, cells["score"])
        if value is None:
            problems.append(
                f"line {line}: score {cells['score']!r} of {question} is not "
                f"{scale_words(scales[question])}"
            )
            continue
        sample_text = cells.get("sample", "") or "0"
        if not sample_text.isdigit():
            problems.append(f"line {line}: sample {sample_text!r} is not a whole number 0 or more")
            continue
        call_type = HOLISTIC if question == HOLISTIC else "dimension"
        dimension = "" if question == HOLISTIC else question
        key = CallKey(
            dataset=dataset,
            item=cells["image_id"],
            family=cells["judge"],
            model=cells.get("model", "") or cells["judge"],
            call_type=call_type,
            dimension=dimension,
            repetition=int(sample_text),
            temperature=float(temperature),
            rubric_sha=rubric.sha_of(call_type),
            prompt_hash=rubric.prompt_hash(call_type, dimension),
        )
        if key in seen:
            problems.append(
                f"line {line}: repeats line {seen[key]} (the same judge, image, {question} "
                "and sample); give repeated answers distinct sample numbers"
            )
            continue
        seen[key] = line
        result = CallResult(
            status="ok",
            answer=cells.get("raw", "") or cells["score"],
            parsed={"score": value},
            value=float(value),
            attempts=0,
        )
        rows.append(ImportedRow(key, result, line))
    off_scale = [_off_scale(q, scales[q], o, numbers[q], rubric) for q, o in off.items()]
    _raise_problems(path, problems, len(table), off_scale)
    return rows


def file_digest(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, as hex (what an import and the page's provenance name)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def answer_ranges(rows: Sequence[ImportedRow]) -> dict[str, tuple[float, float]]:
    """The lowest and highest answer to each question of read rows (for
    :func:`judgepanel.core.scales.scale_notes`)."""
    return observed_ranges(
        (HOLISTIC if r.key.call_type == HOLISTIC else r.key.dimension, float(r.result.value))
        for r in rows
        if r.result.value is not None
    )


def write_answers(
    rows: Sequence[ImportedRow], path: str | Path, store: str | Path, *, dataset: str
) -> ImportOutcome:
    """Write rows read by :func:`read_answers` from ``path`` into ``store``, with the
    file's name and digest as their provenance.

    The file is the source of truth for its import: what an earlier import of the same
    file (same name, same dataset) wrote and ``rows`` no longer hold is removed, changed
    answers are replaced; answers scored here or imported from another file stay. The
    outcome's :meth:`ImportOutcome.note` says what changed.

    Raises:
        StoreError: a call is stored from another source with another answer; nothing is
            written.
    """
    source = ImportSource(file=Path(path).name, sha256=file_digest(path), dataset=dataset)
    with Store(store) as db:
        return db.record_import(list(rows), source)


def import_answers(
    path: str | Path,
    store: str | Path,
    *,
    dataset: str,
    images: Sequence[str],
    rubric: Rubric,
    temperature: float = 0.0,
    leave_out: Collection[str] = (),
) -> ImportOutcome:
    """Check the answers file and write it into ``store`` with its provenance.

    The file is the source of truth for its import: importing a file of the same name
    into the same dataset again replaces what its earlier import wrote (answers it no
    longer holds are removed, changed ones replaced); answers scored here or imported
    from another file stay. The outcome's :meth:`ImportOutcome.note` says what changed.

    Args:
        leave_out: images whose answers are checked but not written (those a run skips
            as absent from disk); ``images`` should name them too.

    Raises:
        AnswersError: see :func:`read_answers`; nothing is written.
        StoreError: a call of the file is stored from another source with another
            answer; nothing is written.
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
    rows = calls[calls["kind"].isin(RUBRIC_CALL_TYPES) & (calls["status"] == "ok")]
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
    for call_type in RUBRIC_CALL_TYPES:
        shas = rows.loc[rows["kind"] == call_type, "rubric_sha"].unique()
        if len(shas) > 1:
            raise AnswersError(
                f"the store holds {call_type} answers under {len(shas)} rubrics; a long file "
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
