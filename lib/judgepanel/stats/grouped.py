"""Ratios of sums per group, each with a percentile interval from a bootstrap over clusters.

The accuracy tables of the choice studies repeat one computation: split the rows into
groups (judge x metric x ...), sum a numerator and a denominator per cluster (the task in
VAB, the paper in VisionQ: the unit the benchmark samples), resample the clusters with
replacement, and read the percentile interval of sum(numerator) / sum(denominator) off the
resamples. :func:`grouped_ratios` is that table. :func:`grouped_draws` hands out each
group's draws for a statistic built from several ratios on the same resamples (the
difference of two accuracies).

Seeding: a group's resamples depend on its key values and the seed alone
(:func:`group_seed`), never on where the group sits in the table, so adding, removing or
reordering groups or rows leaves every other group's interval bit-identical. Within a
group the clusters are numbered in sorted order of their labels and drawn as
:func:`judgepanel.stats.cluster_bootstrap` draws them (``resample_indices(K, B, s)``, with
s the group's seed), and the per-cluster sums are added in an order fixed by the values,
so the row order of the input does not reach the interval either.

A ratio within :data:`ZERO` of zero, resampled or estimated, is set to zero: a difference
that is exactly zero in exact arithmetic (picks that match a position-blind judge's share
task by task) is then zero on every resample, whatever the order its floating-point terms
were added in, so its interval is [0, 0] and its p is 1 rather than a significant 1e-17.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from judgepanel.stats.bootstrap import check_confidence, resample_indices
from judgepanel.stats.correlation import as_vector
from judgepanel.stats.intervals import cluster_numbers
from judgepanel.stats.means import finite_ci, finite_p

ZERO = 1e-12
"""Ratios nearer zero than this are zero: far below any reported digit, far above the
rounding error of summing a few thousand terms."""


def snap_zero(x: ArrayLike) -> NDArray[np.float64]:
    """``x`` with the values within :data:`ZERO` of zero set to exactly zero."""
    a = np.asarray(x, dtype=np.float64)
    return np.where(np.abs(a) < ZERO, 0.0, a)


Aggregate = tuple[str, Callable[[NDArray[Any]], Any]]
"""(column, function of that column's values in a group): one extra column of a table."""


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds, so that its repr does not name numpy."""
    return value.item() if isinstance(value, np.generic) else value


def group_seed(key: Sequence[Hashable], seed: int) -> int:
    """The seed of one group's resamples: a stable hash of its key values, mixed with ``seed``.

    BLAKE2b of the repr of the key values (numpy scalars read as Python values) goes with
    ``seed`` into a :class:`numpy.random.SeedSequence`; the result is the same in every
    process and on every machine, and does not depend on the other groups.

    Raises:
        ValueError: ``seed`` is negative.
    """
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    text = repr(tuple(_plain(v) for v in key)).encode("utf-8")
    digest = int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")
    state = np.random.SeedSequence([int(seed), digest]).generate_state(1, dtype=np.uint64)
    return int(state[0])


@dataclass(frozen=True)
class ClusterDraws:
    """Which clusters each resample of one group draws.

    Attributes:
        cluster_of: the cluster index of each row (clusters numbered in sorted label order).
        indices: (n_resamples, n_clusters) the clusters each resample draws, with
            replacement: row b of ``resample_indices(n_clusters, n_resamples, seed)``.
    """

    cluster_of: NDArray[np.intp]
    indices: NDArray[np.int64]

    @property
    def n_clusters(self) -> int:
        return int(self.indices.shape[1])

    def cluster_sums(self, values: ArrayLike, name: str = "values") -> NDArray[np.float64]:
        """The sum of ``values`` (one per row) in each cluster.

        The rows are added in the order of (cluster, value), so the sums do not depend on
        the order in which the rows came.
        """
        v = as_vector(values, name)
        if v.shape != self.cluster_of.shape:
            raise ValueError(f"{name} has {v.size} values for {self.cluster_of.size} rows")
        order = np.lexsort((v, self.cluster_of))
        return np.bincount(self.cluster_of[order], weights=v[order], minlength=self.n_clusters)

    def resampled_sums(self, cluster_sums: NDArray[np.float64]) -> NDArray[np.float64]:
        """The sum over each resample's drawn clusters, in draw order.

        numpy's own summation (not a BLAS product), so the last bit, and with it a
        resampled difference that is exactly zero, is the same on every machine and thread
        count.
        """
        return cluster_sums[self.indices].sum(axis=1)

    def ratios(self, numerator: ArrayLike, denominator: ArrayLike | None = None) -> NDArray:
        """sum(numerator) / sum(denominator) on each resample (NaN where the denominator is 0).

        Args:
            numerator: one value per row.
            denominator: one value per row; None counts each row once (a mean).
        """
        num = self.resampled_sums(self.cluster_sums(numerator, "numerator"))
        if denominator is None:
            sizes = np.bincount(self.cluster_of, minlength=self.n_clusters).astype(np.float64)
            den = self.resampled_sums(sizes)
        else:
            den = self.resampled_sums(self.cluster_sums(denominator, "denominator"))
        with np.errstate(invalid="ignore", divide="ignore"):
            return snap_zero(num / den)


def cluster_draws(clusters: ArrayLike, n_resamples: int, seed: int) -> ClusterDraws:
    """The draws of ``n_resamples`` resamples of the clusters, as cluster_bootstrap draws them.

    Raises:
        ValueError: no rows, a missing cluster label, or ``n_resamples`` < 1.
    """
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError("clusters is empty")
    cluster_of, k = cluster_numbers(labels, n_resamples)
    return ClusterDraws(cluster_of, resample_indices(k, n_resamples, seed))


def require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str = "table") -> None:
    """Raise a ValueError naming the ``columns`` that ``frame`` lacks."""
    missing = [c for c in dict.fromkeys(columns) if c not in frame.columns]
    if missing:
        raise ValueError(f"the {what} lacks column(s) {missing}; it has {list(frame.columns)}")


def iter_groups(
    frame: pd.DataFrame, by: Sequence[str]
) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """(key values by column, rows) of each group, groups in sorted key order.

    Missing key values form groups of their own; with no ``by`` a non-empty frame is one
    group with an empty key.
    """
    keys = list(by)
    if not keys:
        if len(frame):
            yield {}, frame
        return
    for values, sub in frame.groupby(keys, sort=True, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        yield dict(zip(keys, values, strict=True)), sub


def grouped_draws(
    frame: pd.DataFrame,
    by: Sequence[str],
    cluster: str,
    *,
    n_resamples: int,
    seed: int,
) -> Iterator[tuple[dict[str, Any], pd.DataFrame, ClusterDraws]]:
    """Each group of ``frame`` with its cluster draws, seeded by :func:`group_seed` of its key.

    Raises:
        ValueError: a column of ``by`` or ``cluster`` is missing, ``n_resamples`` < 1 or
            ``seed`` < 0 (raised by the call, before any group is drawn).
    """
    require_columns(frame, [*by, cluster])
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")

    def draw() -> Iterator[tuple[dict[str, Any], pd.DataFrame, ClusterDraws]]:
        # A generator of its own, so that the checks above run when this is called.
        for labels, sub in iter_groups(frame, by):
            key_seed = group_seed(tuple(labels.values()), seed)
            yield labels, sub, cluster_draws(sub[cluster].to_numpy(), n_resamples, key_seed)

    return draw()


def grouped_ratios(
    frame: pd.DataFrame,
    by: Sequence[str],
    cluster: str,
    numerator: str,
    denominator: str | None = None,
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    p_value: bool = False,
    extra: Mapping[str, Aggregate] | None = None,
) -> pd.DataFrame:
    """One row per group: a ratio of sums and its percentile interval over cluster resamples.

    With a 0/1 ``correct`` column as numerator and no denominator this is an accuracy per
    group with a bootstrap over clusters (tasks, papers).

    Args:
        frame: one row per observation.
        by: the group keys (none: the whole frame is one group).
        cluster: the column of the resampled unit.
        numerator: column summed above the fraction line.
        denominator: column summed below it; None counts each row once.
        n_resamples: resamples of the clusters per group.
        seed: mixed with each group's key into that group's seed (:func:`group_seed`).
        confidence: level of the percentile interval.
        p_value: add ``p``, the two-sided bootstrap p of a zero ratio.
        extra: more columns, name -> (column, function of the group's values of it).

    Returns:
        *by, estimate (sum of the numerator over sum of the denominator, summed in row
        order as numpy sums, so it is the plain mean of the numerator when there is no
        denominator), ci_low, ci_high (percentile interval of the finite resampled ratios;
        NaN when none is finite), [p], n (rows), n_clusters, sum_numerator,
        sum_denominator, then the ``extra`` columns; groups in sorted key order.

    Raises:
        ValueError: a named column is missing, a numerator or denominator value is not
            finite, a cluster label is missing, ``n_resamples`` < 1 or ``confidence`` is
            outside (0, 1).
    """
    extra = dict(extra or {})
    value_columns = [numerator, *([denominator] if denominator else [])]
    require_columns(frame, [*by, cluster, *value_columns, *(c for c, _ in extra.values())])
    check_confidence(confidence)
    rows = []
    for labels, sub, draws in grouped_draws(frame, by, cluster, n_resamples=n_resamples, seed=seed):
        num = as_vector(sub[numerator].to_numpy(dtype=np.float64), numerator)
        den = (
            np.ones_like(num)
            if denominator is None
            else as_vector(sub[denominator].to_numpy(dtype=np.float64), denominator)
        )
        resampled = draws.ratios(num, None if denominator is None else den)
        low, high = finite_ci(resampled, confidence)
        total_num, total_den = float(np.sum(num)), float(np.sum(den))
        with np.errstate(invalid="ignore", divide="ignore"):
            estimate = float(snap_zero(np.float64(total_num) / total_den))
        row: dict[str, Any] = {**labels, "estimate": estimate, "ci_low": low, "ci_high": high}
        if p_value:
            row["p"] = finite_p(resampled)
        row |= {
            "n": len(sub),
            "n_clusters": draws.n_clusters,
            "sum_numerator": total_num,
            "sum_denominator": total_den,
        }
        for name, (column, fn) in extra.items():
            row[name] = fn(sub[column].to_numpy())
        rows.append(row)
    columns = [*by, "estimate", "ci_low", "ci_high", *(["p"] if p_value else [])]
    columns += ["n", "n_clusters", "sum_numerator", "sum_denominator", *extra]
    return pd.DataFrame(rows, columns=columns)
