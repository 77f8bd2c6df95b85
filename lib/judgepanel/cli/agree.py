"""``judgepanel agree``: how far each judge family of a store agrees with a dataset's people.

Per family and per question (``holistic`` against the overall rating, and every rubric
dimension against the attribute the dataset maps to it): QWK, Krippendorff's alpha and
Spearman against the human mean, mean bias, the family's repeatability over its
repetitions, the people's own reliability beside them, and the alternative annotator test
(winning rate, advantage probability, passed, with epsilon and the metric named); with
``--pool-dimensions`` also the test with each image x dimension one instance. Every
question names the map that put the judges' answers on the people's scale, and a note
first says where a rubric scale is the default or differs from the data
(:mod:`judgepanel.core.scales`). Everything comes from
:mod:`judgepanel.studies.agreement`. Bad input (a malformed ``--dataset``, a missing
store, a store without answers for the dataset's images, a question the dataset and
rubric do not share, a missing or malformed rubric or answers file) is one line on stderr
and bad input's exit code (:mod:`judgepanel.cli.exit_codes`).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgepanel.cli.common import SubParsers, print_info
from judgepanel.core.errors import ConfigError
from judgepanel.errors import JudgepanelError

if TYPE_CHECKING:
    import pandas as pd

    from judgepanel.core.rubric import Rubric
    from judgepanel.datasets import Dataset
    from judgepanel.stats.alt_test import AltTestResult
    from judgepanel.studies import agreement

DEFAULT_EPSILON = 0.1
"""The alt-test's allowance for crowd annotators (the authors' guidance; README)."""

ALT_METRICS: tuple[str, ...] = ("neg_rmse", "abs", "accuracy")
"""``--metric``: as :data:`judgepanel.stats.alt_test.ALT_METRICS`, written out so that
building the parser imports no statistics (``tests/test_cli_imports.py`` holds them
equal)."""


def add_parser(sub: SubParsers) -> None:
    """``agree`` and its flags."""
    agree = sub.add_parser(
        "agree",
        help="each judge family against the people, per dimension: agreement, "
        "repeatability, alt-test",
        description=(
            "Compare every judge family of a store with a rated dataset's people, per "
            "question: holistic against the overall rating, and each rubric dimension "
            "against the attribute the dataset maps to it. Per judge and question: QWK, "
            "Krippendorff's alpha and Spearman against the human mean (after the linear map "
            "of the question's rubric scale onto the attribute's range, named in the "
            "output), mean bias, the family's repeatability over its repetitions, the "
            "people's own reliability, and the alternative annotator test of each family "
            "and of the panel mean."
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
    agree.add_argument(
        "--question",
        "--dimension",
        dest="question",
        action="append",
        metavar="KEY",
        help="compare only this question: 'holistic' or a rubric dimension (repeatable; "
        "default: every question the dataset and rubric share)",
    )
    agree.add_argument(
        "--pool-dimensions",
        action="store_true",
        help="also run the alt-test with each image x dimension one instance, pooled over "
        "the compared dimensions (each dimension's answers on its attribute's range first)",
    )
    agree.add_argument("--json", action="store_true", help="machine-readable output")
    agree.set_defaults(handler=agree_command)


def _store_key(calls: pd.DataFrame, images: set[str], wanted: str | None, store: Path) -> str:
    """The store's dataset key whose rubric answers (holistic or dimension) cover most of
    ``images``."""
    from judgepanel.core.answers_file import RUBRIC_CALL_TYPES

    asked = calls[calls["kind"].isin(RUBRIC_CALL_TYPES)]
    if wanted is not None:
        if wanted not in set(asked["dataset"]):
            raise ConfigError(f"{store}: no holistic or dimension answers under dataset {wanted!r}")
        return wanted
    hits = asked[asked["item"].astype(str).isin(images)].groupby("dataset")["item"].nunique()
    if hits.empty:
        raise ConfigError(f"{store}: no holistic or dimension answer of any image of the dataset")
    return str(hits.idxmax())


def _answers_calls(path: Path, data: Dataset, rubric: Rubric) -> tuple[pd.DataFrame, str]:
    """The calls of an answers file, read into a store of their own that lives only for
    this command (the checks and keys of ``import answers``)."""
    from judgepanel.core.answers_file import import_answers
    from judgepanel.core.frames import read_calls

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


def _alt_entry(res: AltTestResult | str | None, args: argparse.Namespace) -> dict[str, Any]:
    """One alt-test result as JSON (or why it was not run)."""
    from judgepanel.stats.alt_test import AltTestResult

    if isinstance(res, AltTestResult):
        return {
            "winning_rate": res.winning_rate,
            "advantage_probability": res.advantage_probability,
            "passed": bool(res.passed),
            "epsilon": res.epsilon,
            "metric": res.metric,
            "q": res.q,
            "n_annotators": res.n_annotators,
            "n_instances": res.n_instances,
            "mapping": res.mapping,
        }
    return {
        "not_tested": res or "no rater ids",
        "epsilon": args.epsilon,
        "metric": args.metric,
        "q": args.q,
    }


def _question_report(
    inputs: agreement.AgreementData, args: argparse.Namespace
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """One question's own facts, and each judge's entry for it."""
    from judgepanel.studies import agreement

    b, seed = args.resamples, args.seed
    agree = agreement.judges_vs_humans(inputs, n_resamples=b, seed=seed)
    repeat = agreement.repeatability(inputs, n_resamples=b, seed=seed).set_index("family")
    people = agreement.human_reliability(inputs, n_resamples=b, seed=seed)
    tests = agreement.alt_tests(
        inputs, epsilon=args.epsilon, metric=args.metric, q=args.q, min_items=args.min_items
    )
    facts = {
        "column": inputs.column,
        "scale": list(inputs.scale),
        "mapping": inputs.mapping.name,
        "n_images": int(inputs.repetitions["image_id"].nunique()),
        "human_reliability": {
            r.measure: {
                "estimate": _num(r.estimate),
                "n_raters": r.n_raters,
                "n_images": r.n_images,
            }
            for r in people.itertuples()
        },
        "skipped": inputs.reason,
    }
    judges: dict[str, dict[str, Any]] = {}
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
        entry["alt_test"] = _alt_entry(tests.get(name), args)
        judges[name] = entry
    return facts, judges


def _asked(data: Dataset, rubric: Rubric, wanted: list[str] | None) -> list[agreement.Question]:
    """The questions to compare: those named, else every one the dataset and rubric share."""
    from judgepanel.studies import agreement

    if wanted:
        return [agreement.question_of(data, rubric, key) for key in dict.fromkeys(wanted)]
    found = agreement.questions(data, rubric)
    if not found:
        raise agreement.AgreementError(
            f"{data.name} and the rubric {rubric.name or rubric.source} share no question: "
            "no overall rating with a holistic question, and no attribute validating a "
            "dimension of the rubric"
        )
    return found


def _calls(
    args: argparse.Namespace, data: Dataset, rubric: Rubric, images: set[str]
) -> tuple[pd.DataFrame, str]:
    """The judges' calls to compare, from the answers file or the store, and their
    dataset key."""
    from judgepanel.core.frames import read_calls

    if args.answers is not None:
        return _answers_calls(args.answers, data, rubric)
    if not args.store.is_file():
        raise ConfigError(f"{args.store}: no such store file")
    calls = read_calls(args.store)
    return calls, _store_key(calls, images, args.store_dataset, args.store)


@dataclasses.dataclass
class _Compared:
    """What the questions compared gave: per question its facts, per judge its entries,
    the questions left out and why, and each compared question's inputs."""

    questions: dict[str, Any] = dataclasses.field(default_factory=dict)
    judges: dict[str, Any] = dataclasses.field(default_factory=dict)
    not_compared: dict[str, str] = dataclasses.field(default_factory=dict)
    inputs: list[agreement.AgreementData] = dataclasses.field(default_factory=list)


