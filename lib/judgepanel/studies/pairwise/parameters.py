"""The parameters of the pairwise study (notebook 11), with their defaults."""

from __future__ import annotations

from pydantic import Field

from judgepanel.core.parameters import StudyParameters


class PairwiseParameters(StudyParameters):
    """What the pairwise study reads beyond the run's profile and dataset.

    Attributes:
        pairs_per_image: comparisons each image takes part in (its degree; a ``pairs``
            file's own pairs ignore it).
        orders: 1 (each pair shown as drawn) or 2 (both orders: position consistency).
        pair_dimensions: the rubric dimensions asked pairwise besides the holistic
            question (None: every dimension of the rubric; []: the holistic one alone).
        pair_images: how many of a rated dataset's images are paired (stratified by the
            human mean as the scoring designs sample; None: all).
        pair_sample_seed: the seed of that sample.
        z_decided: a pair is decided when its human difference exceeds z standard errors.
        scored_dataset: the dataset of the profile whose rubric scores are compared at
            equal calls per image (None: no comparison with scores).
    """

    pairs_per_image: int = Field(4, ge=1)
    orders: int = Field(2, ge=1, le=2)
    pair_dimensions: list[str] | None = None
    pair_images: int | None = Field(None, ge=2)
    pair_sample_seed: int = 0
    z_decided: float = Field(1.96, gt=0)
    scored_dataset: str | None = None
