"""The parameters of the VAB notebook (05), with their defaults."""

from __future__ import annotations

from pydantic import Field

from judgepanel.core.parameters import Files, StudyParameters


class VabParameters(StudyParameters):
    """What the VAB study reads beyond the run's profile and dataset.

    Attributes:
        vab_orders: standard candidate orders per task (3: ap@1 and pass^3).
        vab_balanced: also ask the k cyclic shifts, for the position analysis.
        fusion_train: the scoring dataset the fused rubric panel is trained on.
        predictions: result files of the official harness to analyse instead of the store.
        predictions_judge: the judge's name for a single file (default: metadata.model).
    """

    vab_orders: int = 3
    vab_balanced: bool = True
    fusion_train: str = "para"
    predictions: Files = Field(default_factory=list)
    predictions_judge: str | None = None
