"""The parameters of the VisionQ notebook (06), with their defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from judgepanel.core.parameters import Files, StudyParameters


class VisionqParameters(StudyParameters):
    """What the VisionQ study reads beyond the run's profile and dataset.

    Attributes:
        visionq_rotations: extra cyclic rotations of the panels per question (position bias).
        predictions: prediction files of the official harness to analyse instead of the store.
        predictions_judge: the judge's name for a single file (default: from the file name).
        predictions_slice: ``eligible`` (quality_flags.benchmark_eligible) or ``all``.
    """

    visionq_rotations: int = 0
    predictions: Files = Field(default_factory=list)
    predictions_judge: str | None = None
    predictions_slice: Literal["eligible", "all"] = "eligible"
