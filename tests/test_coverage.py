"""Coverage of a plan by the store: only the planned keys count."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from judgepanel.core.config import ScoringDesign
from judgepanel.core.coverage import coverage, outside_plan
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
