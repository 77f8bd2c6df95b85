"""``judgepanel import``: scores and predictions made elsewhere, brought into the analyses.

``import scores`` checks an off-the-shelf model's scores against a dataset; ``import
answers`` reads judges' rubric answers collected elsewhere (a long CSV ``image_id, judge,
dimension, score``, optional ``sample``, ``model``, ``raw``; the checks live in
:mod:`judgepanel.core.answers_file`) into a store; ``import vab-results`` and ``import
visionq-predictions`` turn the official harnesses' outputs into the tidy predictions
table notebooks 05 and 06 read.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import OK
from judgepanel.core.errors import ConfigError
from judgepanel.errors import JudgepanelError

if TYPE_CHECKING:
    from judgepanel.core.store import ImportOutcome
    from judgepanel.datasets import Dataset


def add_parser(sub: SubParsers) -> None:
    """``import`` and its four kinds of file."""
    imp = sub.add_parser(
        "import",
        help="bring scores and predictions made elsewhere into the analyses",
        description=(
            "Check off-the-shelf model scores against a dataset (scores), read judges' rubric "
            "answers collected elsewhere into a store (answers), or turn outputs of "
            "the official VAB or VisionQ harness into the tidy predictions table that "
            "notebooks 05 and 06 read through their 'predictions' parameter."
        ),
    )
    what = imp.add_subparsers(dest="what", required=True)
    _add_harness_parsers(what)
    scores = what.add_parser(
        "scores",
        help="an off-the-shelf aesthetics model's scores: CSV image_id, model, score",
        description=(
            "Check a comparator score file against a rated-image dataset and write it where a "
            "run's 'comparators' parameter points (02 and 04 read it)."
        ),
    )
    _add_answers_parser(what)
    scores.add_argument("file", type=Path, help="CSV with image_id, model, score")
    scores.add_argument("--dataset", required=True, help="KIND:PATH, e.g. eva:data/eva")
    scores.add_argument("--out", type=Path, required=True, help="the checked CSV to write")
    imp.set_defaults(handler=import_command)


def _add_harness_parsers(what: SubParsers) -> None:
    """``import vab-results`` and ``import visionq-predictions``."""
    vab = what.add_parser("vab-results", help="VAB eval.py results JSON (one model a file)")
    vis = what.add_parser(
        "visionq-predictions", help="VisionQ bench_run.py predictions JSONL (one model a file)"
    )
    for p in (vab, vis):
        p.add_argument("files", nargs="+", type=Path, help="the harness's output files")
        p.add_argument("--out", type=Path, required=True, help="the tidy table to write (.csv)")
        p.add_argument("--judge", help="the judge's name (one file only; default: from the file)")
    vis.add_argument(
        "--slice",
        choices=("all", "eligible"),
        default="all",
        help="keep every row with its eligibility flag (all) or only benchmark_eligible ones",
    )


def _add_answers_parser(what: SubParsers) -> None:
    """``import answers``."""
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


def import_command(args: argparse.Namespace) -> int:
    """``judgepanel import``: checked comparator scores, answers into a store, or harness
    outputs as predictions; exit 0, or bad input with one line on stderr."""
    if args.what == "scores":
        return _import_scores(args)
    if args.what == "answers":
        return _import_answers(args)
    return _import_predictions(args)


def _import_scores(args: argparse.Namespace) -> int:
    """``judgepanel import scores``: a checked comparator score file for 02 and 04."""
    from judgepanel.core.describe import parse_dataset_spec
    from judgepanel.datasets import DatasetError, load_dataset
    from judgepanel.datasets.comparators import load_scores

    try:
        kind, root = parse_dataset_spec(args.dataset)
        images = load_dataset(kind, str(root)).images["image_id"].astype(str)
        table = load_scores(args.file, known_images=images)
    except (ConfigError, DatasetError) as exc:
        return fail(exc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    covered = table.groupby("model")["image_id"].nunique()
    print(
        f"wrote {len(table)} scores to {args.out}: "
        + ", ".join(f"{m} {n}/{len(images)} images" for m, n in covered.items())
    )
    return OK


def labels_of(kind: str, root: Path) -> Dataset:
    """The dataset's labels, read whether or not its images are on disk (importing
    answers needs no image)."""
    from judgepanel.datasets import load_dataset
    from judgepanel.datasets.kinds import get_kind

    declared = {**get_kind(kind).keys, **get_kind(kind).options}
    keep = {"missing_images": "keep"} if "missing_images" in declared else {}
    return load_dataset(kind, str(root), **keep)


def _import_answers(args: argparse.Namespace) -> int:
    """``judgepanel import answers``. Where a question's rubric scale is the default or
    differs from the data, a note says so before anything is written."""
    from judgepanel.core.answers_file import answer_ranges, read_answers, write_answers
    from judgepanel.core.describe import parse_dataset_spec
    from judgepanel.core.rubric import load_rubric
    from judgepanel.core.scales import scale_notes

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
        return fail(exc)
    if outcome.note():
        print(outcome.note())
    print(f"imported {outcome.written} answers of {name} into {args.store}{_again(outcome)}")
    return OK


def _again(outcome: ImportOutcome) -> str:
    """What an import found already stored, as the end of its line."""
    parts = []
    if outcome.unchanged:
        parts.append(f"{outcome.unchanged} unchanged since the file's last import")
    if outcome.kept:
        parts.append(f"{outcome.kept} already stored with the same answers")
    return "; " + "; ".join(parts) if parts else ""


def _import_predictions(args: argparse.Namespace) -> int:
    """``judgepanel import vab-results|visionq-predictions``: the tidy predictions table."""
    if args.out.suffix.lower() != ".csv":
        return fail(f"{args.out}: expected a .csv file name")
    from judgepanel.datasets import DatasetError
    from judgepanel.studies.vab import imports as vab_imports
    from judgepanel.studies.visionq import imports as visionq_imports

    try:
        if args.what == "vab-results":
            table = vab_imports.import_results(args.files, args.out, judge=args.judge)
        else:
            table = visionq_imports.import_predictions(
                args.files, args.out, judge=args.judge, slice_name=args.slice
            )
    except DatasetError as exc:
        return fail(exc)
    names = ", ".join(dict.fromkeys(table["judge"]))
    print(f"wrote {len(table)} predictions of {names} to {args.out}")
    return OK
