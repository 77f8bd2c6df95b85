"""``judgepanel agree``: how far each judge family of a store agrees with a dataset's people.

Per family: QWK, Krippendorff's alpha and Spearman against the human mean, mean bias, the
family's repeatability over its repetitions, the people's own reliability beside them, and
the alternative annotator test (winning rate, advantage probability, passed, with epsilon
and the metric named). Everything comes from :mod:`judgepanel.studies.agreement`. Bad
input (a malformed ``--dataset``, a missing store, a store without answers for the
dataset's images) is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.cli_data import print_info
from judgepanel.core.answers_file import import_answers
from judgepanel.core.config import ConfigError
from judgepanel.core.describe import parse_dataset_spec
from judgepanel.core.frames import read_calls
from judgepanel.core.rubric import Rubric, load_rubric
from judgepanel.core.store import StoreError
from judgepanel.datasets import Dataset, DatasetError, load_dataset
from judgepanel.stats.alt_test import ALT_METRICS, AltTestResult
from judgepanel.studies import agreement

DEFAULT_EPSILON = 0.1
"""The alt-test's allowance for crowd annotators (the authors' guidance; README)."""


def add_agree_parser(sub: argparse._SubParsersAction) -> None:
    agree = sub.add_parser(
        "agree",
        help="each judge family against the people: agreement, repeatability, alt-test",
        description=(
            "Compare every judge family of a store with a rated dataset's people: QWK, "
            "Krippendorff's alpha and Spearman against the human mean (after the linear map "
            "of the rubric scale onto the dataset's), mean bias, the family's repeatability "
            "over its repetitions, the people's own reliability, and the alternative "
            "annotator test of each family and of the panel mean."
        ),
    )
    agree.add_argument("--dataset", required=True, metavar="KIND:PATH", help="e.g. eva:data/eva")
    source = agree.add_mutually_exclusive_group(required=True)
    source.add_argument("--store", type=Path, help="the store holding the answers")
    source.add_argument(
        "--answers",
        type=Path,
        help="answers collected elsewhere: CSV image_id, judge, dimension, score (checked as "
        "`import answers` checks them; nothing is written beside the file)",
    )
    agree.add_argument(
        "--rubric", type=Path, help="the rubric the answers were given under (default: rubric/)"
    )
    agree.add_argument(
        "--store-dataset", help="the dataset key of the calls (default: the one covering most)"
    )
    agree.add_argument(
        "--epsilon",
        type=float,
        default=DEFAULT_EPSILON,
        help=f"the alt-test's allowance, fixed before looking (default {DEFAULT_EPSILON})",
    )
    agree.add_argument("--metric", choices=ALT_METRICS, default="neg_rmse")
    agree.add_argument("--q", type=float, default=0.05, help="the alt-test's FDR level")
    agree.add_argument(
        "--min-items", type=int, default=30, help="images an annotator needs to be tested"
    )
    agree.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    agree.add_argument("--seed", type=int, default=0)
    agree.add_argument("--json", action="store_true", help="machine-readable output")


def _store_key(calls: pd.DataFrame, images: set[str], wanted: str | None, store: Path) -> str:
    """The store's dataset key whose holistic answers cover most of ``images``."""
    hol = calls[calls["kind"] == "holistic"]
    if wanted is not None:
        if wanted not in set(hol["dataset"]):
            raise ConfigError(f"{store}: no holistic answers under dataset {wanted!r}")
        return wanted
    hits = hol[hol["item"].astype(str).isin(images)].groupby("dataset")["item"].nunique()
    if hits.empty:
        raise ConfigError(f"{store}: no holistic answer of any image of the dataset")
    return str(hits.idxmax())


def _answers_calls(path: Path, data: Dataset, rubric: Rubric) -> tuple[pd.DataFrame, str]:
    """The calls of an answers file, read into a store of their own that lives only for
    this command (the checks and keys of ``import answers``)."""
    with tempfile.TemporaryDirectory(prefix="judgepanel-agree-") as folder:
        store = Path(folder) / "answers.sqlite"
        import_answers(
            path,
            store,
            dataset=data.name,
            images=data.images["image_id"].astype(str).tolist(),
            rubric=rubric,
        )
        return read_calls(store), data.name


