"""A combiner fitted on one world, applied to the other."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgepanel.stats import (
    paired_bootstrap,
)
from judgepanel.stats.correlation import correlate
from judgepanel.studies.common.combiners import FOLD_SEED, gb_combiner, oof_predict
from judgepanel.studies.fusion.blocks import Blocks, best_single, hp_design
from judgepanel.studies.fusion.compare import METRICS


def transfer_combiner(
    source: Blocks,
    target: Blocks,
    families: Sequence[str],
    *,
    metrics: Sequence[str] = METRICS,
    n_resamples: int = 10_000,
    seed: int = 0,
    fold_seed: int = FOLD_SEED,
) -> pd.DataFrame:
    """A combiner fitted on all of ``source`` applied to ``target``, against its best single.

    The same families and features are used in both worlds. The target's own out-of-fold
    H+P_gb is reported beside it (``in_domain``), so the cost of borrowing labels from
    another distribution is visible. p is one-sided (transfer beats the best single).
    """
    Xs, Xt = hp_design(source, families), hp_design(target, families)
    model = gb_combiner().fit(Xs.to_numpy(float), source.y.to_numpy(float))
    moved = model.predict(Xt.to_numpy(float))
    own = oof_predict(gb_combiner(), Xt, target.y, seed=fold_seed)
    best, _ = best_single(target.H_of(families), target.y)
    y = target.y.to_numpy(float)
    single = target.H[best].to_numpy(float)
    rows = []
    for metric in metrics:
        res = paired_bootstrap(y, moved, single, metric, n_resamples=n_resamples, seed=seed)
        rows.append(
            {
                "metric": metric,
                "transfer": res.estimate_a,
                "in_domain": correlate(y, own, metric),
                "best_family": best,
                "best_single": res.estimate_b,
                "delta": res.delta,
                "ci_low": res.ci_low,
                "ci_high": res.ci_high,
                "p": res.p,
                "n": res.n,
            }
        )
    return pd.DataFrame(rows)
