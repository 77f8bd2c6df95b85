"""Robustness of the fused arms, and what the same labels would buy elsewhere (seed 000, 5.6, 6).

* :func:`partition_sweep`: the paired bootstrap holds one fold partition fixed, so its
  intervals are conditional on it; refitting over many random partitions shows how much the
  partition moves the margin over the best single model, and where seed 42 falls.
* :func:`label_matched`: the fused arms consume about 400 labels per fold that the single
  model does not; the same labels, folds and protocol are spent on eleven image statistics
  (ridge and GB) and on an in-fold monotone recalibration of the best single score.
* :func:`transfer`: a combiner fitted on one world applied to the other.
* :func:`top_decile`: precision at the top 10%, what a shortlist built from an arm recovers.
* :func:`granularity`: Spearman rewards breaking ties; rounding a k-run mean back to the
  integer scale shows how much of an averaging gain is de-tying, under rho and under tau_b.
* :func:`feature_selection`: one family per dimension, chosen honestly inside the training
  fold, against an oracle that chooses on the test fold, against all features.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import spearmanr
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.isotonic import IsotonicRegression
from sklearn.pipeline import Pipeline, make_pipeline

from judgepanel.compare import METRICS, compare_arms
from judgepanel.fusion import (
    FOLD_SEED,
    Blocks,
    best_single,
    folds,
    gb_combiner,
    holistic_runs,
    oof_predict,
    panel_mean,
    ridge_combiner,
)
from judgepanel.prompts import DIMENSIONS
from judgepanel.stats import (
    add_q,
    bootstrap_arms,
    bootstrap_p,
    kendall_b,
    percentile_ci,
    resample_indices,
    spearman,
    summarize_paired,
)
from judgepanel.stats.correlation import correlate

PARTITION_SEEDS: tuple[int, ...] = tuple(range(20))
"""The random fold partitions of the robustness check (42, the reference, is not among them)."""


def hp_design(blocks: Blocks, families: Sequence[str]) -> pd.DataFrame:
    """The H+P feature matrix of ``families``: holistic means, then dimension means."""
    return pd.concat([blocks.H_of(families), blocks.P_of(families)], axis=1)


# --------------------------------------------------------------------------- partitions


def _hp_oof(X: pd.DataFrame, y: pd.Series, seed: int) -> np.ndarray:
    return oof_predict(gb_combiner(), X, y, seed=seed)


def partition_sweep(
    blocks: Blocks,
    family_sets: Mapping[str, Sequence[str]],
    *,
    seeds: Sequence[int] = PARTITION_SEEDS,
    reference_seed: int = FOLD_SEED,
    n_jobs: int | None = -1,
) -> pd.DataFrame:
    """H+P_gb minus the best single model under many random fold partitions.

    Every (block, partition) pair is fitted in parallel. The best single model does not
    depend on the folds, so all movement is the combiner's.

    Returns:
        One row per (block, seed): ``block``, ``seed``, ``reference`` (True for
        ``reference_seed``), ``rho``, ``tau_b`` (H+P_gb), ``best_family``, ``best_rho``,
        ``best_tau_b``, ``delta_rho``, ``delta_tau_b``.
    """
    if reference_seed in seeds:
        raise ValueError(f"the reference seed {reference_seed} must not be among the random seeds")
    all_seeds = [*seeds, reference_seed]
    tasks = [(b, s) for b in family_sets for s in all_seeds]
    designs = {b: hp_design(blocks, fams) for b, fams in family_sets.items()}
    preds = Parallel(n_jobs=n_jobs)(delayed(_hp_oof)(designs[b], blocks.y, s) for b, s in tasks)
    y = blocks.y.to_numpy(float)
    best = {b: best_single(blocks.H_of(f), blocks.y) for b, f in family_sets.items()}
    rows = []
    for (b, s), pred in zip(tasks, preds, strict=True):
        name, table = best[b]
        best_rho, best_tau = float(table.iloc[0]["rho"]), float(table.iloc[0]["tau_b"])
        rho, tau = spearman(y, pred), kendall_b(y, pred)
        rows.append(
            {
                "block": b,
                "seed": s,
                "reference": s == reference_seed,
                "rho": rho,
                "tau_b": tau,
                "best_family": name,
                "best_rho": best_rho,
                "best_tau_b": best_tau,
                "delta_rho": rho - best_rho,
                "delta_tau_b": tau - best_tau,
            }
        )
    return pd.DataFrame(rows)


def partition_summary(sweep: pd.DataFrame) -> pd.DataFrame:
    """Per block: mean, sd, min and max of the margin over the random partitions, and
    where the reference partition falls.

    ``reference_rank`` is the reference's rank among all partitions (1 = largest margin);
    ``reference_percentile`` the share of random partitions whose margin is at or below
    the reference's; ``n_positive`` how many random partitions have a positive margin.
    """
    rows = []
    for block, sub in sweep.groupby("block", sort=False):
        rand = sub[~sub["reference"]]
        ref = sub[sub["reference"]].iloc[0]
        row: dict[str, object] = {
            "block": block,
            "n_partitions": len(rand),
            "best_family": ref["best_family"],
        }
        for col in ("delta_rho", "delta_tau_b"):
            v = rand[col].to_numpy(float)
            row[f"{col}_mean"] = v.mean()
            row[f"{col}_sd"] = v.std(ddof=1) if v.size > 1 else np.nan
            row[f"{col}_min"] = v.min()
            row[f"{col}_max"] = v.max()
            row[f"{col}_n_positive"] = int((v > 0).sum())
            row[f"{col}_reference"] = float(ref[col])
            row[f"{col}_reference_rank"] = int(1 + (v > ref[col]).sum())
            row[f"{col}_reference_percentile"] = float((v <= ref[col]).mean())
        row["rho_mean"] = rand["rho"].mean()
        row["rho_max"] = rand["rho"].max()
        row["rho_reference"] = float(ref["rho"])
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ label-matched baselines


def recalibrator() -> Pipeline:
    """Monotone recalibration of one score: isotonic regression, refitted in every fold.

    A monotone map keeps the order of the scores it is fitted on, so within one fold it
    can change Spearman only by merging values into ties; across folds, different maps can
    also reorder images that fall in different test folds.
    """
    return Pipeline([("isotonic", IsotonicRegression(out_of_bounds="clip", increasing=True))])


def label_matched_arms(
    blocks: Blocks,
    families: Sequence[str],
    image_stats: pd.DataFrame,
    *,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = -1,
) -> tuple[dict[str, np.ndarray], str]:
    """The arms that spend the combiner's labels elsewhere, on the same images and folds.

    Args:
        blocks: the dataset's feature blocks.
        families: the family block (the best single model is its best member).
        image_stats: the eleven image statistics, indexed by image id.
        fold_seed: the fold partition.
        n_jobs: joblib workers.

    Returns:
        (arms, best family): ``best single``, ``panel mean``, ``H+P_gb``, ``F11_ridge``,
        ``F11_gb`` and ``best single, isotonic`` as out-of-fold predictions.
    """
    missing = blocks.items.difference(image_stats.index)
    if len(missing):
        raise ValueError(
            f"{len(missing)} image(s) have no image statistics, e.g. {list(missing[:3])}"
        )
    F = image_stats.loc[blocks.items]
    H = blocks.H_of(families)
    best, _ = best_single(H, blocks.y)
    jobs = {
        "H+P_gb": (gb_combiner(), hp_design(blocks, families)),
        "F11_ridge": (ridge_combiner(), F),
        "F11_gb": (gb_combiner(), F),
        "best single, isotonic": (recalibrator(), H[[best]]),
    }
    preds = Parallel(n_jobs=n_jobs)(
        delayed(oof_predict)(est, X, blocks.y, seed=fold_seed) for est, X in jobs.values()
    )
    arms = {"best single": H[best].to_numpy(float), "panel mean": panel_mean(H).to_numpy(float)}
    arms.update({k: np.asarray(p, float) for k, p in zip(jobs, preds, strict=True)})
    return arms, best


def label_matched(
    blocks: Blocks,
    families: Sequence[str],
    image_stats: pd.DataFrame,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = -1,
) -> pd.DataFrame:
    """Every label-matched arm against the best single model and against H+P_gb.

    One-sided p in the direction "the arm is better"; q is BH within comparator and metric.
    """
    arms, best = label_matched_arms(
        blocks, families, image_stats, fold_seed=fold_seed, n_jobs=n_jobs
    )
    comps = {"best single": arms["best single"], "H+P_gb": arms["H+P_gb"]}
    res = compare_arms(blocks.y.to_numpy(float), arms, comps, n_resamples=n_resamples, seed=seed)
    res.insert(0, "best_family", best)
    return add_q(res, by=["comparator", "metric"])


# -------------------------------------------------------------------------------- transfer


def transfer(
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
        s = bootstrap_arms(
            y, {"transfer": moved, "single": single}, metric, n_resamples=n_resamples, seed=seed
        )
        res = summarize_paired(
            s[:, 0],
            s[:, 1],
            correlate(y, moved, metric),
            correlate(y, single, metric),
            metric=metric,
            n=y.size,
        )
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


# ------------------------------------------------------------------------------ top decile


def top_weights(values: np.ndarray, m: int) -> np.ndarray:
    """Membership of each item in the top ``m`` of each row, ties shared fractionally.

    Items strictly above the m-th largest value are in (weight 1); the items tied with it
    share the remaining places equally. This is the expected membership under a random
    tie-break, so a coarse score is neither favoured nor penalised by an arbitrary order.
    """
    v = np.atleast_2d(np.asarray(values, float))
    n = v.shape[1]
    if not 1 <= m <= n:
        raise ValueError(f"top size must lie in [1, {n}], got {m}")
    thr = np.partition(v, n - m, axis=1)[:, n - m][:, None]
    above = v > thr
    tied = v == thr
    share = (m - above.sum(axis=1)) / tied.sum(axis=1)
    return above + tied * share[:, None]


def precision_at_top(y: np.ndarray, score: np.ndarray, frac: float = 0.1) -> float:
    """Share of the true top ``frac`` (by ``y``) that ``score``'s top ``frac`` recovers.

    Ties at either cut-off are shared fractionally (:func:`top_weights`). A perfect
    predictor scores 1 when ``y`` has no tie at the cut-off; a random one about ``frac``.
    """
    y, score = np.asarray(y, float), np.asarray(score, float)
    m = _top_size(y.size, frac)
    return float((top_weights(y, m) * top_weights(score, m)).sum() / m)


def _top_size(n: int, frac: float) -> int:
    if not 0 < frac <= 1:
        raise ValueError(f"frac must lie in (0, 1], got {frac}")
    return max(1, int(np.floor(frac * n + 0.5)))


def _resampled_precision(y, score, idx, m) -> np.ndarray:
    return (top_weights(y[idx], m) * top_weights(score[idx], m)).sum(axis=1) / m


def top_decile(
    y: np.ndarray,
    arms: Mapping[str, np.ndarray],
    *,
    comparator: str = "best single",
    frac: float = 0.1,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Precision at the top ``frac`` of every arm, with bootstrap CIs, against a comparator.

    Resamples are the shared ``resample_indices(n, B, seed)``; on each, both the true top
    and each arm's top are recomputed (duplicated images count as ties). The difference
    from the comparator is paired; p is one-sided (the arm is better).
    """
    y = np.asarray(y, float)
    m = _top_size(y.size, frac)
    idx = resample_indices(y.size, n_resamples, seed)
    boot = {k: _resampled_precision(y, np.asarray(v, float), idx, m) for k, v in arms.items()}
    full = {k: precision_at_top(y, v, frac) for k, v in arms.items()}
    rows = []
    for k in arms:
        lo, hi = percentile_ci(boot[k])
        row = {
            "arm": k,
            "precision": full[k],
            "precision_low": lo,
            "precision_high": hi,
            "top_size": m,
            "chance": m / y.size,
        }
        if comparator in arms and k != comparator:
            d = boot[k] - boot[comparator]
            dlo, dhi = percentile_ci(d)
            row.update(
                delta=full[k] - full[comparator],
                ci_low=dlo,
                ci_high=dhi,
                p=bootstrap_p(d, "greater"),
            )
        rows.append(row)
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- granularity


