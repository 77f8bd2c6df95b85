"""Headroom against the human noise ceiling, and the retest of when fusion pays.

The fusion paper, section 5.5: before any dimension scoring, a cheap probe (every family's
holistic mean over its first k=5 runs) says how close the best single model already is to
the noise ceiling. Its *fraction* of the ceiling is rho_best / ceiling; its *headroom* is
1 - fraction. The study's hypothesis is that fusion pays where headroom is large. Each
dataset is one point, so the hypothesis is retested across every trio of every dataset
(:func:`trio_predictors`, :func:`retest_predictors`), with the caveats the computation exposes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

from judgepanel.claims import wording
from judgepanel.datasets import Dataset
from judgepanel.stats import (
    NoiseCeiling,
    kendall_b,
    noise_ceiling,
    percentile_ci,
    resample_indices,
    spearman,
    spearman_brown,
    split_halves,
)
from judgepanel.stats.bootstrap import multiplicities
from judgepanel.stats.correlation import weighted_spearman
from judgepanel.studies.common.features import holistic_means, holistic_runs

PROBE_K = 5
"""Holistic repetitions of the probe (the study's cheap pre-scoring measurement)."""


def probe_means(scores: pd.DataFrame, families: Sequence[str], k: int = PROBE_K) -> pd.DataFrame:
    """Each family's holistic mean over its first ``k`` repetitions (the probe's features).

    Raises if a family has fewer than ``k`` holistic repetitions in the store, so a probe
    never silently averages fewer runs than it says.
    """
    runs = holistic_runs(scores, families)
    for fam in families:
        have = len(runs[fam].columns) if fam in runs.columns.get_level_values(0) else 0
        if have < k:
            raise ValueError(f"family {fam!r} has {have} holistic repetitions; the probe needs {k}")
    return holistic_means(scores, families, k)


def pairwise_agreement(H: pd.DataFrame) -> float:
    """Mean pairwise Spearman rho between the columns of ``H`` (the judges' agreement)."""
    cols = list(H.columns)
    if len(cols) < 2:
        raise ValueError("agreement needs at least two judges")
    rhos = [spearman(H[a].to_numpy(float), H[b].to_numpy(float)) for a, b in combinations(cols, 2)]
    return float(np.mean(rhos))


@dataclass(frozen=True)
class Probe:
    """The k-run holistic probe of one dataset against its noise ceiling.

    Attributes:
        dataset: the dataset key.
        k: holistic repetitions per family in the probe.
        n_images: images scored.
        ceiling: the split-half noise ceiling of the human mean on those images.
        table: one row per family: ``family``, ``rho``, ``tau_b``, ``fraction``
            (rho / ceiling) and ``headroom`` (1 - fraction), best first.
        best: the family with the highest probe rho.
        fraction: the best family's fraction of the ceiling.
        headroom: 1 - fraction.
        agreement: mean pairwise Spearman of the ``agreement_families``' probe means.
        agreement_families: the judges whose agreement is reported (the pre-declared ones).
    """

    dataset: str
    k: int
    n_images: int
    ceiling: NoiseCeiling
    table: pd.DataFrame
    best: str
    fraction: float
    headroom: float
    agreement: float
    agreement_families: tuple[str, ...]


def holistic_probe(
    scores: pd.DataFrame,
    y: pd.Series,
    ratings: pd.DataFrame | Dataset,
    families: Sequence[str],
    agreement_families: Sequence[str],
    *,
    k: int = PROBE_K,
    n_splits: int = 200,
    seed: int = 0,
    dataset: str = "",
) -> Probe:
    """Run the probe: every family at ``k`` runs, against the ceiling of the same images.

    Args:
        scores: :func:`judgepanel.core.frames.score_table` output for the dataset.
        y: the human mean, indexed by image id (the images the analysis uses).
        ratings: the dataset (its ceiling is the one the data supports: per-rater
            split-half, or a split of each image's votes), or its long per-rater ratings
            (image_id, rater_id, score).
        families: the probed families.
        agreement_families: whose pairwise agreement to report.
        k: probe repetitions.
        n_splits: random split-halves of the ceiling.
        seed: seed of the splits.
        dataset: a label.
    """
    H = probe_means(scores, families, k).reindex(y.index)
    if H.isna().any().any():
        missing = H.index[H.isna().any(axis=1)]
        raise ValueError(f"{len(missing)} image(s) lack a probe score, e.g. {list(missing[:3])}")
    ceiling = noise_ceiling(ratings, items=y.index, n_splits=n_splits, seed=seed)
    if ceiling.method == "none":
        raise ValueError(f"no noise ceiling for the probe: {ceiling.reason}")
    yv = y.to_numpy(float)
    rows = []
    for fam in families:
        x = H[fam].to_numpy(float)
        rho = spearman(yv, x)
        rows.append(
            {
                "family": fam,
                "rho": rho,
                "tau_b": kendall_b(yv, x),
                "fraction": rho / ceiling.ceiling,
                "headroom": 1 - rho / ceiling.ceiling,
            }
        )
    table = pd.DataFrame(rows).sort_values("rho", ascending=False).reset_index(drop=True)
    best = table.iloc[0]
    return Probe(
        dataset=dataset,
        k=k,
        n_images=len(y),
        ceiling=ceiling,
        table=table,
        best=str(best["family"]),
        fraction=float(best["fraction"]),
        headroom=float(best["headroom"]),
        agreement=pairwise_agreement(H[list(agreement_families)]),
        agreement_families=tuple(agreement_families),
    )


@dataclass(frozen=True)
class HeadroomInterval:
    """Bootstrap interval of the probe's fraction of the ceiling and of its headroom.

    Attributes:
        family: the probe's best family (held fixed across resamples).
        fraction, fraction_low, fraction_high: rho_best / ceiling and its percentile CI.
        headroom, headroom_low, headroom_high: 1 - fraction and its CI.
        n_resamples: image resamples; n_splits: rater splits per resample.
        confidence: the interval's level.
    """

    family: str
    fraction: float
    fraction_low: float
    fraction_high: float
    headroom: float
    headroom_low: float
    headroom_high: float
    n_resamples: int
    n_splits: int
    confidence: float


def headroom_interval(
    probe: Probe,
    x: pd.Series,
    y: pd.Series,
    ratings: pd.DataFrame | Dataset,
    *,
    n_resamples: int = 2000,
    n_splits: int = 20,
    seed: int = 0,
    confidence: float = 0.95,
) -> HeadroomInterval:
    """Percentile interval of the headroom, resampling images for both rho and ceiling.

    Each resample draws images with replacement; on it, the best family's Spearman rho
    with the human mean and the split-half ceiling (``n_splits`` fixed splits, each
    split-half correlation computed on the resampled images, averaged, Spearman-Brown
    corrected, square-rooted) are both recomputed. The best family is held fixed: the
    interval describes the model the probe would deploy, not a re-selection.

    Args:
        probe: the probe whose point estimates the interval belongs to.
        x: the best family's probe scores, indexed like ``y``.
        y: the human mean.
        ratings: the dataset or its long per-rater ratings, as :func:`holistic_probe`.
    """
    items = y.index
    idx = resample_indices(len(items), n_resamples, seed)
    weights = multiplicities(idx, len(items))
    rho = weighted_spearman(y.to_numpy(float), x.reindex(items).to_numpy(float), weights)
    a, b = split_halves(ratings, items, n_splits=n_splits, seed=seed)
    r = np.mean([weighted_spearman(a[s], b[s], weights) for s in range(n_splits)], axis=0)
    with np.errstate(invalid="ignore"):
        ceiling = np.sqrt(spearman_brown(r))
    frac = rho / ceiling
    frac = frac[np.isfinite(frac)]
    lo, hi = percentile_ci(frac, confidence)
    return HeadroomInterval(
        family=probe.best,
        fraction=probe.fraction,
        fraction_low=lo,
        fraction_high=hi,
        headroom=probe.headroom,
        headroom_low=1 - hi,
        headroom_high=1 - lo,
        n_resamples=int(frac.size),
        n_splits=n_splits,
        confidence=confidence,
    )


def trio_predictors(
    probe_H: pd.DataFrame, y: pd.Series, ceiling: float, trios: Sequence[Sequence[str]]
) -> pd.DataFrame:
    """The two candidate predictors of fusion gain, per trio, from the probe alone.

    ``headroom`` is 1 - (the trio's best probe rho) / ceiling; ``agreement`` is the
    trio's mean pairwise Spearman of probe means. Within one dataset the ceiling is a
    constant, so headroom can only take as many values as there are distinct best members.
    """
    yv = y.to_numpy(float)
    rho = {f: spearman(yv, probe_H[f].to_numpy(float)) for f in probe_H.columns}
    rows = []
    for t in trios:
        best = max(t, key=lambda f: rho[f])
        rows.append(
            {
                "trio": "+".join(t),
                "probe_best": best,
                "probe_best_rho": rho[best],
                "headroom": 1 - rho[best] / ceiling,
                "agreement": pairwise_agreement(probe_H[list(t)]),
            }
        )
    return pd.DataFrame(rows)


def _perm_corr(
    u: np.ndarray, v: np.ndarray, groups: np.ndarray, n_perm: int, seed: int
) -> tuple[float, float]:
    """Pearson r of ``u`` and ``v`` with a two-sided p from permuting ``u`` within groups."""

    def r_rows(um: np.ndarray) -> np.ndarray:
        uc = um - um.mean(axis=-1, keepdims=True)
        vc = v - v.mean()
        with np.errstate(invalid="ignore", divide="ignore"):
            return (uc @ vc) / np.sqrt((uc * uc).sum(axis=-1) * (vc @ vc))

    observed = float(r_rows(u[None, :])[0])
    rng = np.random.default_rng(seed)
    perms = np.tile(u, (n_perm, 1))
    for g in np.unique(groups):
        cols = np.flatnonzero(groups == g)
        perms[:, cols] = rng.permuted(perms[:, cols], axis=1)
    null = r_rows(perms)
    p = (1 + np.count_nonzero(np.abs(null) >= abs(observed) - 1e-12)) / (n_perm + 1)
    return observed, float(p)


def _ranks(v: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Midranks over all rows; with ``groups``, each group's mean rank removed.

    Removing group means from the ranks is what the partial Spearman given dataset
    indicators does (it residualises the ranks on the indicators).
    """
    r = rankdata(v)
    if groups is None:
        return r
    out = r.copy()
    for g in np.unique(groups):
        m = groups == g
        out[m] = r[m] - r[m].mean()
    return out


def retest_predictors(
    trios: pd.DataFrame,
    *,
    predictors: Sequence[str] = ("headroom", "agreement"),
    outcome: str = "gain",
    n_permutations: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Does a predictor track fusion gain across trios? Within each dataset and pooled.

    Args:
        trios: one row per (dataset, trio) with ``dataset``, the ``predictors`` and the
            ``outcome`` (H+P_gb rho minus the trio's best member's).
        predictors: columns to test.
        outcome: the gain column.
        n_permutations: permutations for the p-values.
        seed: permutation seed.

    Returns:
        One row per (scope, predictor): ``scope`` (a dataset, ``pooled``, or ``pooled,
        within dataset``), ``n``, ``distinct`` (distinct predictor values), ``rho``
        (Spearman; for the within-dataset pooled scope the partial Spearman given the
        dataset), ``p`` (two-sided permutation p; within-dataset scope permutes within
        each dataset, so the dataset difference cannot drive it).
    """
    rows = []
    datasets = list(dict.fromkeys(trios["dataset"]))
    for pred in predictors:
        scopes: list[tuple[str, pd.DataFrame, bool]] = [
            (d, trios[trios["dataset"] == d], False) for d in datasets
        ]
        if len(datasets) > 1:
            scopes += [("pooled", trios, False), ("pooled, within dataset", trios, True)]
        for scope, sub, within in scopes:
            x = sub[pred].to_numpy(float)
            yv = sub[outcome].to_numpy(float)
            groups = pd.factorize(sub["dataset"])[0] if within else np.zeros(len(sub), dtype=int)
            distinct = int(np.unique(np.round(x, 12)).size)
            if distinct < 2 or np.unique(yv).size < 2:
                rho, p = float("nan"), float("nan")
            elif within:
                rho, p = _perm_corr(
                    _ranks(x, groups), _ranks(yv, groups), groups, n_permutations, seed
                )
            else:
                rho, p = _perm_corr(_ranks(x), _ranks(yv), groups, n_permutations, seed)
            rows.append(
                {
                    "scope": scope,
                    "predictor": pred,
                    "n": len(sub),
                    "distinct": distinct,
                    "rho": rho,
                    "p": p,
                }
            )
    return pd.DataFrame(rows)


def built_in_coupling(
    trios: pd.DataFrame, predictor: str = "headroom", member: str = "best_member_rho"
) -> pd.DataFrame:
    """How far a predictor is the trio's best member's ρ in disguise, per dataset.

    Gain is fused ρ minus the best member's ρ, and within a dataset headroom is a decreasing
    function of the best member's probe ρ. A Spearman of the predictor with the best
    member's ρ near −1 means a positive correlation of the predictor with gain follows from
    the definitions, so the raw gain cannot test the predictor there.

    Returns:
        One row per dataset: ``dataset``, ``n``, ``rho`` (Spearman of ``predictor`` with
        ``member``; NaN when either is constant).
    """
    rows = []
    for name, sub in trios.groupby("dataset", sort=False):
        x, m = sub[predictor].to_numpy(float), sub[member].to_numpy(float)
        defined = np.unique(x).size > 1 and np.unique(m).size > 1
        rows.append(
            {
                "dataset": name,
                "n": len(sub),
                "rho": float(spearmanr(x, m).statistic) if defined else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def between_dataset_share(trios: pd.DataFrame, column: str) -> float:
    """Share of a column's pooled variance that lies between datasets (eta squared).

    Near 1, a pooled correlation involving the column mostly compares the datasets; near 0,
    it mostly reflects variation among trios within them.
    """
    v = trios[column].to_numpy(float)
    total = float(((v - v.mean()) ** 2).sum())
    if total == 0:
        return float("nan")
    means = trios.groupby("dataset")[column].transform("mean").to_numpy(float)
    return float(((means - v.mean()) ** 2).sum() / total)


def correlate_predictors(
    trios: pd.DataFrame, a: str = "headroom", b: str = "agreement"
) -> pd.DataFrame:
    """Pearson r between two predictors, within each dataset and pooled.

    Pooled over datasets that differ in both, r mostly reflects the dataset difference.
    """
    rows = []
    groups = [(d, trios[trios["dataset"] == d]) for d in dict.fromkeys(trios["dataset"])]
    groups.append(("pooled", trios))
    for scope, sub in groups:
        x, z = sub[a].to_numpy(float), sub[b].to_numpy(float)
        r = float(np.corrcoef(x, z)[0, 1]) if x.std() > 0 and z.std() > 0 else float("nan")
        rows.append({"scope": scope, "n": len(sub), "r": r})
    return pd.DataFrame(rows)


def tabulate_probes(probes: Mapping[str, Probe]) -> pd.DataFrame:
    """One row per dataset: ceiling (with its spread over splits), best family, fraction,
    headroom and agreement."""
    rows = []
    for name, p in probes.items():
        rows.append(
            {
                "dataset": name,
                "n_images": p.n_images,
                "k": p.k,
                "ceiling": p.ceiling.ceiling,
                "ceiling_sd": p.ceiling.ceiling_sd,
                "split_half_r": p.ceiling.split_half_r,
                "median_raters": p.ceiling.median_raters,
                "best_family": p.best,
                "best_rho": float(p.table.iloc[0]["rho"]),
                "fraction": p.fraction,
                "headroom": p.headroom,
                "agreement": p.agreement,
                "agreement_families": ", ".join(p.agreement_families),
            }
        )
    return pd.DataFrame(rows)


def probe_dataset(
    scores: pd.DataFrame,
    y: pd.Series,
    ratings: pd.DataFrame | Dataset,
    families: Sequence[str],
    agreement_families: Sequence[str],
    *,
    k: int = PROBE_K,
    n_splits: int = 200,
    n_resamples: int = 2000,
    seed: int = 0,
    dataset: str = "",
) -> tuple[pd.DataFrame, Probe, HeadroomInterval]:
    """One dataset's probe means, its probe and the interval of its headroom, in one call.

    ``ratings`` is the dataset or its per-rater ratings, as :func:`holistic_probe` takes
    it. ``n_splits`` are the ceiling's splits; ``n_resamples`` the interval's image
    resamples (each with :func:`headroom_interval`'s default splits).
    """
    H = probe_means(scores, families, k).reindex(y.index)
    probe = holistic_probe(
        scores, y, ratings, families, agreement_families,
        k=k, n_splits=n_splits, seed=seed, dataset=dataset,
    )  # fmt: skip
    interval = headroom_interval(
        probe, H[probe.best], y, ratings, n_resamples=n_resamples, seed=seed
    )
    return H, probe, interval


INTERVAL_COLUMNS = ("fraction_low", "fraction_high", "headroom_low", "headroom_high")


def probe_table(
    probes: Mapping[str, Probe], intervals: Mapping[str, HeadroomInterval]
) -> pd.DataFrame:
    """:func:`tabulate_probes` with each dataset's fraction and headroom intervals."""
    head = tabulate_probes(probes)
    for col in INTERVAL_COLUMNS:
        head[col] = [getattr(intervals[n], col) for n in probes]
    return head


def family_table(probes: Mapping[str, Probe]) -> pd.DataFrame:
    """Every family of every dataset's probe: ρ, τ_b, fraction of the ceiling, headroom."""
    rows = pd.concat([p.table.assign(dataset=n) for n, p in probes.items()], ignore_index=True)
    return rows[["dataset", "family", "rho", "tau_b", "fraction", "headroom"]]


SPLIT_WORDS = {
    "per_rater_split_half": "each image's raters split in two halves",
    "vote_split_half": "each image's anonymous votes split in two halves",
    "summary_ctt": "halves simulated from each image's mean, SD and count",
}
"""How each ceiling method splits the ratings, in words (`judgepanel.stats.ceiling`)."""
UNIT_WORDS = {
    "per_rater_split_half": "raters",
    "vote_split_half": "votes",
    "summary_ctt": "ratings",
}


def describe_probes(probes: Mapping[str, Probe], intervals: Mapping[str, HeadroomInterval]) -> str:
    """Per dataset: the ceiling, the share of it that the probe model with the highest ρ
    reaches (named as a point-estimate leader: no test separates it from the others) and
    the judges' agreement."""
    return " ".join(
        f"On {n}, the ceiling is {p.ceiling.ceiling:.3f} ({SPLIT_WORDS[p.ceiling.method]}; "
        f"spread over splits {p.ceiling.ceiling_sd:.3f}, median "
        f"{p.ceiling.median_raters:.0f} {UNIT_WORDS[p.ceiling.method]} an image); "
        f"the probe model with the highest ρ by point estimate ({p.best}) reaches "
        f"{p.fraction:.1%} of it "
        f"[{iv.fraction_low:.1%}, {iv.fraction_high:.1%}], a headroom (the share of "
        f"the ceiling it leaves) of "
        f"{p.headroom:.1%} [{iv.headroom_low:.1%}, {iv.headroom_high:.1%}], and the "
        f"pre-declared judges agree at {p.agreement:.3f}."
        for n, p, iv in ((n, p, intervals[n]) for n, p in probes.items())
    )


def headroom_headline(probe: Probe, interval: HeadroomInterval) -> str:
    """The index's headline of one dataset's headroom, in plain words."""
    return (
        f"{probe.dataset}: in a cheap first pass ({probe.k} holistic runs per family: the "
        f"probe), the family with the highest ρ by point estimate ({probe.best}) reaches "
        f"{probe.fraction:.1%} "
        f"{wording.percent_interval(interval.fraction_low, interval.fraction_high)}"
        f" of the noise ceiling ({probe.ceiling.ceiling:.3f}: the expected correlation of a "
        f"noise-free score with the noisy human mean, the square root of that mean's "
        f"reliability, {probe.ceiling.reliability:.3f}; an approximate upper reference, "
        f"which a sample correlation can exceed), a headroom of {probe.headroom:.1%}"
    )
