"""VisionQ: criterion-conditioned choice among lettered panels of a comparison figure.

A judge sees one composite with lettered panels and a question naming a visual criterion,
and must pick the panel the authors call best on it. This package holds the taxonomy, the
composite builder, the call planner and parser, and the metrics (accuracy over ALL
questions with paper-bootstrap and Wilson CIs, position bias, McNemar, rotation voting),
the wide reading tables of the report, and (in :mod:`judgepanel.visionq.figures`, kept out
of this namespace so that scoring never imports matplotlib) its figures.
"""

from judgepanel.visionq.cache import CacheStats as CacheStats
from judgepanel.visionq.cache import CompositeCache as CompositeCache
from judgepanel.visionq.cache import file_identity as file_identity
from judgepanel.visionq.composite import Composite as Composite
from judgepanel.visionq.composite import Geometry as Geometry
from judgepanel.visionq.composite import build_composite as build_composite
from judgepanel.visionq.composite import composite_png as composite_png
from judgepanel.visionq.composite import geometry as geometry
from judgepanel.visionq.composite import grid_shape as grid_shape
from judgepanel.visionq.metrics import FEW_PAPERS as FEW_PAPERS
from judgepanel.visionq.metrics import accuracy_table as accuracy_table
from judgepanel.visionq.metrics import call_coverage as call_coverage
from judgepanel.visionq.metrics import chance_rate as chance_rate
from judgepanel.visionq.metrics import check_predictions as check_predictions
from judgepanel.visionq.metrics import last_letter_accuracy as last_letter_accuracy
from judgepanel.visionq.metrics import letter_frequencies as letter_frequencies
from judgepanel.visionq.metrics import mcnemar_pairs as mcnemar_pairs
from judgepanel.visionq.metrics import normalised_accuracy as normalised_accuracy
from judgepanel.visionq.metrics import per_axis_accuracy as per_axis_accuracy
from judgepanel.visionq.metrics import per_leaf_accuracy as per_leaf_accuracy
from judgepanel.visionq.metrics import position_bias as position_bias
from judgepanel.visionq.metrics import predictions_from_store as predictions_from_store
from judgepanel.visionq.metrics import rotation_debiasing as rotation_debiasing
from judgepanel.visionq.metrics import rotation_vote as rotation_vote
from judgepanel.visionq.metrics import shown_letters as shown_letters
from judgepanel.visionq.metrics import thin_groups as thin_groups
from judgepanel.visionq.parse import choice_letters as choice_letters
from judgepanel.visionq.parse import parse_letter as parse_letter
from judgepanel.visionq.protocol import COMPOSITE_CACHE as COMPOSITE_CACHE
from judgepanel.visionq.protocol import composite_url as composite_url
from judgepanel.visionq.protocol import plan_calls as plan_calls
from judgepanel.visionq.protocol import prompt_text as prompt_text
from judgepanel.visionq.protocol import rotated_order as rotated_order
from judgepanel.visionq.protocol import rotations_for as rotations_for
from judgepanel.visionq.protocol import unrotate as unrotate
from judgepanel.visionq.tables import axis_wide_table as axis_wide_table
from judgepanel.visionq.tables import leaf_wide_table as leaf_wide_table
from judgepanel.visionq.taxonomy import Leaf as Leaf
from judgepanel.visionq.taxonomy import Taxonomy as Taxonomy
from judgepanel.visionq.taxonomy import TaxonomyError as TaxonomyError
from judgepanel.visionq.taxonomy import load_taxonomy as load_taxonomy

__all__ = [
    "COMPOSITE_CACHE",
    "FEW_PAPERS",
    "CacheStats",
    "Composite",
    "CompositeCache",
    "Geometry",
    "Leaf",
    "Taxonomy",
    "TaxonomyError",
    "accuracy_table",
    "axis_wide_table",
    "build_composite",
    "call_coverage",
    "chance_rate",
    "check_predictions",
    "choice_letters",
    "composite_png",
    "composite_url",
    "file_identity",
    "geometry",
    "grid_shape",
    "last_letter_accuracy",
    "leaf_wide_table",
    "letter_frequencies",
    "load_taxonomy",
    "mcnemar_pairs",
    "normalised_accuracy",
    "parse_letter",
    "per_axis_accuracy",
    "per_leaf_accuracy",
    "plan_calls",
    "position_bias",
    "predictions_from_store",
    "prompt_text",
    "rotated_order",
    "rotation_debiasing",
    "rotation_vote",
    "rotations_for",
    "shown_letters",
    "thin_groups",
    "unrotate",
]
