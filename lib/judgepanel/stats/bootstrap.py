"""Paired bootstrap over images, vectorised through multiplicity vectors.

Every difference between two arms is a paired bootstrap: each resample draws n images
with replacement, and both arms are scored on the same drawn images. Resample b is row b
of :func:`resample_indices`, i.e. ``np.random.default_rng(seed).integers(0, n, size=(B,
n))``; the same seed gives the same resamples in every function here, so arms bootstrapped
in separate calls remain paired. The bootstraps draw those rows a block at a time
(:func:`resample_blocks`), so that memory stays O(block x n) rather than O(B x n) (AVA's
255,000 images would need 20 GB of indices for B = 10,000). A resample is handled as its
multiplicity vector (how often each image was drawn), which turns the rank metrics into
weighted sums and matrix products (see :mod:`judgepanel.stats.correlation`); the values
equal scipy's on the materialised resamples.

Definitions used throughout:

* ``delta`` = metric(y, a) - metric(y, b) on the full sample; ``delta*`` the same on a
  resample.
* CI: the equal-tailed percentile interval of ``delta*`` (default 95%).
* p, ``alternative="greater"`` (claim: a beats b): (1 + #{delta* <= 0}) / (B + 1), the
  share of resamples that do not support the claim with the +1 correction, which keeps p
  above zero and is conservative (ties at zero count against the claim). Up to that
  correction it is the smallest one-sided level at which the percentile interval
  excludes zero.
  ``"less"``: (1 + #{delta* >= 0}) / (B + 1). ``"two-sided"``: min(1, 2 min(greater, less)).
* Resamples on which a metric is undefined (a constant resampled arm) are dropped, with a
  warning; B is then the number kept.
"""

from __future__ import annotations

import os
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from judgepanel.stats.correlation import (
    PairSigns,
    RankedTarget,
    TieGroups,
    as_counts,
    as_covariates,
    as_pair,
    as_vector,
    check_metric,
    correlate,
    partial_from_covariance,
    partial_spearman,
    tau_b_from_parts,
)
from judgepanel.stats.memo import ArrayMemo, digest

Alternative = Literal["greater", "less", "two-sided"]
ALTERNATIVES: tuple[str, ...] = ("greater", "less", "two-sided")

RESAMPLED = ArrayMemo("resampled metrics", max_bytes=128 * 2**20)
"""Each arm's metric on the resamples of :func:`bootstrap_arms`, by metric, B, seed, y and
arm: the same family or fused arm is compared with several others in one notebook, and its
column of resampled metrics does not depend on what it is compared with."""

DRAWN = ArrayMemo("bootstrap draw counts", max_bytes=64 * 2**20)
"""Each (n, B, seed)'s draw counts, items x resamples in the smallest unsigned type that
holds n: every bootstrap of a notebook draws the same resamples of the same images, so
they are drawn and counted once (10 MB for 500 images and B = 10,000). A draw larger than
the memo (AVA's 255,000 images) is drawn a block at a time, as it always was."""

TARGETS = ArrayMemo("bootstrap targets", max_bytes=128 * 2**20)
"""What Spearman needs of a target on the resamples of :data:`DRAWN` (its weighted ranks
and their sums of squares, :class:`~judgepanel.stats.correlation.RankedTarget`), by target
and resamples: every arm of a notebook is compared with the same human mean on the same
resamples (40 MB for 500 images and B = 10,000; the three datasets of 04 fit)."""

# Cells per chunk of draw counts (items x resamples): 2 MB of float64, so that the
# several passes over a chunk stay in cache. Kendall's tau uses larger chunks, so that
# its matrix products are few and large.
_CHUNK_CELLS = 250_000
_KENDALL_CHUNK_CELLS = 1_000_000

INDEX_BLOCK_BYTES = 64 * 2**20
"""The most bytes of drawn indices (int64) a bootstrap holds at once: one block of
:func:`resample_blocks`, unless a single resample is larger."""

THREADED_ITEMS = 20_000
"""Items from which the Spearman and partial bootstraps score their chunks on worker
threads (:func:`chunk_threads`): numpy releases the GIL inside each chunk's array passes,
which at this size are long enough to pay for handing the chunk over. Each chunk is
scored alone, so the numbers are the same bit for bit on any number of threads."""

# Chunks handed to the workers ahead of the one being read: bounds the draw counts held
# at once (a chunk is about 2 MB) while keeping every worker busy.
_IN_FLIGHT = 16


