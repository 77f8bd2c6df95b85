"""Scores or comparisons: judges choose the better of two images, Bradley-Terry scores.

- :mod:`~judgepanel.studies.pairwise.sampling`: pairs from a rated dataset, with the
  people's preference and whether it is decided.
- :mod:`~judgepanel.studies.pairwise.parameters`: the study's parameters.
- :mod:`~judgepanel.studies.pairwise.prompt` and :mod:`~judgepanel.studies.pairwise.plan`:
  the pairwise prompt from the rubric and the plan of the ``pairs`` kind.
- :mod:`~judgepanel.studies.pairwise.choices`: the stored choices as a table, and their
  Bradley-Terry scores.
- :mod:`~judgepanel.studies.pairwise.analysis` and
  :mod:`~judgepanel.studies.pairwise.verdicts`: accuracy on decided pairs, comparisons
  against scores at equal calls, adaptive pairs, the panel; their ledger rows.
- :mod:`~judgepanel.studies.pairwise.budget`: the budget curve, comparisons and scores at
  1 .. c calls per image with the cost billed (descriptive).

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
