"""The columns of VisionQ's predictions table, defined once for every module that uses them.

A predictions table has one row per asked question (per judge and rotation, when those
columns exist): ``pred`` is the chosen letter in the RELEASED labelling (null when the
answer was unreadable, the call failed or was never made), and the question's facts
(``QUESTION_COLUMNS``) ride along, so that every analysis reads this one table, whoever
produced it (the store, the official harness).
"""

from __future__ import annotations

QUESTION_COLUMNS: tuple[str, ...] = ("gold", "n_choices", "axis", "leaf", "paper")
"""What a row carries about its question: the released gold letter, the number of panels,
the taxonomy axis and leaf, and the paper (the unit the bootstrap resamples)."""
REQUIRED: tuple[str, ...] = ("id", "pred", *QUESTION_COLUMNS)
"""The columns every analysis needs; ``judge`` and ``rotation`` may be left out (one judge,
the released order)."""
PRED_COLUMNS: tuple[str, ...] = ("judge", "id", "rotation", "pred", *QUESTION_COLUMNS)
"""The predictions table as this package writes it."""
