"""One call instead of k: the holistic designs compared on accuracy and cost.

The fusion paper averages k holistic samples per image and family. Here each family's holistic
score is taken three ways from the same store: one sample, the mean of its first k samples
(k in ``KS``, up to the design's k), and the expected score of one logprob call
(``prompt_mode: logprob``). Each design's Spearman ρ and Kendall τ_b with the human mean
carry percentile intervals from one bootstrap over images shared by every design of a
family, so the difference between the expected score and the mean of the most samples is
paired. A design's cost is its calls per image times the mean cost of such a call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.claims import wording
from judgepanel.core.config import Price
from judgepanel.stats import (
    bootstrap_arms,
    bootstrap_p,
    kendall_b,
    percentile_ci,
    spearman,
)
from judgepanel.studies.fusion.compare import compare_pairs
from judgepanel.studies.fusion.logprob import logprob_summary
from judgepanel.studies.fusion.robustness.granularity import round_half_up, tied_pair_share

KS: tuple[int, ...] = (1, 2, 5, 10, 25)
"""The numbers of samples averaged, as far as the design's k allows (its k is added)."""


def ks_of(k_max: int) -> list[int]:
    """The k of :data:`KS` up to the design's ``k_max``, and ``k_max`` itself."""
    return sorted({k for k in KS if k <= k_max} | {k_max})


EXPECTED = "expected score"
"""The design name of one logprob call's expected score."""

METRICS: dict[str, object] = {"spearman": spearman, "kendall_b": kendall_b}


def metrics_of(metrics: Sequence[str]) -> dict[str, object]:
    """The entries of :data:`METRICS` named by ``metrics``, in its order: an accuracy table
    read for one metric need not bootstrap the other (the numbers do not depend on it)."""
    unknown = sorted(set(metrics) - set(METRICS))
    if unknown:
        raise ValueError(f"metrics must be among {list(METRICS)}, got {unknown}")
    return {m: fn for m, fn in METRICS.items() if m in metrics}


def mean_of(k: int) -> str:
    """The design name of the mean of the first ``k`` samples."""
    return "one sample" if k == 1 else f"mean of {k}"


def design_scores(calls: pd.DataFrame, k_max: int, temperature: float) -> pd.DataFrame:
    """Each family's score per image under each design (columns family, item, design,
    calls_per_image, score); an image lacks a mean of k unless all k samples are ok."""
    ok = calls[(calls["status"] == "ok") & (calls["temperature"] == temperature)]
    sampled = ok[ok["kind"] == "holistic"].sort_values("repetition")
    rows = []
    for k in ks_of(k_max):
        first = sampled[sampled["repetition"] < k]
        g = first.groupby(["family", "item"])["value"].agg(["mean", "count"]).reset_index()
        g = g[g["count"] == k]
        rows.append(g.assign(design=mean_of(k), calls_per_image=k, score=g["mean"]))
    once = ok[ok["kind"] == "holistic_logprob"]
    rows.append(once.assign(design=EXPECTED, calls_per_image=1, score=once["value"]))
    cols = ["family", "item", "design", "calls_per_image", "score"]
    return pd.concat([r[cols] for r in rows], ignore_index=True)


def design_accuracy(
    scores: pd.DataFrame,
    human: pd.Series,
    *,
    n_resamples: int,
    seed: int,
    margin: float | None = None,
    metrics: Sequence[str] = tuple(METRICS),
) -> pd.DataFrame:
    """Per family, design and metric: the estimate with its 95% interval, and the expected
    score minus this design (``delta``) with its paired interval and two-sided ``p`` (with
    a ``margin``, also ``p_noninferior``: :func:`versus`).

    A family is compared on the images every design of it scored; ``metrics`` are the
    rows wanted (:func:`metrics_of`).
    """
    chosen = metrics_of(metrics)
    rows = []
    for family, g in scores.groupby("family", sort=True):
        wide = g.pivot(index="item", columns="design", values="score").dropna()
        wide = wide.loc[wide.index.intersection(human.index)]
        designs = [d for d in _order(g) if d in wide.columns]
        y = human.loc[wide.index].to_numpy(float)
        calls = g.groupby("design")["calls_per_image"].first()
        for metric, fn in chosen.items():
            arms = np.vstack([wide[d].to_numpy(float) for d in designs])
            boot = bootstrap_arms(y, arms, metric, n_resamples=n_resamples, seed=seed)
            ref = designs.index(EXPECTED) if EXPECTED in designs else None
            for j, d in enumerate(designs):
                lo, hi = percentile_ci(boot[:, j][np.isfinite(boot[:, j])])
                row = {
                    "family": family,
                    "design": d,
                    "calls_per_image": int(calls[d]),
                    "metric": metric,
                    "n": len(y),
                    "estimate": float(fn(y, arms[j])),
                    "ci_low": lo,
                    "ci_high": hi,
                }
                row.update(versus(boot, arms, y, fn, ref, j, margin))
                rows.append(row)
    return pd.DataFrame(rows)


