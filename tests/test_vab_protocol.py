"""VAB orders, prompts and planned calls."""

from __future__ import annotations

import base64
import io
import itertools
import json

import pandas as pd
import pytest
from PIL import Image

from judgepanel.core.calls import AnswerError
from judgepanel.studies.common.choice_parse import LETTERS
from judgepanel.studies.vab.position import accuracy_by_gold_slot, position_by_slot
from judgepanel.studies.vab.predictions import predictions_from_store
from judgepanel.studies.vab.protocol import (
    balanced_orders,
    build_messages,
    plan_calls,
    prompt_hash,
    standard_orders,
    task_orders,
    to_original,
)
from judgepanel.studies.vab.scores import task_scores


def _png(colour: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buf, format="PNG")
    return buf.getvalue()


def _tasks(sizes: list[int]) -> pd.DataFrame:
    rows = []
    for i, k in enumerate(sizes):
        labels = tuple(LETTERS[:k])
        rows.append(
            {
                "task_id": f"photograph_test_{i}",
                "domain": "photograph",
                "substyle": "test",
                "n_images": k,
                "labels": labels,
                "images": tuple(_png((10 * j, 20, 200 - 10 * j)) for j in range(k)),
                "image_paths": (None,) * k,
                "ground_truth_best": "A",
                "ground_truth_worst": None if k == 2 else labels[-1],
                "source": "test-00000-of-00001.parquet",
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_standard_orders_start_with_identity_and_are_distinct(k):
    for t in range(30):
        orders = standard_orders(k, f"task{t}", seed=7)
        assert orders[0] == tuple(range(k))
        assert len(set(orders)) == 3
        assert all(sorted(o) == list(range(k)) for o in orders)


def test_two_images_always_show_both_orders():
    thirds = set()
    for t in range(40):
        orders = standard_orders(2, f"pair{t}", seed=0)
        assert orders[:2] == [(0, 1), (1, 0)]
        assert orders[2] in ((0, 1), (1, 0))
        thirds.add(orders[2])
    # The repeated order is seeded per task, so neither order is always the repeat.
    assert thirds == {(0, 1), (1, 0)}


def test_orders_are_deterministic_and_depend_on_seed_and_task():
    assert standard_orders(5, "x", seed=1) == standard_orders(5, "x", seed=1)
    draws = {tuple(standard_orders(5, "x", seed=s)[1]) for s in range(10)}
    assert len(draws) > 1
    assert standard_orders(5, "x", seed=1) != standard_orders(5, "y", seed=1)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_balanced_orders_put_every_image_in_every_slot(k):
    orders = balanced_orders(k)
    assert len(orders) == k
    for slot in range(k):
        assert sorted(o[slot] for o in orders) == list(range(k))
    full = task_orders(k, "t", seed=0, balanced=True)
    assert full[:3] == standard_orders(k, "t", seed=0)
    assert full[3:] == orders


def test_messages_label_slots_in_order_and_map_back():
    labels = ("A", "B", "C")
    order = (2, 0, 1)
    msgs = build_messages("vab_tb1", order, labels, ["u0", "u1", "u2"])
    assert len(msgs) == 1 and msgs[0]["role"] == "user"
    parts = msgs[0]["content"]
    texts = [p["text"] for p in parts if p["type"] == "text"]
    urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    assert texts[1:4] == ["Image A:", "Image B:", "Image C:"]
    assert urls == ["u2", "u0", "u1"]
    assert "BEST: <letter>" in texts[-1] and "WORST: <letter>" in texts[-1]
    # Shown letter A is original image C, and so on.
    assert [to_original(x, order, labels) for x in "ABC"] == ["C", "A", "B"]


def test_prompt_hash_distinguishes_kind_and_order():
    labels = ("A", "B", "C")
    hashes = {
        prompt_hash(kind, order, labels)
        for kind in ("vab_top1", "vab_tb1")
        for order in itertools.permutations(range(3))
    }
    assert len(hashes) == 12


def test_plan_calls_counts_keys_and_skips_tb1_for_pairs():
    tasks = _tasks([2, 3, 4])
    fams = {"aurora": "sim-aurora-v1", "basalt": "sim-basalt-v1"}
    specs = plan_calls(tasks, fams, balanced=False)
    # k=2: top1 + bot1; k=3, 4: three kinds; 3 orders; 2 families.
    assert len(specs) == 2 * 3 * (2 + 3 + 3)
    assert not any(s.key.call_type == "vab_tb1" and s.key.item.endswith("_0") for s in specs)
    keys = [s.key for s in specs]
    assert len(set(keys)) == len(keys)
    assert {s.key.repetition for s in specs} == {0, 1, 2}
    assert all(s.key.dimension == "" and s.key.rubric_sha == "" for s in specs)
    assert all(s.key.temperature == 0.3 for s in specs)
    balanced = plan_calls(tasks, fams, balanced=True)
    # Balanced adds k repetitions per kind: 2*2 + 3*3 + 4*3 per family.
    assert len(balanced) - len(specs) == 2 * (2 * 2 + 3 * 3 + 4 * 3)
    std = {s.key for s in balanced if s.key.repetition < 3}
    assert std == set(keys)


def test_spec_builds_base64_images_and_parses_to_original_labels():
    tasks = _tasks([3])
    specs = plan_calls(tasks, {"aurora": "sim-aurora-v1"}, questions=("vab_tb1",), balanced=False)
    spec = next(s for s in specs if s.key.repetition == 1)
    order = standard_orders(3, tasks.task_id[0], seed=0)[1]
    msgs = spec.build()
    urls = [p["image_url"]["url"] for p in msgs[0]["content"] if p["type"] == "image_url"]
    assert len(urls) == spec.n_images == 3
    for slot, url in enumerate(urls):
        assert url.startswith("data:image/png;base64,")
        assert base64.b64decode(url.split(",", 1)[1]) == tasks.images[0][order[slot]]
    parsed = spec.parse("**BEST:** A\n**WORST:** c")
    assert parsed["best"] == "ABC"[order[0]]
    assert parsed["worst"] == "ABC"[order[2]]
    assert parsed["order"] == ",".join("ABC"[i] for i in order)
    with pytest.raises(AnswerError):
        spec.parse("no idea")


def test_predictions_from_store_rows_recompute_orders_and_check_them():
    tasks = _tasks([3])
    specs = plan_calls(tasks, {"aurora": "sim-aurora-v1"}, questions=("vab_top1",), balanced=True)
    rows = []
    for s in specs:
        parsed = s.parse("BEST: A")
        rows.append({**s.key.as_dict(), "status": "ok", "parsed": json.dumps(parsed)})
    rows[-1].update(status="failed", parsed=None)
    frame = pd.DataFrame(rows)
    pred = predictions_from_store(frame, tasks)
    assert len(pred) == 3 + 3
    assert pred.loc[pred.status == "failed", "pred_best"].isna().all()
    first = pred.loc[pred.repetition == 0].iloc[0]
    assert first.order == "A,B,C" and first.pred_best == "A"
    with pytest.raises(ValueError, match="order"):
        predictions_from_store(frame, tasks, seed=99)


def test_a_first_slot_judge_is_read_back_in_the_slot_it_named():
    """Planned orders, parsed answers, the store table and the metrics agree on slots.

    A judge that always names slot A is right in exactly one of the k balanced shifts of
    a task (each image visits slot A once), and only in the standard orders whose slot A
    shows the gold image; any off-by-one between the shown letters, the orders and the
    slot bookkeeping breaks one of these counts.
    """
    tasks = _tasks([2, 3, 4, 5])
    tasks["ground_truth_best"] = ["B", "C", "D", "B"]
    tasks["ground_truth_worst"] = [None, "A", "A", "E"]
    specs = plan_calls(tasks, {"aurora": "sim-aurora-v1"}, questions=("vab_top1",), balanced=True)
    rows = [
        {**s.key.as_dict(), "status": "ok", "parsed": json.dumps(s.parse("**BEST:** a"))}
        for s in specs
    ]
    pred = predictions_from_store(pd.DataFrame(rows), tasks)
    balanced = [3, 4, 5, 6, 7]
    by_slot = position_by_slot(pred, tasks, repetitions=balanced)
    assert (by_slot.loc[by_slot.slot == 0, "picked"] == 1.0).all()
    assert (by_slot.loc[by_slot.slot > 0, "picked"] == 0.0).all()
    shifts = task_scores(pred, tasks, repetitions=balanced).set_index("task_id")
    assert (shifts["n_correct"] == 1).all()
    gold_slot = accuracy_by_gold_slot(pred, tasks, repetitions=balanced).set_index("slot")
    assert gold_slot.loc["first", "accuracy"] == 1.0
    assert gold_slot.loc[["middle", "last"], "accuracy"].eq(0.0).all()
    standard = task_scores(pred, tasks).set_index("task_id")
    for task in tasks.itertuples():
        orders = standard_orders(task.n_images, task.task_id, seed=0)
        hits = sum(task.labels[o[0]] == task.ground_truth_best for o in orders)
        assert standard.loc[task.task_id, "n_correct"] == hits
