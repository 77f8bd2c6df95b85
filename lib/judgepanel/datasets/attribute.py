"""A rated attribute of a dataset: its range, direction and the judge score it validates.

EVA and PARA fix their mapping in their loaders; every other release says it in its
adapter or, for the generic ``ratings`` format, in ``dataset.yaml``.
"""

from __future__ import annotations

from dataclasses import dataclass

RESERVED_COLUMNS = frozenset(
    {"image_id", "rater_id", "path", "n_raters", "mean_score", "score_sd", "split", "group"}
)
"""Column names of a Dataset's tables that no rated attribute may take."""

HOLISTIC = "holistic"
"""The ``dimension`` of a dataset's overall rating: what holistic judge scores are read against."""


@dataclass(frozen=True)
class Attribute:
    """One rated attribute of a dataset as its release or ``dataset.yaml`` describes it.

    Attributes:
        name: the attribute's name in the release (``MOS``, ``aesthetic``...).
        column: its column in the Dataset's tables: ``score`` for the overall rating, the
            rubric dimension it validates (``quality``, ``composition``, ``colour``...), or
            else its own name.
        low, high: the range of its values as released.
        higher_is_better: the release's direction.
        dimension: ``holistic`` for the overall rating, the rubric dimension it validates,
            or None.
    """

    name: str
    column: str
    low: float
    high: float
    higher_is_better: bool = True
    dimension: str | None = None

    @property
    def reversed(self) -> bool:
        """Whether the tables hold ``low + high - value``: an attribute that validates a
        judge score (which is higher for better) but is released higher-is-worse."""
        return self.dimension is not None and not self.higher_is_better
