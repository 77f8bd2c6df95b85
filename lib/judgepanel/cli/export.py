"""``judgepanel export``: a store's calls, one row each, to CSV or Parquet; with ``--long``
only its rubric answers, as the long CSV ``import answers`` reads."""

from __future__ import annotations

import argparse
from pathlib import Path

from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import OK
from judgepanel.errors import JudgepanelError


def add_parser(sub: SubParsers) -> None:
    """``export`` and its flags."""
    export = sub.add_parser("export", help="write one row per call to CSV or Parquet")
    export.add_argument("--store", type=Path, required=True)
    export.add_argument("--out", type=Path, required=True, help="F.csv or F.parquet")
    export.add_argument(
        "--long",
        action="store_true",
        help="only the rubric answers, in the shape `import answers` reads (CSV)",
    )
    export.add_argument("--dataset", help="with --long: the dataset (when the store has several)")
    export.set_defaults(handler=export_command)


def export_command(args: argparse.Namespace) -> int:
    """``judgepanel export``: one row per call to ``.csv`` or ``.parquet``."""
    out = Path(args.out)
    if getattr(args, "long", False):
        return export_long(args.store, out, args.dataset)
    suffix = out.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        return fail(f"{out}: expected a .csv or .parquet file name")
    from judgepanel.core.store import Store, StoreError

    try:
        store = Store(args.store, readonly=True)
    except (FileNotFoundError, StoreError) as exc:
        return fail(exc)
    with store:
        df = store.frame()
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        df.to_csv(out, index=False)
    else:
        df.to_parquet(out, index=False)
    print(f"wrote {len(df)} calls to {out}")
    return OK


def export_long(store: Path, out: Path, dataset: str | None) -> int:
    """``judgepanel export --long``: the store's rubric answers as an answers CSV."""
    if out.suffix.lower() != ".csv":
        return fail(f"{out}: --long writes a .csv file")
    from judgepanel.core.answers_file import long_answers
    from judgepanel.core.store import Store

    try:
        with Store(store, readonly=True) as db:
            table = long_answers(db.frame(), dataset)
    except (JudgepanelError, OSError) as exc:
        return fail(exc)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"wrote {len(table)} answers to {out}")
    return OK
