"""What a scoring run produced: coverage, failures, cost and agreement between repetitions.

These summaries read the store's call frame (and, for coverage, the plan it is checked
against); the scoring notebook shows them so a reader can see, before any analysis, that
every planned call is either answered or recorded as a failure, what it cost, and how
repeatable each judge is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.core.calls import KEY_FIELDS, CallSpec
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.stats import spearman


def coverage(calls: pd.DataFrame, plan: Sequence[CallSpec]) -> pd.DataFrame:
    """Planned, ok, failed and missing calls per family and prompt kind.

    A stored row counts only if its key is in ``plan``, so rows of another design (other
    images, more repetitions, another temperature, rubric or model id) can neither raise
    the answered share above what was planned nor make ``missing`` negative.

    Args:
        calls: ``Store.frame()`` output (the key columns and ``status`` are read).
        plan: the planned calls, for example :func:`judgepanel.core.scoring.plan_target`.

    Returns:
        Columns family, kind, planned, ok, failed, missing, ok_share; one row per family
        and kind in the plan's order.
    """
    keys = pd.DataFrame([s.key.as_tuple() for s in plan], columns=list(KEY_FIELDS))
    stored = calls[[*KEY_FIELDS, "status"]].astype(
        {"repetition": "int64", "temperature": "float64"}
    )
    merged = keys.merge(stored, on=list(KEY_FIELDS), how="left")
    merged["ok"] = merged["status"].eq("ok")
    merged["failed"] = merged["status"].eq("failed")
    out = (
        merged.groupby(["family", "kind"], sort=False)
        .agg(planned=("ok", "size"), ok=("ok", "sum"), failed=("failed", "sum"))
        .reset_index()
    )
    out["missing"] = out["planned"] - out["ok"] - out["failed"]
    out["ok_share"] = out["ok"] / out["planned"]
    return out


def outside_plan(calls: pd.DataFrame, plan: Sequence[CallSpec]) -> pd.DataFrame:
    """Stored calls whose key is not in ``plan``, counted by prompt kind and temperature.

    The cost table counts every stored call of a dataset, coverage only the planned ones;
    this names the difference (another run's temperature grid, extra repetitions, ...).

    Returns:
        Columns kind, temperature, calls; empty when every stored call is planned.
    """
    keys = pd.DataFrame([s.key.as_tuple() for s in plan], columns=list(KEY_FIELDS))
    stored = calls[list(KEY_FIELDS)].astype({"repetition": "int64", "temperature": "float64"})
    keys = keys.astype({"repetition": "int64", "temperature": "float64"})
    merged = stored.merge(keys.assign(_planned=True), on=list(KEY_FIELDS), how="left")
    extra = merged[merged["_planned"].isna()]
    if extra.empty:
        return pd.DataFrame(columns=["kind", "temperature", "calls"])
    return extra.groupby(["kind", "temperature"]).size().rename("calls").reset_index()


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


COST_NOT_KNOWN = "not known"
"""How a cost is written where some of its answers were imported and carry no price."""
UNPRICED_NOTE = "not known: imported answers carry no price"
"""The missing-value note of a cost table or card with imported answers (``missing=``)."""


def known_sum(costs: pd.Series) -> float:
    """The sum of ``costs``, or NaN (not known) when any of them is unknown: a total
    over answers some of which carry no price is not known, never their priced part."""
    return float(costs.sum()) if costs.notna().all() else float("nan")


def usd_words(usd: float, digits: int = 2) -> str:
    """A cost as a sentence writes it: ``$1.23``, or "not known" when it is NaN."""
    return COST_NOT_KNOWN if pd.isna(usd) else f"${usd:,.{digits}f}"


def unpriced_families(costs: pd.DataFrame) -> list[str]:
    """The families of a :func:`cost_summary` table whose cost is not known (their
    answers, or some of them, were imported)."""
    rows = costs[(costs["family"] != "all") & costs["cost_usd"].isna()]
    return [str(f) for f in rows["family"]]


def cost_sentence(costs: pd.DataFrame, dataset: str) -> str:
    """The sentence of a scoring notebook for a cost that is not known ("" when every
    family's cost is known, where the notebook's own sentence applies)."""
    unknown = unpriced_families(costs)
    if not unknown:
        return ""
    return (
        f"The cost of {dataset}'s answers is {COST_NOT_KNOWN}: the answers of "
        f"{', '.join(unknown)} were imported from a file and carry no price, so the total "
        "and the cost per image are not known either (not $0.00)."
    )


def cost_summary(calls: pd.DataFrame, dataset: str, n_images: int) -> pd.DataFrame:
    """Calls, tokens and USD per family, with the cost per image.

    ``cost_usd`` is our estimate from the token counts and the price table (cached prompt
    tokens at the cached-input price); ``reported_usd`` is what the provider itself reported
    (OpenRouter's ``usage.cost``) over the billed calls that reported one, empty when none
    did. ``cached_tokens`` are part of ``prompt_tokens``, empty when no call reported them.
    A family with imported answers (whose ``cost`` the store's frame reads as NaN) has a
    ``cost_usd`` and ``usd_per_image`` of NaN, not known, and so has the ``all`` row
    (:func:`known_sum`; :func:`cost_sentence` words it).

    Returns:
        Columns family, model, calls, attempts, prompt_tokens, cached_tokens,
        completion_tokens, cost_usd, reported_usd, usd_per_image; one row per family and a
        last row ``all``.
    """
    df = calls[calls["dataset"] == dataset].copy()
    if "cached_tokens" not in df:
        df["cached_tokens"] = pd.array([pd.NA] * len(df), dtype="Int64")
    reported = df["reported_cost"] if "reported_cost" in df else pd.Series(np.nan, df.index)
    if "billed" in df:
        reported = reported.where(df["billed"] > 0)  # a send that billed nothing reports nothing
    df["reported_usd"] = reported.astype("float64")
    g = df.groupby("family").agg(
        model=("model", "first"),
        calls=("status", "size"),
        attempts=("attempts", "sum"),
        prompt_tokens=("prompt_tokens", "sum"),
        cached_tokens=("cached_tokens", lambda s: s.sum(min_count=1)),
        completion_tokens=("completion_tokens", "sum"),
        cost_usd=("cost", "sum"),
        reported_usd=("reported_usd", lambda s: s.sum(min_count=1)),
    )
    # not known where any answer was imported; priced families keep groupby's own sum
    unpriced = df["cost"].isna().groupby(df["family"]).any()
    g.loc[unpriced.reindex(g.index, fill_value=False), "cost_usd"] = float("nan")
    g["usd_per_image"] = g["cost_usd"] / max(n_images, 1)
    g = g.reset_index()
    summed = ["calls", "attempts", "prompt_tokens", "completion_tokens", "cost_usd"]
    total = {
        "family": "all",
        "model": "",
        **{c: g[c].sum() for c in summed if c != "cost_usd"},
        "cost_usd": known_sum(g["cost_usd"]),
        "cached_tokens": g["cached_tokens"].sum(min_count=1),
        "reported_usd": g["reported_usd"].sum(min_count=1),
        "usd_per_image": known_sum(g["usd_per_image"]),
    }
    out = pd.concat([g, pd.DataFrame([total])], ignore_index=True)
    out["cached_tokens"] = out["cached_tokens"].astype("Int64")
    out["reported_usd"] = out["reported_usd"].astype("float64")
    return out[COST_COLUMNS]


COST_COLUMNS: list[str] = [
    "family",
    "model",
    "calls",
    "attempts",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "cost_usd",
    "reported_usd",
    "usd_per_image",
]
"""The columns of :func:`cost_summary`, in order."""


def samples_per_request_mix(calls: pd.DataFrame) -> dict[int, int]:
    """Rows per ``samples_per_request`` value (1: drawn alone; n: one of n choices).

    The frame counterpart of ``Store.samples_per_request_mix``, for rows already read.
    """
    if "samples_per_request" not in calls or calls.empty:
        return {}
    counts = calls["samples_per_request"].value_counts().sort_index()
    return {int(v): int(n) for v, n in counts.items()}


def describe_mix(mix: dict[int, int]) -> str:
    """A mix of samples per request in words, e.g. ``"300 rows drawn one at a time and 120
    rows drawn 5 to a request"``."""

    def part(value: int, n: int) -> str:
        rows = f"{n:,} row" + ("" if n == 1 else "s")
        how = "one at a time" if value == 1 else f"{value} to a request"
        return f"{rows} drawn {how}"

    parts = [part(v, n) for v, n in sorted(mix.items())]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _split_half(wide: pd.DataFrame) -> tuple[float, float]:
    """Spearman between the means of even and odd repetitions, and its Spearman-Brown value."""
    reps = sorted(wide.columns)
    if len(reps) < 2:
        return np.nan, np.nan
    even = wide[reps[0::2]].mean(axis=1)
    odd = wide[reps[1::2]].mean(axis=1)
    ok = even.notna() & odd.notna()
    r = spearman(even[ok].to_numpy(), odd[ok].to_numpy())
    return r, 2 * r / (1 + r) if r > -1 else np.nan


def repetition_matrix(sub: pd.DataFrame) -> pd.DataFrame:
    """Items x repetitions of ``value``: what ``pivot_table(index="item",
    columns="repetition", values="value")`` gives (the mean of any repeated cell, cells
    with no value left out, rows and columns sorted), without its overhead, which was most
    of :func:`repetition_agreement`'s time."""
    cells = sub.groupby(["item", "repetition"])["value"].mean().dropna()
    return cells.unstack("repetition")


def all_agree(wide: pd.DataFrame) -> float:
    """The share of rows whose values (NaN left out) are all one value: what
    ``(wide.nunique(axis=1) == 1).mean()`` gives, without its loop over the rows."""
    values = wide.to_numpy(np.float64)
    present = ~np.isnan(values)
    high = np.where(present, values, -np.inf).max(axis=1, initial=-np.inf)
    low = np.where(present, values, np.inf).min(axis=1, initial=np.inf)
    return float((present.any(axis=1) & (high == low)).mean())


def repetition_agreement(
    scores: pd.DataFrame, families: Sequence[str], dimensions: Sequence[str] | None = None
) -> pd.DataFrame:
    """How repeatable each judge is, per family and prompt (holistic or a dimension).

    ``dimensions`` are the rubric's dimension keys in order (default: the seed rubric's
    dimensions first, then any other dimension the scores hold, sorted).

    Columns: the number of repetitions, the mean within-image standard deviation, the share
    of images whose repetitions all agree, and the split-half reliability of the repetition
    mean (Spearman between even- and odd-repetition means, Spearman-Brown corrected).
    """
    if dimensions is None:
        held = set(scores["dimension"].dropna().astype(str)) - {""}
        dimensions = [d for d in DIMENSIONS if d in held] + sorted(held - set(DIMENSIONS))
    by_family = scores.groupby("family", sort=False).indices
    holistic = (scores["kind"] == "holistic").to_numpy()
    dimension = scores["dimension"].to_numpy()
    rows = []
    for fam in families:
        at = by_family.get(fam)
        if at is None:
            continue
        for prompt in ["holistic", *dimensions]:
            keep = holistic[at] if prompt == "holistic" else dimension[at] == prompt
            if not keep.any():
                continue
            wide = repetition_matrix(scores.iloc[at[keep]])
            r, sb = _split_half(wide)
            rows.append(
                {
                    "family": fam,
                    "prompt": prompt,
                    "repetitions": wide.shape[1],
                    "within_sd": float(wide.std(axis=1, ddof=1).mean()),
                    "all_agree": all_agree(wide),
                    "split_half_rho": r,
                    "reliability_sb": sb,
                }
            )
    return pd.DataFrame(rows)