def _order(g: pd.DataFrame) -> list[str]:
    return list(g.sort_values("calls_per_image")["design"].drop_duplicates())


def versus(
    boot: np.ndarray,
    arms: np.ndarray,
    y: np.ndarray,
    fn: Any,
    ref: int | None,
    j: int,
    margin: float | None = None,
) -> dict[str, float]:
    """Arm ``ref`` (the expected score) minus arm ``j`` on shared bootstrap resamples
    (``boot``, one column per arm): estimate, paired interval and two-sided p; with a
    ``margin``, also ``p_noninferior``, the one-sided p of ``ref − j > −margin`` from the
    same resamples (the non-inferiority test of the recipe's cheaper design)."""
    out = {"delta": math.nan, "delta_low": math.nan, "delta_high": math.nan, "p": math.nan}
    if margin is not None:
        out["p_noninferior"] = math.nan
    if ref is None or ref == j:
        return out
    d = boot[:, ref] - boot[:, j]
    d = d[np.isfinite(d)]
    lo, hi = percentile_ci(d)
    out.update(
        delta=float(fn(y, arms[ref]) - fn(y, arms[j])),
        delta_low=lo,
        delta_high=hi,
        p=bootstrap_p(d, "two-sided"),
    )
    if margin is not None:
        out["p_noninferior"] = bootstrap_p(d + margin, "greater")
    return out


PRICE_BASIS = "online list price of the price table, at the mean tokens of an ok call"
"""How every design is priced when a price table is given (:func:`unit_costs`): the same
basis as the recipe's options (``recipe.option_costs``), whether a call went through a
batch (billed at its discount) or online."""

BILLED_BASIS = "billed cost recorded in the store (batch calls at the batch price)"
"""How a design is priced without a price table: what each call was charged."""


def unit_costs(calls: pd.DataFrame, price: Callable[[str], Price] | None = None) -> pd.DataFrame:
    """Per family and prompt kind: the mean tokens (prompt plus completion) of one ok call
    and its cost in USD.

    With ``price`` (the profile's price table), the cost is the online list price of the
    call's model at the mean prompt and completion tokens (:data:`PRICE_BASIS`), so designs
    scored through a batch and designs scored online are priced alike; without it, the
    mean of what the store recorded each call was billed (:data:`BILLED_BASIS`).
    """
    ok = calls[calls["status"] == "ok"]
    prompt, completion = ok["prompt_tokens"].astype(float), ok["completion_tokens"].astype(float)
    frame = ok.assign(tokens=prompt + completion, prompt=prompt, completion=completion)
    grouped = frame.groupby(["family", "kind"])
    out = grouped[["cost", "tokens", "prompt", "completion"]].mean().rename(columns={"cost": "usd"})
    if price is not None:
        models = grouped["model"].first()
        out["usd"] = [
            price(models[key]).cost(row.prompt, row.completion)
            for key, row in zip(out.index, out.itertuples(), strict=True)
        ]
    return out[["usd", "tokens"]]


def design_costs(
    calls: pd.DataFrame, designs: pd.DataFrame, price: Callable[[str], Price] | None = None
) -> pd.DataFrame:
    """Per family and design: requests, tokens and USD per 1,000 images, from the mean of
    the family's ok holistic call (sampled designs) or logprob call (the expected score);
    ``price`` as in :func:`unit_costs`."""
    unit = unit_costs(calls, price)
    out = designs[["family", "design", "calls_per_image"]].drop_duplicates().copy()
    call_type = np.where(out["design"] == EXPECTED, "holistic_logprob", "holistic")
    for column, name in (("tokens", "tokens_per_1000_images"), ("usd", "usd_per_1000_images")):
        per_call = [
            unit[column].get((f, k), math.nan)
            for f, k in zip(out["family"], call_type, strict=True)
        ]
        out[name] = 1000.0 * out["calls_per_image"] * np.array(per_call)
    return out.reset_index(drop=True)


def fallback_shares(calls: pd.DataFrame) -> pd.Series:
    """Per family, the share of its holistic logprob calls kept as one sample."""
    table = logprob_summary(calls)
    table = table[table["kind"] == "holistic_logprob"]
    return table.set_index("family")["fallback_share"]


