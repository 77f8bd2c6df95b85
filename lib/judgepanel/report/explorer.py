"""The call explorer: one static page per scored dataset, one row per item, every answer.

In the spirit of a sample viewer, a reviewer sees for each item its human label, each
family's scores, and under the row the raw answers, re-asks and failure reasons behind
them. The page is built from the checkpoint store (the dataset's own files add the human
label and a thumbnail when they are readable), works offline, and reuses the report's
table script: filter by typing, sort by a column, page through the items.
"""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pandas as pd

from judgepanel.core.config import Profile
from judgepanel.core.labels import LabelError, label_reader
from judgepanel.core.store import Store
from judgepanel.report.page import static_text

EXPLORER_DIR = "explorer"
ANSWER_CHARS = 240
"""Raw answers are cut to this many characters in the page (the store keeps them whole)."""

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("judgepanel.report", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
)

_COLUMNS = (
    "item", "family", "kind", "dimension", "repetition", "answer", "value", "parsed",
    "status", "reason", "reasks",
)  # fmt: skip


def _summary(calls: pd.DataFrame) -> str:
    """A family's calls on one item in a few words: mean score, or the letters picked."""
    ok = calls[calls["status"] == "ok"]
    failed = len(calls) - len(ok)
    hol = ok[ok["kind"] == "holistic"]["value"].dropna()
    if len(hol):
        text = f"{hol.mean():.2f}"
    elif ok["value"].notna().any():
        text = f"{ok['value'].mean():.2f}"
    elif len(ok):
        text = _picks(ok["parsed"])
    else:
        text = "–"
    return text + (f" ({failed} failed)" if failed else "")


def _picks(parsed: pd.Series) -> str:
    """The letters a family picked on an item over its calls: ``best A×2 C×1; worst B×3``."""
    counts: dict[str, dict[str, int]] = {}
    for text in parsed.dropna():
        try:
            found = json.loads(text)
        except (TypeError, ValueError):
            continue
        if not isinstance(found, dict):
            continue
        for key in ("letter", "best", "worst"):
            if found.get(key):
                slot = counts.setdefault(key, {})
                slot[str(found[key])] = slot.get(str(found[key]), 0) + 1
    parts = []
    for key, seen in counts.items():
        ranked = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))
        letters = " ".join(f"{k}×{v}" for k, v in ranked)
        parts.append(letters if key == "letter" else f"{key} {letters}")
    return "; ".join(parts) or "–"


def _notable(calls: pd.DataFrame) -> pd.DataFrame:
    """The calls shown under a row: the first repetition of each prompt, and every call
    that failed or needed a re-ask."""
    first = calls.groupby(["family", "kind", "dimension"])["repetition"].transform("min")
    keep = (calls["repetition"] == first) | (calls["status"] != "ok") | (calls["reasks"] > 0)
    return calls[keep]


def _detail_rows(calls: pd.DataFrame) -> list[dict[str, str]]:
    rows = []
    for c in _notable(calls).itertuples():
        answer = "" if c.answer is None else str(c.answer)
        cut = answer[:ANSWER_CHARS] + ("…" if len(answer) > ANSWER_CHARS else "")
        got = "–" if pd.isna(c.value) else f"{c.value:g}"
        rows.append(
            {
                "family": c.family,
                "prompt": f"{c.kind}{' · ' + c.dimension if c.dimension else ''} #{c.repetition}",
                "status": c.status if c.status == "ok" else f"failed: {c.reason}",
                "value": got,
                "parsed": "" if c.parsed is None else str(c.parsed)[:ANSWER_CHARS],
                "reasks": str(c.reasks),
                "answer": cut,
            }
        )
    return rows


def build_explorer(profile: Profile, dataset: str, outputs: Path) -> Path | None:
    """Write ``outputs/explorer/<profile>-<dataset>.html``; None when nothing is stored."""
    ref = profile.dataset(dataset)
    try:
        with Store(profile.store, readonly=True) as store:
            calls = store.frame(dataset=dataset, columns=_COLUMNS)
    except FileNotFoundError:
        return None
    if calls.empty:
        return None
    # Plain Python strings: the page takes thousands of small slices of the frame, and a
    # slice of an Arrow-backed column costs far more than one of an object column.
    calls = calls.astype({c: object for c in calls.columns if calls[c].dtype == "str"})
    try:
        reader = label_reader(ref.kind)
        labels = reader(ref) if reader else {}
    except LabelError:
        labels = {}  # the store alone still gives every answer
    families = sorted(calls["family"].unique())
    items = []
    for item, sub in calls.groupby("item", sort=True):
        label = labels.get(str(item), {})
        items.append(
            {
                "item": str(item),
                "label": label.get("label", "–"),
                "thumb": label.get("thumb"),
                "scores": [_summary(sub[sub["family"] == f]) for f in families],
                "n_calls": len(sub),
                "n_failed": int((sub["status"] != "ok").sum()),
                "n_reasked": int((sub["reasks"] > 0).sum()),
                "details": _detail_rows(sub),
            }
        )
    page = _ENV.get_template("explorer.html.j2").render(
        profile=profile.name,
        dataset=dataset,
        kind=ref.kind,
        families=families,
        items=items,
        n_calls=len(calls),
        css=static_text("page.css"),
        js=static_text("tables.js"),
        simulated=profile.simulated,
    )
    out = outputs / EXPLORER_DIR / f"{profile.name}-{dataset}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
