"""Coverage of a plan by the store: only the planned keys count."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.core.config import ScoringDesign
from judgepanel.core.coverage import (
    all_agree,
    coverage,
    outside_plan,
    repetition_agreement,
    repetition_matrix,
)
from judgepanel.core.store import CallResult, Store
from judgepanel.studies.common.rubric_plan import plan_images

OK = CallResult(status="ok", parsed={"score": 6}, value=6.0)
FAILED = CallResult(status="failed", reason="http 500 after 6 attempts", attempts=6)


def plan() -> list:
    images = pd.DataFrame({"image_id": ["a", "b"], "path": ["a.jpg", "b.jpg"]})
    families = {"aurora": "sim-aurora-v1", "basalt": "sim-basalt-v1"}
    design = ScoringDesign(holistic_k=2, dimension_r=1, temperature=0.3)
    return plan_images(images, families, design, dataset="eva")


def test_counts_planned_keys_only(tmp_path: Path) -> None:
    specs = plan()  # 2 images x 2 families x (2 holistic + 5 dimension)
    aurora_holistic = [
        s for s in specs if s.key.family == "aurora" and s.key.call_type == "holistic"
    ]
    with Store(tmp_path / "s.sqlite") as store:
        store.record(aurora_holistic[0].key, OK)
        store.record(aurora_holistic[1].key, FAILED)
        # rows of another design: another temperature, a third repetition, another image,
        # and another model id under the same family name
        first = aurora_holistic[0].key
        store.record(replace(first, temperature=0.7), OK)
        store.record(replace(first, repetition=2), OK)
        store.record(replace(first, item="zz"), OK)
        store.record(replace(first, model="sim-aurora-v2"), OK)
        calls = store.frame()
    cov = coverage(calls, specs).set_index(["family", "kind"])
    assert list(cov.index) == [
        ("aurora", "holistic"),
        ("aurora", "dimension"),
        ("basalt", "holistic"),
        ("basalt", "dimension"),
    ]
    row = cov.loc[("aurora", "holistic")]
    assert (row.planned, row.ok, row.failed, row.missing) == (4, 1, 1, 2)
    assert row.ok_share == 0.25
    assert (cov.loc[("aurora", "dimension"), ["planned", "ok", "missing"]] == [10, 0, 10]).all()
    assert int(cov["planned"].sum()) == len(specs)
    assert (cov["missing"] >= 0).all() and (cov["ok_share"] <= 1).all()
    # the four rows of another design are what the cost counts beyond the plan
    extra = outside_plan(calls, specs)
    assert int(extra["calls"].sum()) == 4
    assert extra.loc[extra["temperature"] == 0.7, "calls"].tolist() == [1]
    assert outside_plan(calls[calls["temperature"] == 0.3].iloc[:0], specs).empty


def test_empty_store_is_all_missing(tmp_path: Path) -> None:
    specs = plan()
    with Store(tmp_path / "s.sqlite") as store:
        cov = coverage(store.frame(), specs)
    assert int(cov["missing"].sum()) == len(specs) and int(cov["ok"].sum()) == 0


def _scores(seed: int = 0) -> pd.DataFrame:
    """Answers of two families, holistic and two dimensions, with a repeated cell, a
    missing value, an image that answered once and images whose repetitions all agree."""
    rng = np.random.default_rng(seed)
    rows = [
        {"item": f"i{i:02d}", "family": fam, "kind": kind, "dimension": dim,
         "repetition": r, "value": float(rng.integers(1, 4))}
        for fam in ("aurora", "basalt")
        for kind, dim in (("holistic", ""), ("dimension", "color"), ("dimension", "light"))
        for i in range(12)
        for r in range(4 if kind == "holistic" else 3)
    ]  # fmt: skip
    df = pd.DataFrame(rows)
    df.loc[0, "value"] = np.nan
    df.loc[df["item"] == "i11", "value"] = 2.0  # every repetition agrees
    extra = df.iloc[[5]].assign(value=9.0)  # the same cell answered twice
    lone = df.iloc[[7]].assign(item="i99")  # an image with one repetition
    return pd.concat([df, extra, lone], ignore_index=True)


def test_repetition_agreement_reads_as_pivot_table_and_nunique() -> None:
    """The grouped path gives what one ``pivot_table`` and ``nunique`` per family and
    prompt gave, number for number."""
    scores = _scores()
    got = repetition_agreement(scores, ["basalt", "aurora", "absent"], ["light", "color"])
    expected = []
    for fam in ("basalt", "aurora"):
        f = scores[scores["family"] == fam]
        for prompt in ("holistic", "light", "color"):
            keep = f["kind"] == "holistic" if prompt == "holistic" else f["dimension"] == prompt
            sub = f[keep]
            wide = sub.pivot_table(index="item", columns="repetition", values="value")
            pd.testing.assert_frame_equal(repetition_matrix(sub), wide, check_names=False)
            assert all_agree(wide) == float((wide.nunique(axis=1) == 1).mean())
            expected.append((fam, prompt, wide.shape[1]))
    assert list(zip(got["family"], got["prompt"], got["repetitions"], strict=True)) == expected
    assert got["all_agree"].min() > 0 and got["all_agree"].max() < 1
