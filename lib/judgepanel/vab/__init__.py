"""The VAB set-comparison study: prompts and orders, answer parsing, metrics, score-then-rank."""

from judgepanel.datasets.vab import image_table
from judgepanel.vab.metrics import (
    GOLD_COLUMNS,
    METRICS,
    PRED_COLUMNS,
    accuracy_by_gold_slot,
    accuracy_table,
    compare_judges,
    gold_table,
    position_by_slot,
    position_table,
    random_baseline,
    size_degradation,
    task_scores,
    vote_scores,
    vote_table,
)
from judgepanel.vab.parse import KINDS, ShownAnswer, parse_answer
from judgepanel.vab.protocol import (
    balanced_orders,
    build_messages,
    plan_calls,
    predictions_from_store,
    prompt_hash,
    standard_orders,
    task_orders,
    to_original,
)
from judgepanel.vab.rank import image_scores, panel_scores, rank_predictions

__all__ = [
    "GOLD_COLUMNS",
    "KINDS",
    "METRICS",
    "PRED_COLUMNS",
    "ShownAnswer",
    "accuracy_by_gold_slot",
    "accuracy_table",
    "balanced_orders",
    "build_messages",
    "compare_judges",
    "gold_table",
    "image_scores",
    "image_table",
    "panel_scores",
    "parse_answer",
    "plan_calls",
    "position_by_slot",
    "position_table",
    "predictions_from_store",
    "prompt_hash",
    "random_baseline",
    "rank_predictions",
    "size_degradation",
    "standard_orders",
    "task_orders",
    "task_scores",
    "to_original",
    "vote_scores",
    "vote_table",
]
