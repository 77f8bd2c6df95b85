"""``judgepanel import answers`` and ``judgepanel export --long``: rubric answers in and out
of a store as a long CSV (``image_id, judge, dimension, score``, optional ``sample``,
``model``, ``raw``); the checks live in :mod:`judgepanel.core.answers_file`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judgepanel.core.answers_file import answer_ranges, long_answers, read_answers, write_answers
from judgepanel.core.describe import parse_dataset_spec
from judgepanel.core.rubric import load_rubric
from judgepanel.core.scales import scale_notes
from judgepanel.core.store import ImportOutcome, Store
from judgepanel.datasets import Dataset, load_dataset
from judgepanel.datasets.kinds import get_kind
from judgepanel.errors import JudgepanelError

EXIT_OK, EXIT_ERROR = 0, 1


def add_import_answers_parser(what: argparse._SubParsersAction) -> None:
    answers = what.add_parser(
        "answers",
        help="rubric answers collected elsewhere: CSV image_id, judge, dimension, score",
        description=(
            "Check a long CSV of judges' rubric answers (image_id, judge, dimension, score; "
            "optional sample, model, raw) against a dataset's images and a rubric's scales, "
            "and write it into a store, marked as imported, so that every notebook reads "
            "the answers like scored calls. The file is the source of truth for its import: "
            "importing it again after it changed replaces what it wrote (removed answers are "
            "removed). Bad rows stop the import with one line naming the file, counting "
            "them and listing the first few, and nothing is written. Only the dataset's "
            "labels are read: its images need not be on disk. A note says where a "
            "question's rubric scale is the default or differs from its attribute's range "
            "or from the answers' own."
        ),
    )
    answers.add_argument("file", type=Path, help="the answers CSV")
    answers.add_argument("--dataset", required=True, metavar="KIND:PATH", help="the images")
    answers.add_argument("--rubric", required=True, type=Path, help="rubric file or folder")
    answers.add_argument("--store", required=True, type=Path, help="the store to write into")
    answers.add_argument(
        "--name", help="the dataset's name in the store (default: the dataset's own name)"
    )
    answers.add_argument(
        "--temperature",
        type=float,
        default=0.0,
        help="the sampling temperature the answers were drawn at (default 0.0: unknown)",
    )


def labels_of(kind: str, root: Path) -> Dataset:
    """The dataset's labels, read whether or not its images are on disk (importing
    answers needs no image)."""
    declared = {**get_kind(kind).keys, **get_kind(kind).options}
    keep = {"missing_images": "keep"} if "missing_images" in declared else {}
    return load_dataset(kind, str(root), **keep)


def import_answers_command(args: argparse.Namespace) -> int:
    """``judgepanel import answers``; exit 0, or 1 with one line on stderr. Where a
    question's rubric scale is the default or differs from the data, a note says so
    before anything is written."""
    try:
        kind, root = parse_dataset_spec(args.dataset)
        ds = labels_of(kind, root)
        rubric = load_rubric(str(args.rubric))
        name = args.name or ds.name
        rows = read_answers(
            args.file,
            dataset=name,
            images=ds.images["image_id"].astype(str).tolist(),
            rubric=rubric,
            temperature=args.temperature,
        )
        for note in scale_notes(rubric, ds, answer_ranges(rows), Path(args.file).name):
            print(f"note: {note}")
        outcome = write_answers(rows, args.file, args.store, dataset=name)
    except (JudgepanelError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    if outcome.note():
        print(outcome.note())
    print(f"imported {outcome.written} answers of {name} into {args.store}{_again(outcome)}")
    return EXIT_OK


def _again(outcome: ImportOutcome) -> str:
    """What an import found already stored, as the end of its line."""
    parts = []
    if outcome.unchanged:
        parts.append(f"{outcome.unchanged} unchanged since the file's last import")
    if outcome.kept:
        parts.append(f"{outcome.kept} already stored with the same answers")
    return "; " + "; ".join(parts) if parts else ""


def export_long(store: Path, out: Path, dataset: str | None) -> int:
    """``judgepanel export --long``: the store's rubric answers as an answers CSV."""
    if out.suffix.lower() != ".csv":
        print(f"error: {out}: --long writes a .csv file", file=sys.stderr)
        return EXIT_ERROR
    try:
        with Store(store, readonly=True) as db:
            table = long_answers(db.frame(), dataset)
    except (JudgepanelError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"wrote {len(table)} answers to {out}")
    return EXIT_OK