def _num(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def agree_report(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``agree`` prints, as one JSON-ready object."""
    kind, root = parse_dataset_spec(args.dataset)
    rubric = load_rubric(args.rubric) if args.rubric else load_rubric()
    data = load_dataset(kind, str(root))
    images = set(data.images["image_id"].astype(str))
    if args.answers is not None:
        calls, key = _answers_calls(args.answers, data, rubric)
    else:
        if not args.store.is_file():
            raise ConfigError(f"{args.store}: no such store file")
        calls = read_calls(args.store)
        key = _store_key(calls, images, args.store_dataset, args.store)
    inputs = agreement.agreement_data(data, calls, key, rubric=rubric)
    b, seed = args.resamples, args.seed
    agree = agreement.judges_vs_humans(inputs, n_resamples=b, seed=seed)
    repeat = agreement.repeatability(inputs, n_resamples=b, seed=seed).set_index("family")
    people = agreement.human_reliability(inputs, n_resamples=b, seed=seed)
    tests = agreement.alt_tests(
        inputs, epsilon=args.epsilon, metric=args.metric, q=args.q, min_items=args.min_items
    )
    human = {
        r.measure: {"estimate": _num(r.estimate), "n_raters": r.n_raters, "n_images": r.n_images}
        for r in people.itertuples()
    }
    judges: dict[str, Any] = {}
    for name in [*inputs.families, agreement.PANEL]:
        entry: dict[str, Any] = {}
        if name in inputs.families:
            rows = agree[agree["family"] == name].set_index("metric")
            for metric in ("qwk", "alpha_interval", "spearman", "bias"):
                r = rows.loc[metric]
                entry[metric] = {
                    "estimate": _num(r["estimate"]),
                    "ci_low": _num(r["ci_low"]),
                    "ci_high": _num(r["ci_high"]),
                }
            entry["repeatability_alpha"] = _num(repeat.loc[name].get("alpha"))
            entry["repetitions"] = int(repeat.loc[name, "k"])
        res = tests.get(name)
        if isinstance(res, AltTestResult):
            entry["alt_test"] = {
                "winning_rate": res.winning_rate,
                "advantage_probability": res.advantage_probability,
                "passed": bool(res.passed),
                "epsilon": res.epsilon,
                "metric": res.metric,
                "q": res.q,
                "n_annotators": res.n_annotators,
            }
        else:
            entry["alt_test"] = {
                "not_tested": res or "no rater ids",
                "epsilon": args.epsilon,
                "metric": args.metric,
                "q": args.q,
            }
        judges[name] = entry
    return {
        "dataset": inputs.dataset,
        "kind": kind,
        "n_images": int(inputs.repetitions["image_id"].nunique()),
        "mapping": inputs.mapping.name,
        "human_reliability": human,
        "skipped": inputs.reason,
        "judges": judges,
    }


def _fmt(v: float | None, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def agree_lines(info: dict[str, Any]) -> list[str]:
    """The report as text: one line per judge, the people's reliability beside it."""
    human = info["human_reliability"]
    lines = [
        f"{info['dataset']} ({info['kind']}): {info['n_images']} images; judge scores mapped "
        f"{info['mapping']}",
        "people: "
        + (
            ", ".join(
                f"{k} {_fmt(v['estimate'])} ({v['n_raters']} raters, {v['n_images']} images)"
                for k, v in human.items()
            )
            if human
            else info["skipped"]
        ),
    ]
    for name, e in info["judges"].items():
        alt = e["alt_test"]
        head = f"{name}:"
        if "qwk" in e:
            head += (
                f" QWK {_fmt(e['qwk']['estimate'])}, alpha {_fmt(e['alpha_interval']['estimate'])}"
                f", Spearman {_fmt(e['spearman']['estimate'])}, bias "
                f"{_fmt(e['bias']['estimate'], '+.3f')} [{_fmt(e['bias']['ci_low'], '+.3f')}, "
                f"{_fmt(e['bias']['ci_high'], '+.3f')}], repeatability alpha "
                f"{_fmt(e['repeatability_alpha'])} (k={e['repetitions']});"
            )
        if "passed" in alt:
            head += (
                f" alt-test ({alt['metric']}, epsilon {alt['epsilon']:g}, q {alt['q']:g}): "
                f"winning rate {alt['winning_rate']:.2f}, advantage probability "
                f"{alt['advantage_probability']:.3f}, "
                + ("passed" if alt["passed"] else "not passed")
            )
        else:
            head += f" alt-test not run: {alt['not_tested']}"
        lines.append(head)
    return lines


def agree_command(args: argparse.Namespace) -> int:
    """``judgepanel agree``; exit 0, or 2 on bad input."""

    def compute() -> dict[str, Any]:
        if not 0.0 <= args.epsilon < 1.0 or not 0.0 < args.q < 1.0:
            raise ConfigError("--epsilon must lie in [0, 1) and --q in (0, 1)")
        if args.resamples < 1 or args.min_items < 1:
            raise ConfigError("--resamples and --min-items must be at least 1")
        return agree_report(args)

    errors = (ConfigError, DatasetError, StoreError, ValueError, OSError)
    return print_info(compute, agree_lines, args.json, errors)
