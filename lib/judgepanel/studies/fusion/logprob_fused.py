"""The fused arm fed expected scores: H+P_gb of one logprob call per prompt against H+P_gb
of k sampled answers per prompt.

The fusion paper's fused arm reads each family's holistic mean and its five dimension means. Its
sampled design "k per prompt" averages the first k answers of every prompt, capped at the
scoring design's repetitions of that prompt (k holistic, R per dimension), so one sample
per prompt costs the same six calls per image and family as the expected-score design's six
logprob calls. Every design's features go through the same out-of-fold combiner on the same
images, and ρ and τ_b carry intervals from one bootstrap over images shared by every
design, so each difference from the expected score is paired.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgepanel.claims.rows import Claim, Family, correct, slug
from judgepanel.core.config import Price
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.stats import bootstrap_arms, percentile_ci
from judgepanel.studies.common.combiners import gb_combiner, oof_predict
from judgepanel.studies.fusion.logprob_designs import (
    EXPECTED,
    METRICS,
    ks_of,
    mean_of,
    metrics_of,
    unit_costs,
    versus,
)

HOLISTIC_CALL_TYPES = {"sampled": "holistic", "expected": "holistic_logprob"}
DIMENSION_CALL_TYPES = {"sampled": "dimension", "expected": "dimension_logprob"}


def per_prompt(k: int, dimension_r: int) -> str:
    """The design name of the fused arm fed the mean of the first ``k`` holistic answers
    and of the first ``min(k, dimension_r)`` answers per dimension."""
    return f"{k} holistic, {min(k, dimension_r)} per dimension"


def _wide(rows: pd.DataFrame, families: Sequence[str], design: str) -> pd.DataFrame:
    """Item × ``family`` / ``family:dimension`` columns, holistic first, as hp_design has them."""
    h = rows[rows["dimension"].isna()].pivot_table(index="item", columns="family", values="score")
    d = rows[rows["dimension"].notna()].pivot_table(
        index="item", columns=["family", "dimension"], values="score"
    )
    cols_h = [f for f in families]
    cols_d = [(f, dim) for f in families for dim in DIMENSIONS]
    missing = [c for c in cols_h if c not in h.columns] + [
        f"{f}:{dim}" for f, dim in cols_d if (f, dim) not in d.columns
    ]
    if missing:
        raise ValueError(f"the {design} design has no scores of {missing[:5]}; score its run first")
    d = d[cols_d]
    d.columns = [f"{f}:{dim}" for f, dim in cols_d]
    return pd.concat([h[cols_h], d], axis=1)


def fused_features(
    calls: pd.DataFrame,
    families: Sequence[str],
    *,
    k: int | None,
    dimension_r: int,
    temperature: float,
) -> pd.DataFrame:
    """The H+P feature matrix of one design (``k=None``: the expected-score design).

    A sampled feature is the mean of the prompt's first ``min(k, repetitions)`` answers
    and is missing unless every one of them is ok; an expected feature is the logprob
    call's stored value (its one sample where it fell back).
    """
    ok = calls[(calls["status"] == "ok") & calls["family"].isin(list(families))]
    if k is None:
        rows = ok[ok["kind"].isin(["holistic_logprob", "dimension_logprob"])]
        holistic = rows["kind"] == "holistic_logprob"
        rows = rows.assign(score=rows["value"], dimension=rows["dimension"].where(~holistic))
        return _wide(rows, families, EXPECTED)
    ok = ok[ok["temperature"] == temperature]
    parts = []
    for call_type, reps in (("holistic", k), ("dimension", min(k, dimension_r))):
        first = ok[(ok["kind"] == call_type) & (ok["repetition"] < reps)]
        keys = ["family", "item"] + (["dimension"] if call_type == "dimension" else [])
        g = first.groupby(keys)["value"].agg(["mean", "count"]).reset_index()
        g = g[g["count"] == reps].rename(columns={"mean": "score"})
        if call_type == "holistic":
            g["dimension"] = None
        parts.append(g)
    return _wide(pd.concat(parts, ignore_index=True), families, per_prompt(k, dimension_r))


def design_calls(k: int | None, dimension_r: int) -> tuple[int, int]:
    """(holistic, dimension) calls per image and family of a design (``None``: expected)."""
    if k is None:
        return 1, len(DIMENSIONS)
    return k, len(DIMENSIONS) * min(k, dimension_r)


@dataclass(frozen=True)
class FusedDesigns:
    """Out-of-fold H+P_gb predictions of each design on the images every design scored."""

    y: pd.Series
    arms: dict[str, np.ndarray]
    ks: dict[str, int | None]


def fused_designs(
    calls: pd.DataFrame,
    human: pd.Series,
    families: Sequence[str],
    *,
    k_max: int,
    dimension_r: int,
    temperature: float,
    n_jobs: int | None = None,
) -> FusedDesigns:
    """H+P_gb of ``families`` fed each design's features, fitted out of fold on the images
    that every design and the human mean cover (so all arms see the same images)."""
    ks: dict[str, int | None] = {per_prompt(k, dimension_r): k for k in ks_of(k_max)}
    ks[EXPECTED] = None
    features = {
        name: fused_features(calls, families, k=k, dimension_r=dimension_r, temperature=temperature)
        for name, k in ks.items()
    }
    common = human.dropna().index
    for x in features.values():
        common = common.intersection(x.dropna().index)
    common = common.sort_values()
    if len(common) < 10:
        raise ValueError(
            f"only {len(common)} images have every design's features for {list(families)}; "
            "score the logprob run and the sampled run on the same images first"
        )
    y = human.loc[common].astype(float)
    arms = {
        name: oof_predict(gb_combiner(), x.loc[common], y, n_jobs=n_jobs)
        for name, x in features.items()
    }
    return FusedDesigns(y, arms, ks)


def fused_accuracy(
    fused: FusedDesigns,
    calls: pd.DataFrame,
    families: Sequence[str],
    *,
    dimension_r: int,
    n_resamples: int,
    seed: int,
    price: Callable[[str], Price] | None = None,
    margin: float | None = None,
    metrics: Sequence[str] = tuple(METRICS),
) -> pd.DataFrame:
    """Per design and metric: H+P_gb's estimate with its 95% interval, the expected score
    minus this design (``delta``) with its paired interval and two-sided ``p`` (with a
    ``margin``, also ``p_noninferior``, as ``logprob_designs.versus`` says), and the
    design's calls and dollars per 1,000 images for the whole panel (priced as
    :func:`~judgepanel.studies.fusion.logprob_designs.unit_costs` says); ``metrics`` are
    the rows wanted (``logprob_designs.metrics_of``)."""
    chosen = metrics_of(metrics)
    names = list(fused.arms)
    y = fused.y.to_numpy(float)
    arms = np.vstack([fused.arms[n] for n in names])
    ref = names.index(EXPECTED)
    unit = unit_costs(calls, price)
    rows = []
    for metric, fn in chosen.items():
        boot = bootstrap_arms(y, arms, metric, n_resamples=n_resamples, seed=seed)
        for j, name in enumerate(names):
            lo, hi = percentile_ci(boot[:, j][np.isfinite(boot[:, j])])
            hol, dim = design_calls(fused.ks[name], dimension_r)
            expected = fused.ks[name] is None
            mode = "expected" if expected else "sampled"
            call_types = {HOLISTIC_CALL_TYPES[mode]: hol, DIMENSION_CALL_TYPES[mode]: dim}
            per_image = {
                column: sum(
                    calls_ * unit[column].get((f, call_type), math.nan)
                    for f in families
                    for call_type, calls_ in call_types.items()
                )
                for column in ("tokens", "usd")
            }
            row = {
                "arm": "H+P_gb",
                "design": name,
                "k": math.nan if expected else fused.ks[name],
                "calls_per_image": len(families) * (hol + dim),
                "metric": metric,
                "n": len(y),
                "estimate": float(fn(y, arms[j])),  # type: ignore[operator]
                "ci_low": lo,
                "ci_high": hi,
            }
            row.update(versus(boot, arms, y, fn, ref, j, margin))
            row["tokens_per_1000_images"] = 1000.0 * per_image["tokens"]
            row["usd_per_1000_images"] = 1000.0 * per_image["usd"]
            rows.append(row)
    return pd.DataFrame(rows)


def versus_family(scope: str, metric: str = "spearman", alpha: float = 0.05) -> Family:
    """The correction family of one set of comparisons: the expected score against every
    sampled design of ``scope`` (the fused arm, or one family), two-sided, BH."""
    return Family(
        f"expected-vs-sampled:{slug(scope)}:{metric}",
        f"the expected score against each sampled design ({scope}, {metric}; two-sided)",
        alpha=alpha,
    )


def versus_claim_id(design: str, scope: str, metric: str = "spearman") -> str:
    """The id of the row of :func:`design_claims` that sets the expected score against
    ``design`` within ``scope`` (``fused`` or one family): 04 cites it by this id."""
    return f"expected-vs-{slug(design)}:{slug(scope)}:{metric}"


def design_claims(
    table: pd.DataFrame,
    *,
    dataset: str,
    scope: str,
    a: str,
    metric: str = "spearman",
    study_design: str | None = None,
    alpha: float = 0.05,
) -> list[Claim]:
    """The expected score against every sampled design of ``table`` (``fused_accuracy`` or
    one family's rows of ``design_accuracy``), each a claim with its q over the designs.

    Every design is tested, not the one nearest the expected score: a search for the
    smallest difference followed by a test of that difference could not fail. The row of
    ``study_design`` (the study's k and R) is the headline.
    """
    rows = table[(table["metric"] == metric) & (table["design"] != EXPECTED)]
    fam = versus_family(scope, metric, alpha)
    found = [
        Claim(
            id=versus_claim_id(str(r.design), scope, metric),
            a=f"{a} on expected scores",
            b=f"{a} on {r.design}",
            dataset=dataset,
            scope=scope,
            metric=metric,
            unit="images",
            estimate=float(r.delta),
            ci_low=float(r.delta_low),
            ci_high=float(r.delta_high),
            p=float(r.p),
            alternative="two-sided",
            family=fam.name,
            alpha=alpha,
            symbol="Δρ" if metric == "spearman" else "Δτ_b",
            role="headline" if r.design == study_design else "",
        )
        for r in rows.itertuples()
    ]
    return correct(found, {fam.name: fam})


def study_design_name(table: pd.DataFrame) -> str:
    """The sampled design of the study's own k (the most repetitions in ``table``)."""
    sampled = table[table["design"] != EXPECTED]
    return str(sampled.loc[sampled["k"].astype(float).idxmax(), "design"])


@dataclass(frozen=True)
class CheaperDesign:
    """May the expected-score design replace a sampled one? A non-inferiority test with a
    margin stated in advance (the runs file's ``logprob_margin``): ``expected − sampled >
    −margin``, one-sided, its p (``p``) from the same paired bootstrap as the interval.
    The cheaper design is offered where that row's verdict is "not worse by more than the
    margin" (:attr:`offered`), so the recipe's decision is the row's."""

    option: str
    sampled: str
    delta: float
    low: float
    high: float
    margin: float
    sampled_usd: float
    expected_usd: float
    sampled_calls: int
    expected_calls: int
    p: float = math.nan
    alpha: float = 0.05

    def claim(self, dataset: str, id: str, *, note: str = "") -> Claim:
        """The non-inferiority row of this comparison (``expected − sampled``, Δρ)."""
        return Claim(
            id=id,
            a="one logprob call per prompt (expected score)",
            b=f"the sampled design ({self.sampled})",
            dataset=dataset,
            scope=self.option,
            metric="spearman",
            unit="images",
            estimate=self.delta,
            ci_low=self.low,
            ci_high=self.high,
            p=self.p,
            alternative="greater",
            kind="non-inferiority",
            margin=self.margin,
            alpha=self.alpha,
            symbol="Δρ",
            note=note,
        )

    @property
    def offered(self) -> bool:
        """Whether the row says "not worse by more than the margin" (a NaN never does)."""
        if not (math.isfinite(self.low) and math.isfinite(self.p)):
            return False
        return self.claim("", "x").verdict.startswith("not worse")

    @property
    def cost(self) -> str:
        """Calls and dollars per image of both designs, in words."""
        calls = "call" if self.expected_calls == 1 else "calls"
        return (
            f"{self.expected_calls} {calls} per image (${self.expected_usd:.2f} per 1,000 "
            f"images) instead of {self.sampled_calls} (${self.sampled_usd:.2f})"
        )

    @property
    def decision(self) -> str:
        """What the recipe does after the row, in words that carry no verdict of their own."""
        if self.offered:
            return f"so the recipe offers one logprob call per prompt, at {self.cost}"
        return (
            f"so the recipe keeps the sampled design ({self.sampled}); one logprob call per "
            f"prompt would cost {self.cost}"
        )

    def as_row(self) -> dict[str, object]:
        return {
            "option": self.option,
            "sampled_design": self.sampled,
            "delta": self.delta,
            "ci_low": self.low,
            "ci_high": self.high,
            "margin": self.margin,
            "p": self.p,
            "offered": self.offered,
            "sampled_calls_per_image": self.sampled_calls,
            "expected_calls_per_image": self.expected_calls,
            "sampled_usd_per_1000": self.sampled_usd,
            "expected_usd_per_1000": self.expected_usd,
        }


CHEAPER_METRIC = "spearman"
"""The one metric :func:`cheaper_design` reads of an accuracy table."""


def cheaper_design(
    accuracy: pd.DataFrame, *, option: str, sampled: str, margin: float
) -> CheaperDesign:
    """The expected-score design against the ``sampled`` design of one accuracy table
    (``fused_accuracy`` or ``logprob_designs.design_accuracy`` with its costs merged, both
    given the ``margin``, so the table has ``p_noninferior``)."""
    rho = accuracy[accuracy["metric"] == CHEAPER_METRIC].set_index("design")
    if sampled not in rho.index or EXPECTED not in rho.index:
        raise ValueError(f"{option}: the table lacks the {sampled!r} or the expected-score design")
    if "p_noninferior" not in rho.columns:
        raise ValueError(f"{option}: the accuracy table was computed without the margin")
    s, e = rho.loc[sampled], rho.loc[EXPECTED]
    return CheaperDesign(
        option=option,
        sampled=sampled,
        delta=float(s["delta"]),
        low=float(s["delta_low"]),
        high=float(s["delta_high"]),
        margin=margin,
        sampled_usd=float(s["usd_per_1000_images"]),
        expected_usd=float(e["usd_per_1000_images"]),
        sampled_calls=int(s["calls_per_image"]),
        expected_calls=int(e["calls_per_image"]),
        p=float(s["p_noninferior"]),
    )


__all__ = [
    "CHEAPER_METRIC",
    "CheaperDesign",
    "FusedDesigns",
    "cheaper_design",
    "design_calls",
    "design_claims",
    "fused_accuracy",
    "fused_designs",
    "fused_features",
    "mean_of",
    "per_prompt",
    "study_design_name",
    "versus_claim_id",
    "versus_family",
]
