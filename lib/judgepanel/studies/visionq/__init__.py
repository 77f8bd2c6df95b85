"""VisionQ: criterion-conditioned choice among lettered panels of a comparison figure.

A judge sees one composite with lettered panels and a question naming a visual criterion,
and must pick the panel the authors call best on it. This package holds the composite
builder, the call planner and parser, the metrics (accuracy over ALL questions with
paper-bootstrap and Wilson CIs, position bias, judges compared on resampled papers,
rotation voting), the claims its
page states (:mod:`judgepanel.studies.visionq.verdicts`) and the wide reading tables of
the report; the taxonomy is data of the loader
(:mod:`judgepanel.datasets.taxonomy`). The page alone imports its figures
(:mod:`~judgepanel.studies.visionq.figures`) and helpers
(:mod:`~judgepanel.studies.visionq.page`).
"""

from judgepanel.datasets.taxonomy import Leaf as Leaf
from judgepanel.datasets.taxonomy import Taxonomy as Taxonomy
from judgepanel.datasets.taxonomy import TaxonomyError as TaxonomyError
from judgepanel.datasets.taxonomy import load_taxonomy as load_taxonomy
from judgepanel.studies.visionq.accuracy import FEW_PAPERS as FEW_PAPERS
from judgepanel.studies.visionq.accuracy import accuracy_table as accuracy_table
from judgepanel.studies.visionq.accuracy import chance_rate as chance_rate
from judgepanel.studies.visionq.accuracy import chance_test as chance_test
from judgepanel.studies.visionq.accuracy import count_answers as count_answers
from judgepanel.studies.visionq.accuracy import normalised_accuracy as normalised_accuracy
from judgepanel.studies.visionq.accuracy import paper_sums as paper_sums
from judgepanel.studies.visionq.accuracy import per_axis_accuracy as per_axis_accuracy
from judgepanel.studies.visionq.accuracy import per_leaf_accuracy as per_leaf_accuracy
from judgepanel.studies.visionq.accuracy import thin_groups as thin_groups
from judgepanel.studies.visionq.cache import CacheStats as CacheStats
from judgepanel.studies.visionq.cache import CompositeCache as CompositeCache
from judgepanel.studies.visionq.cache import file_identity as file_identity
from judgepanel.studies.visionq.columns import PRED_COLUMNS as PRED_COLUMNS
from judgepanel.studies.visionq.composite import Composite as Composite
from judgepanel.studies.visionq.composite import Geometry as Geometry
from judgepanel.studies.visionq.composite import build_composite as build_composite
from judgepanel.studies.visionq.composite import composite_png as composite_png
from judgepanel.studies.visionq.composite import geometry as geometry
from judgepanel.studies.visionq.composite import grid_shape as grid_shape
from judgepanel.studies.visionq.imports import import_predictions as import_predictions
from judgepanel.studies.visionq.imports import load_predictions as load_predictions
from judgepanel.studies.visionq.imports import questions_of as questions_of
from judgepanel.studies.visionq.imports import (
    read_official_predictions as read_official_predictions,
)
from judgepanel.studies.visionq.pairs import PairSet as PairSet
from judgepanel.studies.visionq.pairs import asymmetric_pairs as asymmetric_pairs
from judgepanel.studies.visionq.pairs import build_pairs as build_pairs
from judgepanel.studies.visionq.pairs import shared_papers as shared_papers
from judgepanel.studies.visionq.pairs import write_pairs as write_pairs
from judgepanel.studies.visionq.parse import choice_letters as choice_letters
from judgepanel.studies.visionq.parse import parse_letter as parse_letter
from judgepanel.studies.visionq.position import UNPARSED as UNPARSED
from judgepanel.studies.visionq.position import last_letter_accuracy as last_letter_accuracy
from judgepanel.studies.visionq.position import last_letter_strata as last_letter_strata
from judgepanel.studies.visionq.position import letter_fit_p as letter_fit_p
from judgepanel.studies.visionq.position import letter_frequencies as letter_frequencies
from judgepanel.studies.visionq.position import (
    mantel_haenszel_difference as mantel_haenszel_difference,
)
from judgepanel.studies.visionq.position import position_bias as position_bias
from judgepanel.studies.visionq.position import shown_letters as shown_letters
from judgepanel.studies.visionq.predictions import check_predictions as check_predictions
from judgepanel.studies.visionq.predictions import (
    predictions_from_store as predictions_from_store,
)
from judgepanel.studies.visionq.protocol import COMPOSITE_CACHE as COMPOSITE_CACHE
from judgepanel.studies.visionq.protocol import VisionqAnswer as VisionqAnswer
from judgepanel.studies.visionq.protocol import composite_url as composite_url
from judgepanel.studies.visionq.protocol import plan_calls as plan_calls
from judgepanel.studies.visionq.protocol import prompt_text as prompt_text
from judgepanel.studies.visionq.protocol import rotated_order as rotated_order
from judgepanel.studies.visionq.protocol import rotations_for as rotations_for
from judgepanel.studies.visionq.protocol import unrotate as unrotate
from judgepanel.studies.visionq.rotation import rotation_debiasing as rotation_debiasing
from judgepanel.studies.visionq.rotation import rotation_vote as rotation_vote
from judgepanel.studies.visionq.run import VisionqData as VisionqData
from judgepanel.studies.visionq.run import load_run as load_run
from judgepanel.studies.visionq.tables import axis_wide_table as axis_wide_table
from judgepanel.studies.visionq.tables import leaf_wide_table as leaf_wide_table
from judgepanel.studies.visionq.verdicts import ABOVE_CHANCE as ABOVE_CHANCE
from judgepanel.studies.visionq.verdicts import JUDGE_PAIRS as JUDGE_PAIRS
from judgepanel.studies.visionq.verdicts import LAST_PANEL as LAST_PANEL
from judgepanel.studies.visionq.verdicts import LAST_SHARE as LAST_SHARE
from judgepanel.studies.visionq.verdicts import LETTER_FIT as LETTER_FIT
from judgepanel.studies.visionq.verdicts import chance_claims as chance_claims
from judgepanel.studies.visionq.verdicts import correction_families as correction_families
from judgepanel.studies.visionq.verdicts import judge_pair_claims as judge_pair_claims
from judgepanel.studies.visionq.verdicts import judge_pairs as judge_pairs
from judgepanel.studies.visionq.verdicts import last_panel_claims as last_panel_claims
from judgepanel.studies.visionq.verdicts import last_share_claims as last_share_claims
from judgepanel.studies.visionq.verdicts import leader_claim as leader_claim
from judgepanel.studies.visionq.verdicts import leader_test as leader_test
from judgepanel.studies.visionq.verdicts import letter_fit_claims as letter_fit_claims

