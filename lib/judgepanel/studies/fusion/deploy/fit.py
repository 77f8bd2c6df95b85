"""Fit an arm for keeps, with its out-of-fold accuracy, and predict with the result.

The combiner is the study's (:func:`~judgepanel.studies.common.combiners.gb_combiner`, or
the in-fold ridge), fitted once on every labelled image. What it is expected to reach on
new images of the same kind is its out-of-fold accuracy on those images, on the study's
fixed fold partition: Spearman ρ, Kendall τ_b and precision at the top 10%, each with a
percentile bootstrap interval over images.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from judgepanel.core.rubric import Rubric, load_rubric
from judgepanel.stats import bootstrap_arms, percentile_ci, resample_indices
from judgepanel.stats.correlation import kendall_b, spearman
from judgepanel.studies.common.combiners import FOLD_SEED, N_FOLDS, gb_combiner, oof_predict
from judgepanel.studies.fusion.blocks import BestColumn, best_single, ridge_combiner
from judgepanel.studies.fusion.deploy.arms import (
    COLUMN,
    GB,
    MEAN,
    RIDGE,
    ArmSpec,
    arm_features,
    calls_needed,
    feature_columns,
)
from judgepanel.studies.fusion.deploy.model import FORMAT, VERSION, DeployedModel
from judgepanel.studies.fusion.deploy.trees import check_tree_arrays, predict_trees, tree_arrays
from judgepanel.studies.fusion.robustness.top_decile import (
    precision_at_top,
    top_size,
    top_weights,
)

TOP_FRACTION = 0.1
"""Precision is measured at the top 10%, as in notebook 04's shortlist section."""

METRICS: tuple[str, ...] = ("spearman", "kendall_b", "precision@10%")
PACKAGES: tuple[str, ...] = ("judgepanel", "numpy", "scipy", "scikit-learn", "pandas")


def fit_combiner(spec: ArmSpec, X: pd.DataFrame, y: pd.Series) -> dict[str, NDArray]:
    """The arm's combiner fitted on all of ``X``, as plain arrays (``predict_combiner``)."""
    Xa, ya = np.asarray(X, float), np.asarray(y, float)
    if spec.combiner == GB:
        return tree_arrays(gb_combiner().fit(Xa, ya))
    if spec.combiner == RIDGE:
        pipe = ridge_combiner().fit(Xa, ya)
        scaler, ridge = pipe[0], pipe[-1]
        return {
            "mean": np.asarray(scaler.mean_, float),
            "scale": np.asarray(scaler.scale_, float),
            "coef": np.asarray(ridge.coef_, float),
            "intercept": np.asarray(ridge.intercept_, float),
            "alpha": np.asarray(ridge.alpha_, float),
        }
    if spec.combiner == COLUMN:
        return {"column": np.asarray(0, np.int64)}  # the chosen family is the only column
    return {}


def predict_combiner(combiner: str, arrays: dict[str, NDArray], X: NDArray) -> NDArray:
    """The fitted combiner's prediction for the rows of ``X`` (finite values only)."""
    Xa = np.asarray(X, float)
    if Xa.ndim != 2 or not np.isfinite(Xa).all():
        raise ValueError("features must be a finite 2-d array; rows with a missing feature "
                         "have no prediction")  # fmt: skip
    if combiner == GB:
        check_tree_arrays(arrays, Xa.shape[1])
        return predict_trees(arrays, Xa)
    if combiner == RIDGE:
        return ((Xa - arrays["mean"]) / arrays["scale"]) @ arrays["coef"] + float(
            arrays["intercept"]
        )
    if combiner == COLUMN:
        return Xa[:, int(arrays["column"])].copy()
    if combiner == MEAN:
        return Xa.mean(axis=1)
    raise ValueError(f"unknown combiner {combiner!r}")


