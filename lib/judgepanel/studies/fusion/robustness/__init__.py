"""Robustness of the fused arms, and what the same labels would buy elsewhere.

The fusion paper, sections 5.6 and 6.

One module per analysis: ``partitions``, ``baselines`` (label-matched), ``transfer``,
``top_decile``, ``granularity`` and ``selection`` (feature selection).
"""

from judgepanel.studies.fusion.robustness.baselines import baseline_claims as baseline_claims
from judgepanel.studies.fusion.robustness.baselines import claim_id as claim_id
from judgepanel.studies.fusion.robustness.baselines import claim_words as claim_words
from judgepanel.studies.fusion.robustness.baselines import (
    compare_label_matched as compare_label_matched,
)
from judgepanel.studies.fusion.robustness.baselines import (
    correction_families as correction_families,
)
from judgepanel.studies.fusion.robustness.baselines import (
    describe_against_fused as describe_against_fused,
)
from judgepanel.studies.fusion.robustness.baselines import (
    describe_label_matched as describe_label_matched,
)
from judgepanel.studies.fusion.robustness.baselines import label_matched_arms as label_matched_arms
from judgepanel.studies.fusion.robustness.baselines import recalibrator as recalibrator
from judgepanel.studies.fusion.robustness.baselines import tested_rows as tested_rows
from judgepanel.studies.fusion.robustness.granularity import (
    compare_granularity as compare_granularity,
)
from judgepanel.studies.fusion.robustness.granularity import default_ks as default_ks
from judgepanel.studies.fusion.robustness.granularity import (
    describe_granularity as describe_granularity,
)
from judgepanel.studies.fusion.robustness.granularity import detying as detying
from judgepanel.studies.fusion.robustness.granularity import round_half_up as round_half_up
from judgepanel.studies.fusion.robustness.granularity import (
    summarize_granularity as summarize_granularity,
)
from judgepanel.studies.fusion.robustness.granularity import tied_pair_share as tied_pair_share
from judgepanel.studies.fusion.robustness.partitions import PARTITION_SEEDS as PARTITION_SEEDS
from judgepanel.studies.fusion.robustness.partitions import blocks_named as blocks_named
from judgepanel.studies.fusion.robustness.partitions import (
    describe_partitions as describe_partitions,
)
from judgepanel.studies.fusion.robustness.partitions import random_margins as random_margins
from judgepanel.studies.fusion.robustness.partitions import (
    summarize_partitions as summarize_partitions,
)
from judgepanel.studies.fusion.robustness.partitions import sweep_datasets as sweep_datasets
from judgepanel.studies.fusion.robustness.partitions import sweep_partitions as sweep_partitions
from judgepanel.studies.fusion.robustness.selection import FeatureSelection as FeatureSelection
from judgepanel.studies.fusion.robustness.selection import PerGroupSelector as PerGroupSelector
from judgepanel.studies.fusion.robustness.selection import (
    compare_feature_selection as compare_feature_selection,
)
from judgepanel.studies.fusion.robustness.selection import (
    describe_configurations as describe_configurations,
)
from judgepanel.studies.fusion.robustness.selection import describe_selection as describe_selection
from judgepanel.studies.fusion.robustness.selection import dimension_groups as dimension_groups
from judgepanel.studies.fusion.robustness.selection import honest_choices as honest_choices
from judgepanel.studies.fusion.robustness.selection import oracle_oof as oracle_oof
from judgepanel.studies.fusion.robustness.selection import selecting_combiner as selecting_combiner
from judgepanel.studies.fusion.robustness.selection import selection_row as selection_row
from judgepanel.studies.fusion.robustness.selection import selection_tables as selection_tables
from judgepanel.studies.fusion.robustness.top_decile import compare_top_decile as compare_top_decile
from judgepanel.studies.fusion.robustness.top_decile import decile_arms as decile_arms
from judgepanel.studies.fusion.robustness.top_decile import precision_at_top as precision_at_top
from judgepanel.studies.fusion.robustness.top_decile import shortlist_sentence as shortlist_sentence
from judgepanel.studies.fusion.robustness.top_decile import top_decile_table as top_decile_table
from judgepanel.studies.fusion.robustness.top_decile import top_weights as top_weights
from judgepanel.studies.fusion.robustness.transfer import describe_transfer as describe_transfer
from judgepanel.studies.fusion.robustness.transfer import transfer_combiner as transfer_combiner
from judgepanel.studies.fusion.robustness.transfer import transfer_table as transfer_table
