"""The VAB set-comparison study: prompts and orders, answer parsing, analyses, score-then-rank."""

from judgepanel.datasets.vab import image_table
from judgepanel.studies.vab.accuracy import accuracy_table, compare_judges, size_degradation
from judgepanel.studies.vab.columns import GOLD_COLUMNS, METRICS, PRED_COLUMNS
from judgepanel.studies.vab.imports import (
    import_results,
    load_predictions,
    read_official_results,
)
from judgepanel.studies.vab.parse import KINDS, ShownAnswer, parse_answer
from judgepanel.studies.vab.position import (
    accuracy_by_gold_slot,
    position_by_slot,
    position_table,
)
from judgepanel.studies.vab.predictions import gold_table, predictions_from_store
from judgepanel.studies.vab.protocol import (
    VabAnswer,
    balanced_orders,
    build_messages,
    plan_calls,
    prompt_hash,
    standard_orders,
    task_orders,
    to_original,
)
from judgepanel.studies.vab.rank import image_scores, panel_scores, rank_predictions
from judgepanel.studies.vab.rankers import (
    FUSED,
    PANEL,
    RANK_PREFIX,
    FusedRanker,
    ScoreThenRank,
    best_judge,
    fit_fused,
    image_features,
    is_ranker,
    like_for_like_pairs,
    panel_families,
    rank_vs_direct,
    ranker_name,
    score_then_rank,
    separate_leader,
)
from judgepanel.studies.vab.run import VabData, load_run, load_training_world
from judgepanel.studies.vab.scores import chance_rate, task_scores
from judgepanel.studies.vab.summary import (
    accuracy_wide,
    add_vote_costs,
    answer_costs,
    baseline_table,
    calls_per_task,
    count_comparison_calls,
    position_repetitions,
    ranker_table,
    slot_matrix,
)
from judgepanel.studies.vab.vote import vote_scores, vote_table

__all__ = [
    "FUSED",
    "GOLD_COLUMNS",
    "KINDS",
    "METRICS",
    "PANEL",
    "PRED_COLUMNS",
    "RANK_PREFIX",
    "FusedRanker",
    "ScoreThenRank",
    "ShownAnswer",
    "VabAnswer",
    "VabData",
    "accuracy_by_gold_slot",
    "accuracy_table",
    "accuracy_wide",
    "add_vote_costs",
    "answer_costs",
    "balanced_orders",
    "baseline_table",
    "best_judge",
    "build_messages",
    "calls_per_task",
    "chance_rate",
    "compare_judges",
    "count_comparison_calls",
    "fit_fused",
    "gold_table",
    "image_features",
    "image_scores",
    "image_table",
    "import_results",
    "is_ranker",
    "like_for_like_pairs",
    "load_predictions",
    "load_run",
    "load_training_world",
    "panel_families",
    "panel_scores",
    "parse_answer",
    "plan_calls",
    "position_by_slot",
    "position_repetitions",
    "position_table",
    "predictions_from_store",
    "prompt_hash",
    "rank_predictions",
    "rank_vs_direct",
    "ranker_name",
    "ranker_table",
    "read_official_results",
    "score_then_rank",
    "separate_leader",
    "size_degradation",
    "slot_matrix",
    "standard_orders",
    "task_orders",
    "task_scores",
    "to_original",
    "vote_scores",
    "vote_table",
]