__all__ = [
    "ABOVE_CHANCE",
    "COMPOSITE_CACHE",
    "FEW_PAPERS",
    "JUDGE_PAIRS",
    "LAST_PANEL",
    "LAST_SHARE",
    "LETTER_FIT",
    "PRED_COLUMNS",
    "UNPARSED",
    "CacheStats",
    "Composite",
    "CompositeCache",
    "Geometry",
    "Leaf",
    "PairSet",
    "Taxonomy",
    "TaxonomyError",
    "VisionqAnswer",
    "VisionqData",
    "accuracy_table",
    "asymmetric_pairs",
    "axis_wide_table",
    "build_composite",
    "build_pairs",
    "chance_claims",
    "chance_rate",
    "chance_test",
    "check_predictions",
    "choice_letters",
    "composite_png",
    "composite_url",
    "correction_families",
    "count_answers",
    "file_identity",
    "geometry",
    "grid_shape",
    "import_predictions",
    "judge_pair_claims",
    "judge_pairs",
    "last_letter_accuracy",
    "last_letter_strata",
    "last_panel_claims",
    "last_share_claims",
    "leader_claim",
    "leader_test",
    "leaf_wide_table",
    "letter_fit_claims",
    "letter_fit_p",
    "letter_frequencies",
    "load_predictions",
    "load_run",
    "load_taxonomy",
    "mantel_haenszel_difference",
    "normalised_accuracy",
    "paper_sums",
    "parse_letter",
    "per_axis_accuracy",
    "per_leaf_accuracy",
    "plan_calls",
    "position_bias",
    "predictions_from_store",
    "prompt_text",
    "questions_of",
    "read_official_predictions",
    "rotated_order",
    "rotation_debiasing",
    "rotation_vote",
    "rotations_for",
    "shared_papers",
    "shown_letters",
    "thin_groups",
    "unrotate",
    "write_pairs",
]
