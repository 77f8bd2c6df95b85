"""The alternative annotator test (Calderon, Reichart and Dror, ACL 2025).

Can the judge replace the people? Leave each human annotator j out in turn. On every
instance i that j annotated, score how well the judge and how well j represent the
remaining annotators, S(judge, i) and S(j, i), with an alignment function:

* ``neg_rmse``: minus the root mean squared difference to each remaining annotator's
  score, -sqrt(mean_k (x - a_k)^2) (the authors' code, for numeric scores);
* ``accuracy``: the share of remaining annotators giving exactly the same score (theirs,
  for categories);
* ``abs``: minus the absolute difference to the remaining annotators' mean (ours, not the
  authors': the distance to the consensus rather than to each person).

The judge wins i when S(judge, i) >= S(j, i) and j wins when S(j, i) >= S(judge, i) (a tie
is a win for both). With rho_judge and rho_human the two win rates over j's instances, a
one-sided one-sample t-test of d_i = W_human,i - W_judge,i tests H0: rho_human - rho_judge
>= epsilon against the alternative that it is smaller (``ttest_1samp(d, epsilon,
alternative="less")``). epsilon is the cost-benefit allowance the judge gets for being
cheap; it must be chosen before the data are seen. The p-values of all annotators are
corrected by Benjamini-Yekutieli; the winning rate omega is the share of annotators whose
null is rejected at level q, and the judge passes when omega >= 0.5. The advantage
probability is the mean over annotators of rho_judge: how often the judge is at least as
good as a random annotator, for comparing judges.

Matches the authors' reference implementation (``alt_test`` in ``alt_test_example.ipynb`` of
github.com/nitaytech/AltTest): instances need ``min_annotators_per_item`` annotators
(theirs: ``min_humans_per_instance=2``, the left-out one included) and a judge score; an
annotator is tested only with at least ``min_items_per_annotator`` such instances (theirs:
30, for the t-test's normal approximation). A constant d gives an infinite t (p = 0 below
epsilon, 1 above) or, equal to epsilon, a NaN p (scipy's behaviour); a NaN p is never
rejected but counts among the tests corrected, as in theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from scipy import special
from statsmodels.stats.multitest import multipletests

from judgepanel.stats.ratings import (
    DIMENSION,
    ITEM,
    RATER,
    SCORE,
    check_columns,
    select_dimension,
)
from judgepanel.stats.scale_map import IsotonicMap, ScaleMap, grid_note, map_scores, to_grid

AltMetric = Literal["neg_rmse", "abs", "accuracy"]
ALT_METRICS: tuple[str, ...] = ("neg_rmse", "abs", "accuracy")


@dataclass(frozen=True)
class AltTestResult:
    """The alternative annotator test of one judge.

    Attributes:
        winning_rate: omega, the share of tested annotators whose null was rejected.
        advantage_probability: mean over tested annotators of rho_judge.
        passed: omega >= 0.5.
        epsilon: the cost-benefit allowance.
        metric: the alignment function.
        q: the false discovery rate of the Benjamini-Yekutieli correction.
        mapping: the scale mapping the judge's scores went through (and any rounding).
        n_instances: instances (images, or image-dimension pairs) usable for the test.
        n_annotators: annotators tested.
        skipped: annotators left out for having too few instances.
        per_annotator: one row per tested annotator: ``annotator``, ``n_items``,
            ``rho_judge``, ``rho_human``, ``t``, ``se`` (the standard error of the mean of
            d, the t-test's denominator), ``p``, ``q_by``, ``rejected``.
    """

    winning_rate: float
    advantage_probability: float
    passed: bool
    epsilon: float
    metric: str
    q: float
    mapping: str
    n_instances: int
    n_annotators: int
    skipped: tuple[Any, ...]
    per_annotator: pd.DataFrame = field(repr=False, compare=False)

    def as_row(self, **labels: Any) -> dict[str, Any]:
        """The summary as one table row (without the per-annotator table)."""
        row = {k: v for k, v in self.__dict__.items() if k not in ("per_annotator", "skipped")}
        return {**labels, **row, "n_skipped": len(self.skipped)}


def alignment(
    x: NDArray[np.float64], others: NDArray[np.float64], metric: str
) -> NDArray[np.float64]:
    """S(x, i, others) per instance: how well ``x`` represents the other annotators.

    Args:
        x: one score per instance (n,).
        others: (annotators, n) scores of the remaining annotators, NaN where absent;
            every instance has at least one.
        metric: ``neg_rmse``, ``abs`` or ``accuracy`` (see the module docstring).
    """
    rated = np.isfinite(others)
    count = rated.sum(axis=0)
    if metric == "neg_rmse":
        sq = np.where(rated, (x[None, :] - others) ** 2, 0.0)
        return -np.sqrt(sq.sum(axis=0) / count)
    if metric == "accuracy":
        return np.where(rated, x[None, :] == others, False).sum(axis=0) / count
    if metric == "abs":
        return -np.abs(x - np.where(rated, others, 0.0).sum(axis=0) / count)
    raise ValueError(f"metric must be one of {ALT_METRICS}, got {metric!r}")


def t_test_less(d: NDArray[np.float64], popmean: float) -> tuple[float, float]:
    """One-sample t test of mean(d) >= popmean against "less": (t, p).

    The arithmetic of ``scipy.stats.ttest_1samp(d, popmean, alternative="less")`` step
    for step (so the same bits), without its per-call wrapper, which costs a millisecond:
    the test runs once per annotator, and a crowd-rated set has thousands of them.
    A constant ``d`` gives an infinite t (p 0 or 1), or NaN when it equals ``popmean``.
    """
    n = d.shape[0]
    mean = np.mean(d)
    var = np.mean((d - mean) ** 2) * (n / (n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(mean - popmean, np.sqrt(var / n))
    return float(t), float(special.stdtr(n - 1, t))


def _wide(
    humans: pd.DataFrame,
    judge: pd.DataFrame | pd.Series,
    keys: list[str],
    dimension: str | None,
) -> tuple[pd.DataFrame, pd.Series]:
    """Instances x annotators, and the judge's score per instance, on shared instances."""
    check_columns(humans, (*keys, RATER, SCORE), "humans")
    people = humans if len(keys) > 1 else select_dimension(humans, dimension)
    people = people.dropna(subset=[SCORE])
    if people.duplicated([*keys, RATER]).any():
        raise ValueError("humans repeat an (instance, rater) pair; average repeated asks first")
    wide = people.set_index([*keys, RATER])[SCORE].unstack(RATER).sort_index().sort_index(axis=1)
    if isinstance(judge, pd.DataFrame):
        check_columns(judge, (*keys, SCORE), "judge")
        own = judge if len(keys) > 1 else select_dimension(judge, dimension)
        if RATER in own.columns and own[RATER].nunique() > 1:
            raise ValueError("judge holds several raters; pass one judge's scores")
        scores = own.set_index(keys)[SCORE]
    else:
        scores = judge
    scores = scores.astype(np.float64).dropna()
    if scores.index.has_duplicates:
        raise ValueError("the judge scores an instance more than once; average first")
    shared = wide.index.intersection(scores.index).sort_values()
    return wide.loc[shared], scores.loc[shared]


def _map_judge(
    judge: pd.Series,
    human_mean: NDArray[np.float64],
    mapping: ScaleMap,
    pooled: bool,
) -> tuple[NDArray[np.float64], str]:
    """The judge's scores on the people's scale; an isotonic map is fitted per dimension."""
    raw = judge.to_numpy()
    if not (pooled and isinstance(mapping, IsotonicMap)):
        mapped = map_scores(raw, mapping, human_mean)
        return mapped.values, mapped.mapping
    out = np.empty_like(raw)
    dims = judge.index.get_level_values(DIMENSION)
    for dim in pd.unique(dims):
        rows = np.flatnonzero(dims == dim)
        out[rows] = map_scores(raw[rows], mapping, human_mean[rows]).values
    return out, f"{mapping.name}, per dimension"


def alt_test(
    humans: pd.DataFrame,
    judge: pd.DataFrame | pd.Series,
    *,
    epsilon: float,
    metric: str = "neg_rmse",
    q: float = 0.05,
    mapping: ScaleMap = None,
    scale: tuple[int, int] | None = None,
    min_items_per_annotator: int = 30,
    min_annotators_per_item: int = 2,
    dimension: str | None = None,
    pool_dimensions: bool = False,
) -> AltTestResult:
    """The alternative annotator test: can this judge stand in for the annotators?

    Args:
        humans: people's ratings, a tidy frame (``image_id``, ``rater``, ``score``,
            optionally ``dimension``).
        judge: the judge's scores: a frame with ``image_id`` and ``score`` (and
            ``dimension``), or a Series indexed by ``image_id`` (by ``image_id`` and
            ``dimension`` when pooling).
        epsilon: the cost-benefit allowance, fixed before the data are seen. The authors
            suggest 0.2 for expert annotators, 0.15 for skilled annotators (students,
            trained workers) and 0.1 for crowd workers, and less when the annotators agree
            little. A larger epsilon makes passing easier.
        metric: ``neg_rmse`` (default, numeric scores), ``abs`` or ``accuracy``.
        q: the false discovery rate of the Benjamini-Yekutieli correction.
        mapping: the map putting the judge's scores on the people's scale (None: already
            on it). An isotonic map is fitted out of fold on the mean of all annotators.
        scale: if given, the judge's mapped scores are rounded half up to this integer
            grid (needed for ``accuracy`` after a map).
        min_items_per_annotator: annotators with fewer usable instances are skipped.
        min_annotators_per_item: instances with fewer annotators (the left-out one
            included) are dropped; at least 2, so that someone remains to be represented
            (the authors' default). They advise three or more annotators in all, since
            with two the test only asks which of two people the judge is closer to.
        dimension: which dimension, when the frames hold several and are not pooled.
        pool_dimensions: treat each (image, dimension) pair as one instance.

    Raises:
        ValueError: on a bad epsilon or q, or when no annotator has enough instances.

    Example:
        Three annotators and a judge on 40 images; the annotators' p-values are corrected
        by Benjamini-Yekutieli, as statsmodels' ``fdr_by`` does:

        >>> rng = np.random.default_rng(0)
        >>> truth = rng.normal(3, 1, 40)
        >>> humans = pd.DataFrame({"image_id": np.repeat(np.arange(40), 3),
        ...                        "rater": np.tile(["a", "b", "c"], 40),
        ...                        "score": np.repeat(truth, 3) + rng.normal(0, 0.5, 120)})
        >>> judge = pd.Series(truth + rng.normal(0, 0.1, 40))  # indexed by image_id
        >>> res = alt_test(humans, judge, epsilon=0.2)
        >>> print(f"omega {res.winning_rate:.3f}, passed {res.passed}, "
        ...       f"q_by {res.per_annotator['q_by'].round(3).tolist()}")
        omega 0.667, passed True, q_by [0.008, 0.062, 0.002]
        >>> table = res.per_annotator
        >>> bool(np.allclose(table["q_by"], multipletests(table["p"], method="fdr_by")[1]))
        True
    """
    if not (np.isfinite(epsilon) and 0.0 <= epsilon < 1.0):
        raise ValueError(f"epsilon must lie in [0, 1), got {epsilon}")
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must lie strictly between 0 and 1, got {q}")
    if metric not in ALT_METRICS:
        raise ValueError(f"metric must be one of {ALT_METRICS}, got {metric!r}")
    if min_annotators_per_item < 2:
        raise ValueError("min_annotators_per_item must be at least 2")
    keys = [ITEM, DIMENSION] if pool_dimensions else [ITEM]
    wide, judge_series = _wide(humans, judge, keys, dimension)
    values = wide.to_numpy(dtype=np.float64).T  # annotators x instances
    rated = np.isfinite(values)
    usable = rated.sum(axis=0) >= min_annotators_per_item
    values, rated = values[:, usable], rated[:, usable]
    judge_series = judge_series[usable]
    human_mean = np.where(rated, values, 0.0).sum(axis=0) / np.maximum(rated.sum(axis=0), 1)
    judge_values, mapping_text = _map_judge(judge_series, human_mean, mapping, pool_dimensions)
    if scale is not None:
        judge_values = to_grid(judge_values, scale).astype(np.float64)
        mapping_text = f"{mapping_text}; {grid_note(scale)}"
    if metric == "accuracy" and not np.all(judge_values == np.round(judge_values)):
        raise ValueError("accuracy compares categories: pass scale= to round the judge's scores")
    rows, skipped = [], []
    for j, annotator in enumerate(wide.columns):
        items = rated[j]
        n_items = int(items.sum())
        if n_items < min_items_per_annotator:
            skipped.append(annotator)
            continue
        others = np.delete(values[:, items], j, axis=0)
        s_human = alignment(values[j, items], others, metric)
        s_judge = alignment(judge_values[items], others, metric)
        w_judge = (s_judge >= s_human).astype(np.float64)
        w_human = (s_human >= s_judge).astype(np.float64)
        d = w_human - w_judge
        t, p = t_test_less(d, epsilon)
        rows.append(
            {
                "annotator": annotator,
                "n_items": n_items,
                "rho_judge": float(w_judge.mean()),
                "rho_human": float(w_human.mean()),
                "t": t,
                "se": float(d.std(ddof=1) / np.sqrt(n_items)),
                "p": p,
            }
        )
    if not rows:
        raise ValueError(
            f"no annotator has {min_items_per_annotator} instances with a judge score and "
            f"at least {min_annotators_per_item} annotators"
        )
    table = pd.DataFrame(rows)
    p = table["p"].to_numpy()
    # A NaN p (constant d equal to epsilon) is never rejected but counts among the tests.
    reject, q_by, _, _ = multipletests(np.where(np.isnan(p), 1.0, p), alpha=q, method="fdr_by")
    table["q_by"] = np.where(np.isnan(p), np.nan, q_by)
    table["rejected"] = reject & ~np.isnan(p)
    winning_rate = float(table["rejected"].mean())
    return AltTestResult(
        winning_rate=winning_rate,
        advantage_probability=float(table["rho_judge"].mean()),
        passed=winning_rate >= 0.5,
        epsilon=float(epsilon),
        metric=metric,
        q=float(q),
        mapping=mapping_text,
        n_instances=int(usable.sum()),
        n_annotators=len(rows),
        skipped=tuple(skipped),
        per_annotator=table,
    )
