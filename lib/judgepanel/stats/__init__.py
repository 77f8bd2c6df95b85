"""Statistics for the judge studies: rank metrics, paired bootstrap, noise ceiling, q-values.

Fast paths are vectorised with numpy and tested against scipy and statsmodels.
"""

from judgepanel.stats.bootstrap import (
    BootstrapResult,
    MaxStatResult,
    bootstrap_arms,
    bootstrap_p,
    bootstrap_partials,
    max_statistic_p,
    multiplicities,
    paired_bootstrap,
    paired_bootstrap_partial,
    paired_bootstrap_stat,
    percentile_ci,
    resample_blocks,
    resample_indices,
    resampled_metric,
    resampled_partial_spearman,
    summarize_paired,
)
from judgepanel.stats.ceiling import NoiseCeiling, noise_ceiling, spearman_brown, split_half_means
from judgepanel.stats.ceiling_choice import CeilingEstimate, data_ceiling
from judgepanel.stats.ceiling_methods import (
    NoCeiling,
    ceiling_for,
    mean_only_ceiling,
    summary_ceiling,
    vote_ceiling,
    vote_ceiling_wide,
)
from judgepanel.stats.correlation import (
    kendall_b,
    partial_spearman,
    residual_rank_variance,
    spearman,
    weighted_kendall_b,
    weighted_spearman,
)
from judgepanel.stats.grouped import (
    ClusterDraws,
    cluster_draws,
    group_seed,
    grouped_draws,
    grouped_ratios,
)
from judgepanel.stats.intervals import ClusterBootstrapResult, cluster_bootstrap, wilson
from judgepanel.stats.multitest import add_q, bh

__all__ = [
    "BootstrapResult",
    "CeilingEstimate",
    "ClusterBootstrapResult",
    "ClusterDraws",
    "MaxStatResult",
    "NoCeiling",
    "NoiseCeiling",
    "add_q",
    "bh",
    "bootstrap_arms",
    "bootstrap_p",
    "bootstrap_partials",
    "ceiling_for",
    "cluster_bootstrap",
    "cluster_draws",
    "data_ceiling",
    "group_seed",
    "grouped_draws",
    "grouped_ratios",
    "kendall_b",
    "max_statistic_p",
    "mean_only_ceiling",
    "multiplicities",
    "noise_ceiling",
    "paired_bootstrap",
    "paired_bootstrap_partial",
    "paired_bootstrap_stat",
    "partial_spearman",
    "percentile_ci",
    "resample_blocks",
    "resample_indices",
    "resampled_metric",
    "resampled_partial_spearman",
    "residual_rank_variance",
    "spearman",
    "spearman_brown",
    "split_half_means",
    "summarize_paired",
    "summary_ceiling",
    "vote_ceiling",
    "vote_ceiling_wide",
    "weighted_kendall_b",
    "weighted_spearman",
    "wilson",
]
