"""Calibration of the fusion study's tests on worlds with a planted truth.

The synthetic world can plant an effect (``judgepanel_sim.world.mechanism``): how much of
the human consensus lies along a direction the rubric dimensions expose and a holistic
verdict compresses away. A pool of images is scored once per knob setting; this module
draws replicate studies of ``n`` images from it and runs, on each, the same analysis the
report runs on one study: the best single model and the panel mean of the pre-declared
families, ``H+P_gb`` fitted out of fold, and paired bootstrap comparisons under Spearman's
rho and Kendall's tau-b. Over the replicates it measures

* the rejection rate of the one-sided tests (type-I error where nothing is planted,
  power where something is),
* the coverage of the 95% percentile intervals of the paired differences,
* what conditioning on one fold partition does, against the partition-averaged option,
* the recipe's decisions against the truth.

The truth (estimand) of a difference is its expected value under the procedure at ``n``
images, estimated as the mean over the replicates; where nothing is fitted (the panel mean
against the best single model) it is the pool's own value. For a fitted arm that truth is
built from the replicates' own estimates, so testing against it checks the intervals'
width but can never see the estimator's bias. A second truth sees it: each replicate's
procedure (the combiner fitted on all its images, the best family chosen on them) is
scored on the images of the pool it did not use, and the mean of those held-out
differences is the ``truth_heldout`` every rate is also computed against. Every rate
carries a Wilson interval. The pool is read from the files the simulator writes (``python -m
judgepanel_sim pool``), so nothing here imports the simulator.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import norm

from judgepanel.core.prompts import DIMENSIONS
from judgepanel.errors import JudgepanelError
from judgepanel.stats import (
    bootstrap_arms,
    bootstrap_p,
    percentile_ci,
    spearman,
    spearman_brown,
    summarize_paired,
    wilson,
)
from judgepanel.stats.correlation import correlate
from judgepanel.studies.common.combiners import FOLD_SEED, gb_combiner, oof_predict
from judgepanel.studies.fusion.recipe import PANEL, derive_threshold

METRICS: tuple[str, ...] = ("spearman", "kendall_b")
BEST, PANEL_MEAN, HP, HP_AVG = "best single", "panel mean", "H+P_gb", "H+P_gb (partition-averaged)"
PANEL_RESELECT = "panel mean (best re-chosen per resample)"
TESTS: dict[str, str] = {
    PANEL_MEAN: "panel mean against best single",
    PANEL_RESELECT: "panel mean against best single, the best re-chosen in every resample (option)",
    HP: "H+P_gb against best single (primary)",
    HP_AVG: "H+P_gb averaged over fold partitions against best single (option)",
}
"""The arms compared with the best single model, and how the report names each test."""


class PoolError(JudgepanelError, ValueError):
    """The calibration pool is missing or does not say what the study needs.

    In a notebook it shows as its one-line message (IPython's ``_render_traceback_``): the
    fix is a command to run (`make calibrate`), not a bug to trace.
    """

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


@dataclass(frozen=True)
class World:
    """One knob setting of the pool: its labels, knobs and per-image tables.

    Attributes:
        label: the mechanism's short name.
        knobs: ``dimension_evidence``, ``rater_noise``, ``shared_error``.
        scores: per image, the judges' feature columns (``h:<f>``, ``h5:<f>``, ``<f>:<dim>``).
        humans: per image, ``y`` (human mean) and split-half means ``a<j>``, ``b<j>``.
    """

    label: str
    knobs: dict[str, float]
    scores: pd.DataFrame
    humans: pd.DataFrame


@dataclass(frozen=True)
class Pool:
    """The calibration pool: its worlds and the families it scored."""

    folder: Path
    worlds: dict[str, World]
    families: tuple[str, ...]
    predeclared: tuple[str, ...]
    n_images: int


def _read_table(path: Path, columns: Sequence[str]) -> pd.DataFrame:
    if not path.exists():
        raise PoolError(f"{path}: pool file not found (write the pool with `make calibrate`)")
    table = pd.read_csv(path, dtype={"image_id": str}).set_index("image_id")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise PoolError(f"{path}: missing column(s) {', '.join(missing)}")
    bad = table[list(columns)].isna().any(axis=1)
    if bad.any():
        raise PoolError(f"{path}: image {bad.idxmax()} has an empty value")
    return table


def load_pool(folder: str | Path) -> Pool:
    """Read the pool folder written by the simulator; errors name the file and column."""
    folder = Path(folder)
    manifest = folder / "pool.json"
    if not manifest.exists():
        raise PoolError(f"{manifest}: not found (write the pool with `make calibrate`)")
    try:
        meta = json.loads(manifest.read_text(encoding="utf-8"))
        families = tuple(meta["families"])
        predeclared = tuple(meta["predeclared"])
        entries = list(meta["worlds"])
    except (ValueError, KeyError, TypeError) as exc:
        raise PoolError(f"{manifest}: unreadable manifest ({exc})") from None
    feature_cols = [f"h:{f}" for f in families] + [f"h5:{f}" for f in families]
    feature_cols += [f"{f}:{d}" for f in predeclared for d in DIMENSIONS]
    cache: dict[str, pd.DataFrame] = {}
    worlds = {}
    for w in entries:
        sfile = str(w["scores"])
        if sfile not in cache:
            cache[sfile] = _read_table(folder / sfile, feature_cols)
        humans = _read_table(folder / str(w["ratings"]), ["y", "a0", "b0"])
        scores = cache[sfile]
        if not humans.index.equals(scores.index):
            humans = humans.reindex(scores.index)
            if humans["y"].isna().any():
                raise PoolError(f"{folder / w['ratings']}: images differ from {sfile}")
        knobs = {k: float(w[k]) for k in ("dimension_evidence", "rater_noise", "shared_error")}
        worlds[str(w["label"])] = World(str(w["label"]), knobs, scores, humans)
    return Pool(folder, worlds, families, predeclared, int(meta["n_images"]))


# --- one replicate ---------------------------------------------------------------------------


def _best(H: pd.DataFrame, y: np.ndarray) -> str:
    rhos = {c: spearman(y, H[c].to_numpy(float)) for c in H.columns}
    return max(rhos, key=rhos.__getitem__)


def replicate_arms(
    world: World,
    rows: np.ndarray,
    predeclared: Sequence[str],
    *,
    partitions: int = 1,
) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, float]]:
    """The human mean and every arm on the images ``rows`` of ``world``.

    Returns ``(y, arms, extra)``: ``arms`` holds the best single model (chosen on these
    images), the panel mean, ``H+P_gb`` on the study's fold partition and, with
    ``partitions`` > 1, ``H+P_gb`` averaged over that many partitions; ``extra`` the spread
    of Δρ across the single partitions and the probe's headroom.
    """
    s = world.scores.iloc[rows]
    h = world.humans.iloc[rows]
    y = h["y"].to_numpy(float)
    H = s[[f"h:{f}" for f in predeclared]]
    P = s[[f"{f}:{d}" for f in predeclared for d in DIMENSIONS]]
    X = pd.concat([H, P], axis=1).to_numpy(float)
    best = H[_best(H, y)].to_numpy(float)
    arms = {BEST: best, PANEL_MEAN: H.mean(axis=1).to_numpy(float)}
    fits = [oof_predict(gb_combiner(), X, y, seed=FOLD_SEED + j) for j in range(partitions)]
    arms[HP] = fits[0]
    extra = {"headroom": probe_headroom(s, h)}
    extra.update(heldout_arms(world, rows, predeclared, X, y, best=_best(H, y)))
    if partitions > 1:
        arms[HP_AVG] = np.mean(fits, axis=0)
        rho_best = spearman(y, best)
        deltas = [spearman(y, f) - rho_best for f in fits]
        extra["partition_sd"] = float(np.std(deltas, ddof=1))
    return y, arms, extra


def heldout_arms(
    world: World,
    rows: np.ndarray,
    predeclared: Sequence[str],
    X: np.ndarray,
    y: np.ndarray,
    *,
    best: str,
) -> dict[str, float]:
    """Each arm minus the best single model on the pool images the replicate did not use.

    The procedure is what a study of these images would deploy: the combiner fitted on all
    of them, the best family as chosen on them. Returns ``heldout:<arm>:<metric>`` values
    (NaN when the replicate used the whole pool).
    """
    rest = np.setdiff1d(np.arange(len(world.scores)), rows)
    out: dict[str, float] = {}
    if rest.size < 3:
        return {f"heldout:{a}:{m}": np.nan for a in (PANEL_MEAN, HP) for m in METRICS}
    s = world.scores.iloc[rest]
    y_rest = world.humans["y"].to_numpy(float)[rest]
    H = s[[f"h:{f}" for f in predeclared]]
    X_rest = pd.concat([H, s[[f"{f}:{d}" for f in predeclared for d in DIMENSIONS]]], axis=1)
    fused = gb_combiner().fit(X, y).predict(X_rest.to_numpy(float))
    arms = {PANEL_MEAN: H.mean(axis=1).to_numpy(float), HP: fused}
    best_rest = H[best].to_numpy(float)
    for metric in METRICS:
        base = correlate(y_rest, best_rest, metric)
        for arm, values in arms.items():
            out[f"heldout:{arm}:{metric}"] = correlate(y_rest, values, metric) - base
    return out


def probe_headroom(scores: pd.DataFrame, humans: pd.DataFrame) -> float:
    """1 - (the best probe family's rho at k=5) / (the split-half noise ceiling)."""
    y = humans["y"].to_numpy(float)
    probes = [c for c in scores.columns if c.startswith("h5:")]
    rho = max(spearman(y, scores[c].to_numpy(float)) for c in probes)
    splits = [c[1:] for c in humans.columns if c.startswith("a")]
    r = np.mean(
        [spearman(humans[f"a{j}"].to_numpy(float), humans[f"b{j}"].to_numpy(float)) for j in splits]
    )
    ceiling = float(np.sqrt(max(spearman_brown(r), 0.0)))
    return 1.0 - rho / ceiling


def run_replicate(
    world: World,
    rows: np.ndarray,
    predeclared: Sequence[str],
    *,
    n_resamples: int,
    seed: int,
    partitions: int = 1,
) -> list[dict[str, object]]:
    """Every test of one replicate study: one row per (arm against best single, metric).

    Rows carry the report's columns (``delta``, ``ci_low``, ``ci_high``, ``p``), ``q05``,
    the 5th percentile of the bootstrap differences (the one-sided 95% lower bound), and
    ``heldout_delta``, the same procedure's difference on the pool images it did not use
    (:func:`heldout_arms`; the partition-averaged option deploys the same full fit).
    """
    y, arms, extra = replicate_arms(world, rows, predeclared, partitions=partitions)
    heldout = {k: extra.pop(k) for k in list(extra) if k.startswith("heldout:")}
    names = list(arms)
    singles = {f: world.scores[f"h:{f}"].to_numpy(float)[rows] for f in predeclared}
    out = []

    def row(name: str, metric: str, delta: float, deltas: np.ndarray, res=None) -> dict:
        deltas = deltas[np.isfinite(deltas)]
        low, high = (res.ci_low, res.ci_high) if res is not None else percentile_ci(deltas)
        return {
            "world": world.label,
            **world.knobs,
            "test": name,
            "metric": metric,
            "delta": delta,
            "ci_low": low,
            "ci_high": high,
            "p": res.p if res is not None else bootstrap_p(deltas, "greater"),
            "q05": float(np.quantile(deltas, 0.05)),
            "heldout_delta": heldout[
                f"heldout:{HP if name in (HP, HP_AVG) else PANEL_MEAN}:{metric}"
            ],
            **extra,
        }

    for metric in METRICS:
        samples = bootstrap_arms(y, {**arms, **singles}, metric, n_resamples=n_resamples, seed=seed)
        full = {k: correlate(y, arms[k], metric) for k in names}
        b = names.index(BEST)
        for i, name in enumerate(names):
            if name == BEST:
                continue
            res = summarize_paired(
                samples[:, i], samples[:, b], full[name], full[BEST], metric=metric, n=y.size
            )
            out.append(row(name, metric, res.delta, samples[:, i] - samples[:, b], res))
        # The option: the best single model is chosen again on every resample, so the
        # interval carries the uncertainty of having picked it on the same images.
        rechosen = np.nanmax(samples[:, len(names) :], axis=1)
        p = names.index(PANEL_MEAN)
        delta = full[PANEL_MEAN] - full[BEST]
        out.append(row(PANEL_RESELECT, metric, delta, samples[:, p] - rechosen))
    return out


# --- many replicates -------------------------------------------------------------------------


def draw_rows(n_pool: int, n: int, n_replicates: int, seed: int) -> list[np.ndarray]:
    """Replicate samples: ``n`` images without replacement from the pool, one per replicate."""
    if not 1 < n <= n_pool:
        raise ValueError(f"replicate size {n} must lie in (1, {n_pool}] (the pool's size)")
    rng = np.random.default_rng(seed)
    return [np.sort(rng.choice(n_pool, n, replace=False)) for _ in range(n_replicates)]


def run_world(
    pool: Pool,
    label: str,
    *,
    n: int = 500,
    n_replicates: int = 200,
    n_resamples: int = 1000,
    partitions: int = 1,
    partition_replicates: int | None = None,
    seed: int = 0,
    n_jobs: int = -1,
) -> pd.DataFrame:
    """``n_replicates`` replicate studies of ``n`` images from one world, in parallel.

    The first ``partition_replicates`` (default: all) also fit ``H+P_gb`` on ``partitions``
    fold partitions, for the partition-averaged option. Replicate ``r`` draws its images
    and bootstrap resamples from seeds fixed by ``seed`` and ``r``, so a rerun gives the
    same table whatever ``n_jobs``.
    """
    if partition_replicates is None:
        partition_replicates = n_replicates
    if label not in pool.worlds:
        raise PoolError(f"{pool.folder}: no world {label!r}; worlds are {', '.join(pool.worlds)}")
    world = pool.worlds[label]
    draws = draw_rows(pool.n_images, n, n_replicates, seed)
    per = Parallel(n_jobs=n_jobs)(
        delayed(run_replicate)(
            world,
            rows,
            pool.predeclared,
            n_resamples=n_resamples,
            seed=seed * 100_003 + r,
            partitions=partitions if r < partition_replicates else 1,
        )
        for r, rows in enumerate(draws)
    )
    frames = [pd.DataFrame(rows).assign(replicate=r) for r, rows in enumerate(per)]
    return pd.concat(frames, ignore_index=True)


def pool_values(pool: Pool, label: str) -> dict[str, float]:
    """Panel mean minus best single on the whole pool (best chosen on the pool), per metric."""
    world = pool.worlds[label]
    y = world.humans["y"].to_numpy(float)
    H = world.scores[[f"h:{f}" for f in pool.predeclared]]
    best = H[_best(H, y)].to_numpy(float)
    panel = H.mean(axis=1).to_numpy(float)
    return {m: correlate(y, panel, m) - correlate(y, best, m) for m in METRICS}


def add_truth(reps: pd.DataFrame, pool: Pool) -> pd.DataFrame:
    """Each row's estimands: ``truth`` (the pool value for the panel mean, else the
    replicates' mean) and ``truth_heldout`` (the mean of the replicates' held-out
    differences), with coverage and the one-sided test against each."""
    out = reps.copy()
    mean = out.groupby(["world", "test", "metric"])["delta"].transform("mean")
    out["truth"] = mean
    for label in out["world"].unique():
        values = pool_values(pool, label)
        for metric, v in values.items():
            panel = out["test"].isin([PANEL_MEAN, PANEL_RESELECT])
            sel = (out["world"] == label) & panel & (out["metric"] == metric)
            out.loc[sel, "truth"] = v
    out["covered"] = (out["ci_low"] <= out["truth"]) & (out["truth"] <= out["ci_high"])
    out["rejected"] = out["p"] < 0.05
    out["rejected_at_truth"] = out["q05"] > out["truth"]
    held = out.groupby(["world", "test", "metric"])["heldout_delta"].transform("mean")
    out["truth_heldout"] = held
    out["covered_heldout"] = (out["ci_low"] <= held) & (held <= out["ci_high"])
    out["rejected_at_heldout"] = out["q05"] > held
    return out


def rate_table(reps: pd.DataFrame, column: str, by: Sequence[str]) -> pd.DataFrame:
    """The share of replicates where ``column`` holds, per group, with a Wilson 95% CI."""
    g = reps.groupby(list(by), sort=False)[column]
    table = pd.DataFrame({"hits": g.sum().astype(int), "n": g.size()}).reset_index()
    low, high = wilson(table["hits"].to_numpy(), table["n"].to_numpy())
    table["rate"] = table["hits"] / table["n"]
    table["ci_low"], table["ci_high"] = low, high
    return table


def summarize(reps: pd.DataFrame) -> pd.DataFrame:
    """Per world, test and metric: the truth, the rejection rate, coverage, misses by side.

    Columns: ``truth``, ``mean_delta``, ``reject`` (p < 0.05) and its CI,
    ``reject_at_truth`` (the test of "no more than the truth": the type-I error of a world
    whose true difference is exactly the estimand) and its CI, ``coverage`` and its CI,
    ``miss_low`` (interval wholly above the truth) and ``miss_high``, ``n``; and against
    the held-out truth: ``truth_heldout``, ``bias`` (mean estimate minus it),
    ``bias_low``/``bias_high`` (a normal 95% interval over the replicates),
    ``reject_at_heldout`` and ``coverage_heldout`` with their CIs.
    """
    keys = ["world", "dimension_evidence", "rater_noise", "shared_error", "test", "metric"]
    base = reps.groupby(keys, sort=False).agg(
        truth=("truth", "first"),
        mean_delta=("delta", "mean"),
        n=("delta", "size"),
        truth_heldout=("truth_heldout", "first"),
    )
    out = base.reset_index()
    # the bias's interval: the replicate-to-replicate spread of estimate minus held-out value
    gap = reps.assign(gap=reps["delta"] - reps["heldout_delta"]).groupby(keys, sort=False)["gap"]
    out["bias"] = gap.mean().to_numpy()
    half = norm.ppf(0.975) * (gap.std(ddof=1) / np.sqrt(gap.size())).to_numpy()
    out["bias_low"], out["bias_high"] = out["bias"] - half, out["bias"] + half
    for column, name in (
        ("rejected", "reject"),
        ("rejected_at_truth", "reject_at_truth"),
        ("covered", "coverage"),
        ("rejected_at_heldout", "reject_at_heldout"),
        ("covered_heldout", "coverage_heldout"),
    ):
        t = rate_table(reps, column, keys)
        out[name] = t["rate"].to_numpy()
        out[f"{name}_low"] = t["ci_low"].to_numpy()
        out[f"{name}_high"] = t["ci_high"].to_numpy()
    miss_low = reps.assign(m=reps["ci_low"] > reps["truth"]).groupby(keys, sort=False)["m"]
    miss_high = reps.assign(m=reps["ci_high"] < reps["truth"]).groupby(keys, sort=False)["m"]
    out["miss_low"] = miss_low.mean().to_numpy()
    out["miss_high"] = miss_high.mean().to_numpy()
    return out


def exact_coverage(n: int, n_pool: int, confidence: float = 0.95) -> float:
    """What an exact interval would cover when ``n`` images are drawn without replacement
    from a pool of ``n_pool``: the finite pool shrinks the true spread by sqrt(1 - n/N), so
    an interval sized for an infinite population is that much too wide."""
    z = norm.ppf(0.5 + confidence / 2) / np.sqrt(1.0 - n / n_pool)
    return float(2 * norm.cdf(z) - 1)


def misses(row: pd.Series, column: str, nominal: float) -> bool:
    """Whether a rate's Wilson interval excludes its nominal value."""
    return not row[f"{column}_low"] <= nominal <= row[f"{column}_high"]


# --- the recipe ------------------------------------------------------------------------------


def recipe_confusion(reps: pd.DataFrame, *, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The recipe's decision in every replicate against whether a panel truly pays.

    A replicate is one deployment: its probe headroom is the recipe's input; the rule
    (``recipe.derive_threshold``, panel if headroom >= a cut) is learned from the other
    half of the replicates, where "paid" means the primary test was significant in that
    replicate, as the trio retest defines it (two-fold cross-fitting over replicates, so no
    replicate judges its own rule). The truth is the world's estimand of H+P_gb against the
    best single model under rho: a panel pays where it is above zero.

    Returns:
        ``(confusion, rules)``: counts and rates of (truth, decision) with Wilson CIs on the
        share of each truth row, and the two rules learned.
    """
    prim = reps[(reps["test"] == HP) & (reps["metric"] == "spearman")].copy()
    prim = prim.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    half = rng.permutation(len(prim)) % 2
    decisions = np.empty(len(prim), dtype=object)
    rules = []
    for fold in (0, 1):
        train = prim[half != fold]
        rule = derive_threshold(train["headroom"].to_numpy(), train["rejected"].to_numpy())
        rules.append({"fold": fold, **rule.as_row()})
        test = half == fold
        decisions[test] = np.where(
            prim.loc[test, "headroom"].to_numpy() >= rule.threshold, PANEL, "single"
        )
    prim["decision"] = decisions
    prim["truth_pays"] = np.where(prim["truth"] > 0, "panel pays", "panel does not pay")
    counts = prim.groupby(["truth_pays", "decision"]).size().unstack(fill_value=0)
    for col in (PANEL, "single"):
        if col not in counts.columns:
            counts[col] = 0
    counts = counts[[PANEL, "single"]]
    rows = []
    for truth, r in counts.iterrows():
        n = int(r.sum())
        right = int(r[PANEL] if truth == "panel pays" else r["single"])
        low, high = wilson(right, n)
        rows.append(
            {
                "truth": truth,
                "says panel": int(r[PANEL]),
                "says single": int(r["single"]),
                "n": n,
                "right": right / n,
                "ci_low": low,
                "ci_high": high,
            }
        )
    return pd.DataFrame(rows), pd.DataFrame(rules)


# --- the whole study -------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyPlan:
    """How many replicates each world gets.

    Attributes:
        n: images per replicate study.
        null_replicates: replicates of the null world (type-I error; at least 200).
        curve_replicates: replicates of each other world on the power curve.
        side_replicates: replicates of each headroom or error-correlation world.
        partitions: fold partitions of the partition-averaged option.
        partition_replicates: null-world replicates that also fit the option.
        n_resamples: bootstrap resamples per test.
        seed: seed of the draws and resamples.
    """

    n: int = 500
    null_replicates: int = 200
    curve_replicates: int = 40
    side_replicates: int = 25
    partitions: int = 3
    partition_replicates: int = 60
    n_resamples: int = 1000
    seed: int = 0


def curve_worlds(pool: Pool) -> list[str]:
    """The worlds of the power curve (demo rater noise and error sharing), by planted effect."""
    labels = [w for w in pool.worlds.values() if w.knobs["rater_noise"] == 1.0]
    null = min(labels, key=lambda w: w.knobs["dimension_evidence"])
    same = [w for w in labels if w.knobs["shared_error"] == null.knobs["shared_error"]]
    return [w.label for w in sorted(same, key=lambda w: w.knobs["dimension_evidence"])]


def run_study(pool: Pool, plan: StudyPlan, *, n_jobs: int = -1) -> pd.DataFrame:
    """Every replicate of every world, with its truth (see `add_truth`)."""
    curve = curve_worlds(pool)
    frames = []
    for i, label in enumerate(pool.worlds):
        is_null = label == curve[0]
        if is_null:
            count = plan.null_replicates
        else:
            count = plan.curve_replicates if label in curve else plan.side_replicates
        frames.append(
            run_world(
                pool,
                label,
                n=plan.n,
                n_replicates=count,
                n_resamples=plan.n_resamples,
                partitions=plan.partitions if is_null else 1,
                partition_replicates=plan.partition_replicates,
                seed=plan.seed * 1_000 + i,
                n_jobs=n_jobs,
            )
        )
    return add_truth(pd.concat(frames, ignore_index=True), pool)
