"""The simulated VisionQ judge: tiles found from pixels, letters through the real server."""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd
import pytest
from PIL import Image, ImageDraw, ImageFilter
from scipy.stats import binomtest

from judgepanel.core.calls import AnswerError
from judgepanel.core.local_sim import SimConfig
from judgepanel.core.providers import OPENAI
from judgepanel.datasets.visionq import load_questions
from judgepanel.studies.visionq.cache import CompositeCache
from judgepanel.studies.visionq.composite import build_composite, composite_png
from judgepanel.studies.visionq.parse import parse_letter
from judgepanel.studies.visionq.protocol import plan_calls, prompt_text, visionq_messages
from judgepanel_sim.judges import perception, protocol
from judgepanel_sim.judges.server import SimApp
from judgepanel_sim.judges.visionq import (
    GUTTER_TOL,
    _near,
    _tiles,
    criterion_cues,
    locate_tiles,
    read_question,
)
from judgepanel_sim.world.visionq import write_visionq

openai = pytest.importorskip("openai")

MODELS = ("sim-aurora-v1", "sim-basalt-v1", "sim-cobalt-v1", "sim-dune-v1", "sim-ember-v1")


def _crops(scene, n: int, blur: list[float]) -> list[Image.Image]:
    base = scene(seed=4, size=(240, 180))
    return [base.filter(ImageFilter.GaussianBlur(b)) if b else base for b in blur[:n]]


def test_reads_the_question_and_the_criterion():
    text = prompt_text("Which method demonstrates better noise suppression?", 3)
    assert read_question(text) == ("noise suppression", 3)
    assert criterion_cues("noise suppression") == {"clean": 1.0}
    assert criterion_cues("shape accuracy") is None
    assert read_question("Rate this photo from 1 to 10.") is None
    # One letter is no option list: the count then comes from the image(s).
    assert read_question("Which method demonstrates better sharpness? (A) only") == (
        "sharpness",
        0,
    )


def test_tiles_are_found_in_our_composites(scene):
    for n in (2, 3, 4):
        comp = build_composite(_crops(scene, n, [0, 1, 2, 3]))
        assert locate_tiles(np.asarray(comp.image)) == list(comp.content_boxes)


