"""Mapping a judge's rubric scale onto the people's scale, with the mapping named.

Judges answer on the rubric's scale (say 1-10), people on the dataset's (say 1-5). Rank
metrics do not care, but bias, kappa, alpha, the alternative annotator test and the
judges' errors do, so every such result carries the name of the map it used:

* :class:`LinearMap` sends the rubric scale's ends onto the people's ends
  (``"linear 1-10 -> 1-5"``); nothing is fitted, so nothing leaks from the human scores.
* :class:`IsotonicMap` fits a monotone map from judge score to human mean out of fold
  (``IsotonicRegression`` inside ``KFold(5, shuffle=True, random_state=42)``, through
  ``cross_val_predict``): each image's mapped score comes from a map fitted without it.
* ``None``: the scores are already on the people's scale (``"identity"``).

Kappa needs integer categories: :func:`to_grid` rounds mapped scores half up onto the
people's integer grid and clips them to its ends; results that use it say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.isotonic import IsotonicRegression
from sklearn.model_selection import KFold, cross_val_predict

from judgepanel.stats.correlation import as_pair, as_vector

IDENTITY = "identity"
"""The mapping name of scores used as they are."""


def _range_text(ends: tuple[float, float]) -> str:
    return f"{ends[0]:g}-{ends[1]:g}"


def _check_ends(ends: tuple[float, float], name: str) -> tuple[float, float]:
    lo, hi = (float(v) for v in ends)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo >= hi:
        raise ValueError(f"{name} must be (low, high) with low < high, got {ends}")
    return lo, hi


@dataclass(frozen=True)
class LinearMap:
    """The linear map sending ``source``'s ends onto ``target``'s ends.

    Attributes:
        source: the rubric scale the judge answered on, e.g. (1, 10).
        target: the people's scale, e.g. (1, 5).
    """

    source: tuple[float, float]
    target: tuple[float, float]

    def __post_init__(self) -> None:
        _check_ends(self.source, "source")
        _check_ends(self.target, "target")

    @property
    def name(self) -> str:
        """E.g. ``"linear 1-10 -> 1-5"``."""
        return f"linear {_range_text(self.source)} -> {_range_text(self.target)}"

    def __call__(self, scores: ArrayLike) -> NDArray[np.float64]:
        """Mapped scores; NaN stays NaN (a missing answer stays missing)."""
        s0, s1 = _check_ends(self.source, "source")
        t0, t1 = _check_ends(self.target, "target")
        x = np.asarray(scores, dtype=np.float64)
        return t0 + (x - s0) * ((t1 - t0) / (s1 - s0))


@dataclass(frozen=True)
class IsotonicMap:
    """An increasing map from judge score to human mean, predicted out of fold.

    The map is fitted on the human mean, so it must not see the image it maps: each
    image's value comes from the fold that left it out (the studies' folds: 5, shuffled,
    ``random_state=42``). Increasing, not ``"auto"``: a judge that runs against people
    should show up as such, not be turned round by the map.

    Attributes:
        n_splits: folds.
        seed: ``random_state`` of the fold partition.
    """

    n_splits: int = 5
    seed: int = 42

    @property
    def name(self) -> str:
        """E.g. ``"isotonic out-of-fold (5 folds, seed 42)"``."""
        return f"isotonic out-of-fold ({self.n_splits} folds, seed {self.seed})"

    def fit_predict(self, scores: ArrayLike, human_mean: ArrayLike) -> NDArray[np.float64]:
        """Out-of-fold mapped scores, one per image, in the input order."""
        x, y = as_pair(scores, human_mean, ("scores", "human_mean"), min_n=self.n_splits)
        folds = KFold(n_splits=self.n_splits, shuffle=True, random_state=self.seed)
        model = IsotonicRegression(increasing=True, out_of_bounds="clip")
        return cross_val_predict(model, x[:, None], y, cv=folds).astype(np.float64)


ScaleMap = LinearMap | IsotonicMap | None
"""A scale mapping: linear ends-to-ends, isotonic out of fold, or none (``identity``)."""


@dataclass(frozen=True)
class MappedScores:
    """Scores on the people's scale, with the name of the map that put them there.

    Attributes:
        values: the mapped scores.
        mapping: e.g. ``"linear 1-10 -> 1-5"``, ``"isotonic out-of-fold (5 folds, seed
            42)"`` or ``"identity"``.
    """

    values: NDArray[np.float64]
    mapping: str


def mapping_name(mapping: ScaleMap) -> str:
    """The name a result records for ``mapping``."""
    return IDENTITY if mapping is None else mapping.name


def map_scores(
    scores: ArrayLike, mapping: ScaleMap, human_mean: ArrayLike | None = None
) -> MappedScores:
    """Put judge ``scores`` on the people's scale with ``mapping``.

    Args:
        scores: the judge's scores, one per image.
        mapping: a :class:`LinearMap`, an :class:`IsotonicMap` or None (identity).
        human_mean: the human mean per image, in the same order; needed (and used) only
            by the isotonic map, which is fitted on it.
    """
    if isinstance(mapping, IsotonicMap):
        if human_mean is None:
            raise ValueError("the isotonic map is fitted on the human mean: pass human_mean")
        return MappedScores(mapping.fit_predict(scores, human_mean), mapping.name)
    if isinstance(mapping, LinearMap):
        return MappedScores(mapping(scores), mapping.name)
    if mapping is None:
        return MappedScores(np.asarray(scores, dtype=np.float64).copy(), IDENTITY)
    raise TypeError(f"mapping must be a LinearMap, an IsotonicMap or None, got {mapping!r}")


def to_grid(values: ArrayLike, scale: tuple[int, int]) -> NDArray[np.int64]:
    """Scores rounded half up onto the integer grid ``scale[0] .. scale[1]`` and clipped to it.

    Kappa compares categories, so a mapped judge score (2.4) or a human mean (3.5) must
    become one of the scale's integers first. Half up (3.5 -> 4), not numpy's half to
    even, so that equal distances always round the same way.

    Raises:
        ValueError: on NaN, or if ``scale`` is not two increasing integers.
    """
    lo, hi = scale
    if int(lo) != lo or int(hi) != hi or lo >= hi:
        raise ValueError(f"scale must be two increasing integers, got {scale}")
    x = as_vector(values, "values")
    return np.clip(np.floor(x + 0.5), lo, hi).astype(np.int64)


def grid_note(scale: tuple[int, int]) -> str:
    """How :func:`to_grid` treated the scores, for a result's note."""
    return f"rounded half up to the integer grid {int(scale[0])}-{int(scale[1])}"
