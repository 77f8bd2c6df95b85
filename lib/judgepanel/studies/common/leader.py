"""The leader of several judges, tested with the selection paid for, and every pair of them.

A page that names the judge first by point estimate has picked it on the data it then
tests it on; the comparison of that leader with the runner-up, read as if the pair had been
chosen in advance, finds a lead too often. :func:`best_of` tests every pair at once: the
null distribution is the bootstrap of the largest centred pairwise difference over all
pairs (a max-T over the pairwise differences, resampling the units), so the leader's
margin over each other judge is read against a bar that holds for any pair the data
could have picked. Its claim (:func:`best_of_claim`, a ``best-of`` ledger row) reads
"leads" only when that margin clears the bar for the runner-up, and so for everyone.

:func:`pairwise` gives every pair of judges a paired difference with a bootstrap interval
and two-sided p on the same resamples of the units (papers, tasks), the higher judge by
point estimate named first.

Both take per-unit sums (``sums``, units x judges) and sizes, so one accuracy is
sum(correct) / sum(questions) over the units a resample draws: the tasks of a VAB run
(one each) or the papers of VisionQ (their questions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim
from judgepanel.stats import bh
from judgepanel.stats.bootstrap import resample_indices
from judgepanel.stats.means import finite_ci, finite_p

CHUNK = 500
"""Resamples summed at a time (a resample draws every unit: chunks keep memory small)."""


def resampled_values(
    sums: ArrayLike, sizes: ArrayLike, n_resamples: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(observed, draws)``: each judge's sum(sums) / sum(sizes) on the units, and on each
    of ``n_resamples`` resamples of the units (``draws``, resamples x judges).

    Args:
        sums: (units, judges) per-unit totals (a task's ap@1; a paper's correct answers).
        sizes: a number, (units,) or (units, judges): per-unit denominators (1 a task;
            a paper's questions).
    """
    s = np.asarray(sums, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] < 1:
        raise ValueError(f"sums must be units x judges with a unit, got shape {s.shape}")
    size = np.asarray(sizes, dtype=np.float64)
    n = np.broadcast_to(size.reshape(s.shape[0], -1) if size.ndim == 1 else size, s.shape)
    idx = resample_indices(s.shape[0], n_resamples, seed)
    draws = np.empty((n_resamples, s.shape[1]))
    for start in range(0, n_resamples, CHUNK):
        rows = idx[start : start + CHUNK]
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[start : start + CHUNK] = s[rows].sum(axis=1) / n[rows].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = s.sum(axis=0) / n.sum(axis=0)
    return observed, draws


@dataclass(frozen=True)
class BestOf:
    """The judge first by point estimate, tested against all the others at once.

    Attributes:
        order: the judges by point estimate, leader first (ties keep the given order).
        values: each judge's estimate, in ``order``.
        margin: the leader minus the runner-up.
        ci_low, ci_high: the simultaneous interval of ``margin`` (the max-T bar either side).
        p: the max-T p of the leader against the runner-up, the largest of ``p_each``.
        p_each: the max-T p of the leader against each other judge, in ``order[1:]``.
        n_units: units resampled; n_resamples: resamples; level: the interval's coverage.
    """

    order: list[str]
    values: list[float]
    margin: float
    ci_low: float
    ci_high: float
    p: float
    p_each: list[float]
    n_units: int
    n_resamples: int
    level: float

    @property
    def leader(self) -> str:
        return self.order[0]

    @property
    def runner_up(self) -> str:
        return self.order[1]

    def separated(self, alpha: float = 0.05) -> list[str]:
        """The judges the leader is ahead of at the selection-adjusted ``alpha``."""
        return [j for j, p in zip(self.order[1:], self.p_each, strict=True) if p < alpha]

    def not_separated(self, alpha: float = 0.05) -> list[str]:
        """The judges no selection-adjusted test at ``alpha`` puts behind the leader."""
        return [j for j, p in zip(self.order[1:], self.p_each, strict=True) if p >= alpha]

    def table(self, alpha: float = 0.05, **labels: object) -> pd.DataFrame:
        """One row: the leader, the runner-up, the margin with its simultaneous interval,
        the max-T p and whom the leader is and is not separated from."""
        return pd.DataFrame(
            [
                {
                    **labels,
                    "leader": self.leader,
                    "runner_up": self.runner_up,
                    "value_leader": self.values[0],
                    "value_runner_up": self.values[1],
                    "delta": self.margin,
                    "ci_low": self.ci_low,
                    "ci_high": self.ci_high,
                    "p": self.p,
                    "separated_from": ", ".join(self.separated(alpha)),
                    "not_separated_from": ", ".join(self.not_separated(alpha)),
                    "n_judges": len(self.order),
                    "n_units": self.n_units,
                }
            ]
        )