def _compare(
    asked: list[agreement.Question],
    data: Dataset,
    calls: pd.DataFrame,
    key: str,
    rubric: Rubric,
    args: argparse.Namespace,
) -> _Compared:
    """Every asked question compared; one that cannot be is said, unless it was named
    (or is the only, holistic, one), which stops the command."""
    from judgepanel.studies import agreement

    named = bool(args.question)
    done = _Compared()
    for q in asked:
        try:
            inputs = agreement.agreement_data(data, calls, key, rubric=rubric, question=q.key)
        except ValueError as exc:
            if named or (q.key == agreement.HOLISTIC and len(asked) == 1):
                raise
            done.not_compared[q.key] = str(exc)  # said in the output, the rest still compared
            continue
        done.inputs.append(inputs)
        facts, entries = _question_report(inputs, args)
        done.questions[q.key] = {"label": q.label, "attribute": q.attribute, **facts}
        for name, entry in entries.items():
            judge = done.judges.setdefault(name, {})
            if q.key == agreement.HOLISTIC:
                judge.update(entry)
            judge.setdefault("questions", {})[q.key] = entry
    if not done.inputs:
        raise agreement.AgreementError(
            "no question could be compared: " + "; ".join(done.not_compared.values())
        )
    return done


def _pooled(done: _Compared, args: argparse.Namespace) -> dict[str, Any]:
    """The alt-test pooled over the compared dimensions: its facts, and each judge's
    result added to its entry."""
    from judgepanel.studies import agreement

    pooled_over = [d for d in done.inputs if d.question != agreement.HOLISTIC]
    rated = [d for d in pooled_over if d.humans is not None]
    tests = agreement.pooled_alt_tests(
        pooled_over, epsilon=args.epsilon, metric=args.metric, q=args.q,
        min_items=args.min_items,
    )  # fmt: skip
    for name in done.judges:
        res = tests.get(name, "no compared dimension has rater ids" if not rated else None)
        done.judges[name]["pooled"] = {"alt_test": _alt_entry(res, args)}
    return {
        "dimensions": [d.question for d in rated],
        "mapping": agreement.pooled_mapping(rated, args.metric) if rated else None,
        "skipped": "" if rated else "no compared dimension has rater ids",
    }