def resample_indices(n: int, n_resamples: int, seed: int) -> NDArray[np.int64]:
    """The bootstrap resamples: ``default_rng(seed).integers(0, n, size=(n_resamples, n))``."""
    _check_sizes(n, n_resamples)
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def block_rows(n: int, n_resamples: int, multiple: int = 1) -> int:
    """Resamples per block of drawn indices: a multiple of ``multiple``, at least one
    multiple, otherwise as many as :data:`INDEX_BLOCK_BYTES` holds (all B if they fit)."""
    _check_sizes(n, n_resamples)
    fits = INDEX_BLOCK_BYTES // (8 * n * multiple)
    return multiple * max(1, min(fits, -(-n_resamples // multiple)))


def resample_blocks(
    n: int, n_resamples: int, seed: int, rows: int | None = None
) -> Iterator[NDArray[np.int64]]:
    """The rows of ``resample_indices(n, n_resamples, seed)``, ``rows`` at a time.

    One Generator draws (rows, n) blocks one after another. numpy's ``integers`` takes
    its values from the bit stream in order, carrying any half-used word in the
    Generator's state, so the blocks stacked are the one (B, n) draw, bit for bit (the
    tests check it for block sizes that do and do not divide B). At most ``rows`` x n
    indices are held at once; ``rows`` defaults to :func:`block_rows`.
    """
    rows = block_rows(n, n_resamples) if rows is None else rows
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    _check_sizes(n, n_resamples)
    rng = np.random.default_rng(seed)
    for first in range(0, n_resamples, rows):
        yield rng.integers(0, n, size=(min(rows, n_resamples - first), n))


def _check_sizes(n: int, n_resamples: int) -> None:
    if n < 1 or n_resamples < 1:
        raise ValueError(f"need n >= 1 and n_resamples >= 1, got n={n}, n_resamples={n_resamples}")


def multiplicities(indices: ArrayLike, n: int) -> NDArray[np.float64]:
    """Draw counts per item for each resample: row b is ``bincount(indices[b], minlength=n)``."""
    idx = np.asarray(indices)
    if idx.ndim == 1:
        idx = idx[None, :]
    if idx.ndim != 2:
        raise ValueError(f"indices must be (n_resamples, size), got shape {idx.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"indices must lie in [0, {n}), got range [{idx.min()}, {idx.max()}]")
    return _row_counts(idx, n).astype(np.float64)


def _row_counts(idx: NDArray[np.int64], n: int) -> NDArray[np.intp]:
    """Integer draw counts laid out resamples x items: row b is ``bincount(idx[b])``."""
    rows = idx.shape[0]
    # Counting row by row keeps the writes local.
    flat = (idx + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n)


def draw_counts(idx: NDArray[np.int64], n: int) -> NDArray[np.float64]:
    """Draw counts laid out items x resamples: ``counts[i, b]`` = draws of item i in b."""
    # One transposing copy lays the row-by-row counts out items x resamples.
    return np.ascontiguousarray(_row_counts(idx, n).T, dtype=np.float64)


def count_blocks(
    n: int, n_resamples: int, seed: int, rows: int | None = None
) -> Iterator[NDArray[np.float64]]:
    """``multiplicities(block, n).T`` for each block of ``resample_blocks(n, n_resamples,
    seed, rows)``, bit for bit and in the same memory layout (each resample's counts
    contiguous, so the matrix products that use them sum in the same order).

    The counts come from :data:`DRAWN` when they fit (drawn and counted once for every
    bootstrap of the same n, B and seed), else each block is drawn and counted as before.
    """
    rows = block_rows(n, n_resamples) if rows is None else rows
    drawn = drawn_counts(n, n_resamples, seed)
    if drawn is None:
        for block in resample_blocks(n, n_resamples, seed, rows):
            yield multiplicities(block, n).T
        return
    for first in range(0, n_resamples, rows):
        part = drawn[:, first : first + rows]
        yield np.array(part.T, dtype=np.float64, order="C").T


def check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    return float(confidence)


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    return alternative


def percentile_ci(samples: ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """Equal-tailed percentile interval of bootstrap ``samples``.

    The alpha and 1 - alpha quantiles, alpha = (1 - confidence) / 2, with linear
    interpolation: what ``scipy.stats.bootstrap(method="percentile")`` computes.
    """
    alpha = (1.0 - check_confidence(confidence)) / 2.0
    lo, hi = np.quantile(np.asarray(samples, dtype=np.float64), [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def bootstrap_p(deltas: ArrayLike, alternative: str = "greater") -> float:
    """One- or two-sided bootstrap p of resampled differences (definition in module doc)."""
    d = np.asarray(deltas, dtype=np.float64)
    b = d.size
    greater = (1.0 + np.count_nonzero(d <= 0)) / (b + 1.0)
    less = (1.0 + np.count_nonzero(d >= 0)) / (b + 1.0)
    if check_alternative(alternative) == "greater":
        return float(greater)
    if alternative == "less":
        return float(less)
    return float(min(1.0, 2.0 * min(greater, less)))


@dataclass(frozen=True)
class BootstrapResult:
    """A paired difference between two arms with its bootstrap CI and p.

    Attributes:
        metric: ``spearman``, ``kendall_b``, ``partial_spearman`` or the caller's name.
        estimate_a, estimate_b: each arm's metric on the full sample.
        delta: estimate_a - estimate_b.
        ci_low, ci_high: percentile interval of the resampled delta.
        p: bootstrap p in the direction of ``alternative``.
        n: items (images).
        n_resamples: resamples used (after dropping undefined ones).
        alternative: ``greater`` (a beats b), ``less`` or ``two-sided``.
        confidence: the interval's level.
    """

    metric: str
    estimate_a: float
    estimate_b: float
    delta: float
    ci_low: float
    ci_high: float
    p: float
    n: int
    n_resamples: int
    alternative: str
    confidence: float

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels`` (arm names...)."""
        return {**labels, **asdict(self)}


def summarize_paired(
    resampled_a: ArrayLike,
    resampled_b: ArrayLike,
    estimate_a: float,
    estimate_b: float,
    *,
    metric: str,
    n: int,
    alternative: str = "greater",
    confidence: float = 0.95,
) -> BootstrapResult:
    """Build a :class:`BootstrapResult` from two arms' resampled metrics.

    Use it with :func:`bootstrap_arms` when many arms are compared: each arm's resampled
    metric is computed once, and any two columns (same seed, hence same resamples) give a
    paired difference.
    """
    check_alternative(alternative)
    deltas = np.asarray(resampled_a, dtype=np.float64) - np.asarray(resampled_b, dtype=np.float64)
    kept = deltas[np.isfinite(deltas)]
    if kept.size < deltas.size:
        warnings.warn(
            f"{deltas.size - kept.size} of {deltas.size} resamples left the {metric} "
            "undefined (a constant resampled arm) and were dropped",
            RuntimeWarning,
            stacklevel=2,
        )
    if kept.size == 0:
        raise ValueError(f"the {metric} is undefined on every resample")
    low, high = percentile_ci(kept, confidence)
    return BootstrapResult(
        metric=metric,
        estimate_a=float(estimate_a),
        estimate_b=float(estimate_b),
        delta=float(estimate_a) - float(estimate_b),
        ci_low=low,
        ci_high=high,
        p=bootstrap_p(kept, alternative),
        n=int(n),
        n_resamples=int(kept.size),
        alternative=alternative,
        confidence=float(confidence),
    )


Draws = tuple[int, int]
"""(n_resamples, seed): the resamples of :func:`resample_indices`, drawn block by block."""


def _count_chunks(
    n: int,
    indices: ArrayLike | None,
    weights: ArrayLike | None,
    cells: int = _CHUNK_CELLS,
    draws: Draws | None = None,
) -> tuple[int, Iterator[Callable[[], NDArray[np.float64]]]]:
    """Number of resamples, and a maker of each chunk's draw counts (items x resamples).

    Advancing the iterator does what must stay in order (drawing the next block of
    indices); calling a maker does the rest (counting its chunk), so a worker thread may
    call it. With ``draws`` the indices are drawn a block at a time
    (:func:`resample_blocks`). A block holds whole chunks, so the chunks are the arrays that
    the (B, n) indices of :func:`resample_indices` give: the same numbers, bit for bit, in
    O(block x n) memory.
    """
    if draws is None and (indices is None) == (weights is None):
        raise ValueError("give exactly one of indices= or weights=")
    if draws is not None and (indices is not None or weights is not None):
        raise ValueError("give draws= alone, without indices= or weights=")
    rows = max(1, cells // max(n, 1))
    makers: Iterator[Callable[[], NDArray[np.float64]]]
    if draws is not None and (drawn := drawn_counts(n, *draws)) is not None:
        total = draws[0]
        makers = (
            _maker(np.ascontiguousarray, drawn[:, i : i + rows], dtype=np.float64)
            for i in range(0, total, rows)
        )
    elif draws is not None:
        total, seed = draws
        blocks = resample_blocks(n, total, seed, block_rows(n, total, rows))
        makers = (
            _maker(draw_counts, block[i : i + rows], n)
            for block in blocks
            for i in range(0, len(block), rows)
        )
    elif indices is not None:
        idx = np.asarray(indices)
        if idx.ndim == 1:
            idx = idx[None, :]
        if idx.ndim != 2:
            raise ValueError(f"indices must be (n_resamples, size), got shape {idx.shape}")
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(f"indices must lie in [0, {n}), got [{idx.min()}, {idx.max()}]")
        total = idx.shape[0]
        makers = (_maker(draw_counts, idx[i : i + rows], n) for i in range(0, total, rows))
    else:
        counts = as_counts(weights, n)
        total = counts.shape[1]
        makers = (_maker(lambda c: c, counts[:, i : i + rows]) for i in range(0, total, rows))
    return total, makers


def _maker(fn: Callable[..., NDArray[np.float64]], *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """``fn(*args, **kwargs)``, deferred (its arguments bound now, not at the call)."""
    return lambda: fn(*args, **kwargs)


def chunk_threads(n: int) -> int:
    """Worker threads that score a bootstrap's chunks of ``n`` items: one below
    :data:`THREADED_ITEMS`, else the cores this process may use, at most
    ``OMP_NUM_THREADS`` where that is set (the usual cap on a numeric library's threads)."""
    if n < THREADED_ITEMS:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cap = os.environ.get("OMP_NUM_THREADS", "").strip()
    limit = int(cap) if cap.isdigit() and int(cap) > 0 else cores or 1
    return max(1, min(cores or 1, limit))


def map_chunks(
    score: Callable[[Any], Any],
    makers: Iterable[Callable[[], Any]],
    threads: int,
    in_flight: int | None = None,
) -> Iterator[Any]:
    """``score(make())`` for each maker, in the makers' order.

    With one thread everything runs here, one chunk at a time. With more, the makers are
    taken in order on this thread (so a draw that must stay in sequence does) and each
    maker and its score run on a worker, at most ``in_flight`` chunks ahead of the one
    being read. The first error of a chunk is raised here, and the chunks not yet started
    are cancelled.
    """
    if threads <= 1:
        for make in makers:
            yield score(make())
        return
    limit = max(1, in_flight or _IN_FLIGHT)
    pending: deque[Future[Any]] = deque()
    with ThreadPoolExecutor(threads, thread_name_prefix="bootstrap") as pool:
        try:
            for make in makers:
                pending.append(pool.submit(lambda m=make: score(m())))
                if len(pending) >= limit:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def drawn_counts(n: int, n_resamples: int, seed: int) -> NDArray[np.unsignedinteger] | None:
    """All the draw counts of ``resample_indices(n, n_resamples, seed)``, items x
    resamples, from :data:`DRAWN` or drawn once and kept there; None when they are larger
    than the memo holds (the caller then draws them a block at a time).

    Column b is row b's ``bincount``: the chunks :func:`_count_chunks` cuts from it are the
    float arrays :func:`draw_counts` makes of the same resamples, bit for bit.
    """
    _check_sizes(n, n_resamples)
    dtype = np.min_scalar_type(n)
    if not DRAWN.enabled or n * n_resamples * dtype.itemsize > DRAWN.max_bytes:
        return None
    key = digest("draw counts", n, n_resamples, seed)
    stored = DRAWN.get(key)
    if stored is None:
        stored = np.empty((n, n_resamples), dtype=dtype)
        start = 0
        for block in resample_blocks(n, n_resamples, seed):
            rows = block.shape[0]
            stored[:, start : start + rows] = _row_counts(block, n).T
            start += rows
        DRAWN.put(key, stored)
    return stored


def _arms_matrix(arms: Mapping[str, ArrayLike] | ArrayLike, n: int) -> tuple[list[str], NDArray]:
    """Arms as names and an (m, n) array; a 2-D input is one arm per row."""
    if isinstance(arms, Mapping):
        names = [str(k) for k in arms]
        rows = [as_vector(v, f"arm {k!r}") for k, v in arms.items()]
    else:
        mat = np.asarray(arms, dtype=np.float64)
        if mat.ndim == 1:
            mat = mat[None, :]
        if mat.ndim != 2:
            raise ValueError(f"arms must be a dict or an (m, n) array, got shape {mat.shape}")
        names = [str(j) for j in range(mat.shape[0])]
        rows = [as_vector(r, f"arm {j}") for j, r in enumerate(mat)]
    if not rows:
        raise ValueError("no arms given")
    for name, row in zip(names, rows, strict=True):
        if row.size != n:
            raise ValueError(f"arm {name!r} has {row.size} values but y has {n}")
    return names, np.vstack(rows)


def _resampled_arms(
    y: NDArray[np.float64],
    arms: NDArray[np.float64],
    metric: str,
    indices: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    draws: Draws | None = None,
    threads: int | None = None,
) -> NDArray[np.float64]:
    """(n_resamples, m) metric of every arm against ``y`` on every resample.

    Spearman's chunks are scored on ``threads`` workers (default :func:`chunk_threads`);
    Kendall's, whose pair signs go through matrix products, on this thread.
    """
    n = y.size
    cells = _KENDALL_CHUNK_CELLS if metric == "kendall_b" else _CHUNK_CELLS
    total, makers = _count_chunks(n, indices, weights, cells, draws)
    out = np.empty((total, arms.shape[0]))
    y_ties = TieGroups(y)
    x_ties = [TieGroups(a) for a in arms]
    pair_signs = [PairSigns(y, a) for a in arms] if metric == "kendall_b" else []
    key = _target_key(y, draws, cells) if metric == "spearman" else None
    kept = _kept_targets(key, n, total, cells)
    keep = key is not None and not kept

    def score(chunk: tuple[int, NDArray[np.float64]]) -> tuple[NDArray, RankedTarget | None]:
        k, counts = chunk
        block = np.empty((counts.shape[1], len(x_ties)))
        if metric == "spearman":
            target = kept[k] if kept else RankedTarget(y_ties, counts)
            for j, ties in enumerate(x_ties):
                block[:, j] = target.spearman(ties, counts)
            return block, target if keep else None
        ty = y_ties.tied_pairs(counts)
        for j, ties in enumerate(x_ties):
            cd = pair_signs[j].con_minus_dis(counts)
            block[:, j] = tau_b_from_parts(counts, cd, ty, ties.tied_pairs(counts))
        return block, None

    if metric != "spearman":
        threads = 1
    numbered = (_maker(lambda k, m: (k, m()), k, make) for k, make in enumerate(makers))
    made: list[RankedTarget] = []  # kept for the next bootstrap of this target
    start = 0
    for block, target in map_chunks(score, numbered, threads or chunk_threads(n)):
        out[start : start + block.shape[0]] = block
        start += block.shape[0]
        if target is not None:
            made.append(target)
    if keep:
        _keep_targets(key, made, n)
    return out


def _target_key(y: NDArray[np.float64], draws: Draws | None, cells: int) -> str | None:
    """The :data:`TARGETS` key of ``y`` on ``draws`` cut in chunks of ``cells`` (None: the
    resamples were given, not drawn, or the target is too large to keep)."""
    if draws is None or not TARGETS.enabled or 8 * y.size * draws[0] > TARGETS.max_bytes:
        return None
    return digest("spearman target", y, *draws, cells)


def _kept_targets(key: str | None, n: int, total: int, cells: int) -> list[RankedTarget]:
    """The chunks' targets :func:`_keep_targets` kept under ``key``, as they were made
    (each chunk's array its own contiguous copy), or an empty list."""
    weighted = TARGETS.get(key) if key is not None else None
    sum_sq = TARGETS.get(key + " sum_sq") if weighted is not None else None
    if weighted is None or sum_sq is None:
        return []
    rows = max(1, cells // max(n, 1))
    return [
        RankedTarget.kept(
            np.ascontiguousarray(weighted[k, :, : min(rows, total - first)]),
            sum_sq[first : first + rows].copy(),
        )
        for k, first in enumerate(range(0, total, rows))
    ]


def _keep_targets(key: str, made: list[RankedTarget], n: int) -> None:
    """Keep the chunks' targets under ``key``: their weighted ranks stacked chunk by chunk
    (the last chunk padded), their sums of squares end to end."""
    rows = made[0].weighted.shape[1]
    weighted = np.zeros((len(made), n, rows))
    for k, target in enumerate(made):
        weighted[k, :, : target.weighted.shape[1]] = target.weighted
    TARGETS.put(key, weighted)
    TARGETS.put(key + " sum_sq", np.concatenate([t.sum_sq for t in made]))


def resampled_metric(
    y: ArrayLike,
    x: ArrayLike,
    metric: str = "spearman",
    *,
    indices: ArrayLike | None = None,
    weights: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """The metric of ``x`` against ``y`` on each resample.

    Args:
        y, x: paired samples (n,).
        metric: ``spearman`` or ``kendall_b``.
        indices: (n_resamples, size) drawn item indices (e.g. :func:`resample_indices`);
            or
        weights: (n_resamples, n) draw counts (e.g. :func:`multiplicities`).

    Returns:
        (n_resamples,) values equal to scipy's on ``y[idx]``, ``x[idx]``; NaN where the
        resample leaves a variable constant.
    """
    yv, xv = as_pair(y, x)
    return _resampled_arms(yv, xv[None, :], check_metric(metric), indices, weights)[:, 0]


def bootstrap_arms(
    y: ArrayLike,
    arms: Mapping[str, ArrayLike] | ArrayLike,
    metric: str = "spearman",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> NDArray[np.float64]:
    """Each arm's metric against ``y`` on the resamples of ``resample_indices(n, B, seed)``.

    Args:
        y: the human mean (n,).
        arms: a dict name -> scores (columns follow its order) or an (m, n) array.
        metric: ``spearman`` or ``kendall_b``.
        n_resamples: B.
        seed: resampling seed; equal seeds give equal resamples, so columns from
            separate calls are paired.

    Returns:
        (n_resamples, m) array; NaN where a resample leaves a variable constant.

    Example:
        A judge's Spearman correlation with the human mean and its 95% percentile interval:

        >>> from judgepanel.stats import spearman
        >>> y = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        >>> judge = [3, 1, 2, 6, 4, 5, 9, 10, 7, 8]
        >>> draws = bootstrap_arms(y, {"judge": judge}, "spearman", n_resamples=200, seed=0)
        >>> draws.shape
        (200, 1)
        >>> low, high = percentile_ci(draws[:, 0])
        >>> print(f"rho = {spearman(y, judge):.3f}, 95% CI [{low:.3f}, {high:.3f}]")
        rho = 0.830, 95% CI [0.452, 0.963]
    """
    yv = as_vector(y, "y")
    _, mat = _arms_matrix(arms, yv.size)
    metric = check_metric(metric)
    _check_sizes(yv.size, n_resamples)
    keys = [digest(metric, n_resamples, seed, yv, row) for row in mat]

    def compute(rows: list[int]) -> NDArray[np.float64]:
        return _resampled_arms(yv, mat[rows], metric, draws=(n_resamples, seed))

    return _memoised_columns(keys, compute, n_resamples)


def _memoised_columns(
    keys: list[str], compute: Callable[[list[int]], NDArray[np.float64]], n_resamples: int
) -> NDArray[np.float64]:
    """(n_resamples, len(keys)) columns, each from :data:`RESAMPLED` or computed once.

    ``compute(rows)`` gives the columns of the arms at positions ``rows``; an arm's
    column depends on its own key's inputs only, so computing it alone or in company
    gives the same numbers.
    """
    out = np.empty((n_resamples, len(keys)))
    todo: dict[str, list[int]] = {}  # key -> the columns it fills, each computed once
    for j, key in enumerate(keys):
        column = RESAMPLED.get(key) if key not in todo else None
        if column is None:
            todo.setdefault(key, []).append(j)
        else:
            out[:, j] = column
    if todo:
        fresh = compute([cols[0] for cols in todo.values()])
        for i, (key, cols) in enumerate(todo.items()):
            out[:, cols] = fresh[:, [i]]
            RESAMPLED.put(key, fresh[:, i])
    return out


def paired_bootstrap(
    y: ArrayLike,
    a: ArrayLike,
    b: ArrayLike,
    metric: str = "spearman",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    alternative: str = "greater",
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap of metric(y, a) - metric(y, b) over items.

    Both arms are scored on the same resampled items. CI and p as defined in the module
    docstring: percentile interval; for ``greater``, p = (1 + #{delta* <= 0}) / (B + 1).

    Args:
        y: the human mean (n,).
        a, b: the two arms' scores (n,); the claim under ``greater`` is that a beats b.
        metric: ``spearman`` or ``kendall_b``.
        n_resamples: B (10,000 in the studies).
        seed: resampling seed.
        alternative: ``greater``, ``less`` or ``two-sided``.
        confidence: level of the percentile interval.

    Example:
        Does judge ``a`` rank the images more like the people than judge ``b`` does?

        >>> y = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        >>> a = [2, 1, 4, 3, 6, 5, 8, 7, 10, 9]
        >>> b = [3, 1, 2, 6, 4, 5, 9, 10, 7, 8]
        >>> res = paired_bootstrap(y, a, b, "spearman", n_resamples=200, seed=0)
        >>> print(f"delta = {res.delta:.3f} [{res.ci_low:.3f}, {res.ci_high:.3f}], p = {res.p:.3f}")
        delta = 0.109 [-0.164, 0.453], p = 0.234
    """
    yv, av = as_pair(y, a, ("y", "a"))
    _, bv = as_pair(y, b, ("y", "b"))
    check_alternative(alternative)
    check_metric(metric)
    samples = bootstrap_arms(yv, np.vstack([av, bv]), metric, n_resamples=n_resamples, seed=seed)
    return summarize_paired(
        samples[:, 0],
        samples[:, 1],
        correlate(yv, av, metric),
        correlate(yv, bv, metric),
        metric=metric,
        n=yv.size,
        alternative=alternative,
        confidence=confidence,
    )


@dataclass(frozen=True)
class MaxStatResult:
    """The best of m candidates against one comparator, with a max-statistic p.

    Attributes:
        metric: ``spearman`` or ``kendall_b``.
        best: name (or row index) of the candidate with the largest delta.
        estimate_best, estimate_comparator: their metrics on the full sample.
        delta: estimate_best - estimate_comparator.
        p: max-statistic p, corrected for having picked the best of ``m``.
        p_naive: the best candidate's ordinary bootstrap p, as if it had been chosen
            in advance (for comparison only).
        m: number of candidates.
        n: items.
        n_resamples: resamples used.
        alternative: ``greater`` (best beats comparator) or ``less`` (worst below it).
    """

    metric: str
    best: str
    estimate_best: float
    estimate_comparator: float
    delta: float
    p: float
    p_naive: float
    m: int
    n: int
    n_resamples: int
    alternative: str

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The result as one table row, after any identifying ``labels``."""
        return {**labels, **asdict(self)}


def max_statistic_p(
    y: ArrayLike,
    candidates: Mapping[str, ArrayLike] | ArrayLike,
    comparator: ArrayLike,
    metric: str = "spearman",
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    alternative: str = "greater",
) -> MaxStatResult:
    """Max-statistic bootstrap p for "the best of m candidates beats the comparator".

    With delta_j = metric(y, c_j) - metric(y, comparator), the observed statistic is
    T = max_j delta_j. Its null distribution is the bootstrap of the centred maximum,
    T*_b = max_j (delta*_bj - delta_j): every candidate is moved to a true delta of
    zero while keeping the joint resampling variation of all m deltas, so the test pays
    for the selection. p = (1 + #{T*_b >= T}) / (B + 1). The p is never below the one
    the same centred test gives the best candidate alone. ``alternative="less"`` applies
    the same to -delta (the worst candidate falls below the comparator).

    Args:
        y: the human mean (n,).
        candidates: dict name -> scores, or an (m, n) array.
        comparator: the comparator's scores (n,).
        metric: ``spearman`` or ``kendall_b``.
        n_resamples: B.
        seed: resampling seed (the same resamples as :func:`paired_bootstrap`).
        alternative: ``greater`` or ``less``.
    """
    if alternative not in ("greater", "less"):
        raise ValueError(f"alternative must be 'greater' or 'less', got {alternative!r}")
    yv = as_vector(y, "y")
    _, cv = as_pair(yv, comparator, ("y", "comparator"))
    names, mat = _arms_matrix(candidates, yv.size)
    m = mat.shape[0]
    samples = bootstrap_arms(
        yv, np.vstack([mat, cv]), check_metric(metric), n_resamples=n_resamples, seed=seed
    )
    kept = samples[np.all(np.isfinite(samples), axis=1)]
    if kept.shape[0] < samples.shape[0]:
        warnings.warn(
            f"{samples.shape[0] - kept.shape[0]} resamples left a {metric} undefined "
            "and were dropped",
            RuntimeWarning,
            stacklevel=2,
        )
    estimates = np.array([correlate(yv, row, metric) for row in mat])
    est_cmp = correlate(yv, cv, metric)
    sign = 1.0 if alternative == "greater" else -1.0
    observed = sign * (estimates - est_cmp)
    resampled = sign * (kept[:, :m] - kept[:, [m]])
    best = int(np.argmax(observed))
    null = (resampled - observed).max(axis=1)
    p = (1.0 + np.count_nonzero(null >= observed[best])) / (kept.shape[0] + 1.0)
    return MaxStatResult(
        metric=metric,
        best=names[best],
        estimate_best=float(estimates[best]),
        estimate_comparator=float(est_cmp),
        delta=float(estimates[best] - est_cmp),
        p=float(p),
        p_naive=bootstrap_p(kept[:, best] - kept[:, m], alternative),
        m=m,
        n=int(yv.size),
        n_resamples=int(kept.shape[0]),
        alternative=alternative,
    )


def paired_bootstrap_stat(
    statistic: Callable[..., tuple[float, float]],
    *arrays: ArrayLike,
    n_resamples: int = 10_000,
    seed: int = 0,
    alternative: str = "greater",
    confidence: float = 0.95,
    metric: str = "statistic",
) -> BootstrapResult:
    """Paired bootstrap of any two-arm statistic, one Python call per resample.

    The general (slow) path, for statistics without a vectorised form. Every array is
    indexed by the same rows of ``resample_indices(n, n_resamples, seed)``, so with the
    same seed it sees the resamples :func:`paired_bootstrap` sees (drawn a block at a time).

    Args:
        statistic: called as ``statistic(*resampled_arrays)``; returns the pair
            (value of arm a, value of arm b); delta = a - b.
        *arrays: arrays sharing their first dimension n (items).
        n_resamples, seed, alternative, confidence: as in :func:`paired_bootstrap`.
        metric: the name written in the result.
    """
    if not arrays:
        raise ValueError("give at least one array to resample")
    data = [np.asarray(arr) for arr in arrays]
    n = data[0].shape[0]
    for j, arr in enumerate(data):
        if arr.shape[0] != n:
            raise ValueError(f"array {j} has {arr.shape[0]} rows but array 0 has {n}")
    check_alternative(alternative)
    est_a, est_b = statistic(*data)
    rows = (row for block in resample_blocks(n, n_resamples, seed) for row in block)
    values = np.array([statistic(*(arr[row] for arr in data)) for row in rows], dtype=np.float64)
    return summarize_paired(
        values[:, 0],
        values[:, 1],
        est_a,
        est_b,
        metric=metric,
        n=n,
        alternative=alternative,
        confidence=confidence,
    )


def _resampled_partials(
    target: NDArray[np.float64],
    arms: NDArray[np.float64],
    covar: NDArray[np.float64],
    indices: ArrayLike | None = None,
    weights: ArrayLike | None = None,
    draws: Draws | None = None,
    threads: int | None = None,
) -> NDArray[np.float64]:
    """(n_resamples, m) partial Spearman of each arm with ``target`` given ``covar``; the
    chunks on ``threads`` workers (default :func:`chunk_threads`)."""
    n = target.size
    total, makers = _count_chunks(n, indices, weights, draws=draws)
    out = np.empty((total, arms.shape[0]))
    shared_ties = [TieGroups(target)] + [TieGroups(c) for c in covar.T]
    arm_ties = [TieGroups(a) for a in arms]
    v = len(shared_ties) + 1

    def score(counts: NDArray[np.float64]) -> NDArray[np.float64]:
        b = counts.shape[1]
        block = np.empty((b, len(arm_ties)))
        shared = [_item_ranks(t, counts) for t in shared_ties]
        weighted = [counts * r for r in shared]
        cov = np.empty((b, v, v))
        for u in range(1, v):
            for k in range(u, v):
                cov[:, u, k] = cov[:, k, u] = _dot(weighted[u - 1], shared[k - 1])
        for j, ties in enumerate(arm_ties):
            rx = _item_ranks(ties, counts)
            for u in range(1, v):
                cov[:, 0, u] = cov[:, u, 0] = _dot(weighted[u - 1], rx)
            cov[:, 0, 0] = _dot(counts * rx, rx)
            block[:, j] = partial_from_covariance(cov)
        return block

    start = 0
    for block in map_chunks(score, makers, threads or chunk_threads(n)):
        out[start : start + block.shape[0]] = block
        start += block.shape[0]
    return out


def _dot(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Column-wise dot products of two (items x resamples) arrays."""
    return np.einsum("ib,ib->b", a, b)


def _item_ranks(ties: TieGroups, counts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each item's centred midrank in every resample: (n, resamples)."""
    ranks, _ = ties.centred_ranks(counts)
    return ranks[ties.group]


def resampled_partial_spearman(
    x: ArrayLike,
    y: ArrayLike,
    covar: ArrayLike,
    *,
    indices: ArrayLike | None = None,
    weights: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """:func:`partial_spearman` of x and y given ``covar`` on each resample.

    Each variable is midranked within the resample (weighted midranks), and the partial
    correlation is read off the inverse of the weighted rank covariance matrix, which
    equals correlating least-squares residuals on the materialised resample.
    """
    xv, yv = as_pair(x, y, ("x", "y"), min_n=3)
    c = as_covariates(covar, xv.size)
    return _resampled_partials(yv, xv[None, :], c, indices, weights)[:, 0]


def bootstrap_partials(
    target: ArrayLike,
    arms: ArrayLike,
    covar: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> NDArray[np.float64]:
    """Each arm's partial Spearman with ``target`` given ``covar`` on the shared resamples.

    The resamples of :func:`resample_indices` (n, B, seed), as every function here uses;
    the ranks of ``target`` and ``covar`` are computed once for all arms, and each arm's
    column is memoised (:data:`RESAMPLED`).

    Args:
        target: the variable every arm is correlated with (n,).
        arms: an (m, n) array, one arm per row.
        covar: (n,) or (n, k) covariates.

    Returns:
        (n_resamples, m); NaN where a resample leaves an arm or the target fully explained.
    """
    tv = as_vector(target, "target")
    _, mat = _arms_matrix(arms, tv.size)
    if tv.size < 3:
        raise ValueError(f"need at least 3 paired values, got {tv.size}")
    c = as_covariates(covar, tv.size)
    _check_sizes(tv.size, n_resamples)
    keys = [digest("partial", n_resamples, seed, tv, c, row) for row in mat]

    def compute(rows: list[int]) -> NDArray[np.float64]:
        return _resampled_partials(tv, mat[rows], c, draws=(n_resamples, seed))

    return _memoised_columns(keys, compute, n_resamples)


def paired_bootstrap_partial(
    target: ArrayLike,
    a: ArrayLike,
    b: ArrayLike,
    covar: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    alternative: str = "greater",
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap of two partial Spearman correlations with one target.

    delta = partial_spearman(a, target | covar) - partial_spearman(b, target | covar); in
    the MTMM analysis ``target`` is a human attribute, ``a`` the matching dimension
    prompt, ``b`` the holistic prompt and ``covar`` the human overall score. Vectorised;
    the same resamples, CI and p as :func:`paired_bootstrap`.
    """
    tv, av = as_pair(target, a, ("target", "a"), min_n=3)
    _, bv = as_pair(target, b, ("target", "b"), min_n=3)
    c = as_covariates(covar, tv.size)
    check_alternative(alternative)
    samples = bootstrap_partials(tv, np.vstack([av, bv]), c, n_resamples=n_resamples, seed=seed)
    return summarize_paired(
        samples[:, 0],
        samples[:, 1],
        partial_spearman(av, tv, c),
        partial_spearman(bv, tv, c),
        metric="partial_spearman",
        n=tv.size,
        alternative=alternative,
        confidence=confidence,
    )
