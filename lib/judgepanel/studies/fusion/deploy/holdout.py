"""Deployment rehearsed on labelled data: fit on one half, score the other as if unlabelled.

The images of a scored dataset are split at random into two halves. The arm is fitted on
the first (``fit_arm``, which also gives its out-of-fold estimate there) and applied to
the second from its stored answers alone, as ``judgepanel predict`` would; then the
second half's labels are revealed. The deployed accuracy is set against the out-of-fold
estimate (the halves are disjoint, so that difference is bootstrapped from independent
resamples of each half) and against the best single model chosen on the first half
(paired over the second half's images).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim, Family, correct, slug
from judgepanel.stats import bootstrap_p, percentile_ci
from judgepanel.studies.fusion.blocks import best_single
from judgepanel.studies.fusion.deploy.arms import ARMS, arm_features, arm_spec
from judgepanel.studies.fusion.deploy.fit import (
    METRICS,
    fit_arm,
    oof_scores,
    point_accuracy,
    predict_model,
    resampled_accuracy,
)

LABELS = {"spearman": "ρ", "kendall_b": "τ_b", "precision@10%": "precision@10%"}
ALTERNATIVES = {"out of fold": "two-sided", "best single": "greater"}
"""The direction each comparison is tested in: the out-of-fold estimate can err either way
(optimistic or pessimistic), so that test is two-sided; the deployed scorer against the best
single model asks for a gain, one-sided."""
MEANING = {wording.BEATS: "the out-of-fold estimate was pessimistic",
           wording.FALLS_BELOW: "the out-of-fold estimate was optimistic"}  # fmt: skip
"""What a direction of the deployed score against its out-of-fold estimate means."""


@dataclass(frozen=True)
class Holdout:
    """The rehearsal's numbers.

    Attributes:
        accuracy: metric x scorer (``deployed``, ``out of fold``, ``best single``): value
            and 95% interval, with the images it was measured on.
        differences: metric x comparison: delta with its interval and p in the direction
            of ``alternative`` (:data:`ALTERNATIVES`), and on the out-of-fold row whether
            the deployed value lies in the out-of-fold interval.
        arm, best_family: the arm and the single model chosen on the training half.
        n_train, n_test: images in each half.
    """

    accuracy: pd.DataFrame
    differences: pd.DataFrame
    arm: str
    best_family: str
    n_train: int
    n_test: int


def split_half(items: pd.Index, seed: int) -> tuple[list[str], list[str]]:
    """A random half of ``items`` (the first, larger by one when odd) and the rest."""
    order = np.random.default_rng(seed).permutation(len(items))
    cut = (len(items) + 1) // 2
    ids = np.asarray(items.astype(str))
    return sorted(ids[order[:cut]]), sorted(ids[order[cut:]])


def rehearse(
    scores: pd.DataFrame,
    y: pd.Series,
    families: Mapping[str, str],
    *,
    k: int,
    r: int,
    temperature: float,
    arm: str = "H+P_gb",
    n_resamples: int,
    seed: int,
) -> Holdout:
    """Fit ``arm`` on a random half of the images of ``y``, deploy it on the other half."""
    spec = arm_spec(arm)
    y = pd.Series(np.asarray(y, float), index=y.index.astype(str))
    train, test = split_half(y.index, seed)
    model = fit_arm(spec, scores, y[train], dict(families), k=k, r=r, temperature=temperature,
                    n_resamples=n_resamples, seed=seed)  # fmt: skip
    X_test = arm_features(scores, spec, list(model.families), k, test)
    deployed = predict_model(model, X_test).to_numpy()
    if not np.isfinite(deployed).all():
        raise ValueError(f"{int(np.isnan(deployed).sum())} held-out images lack a feature")
    names = list(families)
    H = arm_features(scores, ARMS["panel mean"], names, k, list(y.index))
    best, _ = best_single(H.loc[train], y[train])
    single = H.loc[test, best].to_numpy(float)
    oof = oof_scores(spec, arm_features(scores, spec, list(model.families), k, train), y[train],
                     H.loc[train])  # fmt: skip
    yt, ytr = y[test].to_numpy(), y[train].to_numpy()
    scorers = {"deployed": (yt, deployed, seed), "best single": (yt, single, seed),
               "out of fold": (ytr, oof, seed + 1)}  # fmt: skip
    boots = {n: resampled_accuracy(a, b, n_resamples=n_resamples, seed=s)
             for n, (a, b, s) in scorers.items()}  # fmt: skip
    values = {n: point_accuracy(a, b) for n, (a, b, _) in scorers.items()}
    acc_rows, diff_rows = [], []
    for metric in METRICS:
        for name, (a, _, _) in scorers.items():
            lo, hi = _ci(boots[name][metric])
            acc_rows.append({"metric": metric, "scorer": name, "value": values[name][metric],
                             "ci_low": lo, "ci_high": hi, "n": a.size})  # fmt: skip
        oof_lo, oof_hi = _ci(boots["out of fold"][metric])
        dep = values["deployed"][metric]
        for other, paired in (("out of fold", False), ("best single", True)):
            d = boots["deployed"][metric] - boots[other][metric]
            lo, hi = _ci(d)
            alternative = ALTERNATIVES[other]
            diff_rows.append({
                "metric": metric,
                "comparison": f"deployed − {other}",
                "delta": dep - values[other][metric],
                "ci_low": lo,
                "ci_high": hi,
                "p": bootstrap_p(d[np.isfinite(d)], alternative),
                "alternative": alternative,
                "paired": paired,
                # only the estimate has an interval the deployed value can fall inside
                "deployed_in_oof_interval": None if paired else bool(oof_lo <= dep <= oof_hi),
            })  # fmt: skip
    return Holdout(pd.DataFrame(acc_rows), pd.DataFrame(diff_rows), arm, best, len(train),
                   len(test))  # fmt: skip


def _ci(samples: np.ndarray) -> tuple[float, float]:
    s = np.asarray(samples, float)
    s = s[np.isfinite(s)]
    return percentile_ci(s) if s.size else (np.nan, np.nan)


FAMILY = "deploy-holdout"
"""The rehearsal's correction family: the deployed score against the out-of-fold estimate
and against the best single model, under every metric."""


def holdout_family(alpha: float = 0.05) -> Family:
    """:data:`FAMILY`, declared before the rehearsal runs."""
    return Family(
        FAMILY,
        "04 deployment rehearsal: the deployed score against its out-of-fold estimate "
        "(two-sided: was the estimate optimistic or pessimistic) and against the best single "
        "model (one-sided: deployed higher), every metric",
        alpha=alpha,
    )


def holdout_claims(h: Holdout, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """The rehearsal's differences as ledger rows, corrected within :data:`FAMILY`."""
    claims = []
    for r in h.differences.itertuples():
        other = r.comparison.removeprefix("deployed − ")
        claims.append(
            Claim(
                id=f"deploy:{slug(other)}:{slug(r.metric)}",
                a=f"{h.arm} deployed",
                b="its out-of-fold estimate" if other == "out of fold" else "the best single model",
                dataset=dataset,
                scope=f"held-out half ({h.n_test} images); best single {h.best_family}",
                metric=r.metric,
                unit="images" if r.paired else "images of each half, independently",
                estimate=float(r.delta),
                ci_low=float(r.ci_low),
                ci_high=float(r.ci_high),
                p=float(r.p),
                alternative=str(r.alternative),
                family=FAMILY,
                alpha=alpha,
                symbol=f"Δ{LABELS[r.metric]}",
            )
        )
    return correct(claims, {FAMILY: holdout_family(alpha)})


