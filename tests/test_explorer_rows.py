"""The call explorer's rows, built from plain columns, against pandas slices of the frame."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from judgepanel.report.explorer import ANSWER_CHARS, _item_rows


def _reference(calls: pd.DataFrame, families: list[str]) -> list[dict[str, object]]:
    """The rows as a pandas reading of the frame gives them (one slice per item and family)."""

    def summary(sub: pd.DataFrame) -> str:
        ok = sub[sub["status"] == "ok"]
        failed = len(sub) - len(ok)
        hol = ok[ok["kind"] == "holistic"]["value"].dropna()
        if len(hol):
            text = f"{hol.mean():.2f}"
        elif ok["value"].notna().any():
            text = f"{ok['value'].mean():.2f}"
        elif len(ok):
            seen: dict[str, dict[str, int]] = {}
            for raw in ok["parsed"].dropna():
                found = json.loads(raw)
                for key in ("letter", "best", "worst"):
                    if found.get(key):
                        slot = seen.setdefault(key, {})
                        slot[found[key]] = slot.get(found[key], 0) + 1
            parts = []
            for key, counts in seen.items():
                ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                letters = " ".join(f"{k}×{v}" for k, v in ranked)
                parts.append(letters if key == "letter" else f"{key} {letters}")
            text = "; ".join(parts) or "–"
        else:
            text = "–"
        return text + (f" ({failed} failed)" if failed else "")

    rows = []
    for item, sub in calls.groupby("item", sort=True):
        first = sub.groupby(["family", "kind", "dimension"])["repetition"].transform("min")
        keep = (sub["repetition"] == first) | (sub["status"] != "ok") | (sub["reasks"] > 0)
        details = [
            (c.family, c.kind, c.dimension, c.repetition, c.status, c.reasks)
            for c in sub[keep].itertuples()
        ]
        rows.append(
            (
                item,
                [summary(sub[sub["family"] == f]) for f in families],
                len(sub),
                int((sub["status"] != "ok").sum()),
                int((sub["reasks"] > 0).sum()),
                details,
            )
        )
    return rows


def _calls(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for item in ("b", "a", "c", "d"):
        for family in ("x", "y"):
            for kind, dimension in (("holistic", ""), ("dimension", "colour")):
                for rep in rng.permutation(3):
                    failed = rng.random() < 0.2
                    value = np.nan if failed or rng.random() < 0.1 else float(rng.integers(1, 11))
                    rows.append(
                        {
                            "item": item,
                            "family": family,
                            "kind": kind,
                            "dimension": dimension,
                            "repetition": int(rep),
                            "answer": None if failed else "x" * int(rng.integers(1, 400)),
                            "value": value,
                            "parsed": None,
                            "status": "failed" if failed else "ok",
                            "reason": "timeout" if failed else "",
                            "reasks": int(rng.integers(0, 2)),
                        }
                    )
    # an item answered only with letters (a choice study), one family never asked on it
    for rep, letter in enumerate("ABA"):
        rows.append(
            {
                "item": "e", "family": "x", "kind": "visionq", "dimension": "",
                "repetition": rep, "answer": f"({letter})", "value": np.nan,
                "parsed": json.dumps({"letter": letter}), "status": "ok", "reason": "",
                "reasks": 0,
            }
        )  # fmt: skip
    return pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)


def test_rows_match_a_pandas_reading_of_the_frame() -> None:
    calls = _calls()
    families = ["x", "y"]
    got = _item_rows(calls, families, {"a": {"label": "7.0"}})
    want = _reference(calls, families)
    assert [row["item"] for row in got] == ["a", "b", "c", "d", "e"]
    assert got[0]["label"] == "7.0" and got[1]["label"] == "–"
    assert got[4]["scores"] == ["A×2 B×1", "–"]
    assert any("failed" in s for row in got for s in row["scores"])  # the draw has failures
    for row, (item, scores, n, n_failed, n_reasked, details) in zip(got, want, strict=True):
        assert row["item"] == item
        assert row["scores"] == scores
        assert (row["n_calls"], row["n_failed"], row["n_reasked"]) == (n, n_failed, n_reasked)
        shown = [
            (d["family"], d["prompt"], d["status"].split(":")[0], d["reasks"])
            for d in row["details"]
        ]
        expected = [
            (f, f"{k}{' · ' + dim if dim else ''} #{rep}", s, str(r))
            for f, k, dim, rep, s, r in details
        ]
        assert shown == expected
        assert all(len(d["answer"]) <= ANSWER_CHARS + 1 for d in row["details"])
