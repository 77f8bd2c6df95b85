"""The call explorer: one static page per scored dataset, one row per item, every answer.

In the spirit of a sample viewer, a reviewer sees for each item its human label, each
family's scores, and under the row the raw answers, re-asks and failure reasons behind
them. The page is built from the checkpoint store (the dataset's own files add the human
label and a thumbnail when they are readable), works offline, and reuses the report's
table script: filter by typing, sort by a column, page through the items.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import jinja2
import numpy as np
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


class _Calls:
    """One item's calls as plain columns, so that a page of thousands of items takes no
    pandas slice per item and family (they cost more than the page itself)."""

    def __init__(self, cols: dict[str, list], values: np.ndarray, rows: np.ndarray) -> None:
        for name in _COLUMNS:
            if name != "value":
                column = cols[name]
                setattr(self, name, [column[i] for i in rows])
        self.value = values[rows]

    family: list[str]
    kind: list[str]
    dimension: list[str]
    repetition: list[int]
    status: list[str]
    reason: list[str]
    reasks: list[int]
    answer: list[object]
    parsed: list[object]


def _summary(calls: _Calls, mine: list[int]) -> str:
    """A family's calls on one item in a few words: mean score, or the letters picked."""
    ok = [i for i in mine if calls.status[i] == "ok"]
    failed = len(mine) - len(ok)
    values = calls.value[ok]
    held = ~np.isnan(values)
    hol = values[held & np.array([calls.kind[i] == "holistic" for i in ok], dtype=bool)]
    if len(hol):
        text = f"{hol.mean():.2f}"
    elif held.any():
        text = f"{values[held].mean():.2f}"
    elif ok:
        text = _picks(calls.parsed[i] for i in ok)
    else:
        text = "–"
    return text + (f" ({failed} failed)" if failed else "")


def _picks(parsed: Iterable[object]) -> str:
    """The letters a family picked on an item over its calls: ``best A×2 C×1; worst B×3``."""
    counts: dict[str, dict[str, int]] = {}
    for text in parsed:
        if not isinstance(text, str):
            continue  # no parsed answer
        try:
            found = json.loads(text)
        except ValueError:
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


def _notable(calls: _Calls) -> list[int]:
    """The calls shown under a row: the first repetition of each prompt, and every call
    that failed or needed a re-ask."""
    first: dict[tuple[str, str, str], int] = {}
    for i, key in enumerate(zip(calls.family, calls.kind, calls.dimension, strict=True)):
        rep = calls.repetition[i]
        if key not in first or rep < first[key]:
            first[key] = rep
    return [
        i
        for i, key in enumerate(zip(calls.family, calls.kind, calls.dimension, strict=True))
        if calls.repetition[i] == first[key] or calls.status[i] != "ok" or calls.reasks[i] > 0
    ]


def _detail_rows(calls: _Calls) -> list[dict[str, str]]:
    rows = []
    for i in _notable(calls):
        answer = "" if calls.answer[i] is None else str(calls.answer[i])
        cut = answer[:ANSWER_CHARS] + ("…" if len(answer) > ANSWER_CHARS else "")
        value = calls.value[i]
        got = "–" if np.isnan(value) else f"{value:g}"
        dimension, parsed, status = calls.dimension[i], calls.parsed[i], calls.status[i]
        rows.append(
            {
                "family": calls.family[i],
                "prompt": f"{calls.kind[i]}{' · ' + dimension if dimension else ''}"
                f" #{calls.repetition[i]}",
                "status": status if status == "ok" else f"failed: {calls.reason[i]}",
                "value": got,
                "parsed": "" if parsed is None else str(parsed)[:ANSWER_CHARS],
                "reasks": str(calls.reasks[i]),
                "answer": cut,
            }
        )
    return rows


def _item_rows(
    calls: pd.DataFrame, families: list[str], labels: dict[str, dict]
) -> list[dict[str, object]]:
    """The page's rows, one per item in sorted order: its label, each family's summary,
    counts of calls, failures and re-asks, and the notable calls under it."""
    cols = {name: calls[name].tolist() for name in _COLUMNS if name != "value"}
    values = calls["value"].to_numpy(dtype=float)
    items = []
    for item, rows in sorted(calls.groupby("item").indices.items()):
        sub = _Calls(cols, values, rows)
        label = labels.get(str(item), {})
        mine: dict[str, list[int]] = {f: [] for f in families}
        for i, family in enumerate(sub.family):
            mine[family].append(i)
        items.append(
            {
                "item": str(item),
                "label": label.get("label", "–"),
                "thumb": label.get("thumb"),
                "scores": [_summary(sub, mine[f]) for f in families],
                "n_calls": len(rows),
                "n_failed": sum(status != "ok" for status in sub.status),
                "n_reasked": sum(n > 0 for n in sub.reasks),
                "details": _detail_rows(sub),
            }
        )
    return items


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
    items = _item_rows(calls, families, labels)
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