def versus_most_headline(
    dataset: str, versus: pd.DataFrame, fallbacks: pd.Series, most: str
) -> str:
    """The index's headline of the expected score against the mean of the most samples, in
    numbers only: per family whose model sent logprobs, Δρ with its interval. The verdict
    of each is its ledger row on the page; a headline that counted the rows without a
    detected difference would count absences of evidence as findings."""
    sent = sorted(f for f, s in fallbacks.items() if s < 1.0)
    rows = versus[(versus["design"] == most) & versus["family"].isin(sent)].set_index("family")
    shown = "; ".join(
        f"{f} {wording.number(float(r.delta), signed=True)} "
        f"{wording.interval(float(r.ci_low), float(r.ci_high), signed=True)}"
        for f, r in rows.iterrows()
    )
    return (
        f"{dataset}: one logprob call's expected score minus the {most} samples, in ρ, for "
        f"the {len(rows)} {'family' if len(rows) == 1 else 'families'} whose model sent "
        f"logprobs: {shown or 'none'} (two-sided "
        "tests, q within each family's designs, on 09's table)"
    )


def describe_designs(
    costs: pd.DataFrame,
    fallbacks: pd.Series,
    k_max: int,
    versus_most: Mapping[str, str],
) -> str:
    """The takeaway, computed: each family's expected score of one call against the mean of
    its most samples, stated by its ledger row (``versus_most``: the page's linked clause
    per family), and at what share of the samples' cost."""
    cost = costs.set_index(["family", "design"])["usd_per_1000_images"]
    most = mean_of(k_max)
    with_lp = sorted(f for f, s in fallbacks.items() if s < 1.0)
    without = sorted(f for f, s in fallbacks.items() if s >= 1.0)
    if not with_lp:
        parts = ["No family's model sent logprobs."]
    else:
        ratio = [cost[(f, EXPECTED)] / cost[(f, most)] for f in with_lp]
        parts = [
            f"The expected score of one call against the {most} samples, for each family "
            "whose model sent logprobs: "
            + "; ".join(f"{f}, {versus_most[f]}" for f in with_lp)
            + f". No margin is tested here, so a difference not detected is no proof that "
            "they rank alike (04's recipe tests its two options against a margin stated "
            f"beforehand); one call costs {_span(ratio)} of the samples' cost."
        ]
    if without:
        parts.append(f"{', '.join(without)} sent none, so its one call is one sample.")
    return " ".join(parts)


def _span(values: list[float]) -> str:
    """``values`` as one percentage, or the range they span."""
    lo, hi = f"{min(values):.0%}", f"{max(values):.0%}"
    return lo if lo == hi else f"{lo} to {hi}"


def granularity(
    scores: pd.DataFrame, human: pd.Series, k_max: int, *, n_resamples: int, seed: int
) -> pd.DataFrame:
    """The fusion paper's "Spearman rewards granularity" with the expected score beside the mean of
    the most samples: per family and design, the metric of the score as it is and rounded
    half-up to the integer scale, their difference (``delta``, the part that is de-tying)
    with its paired interval and one-sided p (the unrounded score is better), and the
    share of image pairs tied before and after rounding."""
    most = mean_of(k_max)
    rows = []
    for family, g in scores[scores["design"].isin([most, EXPECTED])].groupby("family"):
        wide = g.pivot(index="item", columns="design", values="score").dropna()
        wide = wide.loc[wide.index.intersection(human.index)]
        y = human.loc[wide.index].to_numpy(float)
        arms, pairs = {}, []
        for design in (d for d in (most, EXPECTED) if d in wide.columns):
            arms[design] = wide[design].to_numpy(float)
            arms[f"{design} rounded"] = round_half_up(arms[design])
            pairs.append((design, f"{design} rounded"))
        tests = compare_pairs(y, arms, pairs, n_resamples=n_resamples, seed=seed)
        for t in tests.itertuples():
            rows.append(
                {
                    "family": family,
                    "design": t.arm,
                    "metric": t.metric,
                    "n": t.n,
                    "as_is": t.value,
                    "rounded": t.comparator_value,
                    "delta": t.delta,
                    "ci_low": t.ci_low,
                    "ci_high": t.ci_high,
                    "p": t.p,
                    "tied_as_is": tied_pair_share(arms[t.arm]),
                    "tied_rounded": tied_pair_share(arms[t.comparator]),
                }
            )
    return pd.DataFrame(rows)
