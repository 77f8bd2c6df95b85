"""Score-then-rank judges for VAB and their like-for-like comparison with direct comparison.

A score-then-rank judge scores every image of a set on its own and ranks the set by the
scores (:func:`judgepanel.studies.vab.rank.rank_predictions`). Three kinds are built here from the
per-image rubric calls of the scoring path:

- ``rank:<family>``: each family's holistic mean;
- ``rank:panel``: the panel mean of a set of families (each family's holistic means
  z-scored over the VAB images, then averaged: :func:`.rank.panel_scores`);
- ``rank:fused``: the fused rubric panel. A gradient-boosting combiner
  (:func:`judgepanel.studies.common.combiners.gb_combiner`) is trained on a rated SCORING
  world (images with human means, e.g. PARA) from the same features, the panel families'
  holistic means and dimension means (:func:`image_features`), and then predicts every VAB
  image. It never sees a VAB label: VAB has no per-image human score, and the set labels
  stay for testing.

Every ranker answers in the predictions table of :mod:`judgepanel.studies.vab.columns`, so its
Top-1 and TB-1 are scored on the same tasks and with the same denominator as the direct
judges; :func:`rank_vs_direct` then compares them pairwise by a paired bootstrap over tasks
with Benjamini-Hochberg q across the comparisons of the table that test something: a row
equal to another by construction (a ranker's pass^3 is its ap@1) keeps its numbers and the
reason in ``excluded``, out of the correction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor

from judgepanel.stats import spearman
from judgepanel.studies.common.combiners import gb_combiner, oof_predict
from judgepanel.studies.common.features import dimension_means, holistic_means
from judgepanel.studies.vab.accuracy import compare_judges, tested_q
from judgepanel.studies.vab.columns import STANDARD_REPS
from judgepanel.studies.vab.rank import panel_scores, rank_predictions

RANK_PREFIX = "rank:"
PANEL = f"{RANK_PREFIX}panel"
FUSED = f"{RANK_PREFIX}fused"
MIN_TRAIN = 20
"""Fewest training images the fused combiner is fitted on."""


def panel_families(families: Sequence[str], predeclared: Sequence[str]) -> list[str]:
    """The families of the panel mean and the fused panel: the pre-declared ones among
    ``families`` (all of ``families`` when none is), as notebook 05 picks them.

    Only these families' dimension scores of the VAB images are read (by the fused
    panel), so the VAB planner scores the rubric dimensions for them alone.
    """
    return [f for f in predeclared if f in families] or list(families)


def ranker_name(family: str) -> str:
    """The predictions-table name of the ranker built on one family's holistic mean."""
    return f"{RANK_PREFIX}{family}"


def is_ranker(name: str) -> bool:
    """Whether a judge name in a predictions or scores table is a score-then-rank judge."""
    return str(name).startswith(RANK_PREFIX)


def image_features(scores: pd.DataFrame, families: Sequence[str]) -> pd.DataFrame:
    """The fused ranker's features: holistic means, then dimension means, of ``families``.

    Args:
        scores: :func:`judgepanel.core.frames.score_table` rows (item, family, kind, dimension,
            repetition, value) of one dataset.
        families: the panel's families, in a fixed order.

    Returns:
        One row per item with every feature (items missing any are dropped), columns
        ``<family>`` (holistic mean) then ``<family>:<dimension>``, sorted by item.

    Raises:
        ValueError: no family given, or a family without any holistic or dimension score.
    """
    if not families:
        raise ValueError("the fused ranker needs at least one family")
    have = set(scores.loc[scores["kind"] == "holistic", "family"])
    missing = [f for f in families if f not in have]
    if missing:
        raise ValueError(f"no holistic scores for families: {', '.join(missing)}")
    H = holistic_means(scores, families)
    P = dimension_means(scores, families)
    X = H.join(P, how="inner").dropna()
    return X.sort_index()


