"""The columns of VAB's tidy tables, defined once for every module that reads or writes them.

The predictions table has one row per answered (or failed) call, in ``PRED_COLUMNS``:
``judge`` names the judge (a family asked directly, or a score-then-rank ranker); ``kind``
is ``vab_top1``, ``vab_bot1`` or ``vab_tb1``; ``repetition`` the order index; ``order`` the
original labels in slot order joined by commas (``"C,A,B"``; null when the order does not
matter, as for score-then-rank); ``pred_*`` are ORIGINAL labels or null; ``status`` is
``ok`` or ``failed``. For two images ``gold_worst`` may be null: the worst is the image
that is not best.
"""

from __future__ import annotations

PRED_COLUMNS: tuple[str, ...] = (
    "task_id",
    "judge",
    "kind",
    "repetition",
    "order",
    "pred_best",
    "pred_worst",
    "status",
    "gold_best",
    "gold_worst",
    "k",
    "domain",
)
"""The predictions table, whoever produced it (the store, the official harness, a ranker)."""
GOLD_COLUMNS: tuple[str, ...] = ("task_id", "k", "domain", "gold_best", "gold_worst")
"""The gold table: one row per task."""
METRICS: tuple[str, ...] = ("top1", "bot1", "tb1")
"""Top-1 (best right), Bot-1 (worst right), TB-1 (both right in one answer)."""
STATS: tuple[str, ...] = ("ap1", "pass3")
"""Mean correctness over the standard orders, and all of them right."""
STANDARD_REPS: tuple[int, ...] = (0, 1, 2)
"""The standard orders ap@1 and pass^3 are computed on."""
