"""``judgepanel visionq pairs``: symmetric evidence preference pairs (DPO) from VisionQ's
question metadata, split by paper; no model is called."""

from __future__ import annotations

import argparse
from pathlib import Path

from judgepanel.cli.common import SubParsers, fail
from judgepanel.cli.exit_codes import OK
from judgepanel.core.errors import ConfigError

REJECTED_CHOICES: tuple[str, ...] = ("all", "last")
"""``--rejected``: as :data:`judgepanel.studies.visionq.pairs.REJECTED_CHOICES`, written
out so that building the parser imports no study (``tests/test_cli_imports.py`` holds
them equal)."""


def add_parser(sub: SubParsers) -> None:
    """``visionq`` and its one subcommand, ``pairs``."""
    visionq = sub.add_parser("visionq", help="VisionQ tools that call no model")
    vq_sub = visionq.add_subparsers(dest="visionq_command", required=True)
    pairs = vq_sub.add_parser(
        "pairs",
        help="symmetric evidence preference pairs (DPO) from question metadata, split by paper",
    )
    pairs.add_argument("--out", type=Path, required=True, help="the pairs file, F.jsonl")
    where = pairs.add_mutually_exclusive_group(required=True)
    where.add_argument("--run", help="a VisionQ run of papermill_runs.yaml (its dataset)")
    where.add_argument("--root", type=Path, help="a VisionQ benchmark folder")
    pairs.add_argument(
        "--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)"
    )
    pairs.add_argument(
        "--rejected", choices=REJECTED_CHOICES, default="all", help="wrong letters to pair"
    )
    pairs.add_argument("--test-share", type=float, default=0.15, help="share of papers in test")
    pairs.add_argument("--seed", type=int, default=0, help="seed of the paper split")
    visionq.set_defaults(handler=visionq_command)


def visionq_command(args: argparse.Namespace) -> int:
    """``judgepanel visionq pairs``: write the preference pairs and their per-leaf report."""
    from judgepanel.core.config import load_config
    from judgepanel.datasets import DatasetError
    from judgepanel.datasets.visionq import load_questions
    from judgepanel.studies.visionq.pairs import build_pairs, write_pairs

    try:
        if args.run:
            run = load_config(args.runs_file).run(args.run)
            ref = run.profile.dataset(run.dataset)
            if ref.kind != "visionq":
                raise ConfigError(f"run {args.run!r} reads a {ref.kind} dataset, not VisionQ")
            questions = load_questions(ref.root, ref.questions, ref.eligible)
        else:
            questions = load_questions(args.root)
        pair_set = build_pairs(
            questions, rejected=args.rejected, test_share=args.test_share, seed=args.seed
        )
        path, report = write_pairs(pair_set, args.out)
    except (ConfigError, DatasetError, ValueError, OSError) as exc:
        return fail(exc)
    for split, row in pair_set.totals.set_index("split").iterrows():
        print(
            f"{split}: {row['pairs']} pairs from {row['questions']} questions of "
            f"{row['papers']} papers"
        )
    print(f"wrote {path} and the per-leaf counts to {report}")
    return OK