@dataclass(frozen=True)
class FusedRanker:
    """A combiner fitted on a scoring world, ready to score VAB images.

    Attributes:
        model: the fitted gradient-boosting regressor.
        families: the panel families whose features it uses.
        features: the feature columns, in the order it was fitted on.
        n_train: training images (every feature and a human mean).
        train_dataset: the scoring world it was trained on.
        oof_rho: Spearman rho of its out-of-fold predictions with the human mean on the
            training world (how well the combiner works where it was trained; NaN when
            not computed).
    """

    model: GradientBoostingRegressor
    families: tuple[str, ...]
    features: tuple[str, ...]
    n_train: int
    train_dataset: str
    oof_rho: float = float("nan")

    def predict(self, scores: pd.DataFrame) -> pd.Series:
        """Predicted human mean for every item of ``scores`` that has every feature."""
        X = image_features(scores, self.families)
        if tuple(X.columns) != self.features:
            raise ValueError(
                f"feature columns differ from training: {list(X.columns)} vs {list(self.features)}"
            )
        return pd.Series(self.model.predict(X.to_numpy(float)), index=X.index, name="score")


def fit_fused(
    train_scores: pd.DataFrame,
    target: pd.Series,
    families: Sequence[str],
    *,
    train_dataset: str = "",
    random_state: int = 0,
    check_oof: bool = True,
) -> FusedRanker:
    """Fit the study's combiner on a scoring world's features and human means.

    Args:
        train_scores: score_table rows of the training world.
        target: human mean per item of the training world.
        families: the panel families.
        train_dataset: its name, carried for the report.
        random_state: the combiner's seed.
        check_oof: also fit it out of fold on the training world (the study's folds) and
            record the Spearman rho of those predictions.

    Raises:
        ValueError: fewer than ``MIN_TRAIN`` images with every feature and a human mean.
    """
    X = image_features(train_scores, families)
    y = target.dropna()
    common = X.index.intersection(y.index).sort_values()
    if len(common) < MIN_TRAIN:
        raise ValueError(
            f"{train_dataset or 'training world'}: only {len(common)} images have every "
            f"feature of {list(families)} and a human mean; need at least {MIN_TRAIN}"
        )
    Xt, yt = X.loc[common].to_numpy(float), y.loc[common].to_numpy(float)
    model = gb_combiner(random_state)
    model.fit(Xt, yt)
    oof_rho = float("nan")
    if check_oof:
        oof_rho = float(spearman(yt, oof_predict(gb_combiner(random_state), Xt, yt)))
    return FusedRanker(
        model=model,
        families=tuple(families),
        features=tuple(X.columns),
        n_train=len(common),
        train_dataset=train_dataset,
        oof_rho=oof_rho,
    )


@dataclass(frozen=True)
class ScoreThenRank:
    """Every score-then-rank judge on one VAB dataset.

    Attributes:
        predictions: the predictions table (``PRED_COLUMNS`` + ``tied``), one judge per
            ranker name, ready for :func:`judgepanel.studies.vab.scores.task_scores`.
        image_scores: image_id, ranker, score (what each ranker ranked by).
        rankers: ranker names, family rankers first.
        fused: the fitted fused ranker (None when no training world was given).
        ties: ranker, n_tasks, n_tied (sets resolved by a seeded draw at the top or
            bottom), n_failed (sets with an unscored image; counted incorrect).
    """

    predictions: pd.DataFrame
    image_scores: pd.DataFrame
    rankers: tuple[str, ...]
    fused: FusedRanker | None
    ties: pd.DataFrame


