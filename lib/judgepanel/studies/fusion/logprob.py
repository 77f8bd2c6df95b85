"""What a run's logprob calls gave: per family, how often the distribution was used.

A call of ``prompt_mode: logprob`` stores its record (``judgepanel.core.score_logprobs``)
in the ``parsed`` column: the expected score, or the sampled score where the model sent no
logprobs or too little mass on valid scores. These tables say how often each happened, so
that a result built on expected scores also says where it rests on single samples.
"""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd

from judgepanel.studies.common.rubric_plan import LOGPROB_CALL_TYPES

COLUMNS: tuple[str, ...] = (
    "family",
    "kind",
    "calls",
    "from_logprobs",
    "fallbacks",
    "fallback_share",
    "fallback_reasons",
    "mean_valid_mass",
    "logprobs_mode",
)


def logprob_records(calls: pd.DataFrame) -> pd.DataFrame:
    """The ok logprob calls of ``calls`` (a store frame with ``parsed``), one row each:
    item, family, kind, dimension, score, sampled, source, fallback, valid_mass,
    logprobs_mode."""
    rows = calls[calls["kind"].isin(LOGPROB_CALL_TYPES) & (calls["status"] == "ok")]
    out = []
    for row in rows.itertuples(index=False):
        rec = json.loads(row.parsed)
        out.append(
            {
                "item": row.item,
                "family": row.family,
                "kind": row.kind,
                "dimension": row.dimension,
                "score": float(rec["score"]),
                "sampled": float(rec["sampled"]),
                "source": rec["source"],
                "fallback": rec["fallback"],
                "valid_mass": rec["valid_mass"],
                "logprobs_mode": rec["logprobs_mode"],
            }
        )
    columns = ["item", "family", "kind", "dimension", "score", "sampled", "source"]
    return pd.DataFrame(out, columns=[*columns, "fallback", "valid_mass", "logprobs_mode"])


def _reasons(fallbacks: pd.Series) -> str:
    # "valid mass 0.312 below 0.5" differ by their number: counted by what precedes it
    kinds = Counter(r.split(" below ")[0].rstrip("0123456789. ") for r in fallbacks if r)
    return "; ".join(f"{name} x{n}" for name, n in sorted(kinds.items()))


def logprob_summary(calls: pd.DataFrame) -> pd.DataFrame:
    """Per family and logprob kind: calls, how many used the distribution and how many fell
    back to the sampled answer (share and reasons), the mean valid mass where logprobs
    came, and the declared ``logprobs_mode`` (columns ``COLUMNS``)."""
    records = logprob_records(calls)
    out = []
    for (family, call_type), g in records.groupby(["family", "kind"], sort=True):
        fell = g["source"] == "sample"
        mass = pd.to_numeric(g["valid_mass"], errors="coerce")
        out.append(
            {
                "family": family,
                "kind": call_type,
                "calls": len(g),
                "from_logprobs": int((~fell).sum()),
                "fallbacks": int(fell.sum()),
                "fallback_share": float(fell.mean()),
                "fallback_reasons": _reasons(g.loc[fell, "fallback"]),
                "mean_valid_mass": float(mass.mean()) if mass.notna().any() else float("nan"),
                "logprobs_mode": ", ".join(sorted(set(g["logprobs_mode"]))),
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))