def oof_scores(spec: ArmSpec, X: pd.DataFrame, y: pd.Series, candidates: pd.DataFrame) -> NDArray:
    """The arm's out-of-fold predictions on the fixed partition (seed 42, 5 folds).

    The best single model is chosen inside each training fold among ``candidates`` (every
    candidate family's holistic mean), so its estimate carries no selection optimism.
    """
    if spec.combiner == GB:
        return oof_predict(gb_combiner(), X, y)
    if spec.combiner == RIDGE:
        return oof_predict(ridge_combiner(), X, y)
    if spec.combiner == COLUMN:
        return oof_predict(BestColumn(), candidates, y)
    return np.asarray(X, float).mean(axis=1)


def resampled_accuracy(
    y: Sequence[float] | NDArray, pred: Sequence[float] | NDArray, *, n_resamples: int, seed: int
) -> dict[str, NDArray]:
    """Each metric of :data:`METRICS` on the resamples ``resample_indices(n, B, seed)``.

    Two calls with the same ``n`` and seed resample the same images, so their columns are
    paired; precision@10% shares ties at the cut-offs as notebook 04 does.
    """
    y, pred = np.asarray(y, float), np.asarray(pred, float)
    out = {
        metric: bootstrap_arms(y, {"arm": pred}, metric, n_resamples=n_resamples, seed=seed)[:, 0]
        for metric in ("spearman", "kendall_b")
    }
    idx = resample_indices(y.size, n_resamples, seed)
    m = top_size(y.size, TOP_FRACTION)
    out["precision@10%"] = (top_weights(y[idx], m) * top_weights(pred[idx], m)).sum(axis=1) / m
    return out


def point_accuracy(y: Sequence[float] | NDArray, pred: Sequence[float] | NDArray) -> dict:
    """Each metric of :data:`METRICS` on all the images."""
    y, pred = np.asarray(y, float), np.asarray(pred, float)
    return {
        "spearman": spearman(y, pred),
        "kendall_b": kendall_b(y, pred),
        "precision@10%": precision_at_top(y, pred, TOP_FRACTION),
    }


def accuracy(
    y: Sequence[float] | NDArray,
    pred: Sequence[float] | NDArray,
    *,
    n_resamples: int,
    seed: int,
) -> pd.DataFrame:
    """ρ, τ_b and precision@10% of ``pred`` against ``y``, with 95% bootstrap intervals."""
    values = point_accuracy(y, pred)
    boot = resampled_accuracy(y, pred, n_resamples=n_resamples, seed=seed)
    rows = []
    for metric in METRICS:
        b = boot[metric]
        lo, hi = percentile_ci(b[np.isfinite(b)])
        rows.append({"metric": metric, "value": values[metric], "ci_low": lo, "ci_high": hi})
    out = pd.DataFrame(rows)
    out["n"] = len(np.asarray(y))
    return out


def dataset_sha256(labels: pd.Series, paths: pd.Series) -> str:
    """SHA-256 of the training table: each image id, its file's SHA-256 and its label."""
    h = hashlib.sha256()
    for item in sorted(labels.index.astype(str)):
        digest = hashlib.sha256(Path(paths[item]).read_bytes()).hexdigest()
        h.update(f"{item}\t{digest}\t{float(labels[item])!r}\n".encode())
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    """Versions of judgepanel and of the packages the fit and the prediction rest on."""
    out: dict[str, str] = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def prompt_hashes(spec: ArmSpec, rubric: Rubric | None = None) -> dict[str, str]:
    """Each prompt the arm's features need -> the hash of its text (image left out)."""
    rubric = rubric or load_rubric()
    out = {"holistic": rubric.prompt_hash("holistic")} if spec.holistic else {}
    out.update({f"dimension:{d}": rubric.prompt_hash("dimension", d) for d in spec.dimensions})
    return out