def oof_words(claim: Claim, **words: object) -> str:
    """The row of the deployed score against its out-of-fold estimate, in its own words
    and, where it names a direction, what that says of the estimate (:data:`MEANING`)."""
    said = claim.words(**words)
    meaning = MEANING.get(claim.verdict)
    return f"{said}: {meaning}" if meaning else said


def describe_holdout(
    h: Holdout,
    dataset: str,
    state: Callable[[Claim, str], str] | None = None,
    alpha: float = 0.05,
    n_resamples: int | None = None,
) -> str:
    """The takeaway, computed from the numbers: each metric against both references, each
    difference stated by ``state(claim, text)`` (a page's ``nb.claim`` with ``text=``;
    default: the text alone), the out-of-fold row with :func:`oof_words`."""
    acc = h.accuracy.set_index(["metric", "scorer"])
    diff = h.differences.set_index(["metric", "comparison"])
    claims = {(c.metric, c.b): c for c in holdout_claims(h, dataset, alpha)}
    kw = {} if n_resamples is None else {"n_resamples": n_resamples}

    def say(c: Claim) -> str:
        text = oof_words(c, **kw) if c.b == "its out-of-fold estimate" else c.words(**kw)
        return state(c, text) if state is not None else text

    clauses = []
    for metric in METRICS:
        dep, oof = acc.loc[(metric, "deployed")], acc.loc[(metric, "out of fold")]
        vs_oof = diff.loc[(metric, "deployed − out of fold")]
        where = "inside" if vs_oof["deployed_in_oof_interval"] else "outside"
        clauses.append(
            f"{LABELS[metric]} {dep['value']:.3f} [{dep['ci_low']:.3f}, {dep['ci_high']:.3f}], "
            f"{where} the out-of-fold interval [{oof['ci_low']:.3f}, {oof['ci_high']:.3f}] "
            f"(against the estimate: {say(claims[metric, 'its out-of-fold estimate'])}; "
            f"against the best single model: {say(claims[metric, 'the best single model'])})"
        )
    return (
        f"Fitted on {h.n_train} images of {dataset} and applied to the other {h.n_test} as if "
        f"they had no labels, {h.arm} reaches, once the labels are revealed: "
        + "; ".join(clauses)
        + f". The best single model is {h.best_family}, chosen on the training half. The "
        "test against the estimate is two-sided (a deployed score above it means the estimate "
        "was pessimistic, below it optimistic); the test against the best single model is "
        "one-sided (deployed higher); q is over the six differences."
    )


def rehearsal_dataset(datasets: Sequence[str]) -> str:
    """The dataset the deployment is rehearsed on: the run's first.

    The rehearsal needs only the scores and each image's human mean, which every rated
    format gives (per-rater ratings, vote histograms or a mean), so the rule asks nothing of
    the dataset's format or kind.
    """
    if not datasets:
        raise ValueError("the run names no dataset to rehearse the deployment on")
    return datasets[0]


def describe_rehearsal_choice(dataset: str) -> str:
    """Which dataset the rehearsal uses, and by what rule."""
    return (
        f"The deployment is rehearsed on {dataset}, the run's first dataset: the rehearsal "
        "needs only the judges' scores and each image's human mean, which every dataset has."
    )
