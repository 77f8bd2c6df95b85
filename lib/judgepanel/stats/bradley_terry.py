"""Bradley-Terry scores from paired comparisons, with a ridge penalty.

The model: item i beats item j with probability sigma(s_i - s_j), sigma the logistic
function. Each comparison carries ``y``, the share of the win that goes to its first
item: 1 (the first won), 0 (the second won) or 0.5 (a tie). A tie is half a win each,
the usual way a Bradley-Terry fit without a tie parameter counts it: its likelihood term
is ``0.5 log sigma(d) + 0.5 log sigma(-d)``, pulling the two scores together. The fit
maximises

    sum_c w_c [y_c log sigma(s_a - s_b) + (1 - y_c) log sigma(s_b - s_a)] - alpha/2 |s|^2

which is a logistic regression without intercept on the design x = e_a - e_b (+1 for the
first item, -1 for the second), its labels weighted y and 1 - y, with an L2 penalty of
``alpha`` (scikit-learn's ``C = 1 / alpha``); the penalty makes the scores unique (they
are otherwise defined up to a constant) and finite for an item that won or lost every
comparison. The optimum is found by Newton's method on the exact Hessian (a Cholesky solve
per step, halved while the objective does not fall), until a step moves no score by 1e-11.
The tests hold it to choix's penalised fit and to scikit-learn's logistic regression, each
to 1e-6.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit, log_expit

DEFAULT_ALPHA = 0.01
"""The ridge penalty: light, so that the scores follow the data, yet always finite."""


@dataclass(frozen=True)
class BTFit:
    """A Bradley-Terry fit: one score per item and its standard error.

    Attributes:
        scores: the log-strengths, one per item (mean near 0 under the penalty).
        se: the square root of the diagonal of the inverse penalised Hessian (a Laplace
            approximation of each score's uncertainty; what adaptive pair choice reads).
        n_comparisons: per item, how many comparisons (total weight) it took part in.
    """

    scores: np.ndarray
    se: np.ndarray
    n_comparisons: np.ndarray


def _design(n_items: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = np.zeros((a.size, n_items))
    rows = np.arange(a.size)
    x[rows, a] = 1.0
    x[rows, b] = -1.0
    return x


def _newton(loss, grad, hess, s: np.ndarray, tol: float = 1e-11, max_iter: int = 100):
    """Newton's method with step halving on a smooth strictly convex ``loss``: the step
    solves the exact Hessian (positive definite under the ridge) by Cholesky."""
    value = loss(s)
    for _ in range(max_iter):
        step = cho_solve(cho_factor(hess(s)), grad(s))
        if np.abs(step).max() < tol:
            break
        t = 1.0
        while True:
            trial = s - t * step
            new = loss(trial)
            if new <= value or t < 1e-10:
                break
            t /= 2
        s, value = trial, new
    return s


def fit_bradley_terry(
    n_items: int,
    a: np.ndarray,
    b: np.ndarray,
    y: np.ndarray,
    weight: np.ndarray | None = None,
    *,
    alpha: float = DEFAULT_ALPHA,
) -> BTFit:
    """Fit Bradley-Terry scores by penalised maximum likelihood (see the module docstring).

    Args:
        n_items: the number of items; ``a`` and ``b`` index them (0 .. n_items - 1).
        a, b: the first and second item of each comparison.
        y: the first item's share of the win: 1, 0 or 0.5 (a tie).
        weight: each comparison's weight (default 1).
        alpha: the L2 penalty, > 0.

    Raises:
        ValueError: mismatched lengths, an index out of range, an item compared with
            itself, ``y`` outside [0, 1] or ``alpha`` not positive.
    """
    a, b = np.asarray(a, dtype=int), np.asarray(b, dtype=int)
    y = np.asarray(y, dtype=float)
    w = np.ones(a.size) if weight is None else np.asarray(weight, dtype=float)
    if not (a.size == b.size == y.size == w.size):
        raise ValueError("a, b, y and weight must have one entry per comparison")
    if alpha <= 0:
        raise ValueError(f"alpha must be positive, got {alpha}")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_items):
        raise ValueError(f"an item index is outside 0..{n_items - 1}")
    if np.any(a == b):
        raise ValueError("an item is compared with itself")
    if np.any((y < 0) | (y > 1)):
        raise ValueError("y must lie in [0, 1] (1: the first item won, 0.5: a tie)")
    x = _design(n_items, a, b)
    won, lost = w * y, w * (1.0 - y)

    def loss(s: np.ndarray) -> float:
        d = x @ s
        return float(-(won @ log_expit(d) + lost @ log_expit(-d)) + 0.5 * alpha * s @ s)

    def grad(s: np.ndarray) -> np.ndarray:
        p = expit(x @ s)
        return -(x.T @ (won - w * p)) + alpha * s

    def hess(s: np.ndarray) -> np.ndarray:
        p = expit(x @ s)
        return (x.T * (w * p * (1.0 - p))) @ x + alpha * np.eye(n_items)

    scores = _newton(loss, grad, hess, np.zeros(n_items))
    cov = np.linalg.inv(hess(scores))
    counts = np.bincount(a, weights=w, minlength=n_items) + np.bincount(
        b, weights=w, minlength=n_items
    )
    return BTFit(scores, np.sqrt(np.diag(cov)), counts)


def win_probability(scores: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The model's probability that ``a`` beats ``b``, per pair."""
    return expit(np.asarray(scores)[a] - np.asarray(scores)[b])