def check_repetitions(scores: pd.DataFrame, needed: Sequence[tuple[str, str, str, int]]) -> None:
    """Refuse a design whose repetitions the answers do not have (another runs file's).

    A model records k and R, and ``predict`` plans that many calls per image; a fit on
    answers with fewer repetitions (a quick report's store read with the full design)
    would record a design its features never had. More stored repetitions than the
    design's are allowed: another run (the temperature grid) may add some at the same
    temperature, and a dimension feature averages what is stored, as the study's blocks do.
    """
    have = scores.groupby(["family", "kind", "dimension"])["repetition"].max() + 1
    for fam, call_type, dim, reps in needed:
        got = int(have.get((fam, call_type, dim), 0))
        if got < reps:
            what = f"{call_type}{':' + dim if dim else ''}"
            raise ValueError(
                f"the store holds {got} {what} repetitions of {fam}, the scoring design "
                f"{reps}: the run was scored under another design (a quick report's is in "
                "outputs/quick-runs.yaml; give it with --runs-file)"
            )


def fit_arm(
    spec: ArmSpec,
    scores: pd.DataFrame,
    y: pd.Series,
    families: dict[str, str],
    *,
    k: int,
    r: int,
    temperature: float,
    n_resamples: int,
    seed: int,
    extra: dict[str, Any] | None = None,
    rubric: Rubric | None = None,
) -> DeployedModel:
    """Fit ``spec`` on the labelled images ``y`` (index: item) from their ok answers.

    Args:
        spec: the arm.
        scores: ok answers (``score_table``): item, family, kind, dimension, repetition, value.
        y: the human mean of every training image; every feature must exist for each.
        families: family name -> model id of the candidate panel (the best single model is
            chosen among them and alone is kept).
        k, r, temperature: the scoring design the answers came from.
        n_resamples, seed: the bootstrap of the out-of-fold accuracy.
        extra: more metadata (the run, the training dataset and its hash, prices, store).
    """
    names = list(families)
    items = list(y.index.astype(str))
    y = pd.Series(np.asarray(y, float), index=items)
    candidates = arm_features(scores, ArmSpec("H", "mean", (), MEAN), names, k, items)
    if spec.combiner == COLUMN:
        best, _ = best_single(candidates, y)
        names = [best]
    check_repetitions(scores, calls_needed(spec, names, k, r))
    X = arm_features(scores, spec, names, k, items)
    bad = X.columns[X.isna().any()].tolist()
    if bad:
        raise ValueError(f"training features missing for some labelled images: {bad[:5]}")
    oof = oof_scores(spec, X, y, candidates)
    acc = accuracy(y, oof, n_resamples=n_resamples, seed=seed)
    rubric = rubric or load_rubric()
    meta: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "arm": spec.name,
        "combiner": spec.combiner,
        "holistic": spec.holistic,
        "dimensions": list(spec.dimensions),
        "families": {f: families[f] for f in names},
        "candidate_families": dict(families),
        "rubric_sha256": rubric.sha256,
        "prompt_hashes": prompt_hashes(spec, rubric),
        "k": int(k),
        "r": int(r),
        "temperature": float(temperature),
        "calls": [list(c) for c in calls_needed(spec, names, k, r)],
        "feature_columns": feature_columns(spec, names, k),
        "n_train": len(items),
        "fold_seed": FOLD_SEED,
        "n_folds": N_FOLDS,
        "bootstrap": {"n_resamples": int(n_resamples), "seed": int(seed)},
        "oof_accuracy": acc.to_dict(orient="records"),
        "packages": package_versions(),
        **(extra or {}),
    }
    arrays = {f"combiner.{n}": a for n, a in fit_combiner(spec, X, y).items()}
    arrays["train_X"] = X.to_numpy(float)
    arrays["train_y"] = y.to_numpy(float)
    return DeployedModel(meta, arrays)


def predict_model(model: DeployedModel, features: pd.DataFrame) -> pd.Series:
    """The model's score for each row of ``features`` (its columns); NaN where a feature
    is missing, never a filled-in value."""
    missing = [c for c in model.columns if c not in features.columns]
    if missing:
        raise ValueError(f"the features lack the model's columns {missing[:5]}")
    X = features[model.columns].astype(float)
    complete = X.notna().all(axis=1).to_numpy()
    out = np.full(len(X), np.nan)
    if complete.any():
        out[complete] = predict_combiner(
            model.meta["combiner"], model.combiner_arrays(), X.to_numpy()[complete]
        )
    return pd.Series(out, index=features.index, name="score")
