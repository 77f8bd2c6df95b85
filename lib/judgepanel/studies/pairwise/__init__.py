"""Scores or comparisons: judges choose the better of two images, Bradley-Terry scores.

- :mod:`~judgepanel.studies.pairwise.sampling`: pairs from a rated dataset, with the
  people's preference and whether it is decided.
- :mod:`~judgepanel.studies.pairwise.parameters`: the study's parameters.

The Bradley-Terry fit is :mod:`judgepanel.stats.bradley_terry`; human pairwise labels are
the ``pairs`` dataset kind (:mod:`judgepanel.datasets.pairs`).
"""

from judgepanel.studies.pairwise.sampling import (
    HOLISTIC,
    Z_DECIDED,
    human_noise,
    label_pairs,
    sample_pairs,
)

__all__ = ["HOLISTIC", "Z_DECIDED", "human_noise", "label_pairs", "sample_pairs"]
