"""A combiner fitted on one world, applied to the other."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from judgepanel.claims import wording
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


def transfer_table(
    blocks: Mapping[str, Blocks],
    families: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """:func:`transfer_combiner` from every dataset to every other, ``source`` and
    ``target`` first."""
    moves = [
        transfer_combiner(
            blocks[src], blocks[dst], families, n_resamples=n_resamples, seed=seed
        ).assign(source=src, target=dst)
        for src in blocks
        for dst in blocks
        if src != dst
    ]
    out = pd.concat(moves, ignore_index=True)
    return out[["source", "target", *[c for c in out.columns if c not in ("source", "target")]]]


def describe_transfer(transfer: pd.DataFrame, metric: str = "spearman") -> str:
    """Each transfer against the target's best single model, and the in-domain fit."""
    return " ".join(
        f"Trained on {row.source} and applied to {row.target}, the fused score (H+P_gb) "
        f"reaches ρ = {row.transfer:.3f} against the best single model's {row.best_single:.3f} "
        f"({wording.estimate(row.delta, row.ci_low, row.ci_high)}); fitted in domain it "
        f"reaches {row.in_domain:.3f}."
        for row in transfer[transfer["metric"] == metric].itertuples()
    )
