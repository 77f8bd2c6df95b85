"""VisionQ call planning: rotations, keys, the request and the parser's mapping back."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from judgepanel.core.calls import AnswerError
from judgepanel.studies.visionq.composite import geometry
from judgepanel.studies.visionq.position import letter_frequencies
from judgepanel.studies.visionq.predictions import predictions_from_store
from judgepanel.studies.visionq.protocol import (
    plan_calls,
    prompt_text,
    rotated_order,
    rotations_for,
    unrotate,
)
from judgepanel.studies.visionq.rotation import rotation_vote

FAMILIES = {"aurora": "sim-aurora-v1", "basalt": "sim-basalt-v1"}


@pytest.fixture()
def questions(tmp_path) -> pd.DataFrame:
    rows = []
    for qid, n in (("cvpr2025_0001__fig_2__row_1", 3), ("cvpr2025_0002__fig_3__row_1", 2)):
        rel, files = [], []
        for i in range(n):
            p = tmp_path / qid / f"bbox_{i}_secretmethod{i}.png"
            p.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (64, 48), (40 * (i + 1), 90, 150)).save(p)
            rel.append(f"{qid}/{p.name}")
            files.append(str(p))
        rows.append(
            {
                "id": qid,
                "question": "Which method demonstrates better sharpness?",
                "n_choices": n,
                "image_files": files,
                "image_paths": rel,
                "methods": [f"SecretMethod{i}" for i in range(n)],
            }
        )
    return pd.DataFrame(rows)


def test_every_rotation_by_default(questions):
    specs = plan_calls(questions, FAMILIES)
    assert len(specs) == (3 + 2) * 2
    reps = sorted({(s.key.item, s.key.repetition) for s in specs})
    assert reps == [
        ("cvpr2025_0001__fig_2__row_1", 0),
        ("cvpr2025_0001__fig_2__row_1", 1),
        ("cvpr2025_0001__fig_2__row_1", 2),
        ("cvpr2025_0002__fig_3__row_1", 0),
        ("cvpr2025_0002__fig_3__row_1", 1),
    ]
    key = specs[0].key
    assert (key.call_type, key.dimension, key.rubric_sha, key.temperature) == (
        "visionq",
        "",
        "",
        0.3,
    )
    assert len({s.key for s in specs}) == len(specs)
    assert len({s.seed for s in specs}) == len(specs)


def test_one_rotation_is_the_released_order(questions):
    specs = plan_calls(questions, {"aurora": "m"}, rotations=1, temperature=0.0, dataset="vq")
    assert [s.key.repetition for s in specs] == [0, 0]
    assert specs[0].key.dataset == "vq" and specs[0].key.temperature == 0.0


def test_prompt_hash_covers_panel_order_not_family(questions):
    specs = plan_calls(questions, FAMILIES)
    by = {(s.key.item, s.key.family, s.key.repetition): s.key.prompt_hash for s in specs}
    qid = "cvpr2025_0001__fig_2__row_1"
    assert by[(qid, "aurora", 0)] == by[(qid, "basalt", 0)]
    assert len({by[(qid, "aurora", r)] for r in range(3)}) == 3
    moved = questions.copy()
    moved["image_files"] = [
        [f.replace("bbox", "copy_bbox") for f in fs] for fs in moved["image_files"]
    ]
    again = plan_calls(moved, FAMILIES)
    assert [s.key for s in again] == [s.key for s in specs], "absolute paths do not enter the key"


def test_rotation_arithmetic():
    assert rotated_order(3, 0) == [0, 1, 2]
    assert rotated_order(3, 1) == [1, 2, 0]
    assert rotated_order(4, 3) == [3, 0, 1, 2]
    assert unrotate("A", 3, 1) == "B"
    assert unrotate("C", 3, 1) == "A"
    assert rotations_for("q", 4, 0, 0) == [0, 1, 2, 3]
    assert rotations_for("q", 4, 9, 0) == [0, 1, 2, 3]
    two = rotations_for("q", 4, 2, 5)
    assert two[0] == 0 and len(two) == 2 and two == rotations_for("q", 4, 2, 5)
    with pytest.raises(ValueError):
        rotations_for("q", 3, -1, 0)


def test_parse_maps_the_shown_letter_back(questions):
    specs = plan_calls(questions, {"aurora": "m"})
    spec = next(
        s for s in specs if s.key.item.startswith("cvpr2025_0001") and s.key.repetition == 1
    )
    assert spec.parse("(A)") == {"letter": "B", "shown": "A", "rotation": 1}
    assert spec.parse("I choose (c).")["letter"] == "A"
    with pytest.raises(AnswerError):
        spec.parse("(D)")


def test_request_shows_the_rotated_composite_and_no_method_names(questions):
    specs = plan_calls(questions, {"aurora": "m"})
    spec = next(
        s for s in specs if s.key.item.startswith("cvpr2025_0001") and s.key.repetition == 1
    )
    messages = spec.build()
    assert len(messages) == 1 and messages[0]["role"] == "user"
    image_part, text_part = messages[0]["content"]
    text = text_part["text"]
    assert text == prompt_text("Which method demonstrates better sharpness?", 3)
    assert "Which method demonstrates better sharpness?" in text and "(A), (B), (C)" in text
    assert "(X)" in text and spec.text_chars == len(text) and spec.n_images == 1
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    raw = base64.b64decode(url.split(",", 1)[1])
    assert b"secretmethod" not in raw.lower() and "secret" not in text.lower()
    img = np.asarray(Image.open(io.BytesIO(raw)).convert("RGB"))
    geo = geometry(3, 64)
    assert img.shape == (geo.height, geo.width, 3)
    # slot 0 shows released choice 1, whose crop is (80, 90, 150)
    x0, y0, x1, y1 = geo.tile_boxes[0]
    centre = img[(y0 + y1) // 2, (x0 + x1) // 2]
    assert tuple(centre) == (80, 90, 150)


def test_missing_columns_and_mismatched_images(questions):
    with pytest.raises(ValueError, match="lack column"):
        plan_calls(questions.drop(columns="image_paths"), FAMILIES)
    bad = questions.copy()
    bad.at[0, "image_files"] = bad.at[0, "image_files"][:2]
    with pytest.raises(ValueError, match="2 images for 3 choices"):
        plan_calls(bad, FAMILIES)


def test_a_first_panel_judge_is_read_back_in_the_slot_it_named(questions):
    """Plan, parser, store table and metrics agree on which panel was named.

    A judge that always answers (A) names, over the n rotations of a question, each
    released panel once: it is right exactly once per question, and the position tables
    see it answer the first shown slot every time.
    """
    specs = plan_calls(questions, {"aurora": "m"})
    calls = pd.DataFrame(
        [
            {**s.key.as_dict(), "status": "ok", "parsed": json.dumps(s.parse("**(a)**"))}
            for s in specs
        ]
    )
    table = questions.assign(gold=["C", "B"], axis="X", leaf="L", paper_id=["p1", "p2"])
    preds = predictions_from_store(calls, table, rotations=0)
    per_question = preds.assign(correct=preds["pred"] == preds["gold"]).groupby("id")
    assert (per_question["correct"].sum() == 1).all()
    assert per_question["pred"].apply(lambda s: sorted(s)).tolist() == [
        ["A", "B", "C"],
        ["A", "B"],
    ]
    freq = letter_frequencies(preds, rotation=None).set_index(["n_choices", "letter"])
    assert freq.loc[(3, "A"), "pred_share"] == 1.0 and freq.loc[(2, "A"), "pred_share"] == 1.0
    assert rotation_vote(preds)["tie"].all(), "one vote per released panel: a full tie"