def agree_report(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``agree`` prints, as one JSON-ready object: per question its map and
    people, per judge its entry for each question (the holistic one also at the judge's
    top level, as before dimensions were compared)."""
    from judgepanel.core.describe import parse_dataset_spec
    from judgepanel.core.rubric import load_rubric
    from judgepanel.core.scales import scale_notes, store_ranges
    from judgepanel.datasets import load_dataset
    from judgepanel.studies import agreement

    kind, root = parse_dataset_spec(args.dataset)
    rubric = load_rubric(args.rubric) if args.rubric else load_rubric()
    # Labels alone: the judges' answers are in the store or the answers file, so the
    # images need not be on disk (a rater table of 10,000 images is compared without them).
    data = load_dataset(kind, str(root), missing_images="keep")
    images = set(data.images["image_id"].astype(str))
    asked = _asked(data, rubric, args.question)
    if args.pool_dimensions and not any(q.key != agreement.HOLISTIC for q in asked):
        raise agreement.AgreementError(
            "--pool-dimensions pools dimensions, and no dimension is compared here"
        )
    calls, key = _calls(args, data, rubric, images)
    source = Path(args.answers).name if args.answers is not None else ""
    notes = scale_notes(rubric, data, store_ranges(calls, key, rubric.sha256), source)
    done = _compare(asked, data, calls, key, rubric, args)
    info: dict[str, Any] = {
        "dataset": key,
        "kind": kind,
        "rubric": rubric.name or rubric.source,
        "questions": done.questions,
        "not_compared": done.not_compared,
        "notes": notes,
    }
    holistic = done.questions.get(agreement.HOLISTIC)
    if holistic is not None:  # the holistic question's facts at the top, as before
        info.update(
            n_images=holistic["n_images"],
            mapping=holistic["mapping"],
            human_reliability=holistic["human_reliability"],
            skipped=holistic["skipped"],
        )
    if args.pool_dimensions:
        info["pooled"] = _pooled(done, args)
    info["judges"] = done.judges
    return info


def _fmt(v: float | None, spec: str = ".3f") -> str:
    return "-" if v is None else format(v, spec)


def _alt_words(alt: dict[str, Any]) -> str:
    if "passed" not in alt:
        return f"alt-test not run: {alt['not_tested']}"
    return (
        f"alt-test ({alt['metric']}, epsilon {alt['epsilon']:g}, q {alt['q']:g}): "
        f"winning rate {alt['winning_rate']:.2f}, advantage probability "
        f"{alt['advantage_probability']:.3f}, " + ("passed" if alt["passed"] else "not passed")
    )


def agree_lines(info: dict[str, Any]) -> list[str]:
    """The report as text: per question its map and people, then one line per judge."""
    lines = [
        f"{info['dataset']} ({info['kind']}), rubric {info['rubric']}: "
        f"{len(info['questions'])} question(s) compared: {', '.join(info['questions'])}"
    ]
    lines += [f"note: {note}" for note in info.get("notes", [])]
    for key, reason in info["not_compared"].items():
        lines.append(f"{key}: not compared: {reason}")
    for key, q in info["questions"].items():
        low, high = q["scale"]
        human = q["human_reliability"]
        lines.append(
            f"{q['label']} ({q['column']}, {low}-{high}): {q['n_images']} images; judge "
            f"scores mapped {q['mapping']}"
        )
        lines.append(
            "  people: "
            + (
                ", ".join(
                    f"{k} {_fmt(v['estimate'])} ({v['n_raters']} raters, {v['n_images']} images)"
                    for k, v in human.items()
                )
                if human
                else q["skipped"]
            )
        )
        for name, judge in info["judges"].items():
            e = judge["questions"].get(key)
            if e is None:
                continue
            head = f"  {name}:"
            if "qwk" in e:
                head += (
                    f" QWK {_fmt(e['qwk']['estimate'])}, alpha "
                    f"{_fmt(e['alpha_interval']['estimate'])}, Spearman "
                    f"{_fmt(e['spearman']['estimate'])}, bias "
                    f"{_fmt(e['bias']['estimate'], '+.3f')} "
                    f"[{_fmt(e['bias']['ci_low'], '+.3f')}, {_fmt(e['bias']['ci_high'], '+.3f')}], "
                    f"repeatability alpha {_fmt(e['repeatability_alpha'])} "
                    f"(k={e['repetitions']});"
                )
            lines.append(f"{head} {_alt_words(e['alt_test'])}")
    pooled = info.get("pooled")
    if pooled is not None:
        if pooled["dimensions"]:
            lines.append(
                f"pooled over {', '.join(pooled['dimensions'])} (each image x dimension one "
                f"instance; judge scores mapped {pooled['mapping']})"
            )
            for name, judge in info["judges"].items():
                lines.append(f"  {name}: {_alt_words(judge['pooled']['alt_test'])}")
        else:
            lines.append(f"pooled alt-test not run: {pooled['skipped']}")
    return lines


def agree_command(args: argparse.Namespace) -> int:
    """``judgepanel agree``; exit 0, or bad input with one line on stderr."""
    from judgepanel.core.store import StoreError
    from judgepanel.datasets import DatasetError

    def compute() -> dict[str, Any]:
        if not 0.0 <= args.epsilon < 1.0 or not 0.0 < args.q < 1.0:
            raise ConfigError("--epsilon must lie in [0, 1) and --q in (0, 1)")
        if args.resamples < 1 or args.min_items < 1:
            raise ConfigError("--resamples and --min-items must be at least 1")
        return agree_report(args)

    errors = (ConfigError, DatasetError, StoreError, JudgepanelError, ValueError, OSError)
    return print_info(compute, agree_lines, args.json, errors)