def round_half_up(x: np.ndarray) -> np.ndarray:
    """Round to the nearest integer, halves up (so 6.5 -> 7, unlike numpy's half-to-even)."""
    return np.floor(np.asarray(x, float) + 0.5)


def default_ks(k_max: int) -> list[int]:
    """1, 3, 5, 10, then every 5 up to ``k_max`` (which is always included)."""
    ks = [k for k in (1, 3, 5) if k <= k_max] + list(range(10, k_max + 1, 5))
    if k_max not in ks:
        ks.append(k_max)
    return sorted(set(ks))


def tied_pair_share(x: np.ndarray) -> float:
    """Share of image pairs whose scores are tied."""
    _, counts = np.unique(np.asarray(x, float), return_counts=True)
    n = int(counts.sum())
    return float((counts * (counts - 1)).sum() / (n * (n - 1))) if n > 1 else float("nan")


def granularity(
    scores: pd.DataFrame,
    y: pd.Series,
    families: Sequence[str],
    *,
    ks: Sequence[int] | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """The Spearman granularity artefact: k-run means against the same means rounded.

    For each family and each k, the holistic mean over the first k runs is scored against
    the human mean as it is (``mean``) and rounded half-up to the integer scale
    (``rounded``), under rho and tau_b. Rounding restores the ties that averaging broke,
    so ``delta`` (mean - rounded) measures how much of the metric is de-tying. At each
    family's largest k the delta carries a paired bootstrap CI and one-sided p.

    Returns:
        One row per (family, k, metric): ``family``, ``k``, ``metric``, ``mean``,
        ``rounded``, ``delta``, ``relative_delta`` (delta / rounded), ``tied_mean``,
        ``tied_rounded`` (share of tied pairs), ``distinct_mean``, ``distinct_rounded``,
        and at the largest k ``ci_low``, ``ci_high``, ``p``.
    """
    runs = holistic_runs(scores, families).reindex(y.index)
    yv = y.to_numpy(float)
    rows = []
    top: dict[str, dict[str, np.ndarray]] = {}
    for fam in families:
        reps = sorted(runs[fam].columns)
        fam_ks = list(ks) if ks is not None else default_ks(len(reps))
        for k in fam_ks:
            if k > len(reps):
                continue
            mean = runs[fam][reps[:k]].mean(axis=1).to_numpy(float)
            if np.isnan(mean).any():
                raise ValueError(f"{fam}: some images lack one of the first {k} holistic runs")
            rounded = round_half_up(mean)
            for metric in METRICS:
                a, b = correlate(yv, mean, metric), correlate(yv, rounded, metric)
                rows.append(
                    {
                        "family": fam,
                        "k": k,
                        "metric": metric,
                        "mean": a,
                        "rounded": b,
                        "delta": a - b,
                        "relative_delta": (a - b) / b if b else np.nan,
                        "tied_mean": tied_pair_share(mean),
                        "tied_rounded": tied_pair_share(rounded),
                        "distinct_mean": int(np.unique(mean).size),
                        "distinct_rounded": int(np.unique(rounded).size),
                    }
                )
            top[fam] = {"k": np.array(k), "mean": mean, "rounded": rounded}
    out = pd.DataFrame(rows)
    out["ci_low"] = out["ci_high"] = out["p"] = np.nan
    for metric in METRICS:
        arms = {f"{f}|{kind}": top[f][kind] for f in top for kind in ("mean", "rounded")}
        s = bootstrap_arms(yv, arms, metric, n_resamples=n_resamples, seed=seed)
        names = list(arms)
        for f in top:
            i, j = names.index(f"{f}|mean"), names.index(f"{f}|rounded")
            d = s[:, i] - s[:, j]
            d = d[np.isfinite(d)]
            lo, hi = percentile_ci(d)
            sel = (out["family"] == f) & (out["k"] == int(top[f]["k"])) & (out["metric"] == metric)
            out.loc[sel, ["ci_low", "ci_high", "p"]] = [lo, hi, bootstrap_p(d, "greater")]
    return out


def granularity_summary(gran: pd.DataFrame) -> pd.DataFrame:
    """Per family and metric: how much averaging gains, and how much of it rounding takes back.

    ``averaging_gain`` is the k_max mean's metric minus the single run's (k=1);
    ``rounding_loss`` is the k_max mean's metric minus the same mean rounded;
    ``share_detying`` = rounding_loss / averaging_gain, the part of the averaging gain that
    is de-tying (NaN unless averaging gained). Extra grouping columns of ``gran`` (such as
    ``dataset``) are kept.
    """
    keys = [c for c in ("dataset", "family", "metric") if c in gran.columns]
    rows = []
    for key, g in gran.groupby(keys, sort=False):
        g = g.sort_values("k")
        first, last = g.iloc[0], g.iloc[-1]
        gain = float(last["mean"] - first["mean"])
        loss = float(last["mean"] - last["rounded"])
        rows.append(
            {
                **dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                "k_first": int(first["k"]),
                "k_max": int(last["k"]),
                "single_run": float(first["mean"]),
                "mean_k_max": float(last["mean"]),
                "rounded_k_max": float(last["rounded"]),
                "averaging_gain": gain,
                "rounding_loss": loss,
                "share_detying": loss / gain if gain > 0 else np.nan,
            }
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------ feature selection


def dimension_groups(
    columns: Sequence[str], dimensions: Sequence[str] = DIMENSIONS
) -> list[list[int]]:
    """Column positions of each dimension in a ``family:dimension`` block."""
    groups = []
    for d in dimensions:
        idx = [i for i, c in enumerate(columns) if c.split(":", 1)[1] == d]
        if not idx:
            raise ValueError(f"no column for dimension {d!r} in {list(columns)[:6]}...")
        groups.append(idx)
    return groups


def _column_rhos(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman rho of every column with ``y``; NaN (constant column) becomes -inf."""
    out = np.full(X.shape[1], -np.inf)
    for j in range(X.shape[1]):
        if np.ptp(X[:, j]) > 0:
            r = spearmanr(X[:, j], y).statistic
            out[j] = -np.inf if np.isnan(r) else r
    return out


def _best_in_group(rhos: np.ndarray, group: Sequence[int]) -> int:
    return int(group[int(np.argmax(rhos[list(group)]))])


class PerGroupSelector(TransformerMixin, BaseEstimator):
    """Keeps one column per group: the one with the highest Spearman rho with the target.

    With groups = the dimensions of a P block, it picks one family per dimension. Inside a
    Pipeline under ``cross_val_predict`` the choice is made on the training fold only.

    Args:
        groups: column positions of each group.
    """

    def __init__(self, groups: Sequence[Sequence[int]]):
        self.groups = groups

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y, float)
        rhos = _column_rhos(X, y)
        self.chosen_ = np.array([_best_in_group(rhos, g) for g in self.groups], dtype=int)
        return self

    def transform(self, X):
        return np.asarray(X, float)[:, self.chosen_]


def selecting_combiner(groups: Sequence[Sequence[int]], estimator=None) -> Pipeline:
    """Honest selection: :class:`PerGroupSelector` then the combiner, one Pipeline."""
    return make_pipeline(
        PerGroupSelector(groups), estimator if estimator is not None else gb_combiner()
    )


def oracle_oof(
    X: np.ndarray,
    y: np.ndarray,
    groups: Sequence[Sequence[int]],
    *,
    estimator=None,
    seed: int = FOLD_SEED,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The oracle bound: per fold, the columns are chosen on the TEST fold's targets.

    In each group the oracle keeps the column that would rank the test fold best given the
    direction learned on the training fold: the largest sign(rho_train) x rho_test. The
    combiner is still fitted on the training fold; only the choice peeks at the test
    targets. Optimistic by construction; its distance above honest selection measures
    the optimism of choosing on the data a score is reported on.

    Returns:
        Out-of-fold predictions and each fold's chosen column positions.
    """
    X, y = np.asarray(X, float), np.asarray(y, float)
    est = estimator if estimator is not None else gb_combiner()
    pred = np.empty_like(y)
    chosen = []
    for train, test in folds(seed).split(X):
        with np.errstate(invalid="ignore"):
            direction = np.sign(_column_rhos(X[train], y[train]))
        direction[~np.isfinite(direction)] = 0.0
        score = direction * _column_rhos(X[test], y[test])
        score[~np.isfinite(score)] = -np.inf
        cols = np.array([_best_in_group(score, g) for g in groups], dtype=int)
        model = clone(est).fit(X[train][:, cols], y[train])
        pred[test] = model.predict(X[test][:, cols])
        chosen.append(cols)
    return pred, chosen


def honest_choices(
    X: np.ndarray, y: np.ndarray, groups: Sequence[Sequence[int]], *, seed: int = FOLD_SEED
) -> list[np.ndarray]:
    """The columns honest selection picks in each training fold (for reporting)."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    return [PerGroupSelector(groups).fit(X[tr], y[tr]).chosen_ for tr, _ in folds(seed).split(X)]


@dataclass(frozen=True)
class FeatureSelection:
    """The feature-selection ablation of one family block.

    Attributes:
        comparisons: paired bootstrap rows (``arm`` against ``comparator``; arms: all
            features, honest selection, oracle selection; the comparison "oracle against
            honest" is the optimism).
        choices: per fold and dimension, the family chosen honestly and by the oracle.
    """

    comparisons: pd.DataFrame
    choices: pd.DataFrame


def feature_selection(
    blocks: Blocks,
    families: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = -1,
) -> FeatureSelection:
    """One family per dimension (honest, in fold) vs an oracle (test fold) vs all of P."""
    P = blocks.P_of(families)
    cols = list(P.columns)
    groups = dimension_groups(cols)
    X, y = P.to_numpy(float), blocks.y.to_numpy(float)
    honest, all_p, (oracle, oracle_cols) = Parallel(n_jobs=n_jobs)(
        [
            delayed(oof_predict)(selecting_combiner(groups), X, y, seed=fold_seed),
            delayed(oof_predict)(gb_combiner(), X, y, seed=fold_seed),
            delayed(oracle_oof)(X, y, groups, seed=fold_seed),
        ]
    )
    arms = {"all features": all_p, "honest selection": honest, "oracle selection": oracle}
    res = compare_arms(
        y,
        arms,
        {"all features": all_p, "honest selection": honest},
        n_resamples=n_resamples,
        seed=seed,
        skip_self=False,  # identical choices give identical arms; the row still belongs
    )
    res = res[res["arm"] != res["comparator"]].reset_index(drop=True)
    honest_cols = honest_choices(X, y, groups, seed=fold_seed)
    rows = []
    for fold, (h, o) in enumerate(zip(honest_cols, oracle_cols, strict=True)):
        for d, hj, oj in zip(DIMENSIONS, h, o, strict=True):
            rows.append(
                {
                    "fold": fold,
                    "dimension": d,
                    "honest": cols[hj].split(":")[0],
                    "oracle": cols[oj].split(":")[0],
                }
            )
    return FeatureSelection(comparisons=res, choices=pd.DataFrame(rows))
