"""The score distribution a simulated judge samples from: its true log-probabilities.

A rubric answer's score is drawn in two steps from the request's generator:
``Family.perceive`` adds Gaussian noise of sd ``noise * T`` to each perceived dimension,
then ``Family.to_scale`` draws an integer from the softmax of ``Family.score_logits`` at
temperature ``T``. The impression ``z`` is the perceived dimension itself or, for an
overall verdict, ``holistic_z``, which is linear in the dimensions; either way ``z`` is
Gaussian, ``N(z0, s^2)``, with ``z0`` the verdict on the noise-free perception. The
probability of score ``k``, over all of the judge's per-call randomness, is therefore the
one-dimensional integral ``P(k) = E_z[softmax(logits(z) / T)_k]``.

The integrand is smooth and bounded, and in standard-normal units its slope does not grow
as ``T`` falls (``s`` shrinks with ``T`` as fast as the softmax sharpens), so the
trapezoid rule on a fixed grid of ``NODES`` points over ``[-SPAN, SPAN]`` converges
geometrically; its error is far below 1e-9 (``tests/test_sim_logprobs.py`` compares a grid
four times finer). The sum runs in log space, so an unlikely score keeps a finite
log-probability, and through ``judgepanel_sim.portable`` in a fixed order, so the bytes
are the same on every machine. No random number is drawn: the request's generator, and
so its sampled answer, is untouched.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from judgepanel_sim import portable as P
from judgepanel_sim.judges.families import Family, IdentityMemo

NODES = 161
"""Grid points of the trapezoid rule (a step of 0.1 standard deviations)."""

SPAN = 8.0
"""Half-width of the grid in standard deviations (the Gaussian's mass beyond is ~1e-15)."""

LOGPROB_FLOOR = -9999.0
"""The log-probability reported for a score the judge cannot sample (temperature 0)."""

_MEMO = IdentityMemo(8192)  # (family, features) x (digest, dimension, lo, hi, temperature)
_WORKED_OUT = IdentityMemo(4096)  # (family,) x (z0, sd, lo, hi, temperature, nodes)


@dataclass(frozen=True)
class ScoreMarginal:
    """The log-probability of each integer score ``lo .. lo + len(logprobs) - 1``."""

    lo: int
    logprobs: tuple[float, ...]

    @property
    def hi(self) -> int:
        return self.lo + len(self.logprobs) - 1

    def logprob(self, score: int) -> float:
        """``log P(score)``, ``LOGPROB_FLOOR`` at least (and outside the scale)."""
        if not self.lo <= score <= self.hi:
            return LOGPROB_FLOOR
        return max(self.logprobs[score - self.lo], LOGPROB_FLOOR)

    def probabilities(self) -> dict[int, float]:
        """Score -> probability."""
        return {self.lo + i: P.exp_scalar(lp) for i, lp in enumerate(self.logprobs)}

    def top(self, n: int) -> list[tuple[int, float]]:
        """The ``n`` most likely scores with their log-probabilities, most likely first
        (ties: the lower score first)."""
        ranked = sorted(range(len(self.logprobs)), key=lambda i: (-self.logprobs[i], i))
        return [(self.lo + i, self.logprob(self.lo + i)) for i in ranked[:n]]


@lru_cache(maxsize=4)
def _grid(nodes: int = NODES) -> tuple[np.ndarray, np.ndarray]:
    """The nodes in standard-normal units and the log of their normalised weights."""
    step = 2.0 * SPAN / (nodes - 1)
    x = np.array([-SPAN + j * step for j in range(nodes)])
    log_w = -0.5 * x * x
    return x, log_w - P.log_scalar(P.sum_in_order(P.exp(log_w)))


def _log_softmax(logits: list[float], temperature: float) -> np.ndarray:
    a = np.array(logits)
    a = (a - a.max()) / temperature
    return a - P.log_scalar(P.sum_in_order(P.exp(a)))


def _log_softmax_rows(logits: np.ndarray, temperature: float) -> np.ndarray:
    """`_log_softmax` of every row at once, bit for bit: each row's exponentials are
    added left to right, as `judgepanel_sim.portable.sum_in_order` adds them."""
    a = (logits - logits.max(axis=1, keepdims=True)) / temperature
    e = P.exp(a)
    total = np.zeros(len(a))
    for j in range(a.shape[1]):
        total = total + e[:, j]
    return a - P.log(total)[:, None]


def score_marginal(
    family: Family,
    features: Mapping[str, float],
    digest: str,
    dimension: str | None,
    lo: int,
    hi: int,
    temperature: float,
) -> ScoreMarginal:
    """The distribution of the score ``family`` samples for one image and prompt.

    Args:
        family: the judge.
        features: ``perception.features`` of the image.
        digest: the image's content digest (fixes the judge's systematic error).
        dimension: the rubric dimension asked for, or None for an overall verdict.
        lo, hi: the answer scale.
        temperature: the request's sampling temperature.
    """
    extra = (digest, dimension, lo, hi, temperature)
    memo = _MEMO.get((family, features), extra)
    if memo is None:
        memo = _marginal(family, features, digest, dimension, lo, hi, temperature)
        _MEMO.put((family, features), extra, memo)
    return memo


def _marginal(
    family: Family,
    features: Mapping[str, float],
    digest: str,
    dimension: str | None,
    lo: int,
    hi: int,
    temperature: float,
    nodes: int = NODES,
) -> ScoreMarginal:
    if hi <= lo:
        return ScoreMarginal(lo, (0.0,))
    z0, sd = family.impression(features, digest, dimension, temperature)
    return gaussian_marginal(family, z0, sd, lo, hi, temperature, nodes)


def gaussian_marginal(
    family: Family,
    z0: float,
    sd: float,
    lo: int,
    hi: int,
    temperature: float,
    nodes: int = NODES,
) -> ScoreMarginal:
    """The score distribution for an impression ``z ~ N(z0, sd^2)`` put on [lo, hi] by
    ``family``'s scale use: what any handler that samples ``z`` that way, then calls
    ``Family.to_scale``, draws from."""
    if hi <= lo:
        return ScoreMarginal(lo, (0.0,))
    if temperature <= 0:
        logits = family.score_logits(z0, lo, hi)
        best = logits.index(max(logits))
        return ScoreMarginal(lo, tuple(0.0 if i == best else -math.inf for i in range(len(logits))))
    found = _WORKED_OUT.get((family,), (z0, sd, lo, hi, temperature, nodes))
    if found is not None:
        return found
    return _gaussian_rows(family, [z0], [sd], lo, hi, temperature, nodes)[0]


Impression = tuple[Family, float, float, int, int, float]
"""What :func:`gaussian_marginal` integrates: the family, the impression's mean and sd,
the scale's ends and the temperature."""


def precompute(impressions: Iterable[Impression], nodes: int = NODES) -> None:
    """Work out the score distributions of several impressions at once, so that the
    :func:`gaussian_marginal` of each that follows finds it made.

    A batch's slice of logprob lines then takes one set of array operations per family
    and scale instead of one per line (for a slice of eight, a third less time a line:
    the per-call cost of numpy's small-array operations). Every operation on the grid is
    elementwise or runs along one line's own rows, so each distribution has the bits it
    has alone (``tests/test_sim_logprobs.py`` compares).
    """
    groups: dict[tuple[int, int, int, float], list[Impression]] = {}
    for imp in impressions:
        family, z0, sd, lo, hi, temperature = imp
        if hi <= lo or temperature <= 0:
            continue
        if _WORKED_OUT.get((family,), (z0, sd, lo, hi, temperature, nodes)) is None:
            groups.setdefault((id(family), lo, hi, temperature), []).append(imp)
    for group in groups.values():
        family, _, _, lo, hi, temperature = group[0]
        z0s, sds = [imp[1] for imp in group], [imp[2] for imp in group]
        made = _gaussian_rows(family, z0s, sds, lo, hi, temperature, nodes)
        for (_, z0, sd, _, _, _), marginal in zip(group, made, strict=True):
            _WORKED_OUT.put((family,), (z0, sd, lo, hi, temperature, nodes), marginal)


def _gaussian_rows(
    family: Family,
    z0s: Sequence[float],
    sds: Sequence[float],
    lo: int,
    hi: int,
    temperature: float,
    nodes: int,
) -> list[ScoreMarginal]:
    """The distribution of each impression ``N(z0s[i], sds[i]^2)`` (``hi > lo``,
    ``temperature > 0``): every grid stacked in one (impression x node, score) array."""
    x, log_w = _grid(nodes)
    means = np.asarray(z0s, dtype=np.float64)[:, None]
    spreads = np.asarray(sds, dtype=np.float64)[:, None]
    z = means + spreads * x  # (impression, node): each row z0 + sd * x
    logits = family.score_logits_grid(z.ravel(), lo, hi)  # (impression x node, score)
    log_p = _log_softmax_rows(logits, temperature).reshape(len(z0s), nodes, -1)
    return _integrate(log_p, log_w, lo)


def node_log_softmax(
    family: Family, z0: float, sd: float, lo: int, hi: int, temperature: float, nodes: int = NODES
) -> np.ndarray:
    """The (node, score) log-softmax node by node, as `Family.to_scale` sees each impression:
    the reference the whole-grid path of `_marginal` is tested and benchmarked against."""
    x, _ = _grid(nodes)
    rows = [_log_softmax(family.score_logits(z0 + sd * float(v), lo, hi), temperature) for v in x]
    return np.stack(rows)


def _integrate(log_p: np.ndarray, log_w: np.ndarray, lo: int) -> list[ScoreMarginal]:
    """The trapezoid sum of each impression's grid of probabilities (``log_p``:
    impression, node, score) in log space, node by node in order."""
    terms = log_p + log_w[None, :, None]  # log weight + log p
    top = terms.max(axis=1)  # (impression, score)
    # per impression and score, node by node in order: an accumulation adds left to right,
    # as `judgepanel_sim.portable.matvec` would, without a Python loop over the nodes
    mass = np.add.accumulate(P.exp(terms - top[:, None, :]), axis=1)[:, -1]
    return [ScoreMarginal(lo, tuple(row)) for row in (top + P.log(mass)).tolist()]
