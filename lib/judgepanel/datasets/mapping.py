"""Which human rating validates which judge score: a dataset's attributes against a rubric.

A ``ratings`` card (or a release's adapter) says which rubric dimension each attribute
validates; EVA and PARA fix it by column. The card cannot know the rubric, so the check
that every named dimension exists happens here, when a run or ``data describe --rubric``
puts a dataset beside its rubric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from judgepanel.datasets._common import Dataset, DatasetError
from judgepanel.datasets.attribute import HOLISTIC

FIXED_DIMENSIONS: dict[str, str] = {
    "score": HOLISTIC,
    "quality": "quality",
    "composition": "composition",
    "colour": "colour",
}
"""EVA's and PARA's fixed mapping of table columns to what they validate."""


@dataclass(frozen=True)
class Validation:
    """One attribute's place in a rubric study.

    Attributes:
        column: the attribute's column in the dataset's tables.
        name: its name as released.
        dimension: the rubric dimension it validates, ``holistic``, or None.
    """

    column: str
    name: str
    dimension: str | None


def validations(ds: Dataset) -> list[Validation]:
    """Every rated attribute of ``ds`` with what it validates, in the dataset's order."""
    if ds.attributes:
        return [Validation(a.column, a.name, a.dimension) for a in ds.attributes.values()]
    return [Validation(c, c, FIXED_DIMENSIONS.get(c)) for c in ds.attribute_ranges]


def rubric_mapping(ds: Dataset, dimensions: Sequence[str], rubric: str) -> dict[str, str]:
    """The rubric dimension -> the column of the attribute that validates it.

    Args:
        ds: the dataset.
        dimensions: the keys of the rubric's dimensions.
        rubric: the rubric's name or file, for the error.

    Raises:
        DatasetError: an attribute validates a dimension the rubric does not declare.
    """
    known = set(dimensions)
    mapping: dict[str, str] = {}
    for v in validations(ds):
        if v.dimension is None or v.dimension == HOLISTIC:
            continue
        if v.dimension not in known:
            if not ds.attributes:  # EVA and PARA: a fixed column the rubric does not score
                continue
            raise DatasetError(
                f"{ds.root}: attribute {v.name!r} validates {v.dimension!r}, which the "
                f"rubric {rubric} does not declare; its dimensions are: {', '.join(dimensions)}"
            )
        mapping[v.dimension] = v.column
    return mapping