def score_then_rank(
    vab_scores: pd.DataFrame,
    tasks: pd.DataFrame,
    *,
    families: Sequence[str],
    panel: Sequence[str],
    train_scores: pd.DataFrame | None = None,
    train_target: pd.Series | None = None,
    train_dataset: str = "",
    repetitions: Sequence[int] = STANDARD_REPS,
    seed: int = 0,
    random_state: int = 0,
) -> ScoreThenRank:
    """Rank every VAB set by each family's holistic mean, the panel mean and the fused panel.

    Args:
        vab_scores: score_table rows of the VAB images (items ``f"{task_id}/{label}"``).
        tasks: the loaded VAB tasks.
        families: families that get a ranker of their own.
        panel: the families of the panel mean and of the fused panel.
        train_scores, train_target: the scoring world's score_table rows and human means;
            without them the fused ranker is left out.
        train_dataset: the scoring world's name (for the report).
        repetitions: order indices to emit (a ranker gives the same answer in each).
        seed: seeds the tie draws.
        random_state: the combiner's seed.
    """
    H = holistic_means(vab_scores, list(dict.fromkeys([*families, *panel])))
    per_ranker: dict[str, pd.Series] = {}
    for fam in families:
        per_ranker[ranker_name(fam)] = H[fam].dropna()
    long = H[list(panel)].stack().dropna().rename("score").rename_axis(["image_id", "family"])
    per_ranker[PANEL] = panel_scores(long.reset_index(), list(panel))
    fused = None
    if train_scores is not None and train_target is not None:
        fused = fit_fused(
            train_scores,
            train_target,
            panel,
            train_dataset=train_dataset,
            random_state=random_state,
        )
        per_ranker[FUSED] = fused.predict(vab_scores)
    preds, scores, ties = [], [], []
    for name, s in per_ranker.items():
        p = rank_predictions(s, tasks, judge=name, repetitions=repetitions, seed=seed)
        preds.append(p)
        scores.append(
            pd.DataFrame({"image_id": s.index.astype(str), "ranker": name, "score": s.values})
        )
        per_task = p.drop_duplicates("task_id")
        ties.append(
            {
                "ranker": name,
                "n_tasks": len(per_task),
                "n_tied": int(per_task["tied"].sum()),
                "n_failed": int(per_task["status"].ne("ok").sum()),
            }
        )
    return ScoreThenRank(
        predictions=pd.concat(preds, ignore_index=True),
        image_scores=pd.concat(scores, ignore_index=True),
        rankers=tuple(per_ranker),
        fused=fused,
        ties=pd.DataFrame(ties),
    )


def best_judge(
    scores: pd.DataFrame, judges: Sequence[str], *, metric: str = "tb1", stat: str = "ap1"
) -> str:
    """The judge with the highest mean ``stat`` on ``metric`` (ties: the first in order)."""
    sub = scores.loc[(scores["metric"] == metric) & scores["judge"].isin(list(judges))]
    if sub.empty:
        raise ValueError(f"no {metric} scores for any of {list(judges)}")
    means = sub.groupby("judge")[stat].mean()
    ordered = [j for j in judges if j in means.index]
    values = np.array([means[j] for j in ordered])
    return ordered[int(np.argmax(values))]


def like_for_like_pairs(
    families: Sequence[str],
    rankers: Sequence[str],
    *,
    best_direct: str,
    best_rank: str | None = None,
) -> list[tuple[str, str]]:
    """The (score-then-rank, direct) pairs to compare.

    Each family's ranker against the same family asked directly (one model, two
    protocols); every other ranker (panel, fused) against the best direct judge; and the
    best ranker against the best direct judge if that pair is not already listed.
    """
    pairs: list[tuple[str, str]] = []
    for fam in families:
        if ranker_name(fam) in rankers:
            pairs.append((ranker_name(fam), fam))
    own = {ranker_name(f) for f in families}
    for r in rankers:
        if r not in own:
            pairs.append((r, best_direct))
    if best_rank is not None and (best_rank, best_direct) not in pairs:
        pairs.append((best_rank, best_direct))
    return pairs


BUILT_IN = "a ranker's pass^3 is its ap@1 by construction, as it answers every order alike"
"""Why a ranker-against-direct-judge pass^3 row is kept out of the correction family."""
BOTH_RANKERS = "repeats the ap@1 row: both sides answer every order alike, so pass^3 is ap@1"
"""Why a pass^3 row of two rankers is kept out of the correction family."""
PAIRS_ONLY = "repeats the Top-1 row: every task is a pair, whose TB-1 is read from Top-1"
"""Why a TB-1 row on pairs alone is kept out of the correction family."""


