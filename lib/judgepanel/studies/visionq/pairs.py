"""Preference pairs for training a criterion-conditioned judge, from question metadata alone.

The VisionQ paper (Section 5, Figures 6-7) trains its judge by DPO on *symmetric evidence pairs*:
the chosen and the rejected response share one evidence body, word for word, and differ
only in the letter they reference. Length and style then carry no signal, and the only
way to prefer the chosen response is to prefer the right letter. No model is called: the
evidence is written from the question's criterion and its taxonomy definition.

Pairs are split by paper, so that no paper has questions in both splits (questions of one
paper share figures, methods and often the answer's position).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgepanel.datasets.taxonomy import load_taxonomy
from judgepanel.studies.visionq.parse import choice_letters
from judgepanel.studies.visionq.protocol import prompt_text

REJECTED_CHOICES: tuple[str, ...] = ("all", "last")
"""Which wrong letters become rejected responses: every one, or only the last panel's
(the letter VLM judges over-predict), when it is wrong."""

EVIDENCE = (
    "The question asks which panel shows better {criterion}: {definition} "
    "I compare the panels on that criterion alone, not on overall quality. "
    "The panel that shows it best is ({letter})."
)
ANSWER = "\nAnswer: ({letter})"


@dataclass(frozen=True)
class PairSet:
    """The pairs and how they split.

    Attributes:
        pairs: one row per pair: id, paper_id, split, axis, leaf, n_choices, prompt,
            image_paths (crops in panel order, relative to the benchmark root), chosen,
            rejected, chosen_letter, rejected_letter.
        report: per split, axis and leaf: questions, papers and pairs.
        totals: per split: distinct questions, distinct papers and pairs. Counted from the
            entities themselves, never summed over ``report``'s leaves (a paper with
            questions in two leaves would count twice).
    """

    pairs: pd.DataFrame
    report: pd.DataFrame
    totals: pd.DataFrame


def response(criterion: str, definition: str, letter: str) -> str:
    """The evidence body and the answer, referencing ``letter`` (the only part that varies)."""
    body = EVIDENCE.format(criterion=criterion, definition=definition.rstrip(), letter=letter)
    return body + ANSWER.format(letter=letter)


def paper_split(paper_id: str, *, test_share: float, seed: int) -> str:
    """``train`` or ``test`` for a paper, from a seeded hash (stable across runs and files)."""
    if not 0.0 <= test_share <= 1.0:
        raise ValueError(f"test_share must lie in [0, 1], got {test_share}")
    digest = hashlib.sha256(f"{seed}:{paper_id}".encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") / 2**64 < test_share else "train"


def build_pairs(
    questions: pd.DataFrame,
    *,
    rejected: str = "all",
    test_share: float = 0.15,
    seed: int = 0,
) -> PairSet:
    """Symmetric evidence pairs for every question of ``load_visionq``'s frame.

    Args:
        questions: the loaded questions (``gold``, ``n_choices``, ``axis``, ``leaf``, ...).
        rejected: ``all`` (one pair per wrong letter) or ``last`` (the last letter only,
            when it is wrong).
        test_share: expected share of papers in the test split.
        seed: the split's seed.

    Raises:
        ValueError: an unknown ``rejected`` rule, questions without their text or images
            (as imported predictions are), or a question whose leaf the taxonomy does not
            know (its criterion and definition would be missing), naming it.
    """
    if rejected not in REJECTED_CHOICES:
        raise ValueError(f"rejected must be one of {REJECTED_CHOICES}, got {rejected!r}")
    missing = [c for c in ("question", "image_paths") if c not in questions.columns]
    if missing:
        raise ValueError(f"questions lack column(s) {', '.join(missing)}: pairs need them")
    taxonomy = load_taxonomy()
    rows = []
    for q in questions.itertuples(index=False):
        try:
            leaf = taxonomy.leaf(q.axis, q.leaf)
        except KeyError:
            raise ValueError(
                f"question {q.id}: leaf {q.leaf!r} under {q.axis!r} is not in the taxonomy"
            ) from None
        letters = choice_letters(int(q.n_choices))
        wrong = [x for x in letters if x != q.gold]
        if rejected == "last":
            wrong = [x for x in wrong if x == letters[-1]]
        criterion = leaf.criterion or leaf.name.lower()
        split = paper_split(str(q.paper_id), test_share=test_share, seed=seed)
        for bad in wrong:
            rows.append(
                {
                    "id": q.id,
                    "paper_id": q.paper_id,
                    "split": split,
                    "axis": q.axis,
                    "leaf": q.leaf,
                    "n_choices": int(q.n_choices),
                    "prompt": prompt_text(q.question, int(q.n_choices)),
                    "image_paths": list(q.image_paths),
                    "chosen": response(criterion, leaf.definition, q.gold),
                    "rejected": response(criterion, leaf.definition, bad),
                    "chosen_letter": q.gold,
                    "rejected_letter": bad,
                }
            )
    pairs = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    return PairSet(
        pairs,
        count_pairs(pairs, questions, test_share=test_share, seed=seed),
        count_splits(pairs, questions, test_share=test_share, seed=seed),
    )


PAIR_COLUMNS: tuple[str, ...] = (
    "id",
    "paper_id",
    "split",
    "axis",
    "leaf",
    "n_choices",
    "prompt",
    "image_paths",
    "chosen",
    "rejected",
    "chosen_letter",
    "rejected_letter",
)


def count_pairs(
    pairs: pd.DataFrame, questions: pd.DataFrame, *, test_share: float, seed: int
) -> pd.DataFrame:
    """Per split, axis and leaf: questions, papers and pairs (questions without a pair count)."""
    q = questions.assign(
        split=[paper_split(str(p), test_share=test_share, seed=seed) for p in questions["paper_id"]]
    )
    keys = ["split", "axis", "leaf"]
    out = q.groupby(keys).agg(questions=("id", "size"), papers=("paper_id", "nunique"))
    out["pairs"] = pairs.groupby(keys).size().reindex(out.index, fill_value=0)
    return out.reset_index().astype({"questions": int, "papers": int, "pairs": int})


def count_splits(
    pairs: pd.DataFrame, questions: pd.DataFrame, *, test_share: float, seed: int
) -> pd.DataFrame:
    """Per split: distinct questions, distinct papers and pairs."""
    split = [paper_split(str(p), test_share=test_share, seed=seed) for p in questions["paper_id"]]
    out = (
        questions.assign(split=split)
        .groupby("split")
        .agg(questions=("id", "nunique"), papers=("paper_id", "nunique"))
    )
    out["pairs"] = pairs.groupby("split").size().reindex(out.index, fill_value=0)
    return out.reset_index().astype({"questions": int, "papers": int, "pairs": int})


def asymmetric_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Pairs whose chosen and rejected responses differ in more than the letter (none by design)."""
    blank = [
        (c.replace(f"({a})", "(?)"), r.replace(f"({b})", "(?)"))
        for c, r, a, b in zip(
            pairs["chosen"],
            pairs["rejected"],
            pairs["chosen_letter"],
            pairs["rejected_letter"],
            strict=True,
        )
    ]
    return pairs[[c != r for c, r in blank]]


def shared_papers(pairs: pd.DataFrame, splits: Sequence[str] = ("train", "test")) -> set[str]:
    """Papers with pairs in more than one split (empty when the split holds)."""
    seen = [set(pairs.loc[pairs["split"] == s, "paper_id"]) for s in splits]
    shared: set[str] = set()
    for i, a in enumerate(seen):
        for b in seen[i + 1 :]:
            shared |= a & b
    return shared


def write_pairs(pair_set: PairSet, out: str | Path) -> tuple[Path, Path]:
    """Write the pairs as JSON Lines and the count report beside them (``<out>.report.csv``).

    The file is written to a temporary name and renamed, so an interrupted write never
    leaves a partial file that looks complete.
    """
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    with tmp.open("w", encoding="utf-8") as f:
        for row in pair_set.pairs.to_dict(orient="records"):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)
    report = path.with_name(path.name + ".report.csv")
    pair_set.report.to_csv(report, index=False)
    return path, report