def best_of(
    sums: ArrayLike,
    sizes: ArrayLike,
    names: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    level: float = 0.95,
) -> BestOf:
    """The leader by point estimate and its max-T test against every other judge.

    With d_i each judge's estimate and d*_bi its value on resample b, the null draws are
    T*_b = max over pairs i < j of |(d*_bi - d*_bj) - (d_i - d_j)|: every pairwise
    difference moved to zero, their joint resampling kept. The leader L is ahead of j at
    p_j = (1 + #{T*_b >= d_L - d_j}) / (B + 1), a bar that holds simultaneously for every
    pair, so for whichever pair the data put first; ``p`` is that of the runner-up, the
    largest. The interval of the margin is margin -/+ the ``level`` quantile of T*, on the
    same resamples: it lies above zero when p is below 1 - ``level`` (up to the bootstrap's
    own rounding).

    Raises:
        ValueError: fewer than two judges.

    Example:
        Three judges on 60 tasks, each task solved (1) or not (0):

        >>> rng = np.random.default_rng(1)
        >>> sums = rng.binomial(1, [0.8, 0.6, 0.55], size=(60, 3))
        >>> res = best_of(sums, 1, ["a", "b", "c"], n_resamples=500, seed=0)
        >>> print(f"{res.leader} ahead of {res.runner_up} by {res.margin:.3f}, p = {res.p:.3f}")
        a ahead of b by 0.167, p = 0.168
        >>> res.separated(), res.not_separated()
        (['c'], ['b'])
    """
    names = list(names)
    if len(names) < 2:
        raise ValueError("a leader needs at least two judges to be compared")
    observed, draws = resampled_values(sums, sizes, n_resamples, seed)
    order = sorted(range(len(names)), key=lambda i: -observed[i])  # stable: ties keep order
    i, j = np.triu_indices(len(names), k=1)
    centred = (draws[:, i] - draws[:, j]) - (observed[i] - observed[j])
    null = np.nanmax(np.abs(centred), axis=1)
    null = null[np.isfinite(null)]
    lead = order[0]
    gaps = [float(observed[lead] - observed[k]) for k in order[1:]]
    p_each = [float((1 + np.count_nonzero(null >= g - 1e-12)) / (null.size + 1)) for g in gaps]
    bar = float(np.quantile(null, level)) if null.size else float("nan")
    margin = gaps[0]
    return BestOf(
        order=[names[k] for k in order],
        values=[float(observed[k]) for k in order],
        margin=margin,
        ci_low=margin - bar,
        ci_high=margin + bar,
        p=max(p_each),
        p_each=p_each,
        n_units=int(np.asarray(sums).shape[0]),
        n_resamples=int(null.size),
        level=level,
    )


def best_of_claim(
    result: BestOf,
    *,
    id: str,
    dataset: str,
    metric: str,
    unit: str,
    noun: str = "judge",
    nouns: str | None = None,
    alpha: float = 0.05,
    **fields: object,
) -> Claim:
    """The ``best-of`` ledger row of ``result``: the leader "leads" every other ``noun``
    when its max-T p is below ``alpha`` (and so its interval above zero), else it is
    "highest by point estimate only" and the row names those no test separates it from.
    ``nouns`` is the plural (``noun`` + "s" by default). A family of one: its p is
    already adjusted for the selection."""
    leads = result.p < alpha and result.ci_low > 0
    others = result.order[1:]
    b = (
        f"every other {noun} ({wording.join(others)})"
        if leads
        else wording.join(result.not_separated(alpha) or [result.runner_up])
    )
    return Claim(
        id=id,
        a=result.leader,
        b=b,
        dataset=dataset,
        metric=metric,
        unit=unit,
        estimate=result.margin,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        p=result.p,
        alpha=alpha,
        kind="best-of",
        level=result.level,
        symbol=f"Δ {metric} over the runner-up {result.runner_up}",
        note=(
            f"max-T over the {len(result.order) * (len(result.order) - 1) // 2} pairwise "
            f"differences of {len(result.order)} {nouns or noun + 's'}, {result.n_resamples} "
            f"resamples of "
            f"{result.n_units} {unit}; the interval is simultaneous over the pairs"
        ),
        **fields,  # type: ignore[arg-type]
    )


def pairwise(
    sums: ArrayLike,
    sizes: ArrayLike,
    names: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Every pair of judges on the same resampled units, the higher by point estimate first.

    Returns:
        a, b, value_a, value_b, delta (a - b), ci_low, ci_high (percentile), p (two-sided
        bootstrap p of a zero difference), q (Benjamini-Hochberg over the pairs).
    """
    names = list(names)
    observed, draws = resampled_values(sums, sizes, n_resamples, seed)
    rows = []
    for x in range(len(names)):
        for y in range(x + 1, len(names)):
            a, b = (x, y) if observed[x] >= observed[y] else (y, x)
            diff = draws[:, a] - draws[:, b]
            low, high = finite_ci(diff, confidence)
            rows.append(
                {
                    "a": names[a],
                    "b": names[b],
                    "value_a": float(observed[a]),
                    "value_b": float(observed[b]),
                    "delta": float(observed[a] - observed[b]),
                    "ci_low": low,
                    "ci_high": high,
                    "p": finite_p(diff),
                }
            )
    out = pd.DataFrame(rows)
    if len(out):
        out["q"] = bh(out["p"].to_numpy(float))
    return out
