"""VisionQ: criterion-conditioned choice among lettered panels of a comparison figure.

A judge sees one composite with lettered panels and a question naming a visual criterion,
and must pick the panel the authors call best on it. This package holds the taxonomy, the
composite builder, the call planner and parser, and the metrics (accuracy over ALL
questions with paper-bootstrap and Wilson CIs, position bias, McNemar, rotation voting).
"""

from judgepanel.visionq.composite import Composite as Composite
from judgepanel.visionq.composite import Geometry as Geometry
from judgepanel.visionq.composite import build_composite as build_composite
from judgepanel.visionq.composite import composite_png as composite_png
from judgepanel.visionq.composite import geometry as geometry
from judgepanel.visionq.composite import grid_shape as grid_shape
from judgepanel.visionq.metrics import accuracy_table as accuracy_table
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
from judgepanel.visionq.parse import choice_letters as choice_letters
from judgepanel.visionq.parse import parse_letter as parse_letter
from judgepanel.visionq.protocol import plan_calls as plan_calls
from judgepanel.visionq.protocol import prompt_text as prompt_text
from judgepanel.visionq.protocol import rotated_order as rotated_order
from judgepanel.visionq.protocol import rotations_for as rotations_for
from judgepanel.visionq.protocol import unrotate as unrotate
from judgepanel.visionq.taxonomy import Leaf as Leaf
from judgepanel.visionq.taxonomy import Taxonomy as Taxonomy
from judgepanel.visionq.taxonomy import TaxonomyError as TaxonomyError
from judgepanel.visionq.taxonomy import load_taxonomy as load_taxonomy

__all__ = [
    "Composite",
    "Geometry",
    "Leaf",
    "Taxonomy",
    "TaxonomyError",
    "accuracy_table",
    "build_composite",
    "chance_rate",
    "check_predictions",
    "choice_letters",
    "composite_png",
    "geometry",
    "grid_shape",
    "last_letter_accuracy",
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
    "unrotate",
]
