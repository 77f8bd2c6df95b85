"""What a scoring run produced: coverage, failures, cost and agreement between repetitions.

These summaries read the store's call frame only; the scoring notebook shows them so a
reader can see, before any analysis, that every planned call is either answered or
recorded as a failure, what it cost, and how repeatable each judge is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.prompts import DIMENSIONS


def coverage(
    calls: pd.DataFrame,
    *,
    dataset: str,
    families: Sequence[str],
    n_images: int,
    holistic_k: int,
    dimension_r: int,
) -> pd.DataFrame:
    """Planned, ok, failed and missing calls per family and prompt kind."""
    df = calls[calls["dataset"] == dataset]
    rows = []
    for fam in families:
        for kind, planned in (
            ("holistic", n_images * holistic_k),
            ("dimension", n_images * dimension_r * len(DIMENSIONS)),
        ):
            sub = df[(df["family"] == fam) & (df["kind"] == kind)]
            ok = int((sub["status"] == "ok").sum())
            failed = int((sub["status"] == "failed").sum())
            rows.append(
                {
                    "family": fam,
                    "kind": kind,
                    "planned": planned,
                    "ok": ok,
                    "failed": failed,
                    "missing": planned - ok - failed,
                    "ok_share": ok / planned if planned else np.nan,
                }
            )
    return pd.DataFrame(rows)


def failures(calls: pd.DataFrame, dataset: str | None = None) -> pd.DataFrame:
    """Failed calls by family and recorded reason (empty frame when there are none)."""
    df = calls if dataset is None else calls[calls["dataset"] == dataset]
    bad = df[df["status"] == "failed"]
    if bad.empty:
        return pd.DataFrame(columns=["family", "kind", "reason", "calls"])
    return (
        bad.groupby(["family", "kind", "reason"])
        .size()
        .rename("calls")
        .reset_index()
        .sort_values("calls", ascending=False, ignore_index=True)
    )


def cost_summary(calls: pd.DataFrame, dataset: str, n_images: int) -> pd.DataFrame:
    """Calls, tokens and USD per family, with the cost per image."""
    df = calls[calls["dataset"] == dataset]
    g = df.groupby("family").agg(
        model=("model", "first"),
        calls=("status", "size"),
        attempts=("attempts", "sum"),
        prompt_tokens=("prompt_tokens", "sum"),
        completion_tokens=("completion_tokens", "sum"),
        cost_usd=("cost", "sum"),
    )
    g["usd_per_image"] = g["cost_usd"] / max(n_images, 1)
    g = g.reset_index()
    total = {
        "family": "all",
        "model": "",
        **{
            c: g[c].sum()
            for c in [
                "calls",
                "attempts",
                "prompt_tokens",
                "completion_tokens",
                "cost_usd",
                "usd_per_image",
            ]
        },
    }
    return pd.concat([g, pd.DataFrame([total])], ignore_index=True)


def _split_half(wide: pd.DataFrame) -> tuple[float, float]:
    """Spearman between the means of even and odd repetitions, and its Spearman-Brown value."""
    from judgepanel.stats import spearman

    reps = sorted(wide.columns)
    if len(reps) < 2:
        return np.nan, np.nan
    even = wide[reps[0::2]].mean(axis=1)
    odd = wide[reps[1::2]].mean(axis=1)
    ok = even.notna() & odd.notna()
    r = spearman(even[ok].to_numpy(), odd[ok].to_numpy())
    return r, 2 * r / (1 + r) if r > -1 else np.nan


def repetition_agreement(scores: pd.DataFrame, families: Sequence[str]) -> pd.DataFrame:
    """How repeatable each judge is, per family and prompt (holistic or a dimension).

    Columns: the number of repetitions, the mean within-image standard deviation, the share
    of images whose repetitions all agree, and the split-half reliability of the repetition
    mean (Spearman between even- and odd-repetition means, Spearman-Brown corrected).
    """
    rows = []
    for fam in families:
        f = scores[scores["family"] == fam]
        for prompt in ["holistic", *DIMENSIONS]:
            if prompt == "holistic":
                sub = f[f["kind"] == "holistic"]
            else:
                sub = f[f["dimension"] == prompt]
            if sub.empty:
                continue
            wide = sub.pivot_table(index="item", columns="repetition", values="value")
            r, sb = _split_half(wide)
            rows.append(
                {
                    "family": fam,
                    "prompt": prompt,
                    "repetitions": wide.shape[1],
                    "within_sd": float(wide.std(axis=1, ddof=1).mean()),
                    "all_agree": float((wide.nunique(axis=1) == 1).mean()),
                    "split_half_rho": r,
                    "reliability_sb": sb,
                }
            )
    return pd.DataFrame(rows)