def test_tiles_are_found_in_a_foreign_layout(scene):
    # White canvas, black banners with white letters, other sizes: nothing of our builder.
    crops = _crops(scene, 4, [0, 1, 2, 3])
    w, h, banner, pad = 240, 180, 40, 12
    canvas = Image.new("RGB", (2 * w + 3 * pad, 2 * (banner + h) + 3 * pad), "white")
    draw = ImageDraw.Draw(canvas)
    expected = []
    for i, crop in enumerate(crops):
        r, c = divmod(i, 2)
        x0, y0 = pad + c * (w + pad), pad + r * (banner + h + pad)
        draw.rectangle([x0, y0, x0 + w - 1, y0 + banner - 1], fill="black")
        draw.text((x0 + w // 2 - 8, y0 + 12), f"({'ABCD'[i]})", fill="white")
        canvas.paste(crop, (x0, y0 + banner))
        expected.append((x0, y0 + banner, x0 + w, y0 + banner + h))
    assert locate_tiles(np.asarray(canvas)) == expected


def _ask(client, model: str, png: bytes, text: str, temperature: float = 0.3, seed: int = 1):
    url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    resp = client.chat.completions.create(
        model=model,
        messages=visionq_messages(text, url),
        temperature=temperature,
        seed=seed,
        max_tokens=64,
    )
    return resp.choices[0].message.content


def test_a_three_panel_composite_gets_a_letter(sim_server, scene):
    client = openai.OpenAI(base_url=sim_server.base_url, api_key="sim-key", max_retries=0)
    png = composite_png(_crops(scene, 3, [2.5, 0, 1.5]))
    text = prompt_text("Which method demonstrates better sharpness?", 3)
    letters = []
    for model in MODELS:
        answer = _ask(client, model, png, text)
        letters.append(parse_letter(answer, 3))
    assert set(letters) <= set("ABC")
    assert letters.count("B") >= 3, f"the sharp panel (B) should win most votes: {letters}"


def test_malformed_answers_do_not_parse(sim_server_factory, scene):
    server = sim_server_factory(malformed_rate=1.0, seed=2)
    client = openai.OpenAI(base_url=server.base_url, api_key="sim-key", max_retries=0)
    png = composite_png(_crops(scene, 3, [2.5, 0, 1.5]))
    text = prompt_text("Which method demonstrates better sharpness?", 3)
    for seed in range(6):
        answer = _ask(client, MODELS[seed % 5], png, text, seed=seed)
        with pytest.raises(AnswerError):
            parse_letter(answer, 3)


@pytest.mark.slow
def test_judges_beat_chance_on_synthetic_questions(sim_server, tmp_path):
    write_visionq(tmp_path, 11, n_papers=30)
    every = load_questions(tmp_path)
    # 40 questions spread over many papers: first one per paper, then the next ones.
    order = every.groupby("paper_id").cumcount()
    questions = every.assign(_k=order).sort_values(["_k", "id"]).head(40)
    assert len(questions) == 40 and questions["paper_id"].nunique() >= 25
    families = {m.split("-")[1]: m for m in MODELS}
    specs = plan_calls(questions, families, rotations=1)
    client = openai.OpenAI(base_url=sim_server.base_url, api_key="sim-key", max_retries=0)
    gold = dict(zip(questions["id"], questions["gold"], strict=True))
    correct: dict[str, int] = dict.fromkeys(families, 0)
    for spec in specs:
        resp = client.chat.completions.create(
            model=spec.key.model,
            messages=spec.build(),
            temperature=spec.key.temperature,
            seed=spec.seed,
            max_tokens=spec.max_tokens,
        )
        try:
            letter = spec.parse(resp.choices[0].message.content)["letter"]
        except AnswerError:
            continue  # unparsed counts as wrong
        correct[spec.key.family] += letter == gold[spec.key.item]
    n = len(questions)
    chance = float(np.mean(1.0 / questions["n_choices"]))
    pooled = sum(correct.values())
    assert binomtest(pooled, 5 * n, chance, alternative="greater").pvalue < 1e-3
    assert sum(c / n > chance for c in correct.values()) >= 4, (correct, chance)


def test_near_is_the_all_channel_test_it_replaces():
    """The grid reader's channel-at-a-time test marks the same pixels as comparing the
    three channels together would (the slow form it replaced)."""
    rng = np.random.default_rng(5)
    img = rng.integers(60, 90, size=(40, 50, 3)).astype(np.int16)
    for ref in (img[0, 0], np.array([72.0, 72.0, 80.0]), np.median(img[3:9, 4:30], axis=(0, 1))):
        want = (np.abs(img - ref) <= GUTTER_TOL).all(axis=-1)
        assert np.array_equal(_near(img, ref), want)
        assert 0 < want.sum() < want.size  # both kinds of pixel occur


def test_a_composite_sent_to_five_families_is_decoded_once_on_the_batch_path(
    scene, tmp_path, monkeypatch
):
    """A batch carrying each rotation of a three-panel question to five families: the
    server decodes each composite once, and measures each panel once, though it is shown
    at another place in each rotation."""
    files = []
    for i, crop in enumerate(_crops(scene, 3, [0, 1.5, 3])):
        files.append(tmp_path / f"bbox_{i}.png")
        crop.save(files[-1])
    questions = pd.DataFrame(
        [
            {
                "id": "cvpr2025_0001__fig_1__row_1",
                "question": "Which method demonstrates better sharpness?",
                "n_choices": 3,
                "image_files": [str(f) for f in files],
                "image_paths": [f.name for f in files],
            }
        ]
    )
    families = {m.split("-")[1]: m for m in MODELS}
    specs = plan_calls(questions, families, cache=CompositeCache())
    bodies = [json.loads(OPENAI.request_body(s, s.build(), s.seed)) for s in specs]
    assert len(bodies) == 3 * 5
    for name in ("_HEADERS", "_B64_DIGESTS", "_FEATURES", "_PIXELS", "_DERIVED"):
        monkeypatch.setattr(protocol, name, protocol.LRU(getattr(protocol, name).maxsize))
    counts = {"decode": 0, "features": 0}

    def counted(name, real):
        def call(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(protocol, "_decode", counted("decode", protocol._decode))
    monkeypatch.setattr(perception, "features", counted("features", perception.features))
    results = SimApp(SimConfig(report_cost=True)).lines_answer(
        [(body, -(i + 1)) for i, body in enumerate(bodies)]
    )
    assert [status for status, _, _ in results] == [200] * 15
    assert counts == {"decode": 3, "features": 3}
    # a panel's features read by its content are those read by its place in the image
    url = bodies[0]["messages"][0]["content"][0]["image_url"]["url"]
    view = protocol.ImageView.from_base64(url.split(",", 1)[1])
    for box, digest in view.derived("visionq-tiles", _tiles):
        assert view.region_features(box, digest) == view.region_features(box)
