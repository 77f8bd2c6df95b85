"""What each notebook needs of a study, and why it is skipped when a study lacks it.

A notebook declares its needs in its own metadata (``"judgepanel": {"needs": [...]}``),
so a report of a study it was not written for (``judgepanel report --dataset --rubric``)
runs the notebooks that apply and says, for each one it skips, what is missing in one
line: the seed's fusion notebooks name the seed rubric's five dimensions and compare
each with a holistic verdict against an overall human rating; a study with its own rubric
and no overall rating gets 00, 01 and the per-dimension agreement of 10.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgepanel.core.paths import NOTEBOOK_DIR, project_root
from judgepanel.datasets import Dataset, DatasetError, load_dataset
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.datasets.mapping import rubric_mapping, validations

SEED_DIMENSIONS: tuple[str, ...] = (
    "quality",
    "composition",
    "colour",
    "distinctiveness",
    "emotion",
)
"""The seed rubric's dimensions, which the fusion study's code names."""


@dataclass(frozen=True)
class Study:
    """What a report knows of a study before running a notebook: its dataset's kind, the
    dataset (None for VAB and VisionQ) and the rubric."""

    kind: str
    dataset: Dataset | None
    rubric: Any


def load_study(kind: str, root: str | Path, rubric: Any, **keys: Any) -> Study:
    """The study of a rated-image dataset ``kind:root`` under ``rubric``: its dataset is
    loaded here (with its entry's loader ``keys``, ``missing_images`` among them), so that
    the report layer, which reads no dataset itself, can ask.

    Raises:
        DatasetError: the folder is not a readable dataset of ``kind``.
    """
    return Study(kind, load_dataset(kind, str(root), **keys), rubric)


Check = Callable[[Study], str]
"""A need's check: "" when the study has it, else why not, in a few words."""


def _rated(study: Study) -> str:
    return "" if study.kind in rated_kinds() else f"its dataset is {study.kind}, not rated images"


def _overall(study: Study) -> str:
    if study.dataset is None or study.dataset.has_overall:
        return _rated(study)
    return "no overall human rating"


def _holistic(study: Study) -> str:
    return "" if study.rubric.holistic is not None else "the rubric asks no holistic question"


def _attributes(study: Study) -> str:
    if study.dataset is None:
        return _rated(study)
    try:
        mapping = rubric_mapping(study.dataset, tuple(study.rubric.dimensions), "of the study")
    except DatasetError as exc:
        return str(exc)
    return "" if mapping else "no human rating validates a dimension of the rubric"


def _agreement_question(study: Study) -> str:
    """A question judges and people both answered: the holistic one against an overall
    rating, or a rubric dimension against the attribute that validates it."""
    if study.dataset is None:
        return _rated(study)
    if not (_overall(study) or _holistic(study)):
        return ""
    dims = set(study.rubric.dimensions)
    if any(v.dimension in dims for v in validations(study.dataset)):
        return ""
    return (
        "no question of the rubric that people rated too (no overall rating with a holistic "
        "question, and no attribute validating a rubric dimension)"
    )


def _per_rater(study: Study) -> str:
    ratings = None if study.dataset is None else study.dataset.ratings
    if ratings is None or ratings.empty or "rater_id" not in ratings.columns:
        return "no per-rater human ratings"
    return ""


def _seed_rubric(study: Study) -> str:
    missing = [d for d in SEED_DIMENSIONS if d not in study.rubric.dimensions]
    if not missing:
        return ""
    return (
        f"its code names the seed rubric's dimensions, and this rubric lacks {', '.join(missing)}"
    )


def _sham(study: Study) -> str:
    return "" if getattr(study.rubric, "sham", None) else "the rubric has no sham variant"


def _kind(name: str) -> Check:
    return lambda study: "" if study.kind == name else f"its dataset is not a {name} dataset"


NEEDS: dict[str, Check] = {
    "rated_images": _rated,
    "overall_rating": _overall,
    "holistic_question": _holistic,
    "attribute_ratings": _attributes,
    "agreement_question": _agreement_question,
    "per_rater_ratings": _per_rater,
    "seed_rubric": _seed_rubric,
    "sham_variant": _sham,
    "vab_sets": _kind("vab"),
    "visionq_questions": _kind("visionq"),
    "pairs_dataset": _kind("pairs"),
}
"""Every need a notebook may declare, with its check."""


def declared_needs(name: str, folder: Path | None = None) -> tuple[str, ...]:
    """The needs the notebook ``name`` declares in its metadata.

    Raises:
        ValueError: it declares a need this module does not know.
    """
    path = (folder or project_root() / NOTEBOOK_DIR) / f"{name}.ipynb"
    # The metadata alone, read as JSON: nbformat's reader validates the whole notebook and
    # its import costs every command that loads this module about a second.
    meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("judgepanel", {})
    needs = tuple(meta.get("needs", ()))
    unknown = [n for n in needs if n not in NEEDS]
    if unknown:
        raise ValueError(f"{path}: unknown needs {unknown}; the needs are: {', '.join(NEEDS)}")
    return needs


def unmet(needs: Sequence[str], study: Study) -> list[str]:
    """Why a notebook with ``needs`` cannot run on ``study`` (empty: it can)."""
    reasons = [NEEDS[need](study) for need in needs]
    return list(dict.fromkeys(r for r in reasons if r))