def built_in_reason(
    a: str, b: str, metric: str, stat: str, *, pairs_only: bool = False, has_top1: bool = True
) -> str:
    """Why the row ``a − b`` on ``metric`` and ``stat`` equals another row by construction,
    or "" for a row that tests something.

    - a pass^3 row with a ranker on either side: the ranker's pass^3 is its ap@1 (it answers
      every order alike), so against a direct judge the row only restates that the ranker
      cannot change its answer with the order (its p sits at the bootstrap's floor), and
      between two rankers it repeats their ap@1 row;
    - a TB-1 row on pairs alone, when the table also has the Top-1 row: for a pair TB-1 is
      read from the Top-1 answer, so the two rows are one.
    """
    if stat == "pass3" and (is_ranker(a) or is_ranker(b)):
        return BOTH_RANKERS if is_ranker(a) and is_ranker(b) else BUILT_IN
    if metric == "tb1" and pairs_only and has_top1:
        return PAIRS_ONLY
    return ""


def rank_vs_direct(
    scores: pd.DataFrame,
    pairs: Sequence[tuple[str, str]],
    *,
    metrics: Sequence[str] = ("top1", "tb1"),
    stats: Sequence[str] = ("ap1", "pass3"),
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Paired comparisons on the same tasks, with BH q across the rows that test something.

    A row equal to another by construction (:func:`built_in_reason`: a ranker's pass^3, a
    TB-1 row on pairs alone) and a pair listed a second time, in either order, stay in the
    table with their numbers and the reason in ``excluded``, but out of the correction: 14
    rows at the bootstrap's floor in a family of 32 would loosen the q of every real
    comparison.

    Args:
        scores: ``task_scores`` of direct judges and rankers together.
        pairs: (a, b) pairs; ``delta`` is a - b (positive: a is more accurate).
        metrics, stats: what to compare; every pair is compared on each.

    Returns:
        a, b, metric, stat, n_tasks, value_a, value_b, delta, ci_low, ci_high, p
        (two-sided bootstrap over tasks, the same resamples for every row), q (BH over the
        rows not excluded; NaN on the excluded), excluded (why the row is left out of the
        correction, "" for a tested row). No column names a winner: the verdict of a row
        is its claim's (:mod:`judgepanel.studies.vab.verdicts`).
    """
    parts = [
        compare_judges(
            scores,
            metric=m,
            stat=s,
            pairs=list(pairs),
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
        )
        for m in metrics
        for s in stats
    ]
    out = pd.concat(parts, ignore_index=True)
    if not len(out):
        return out.assign(excluded=pd.Series(dtype=str))
    # a table without set sizes says nothing of pairs alone: no row is read as one
    k_of = (
        scores.drop_duplicates("task_id").set_index("task_id")["k"]
        if "k" in scores.columns
        else pd.Series(dtype=float)
    )
    excluded = []
    first: dict[tuple[frozenset[str], str, str], tuple[str, str]] = {}
    for r in out.itertuples(index=False):
        key = (frozenset((r.a, r.b)), r.metric, r.stat)
        if key in first:
            a0, b0 = first[key]
            excluded.append(f"repeats the row {a0} − {b0}, tested once")
            continue
        first[key] = (r.a, r.b)
        both = scores.loc[scores["judge"].isin([r.a, r.b]), "task_id"].unique()
        pairs_only = bool(len(both)) and bool(k_of.reindex(both).eq(2).all())
        excluded.append(
            built_in_reason(
                r.a, r.b, r.metric, r.stat, pairs_only=pairs_only, has_top1="top1" in metrics
            )
        )
    out["excluded"] = excluded
    out["q"] = tested_q(out["p"], out["excluded"])
    return out
