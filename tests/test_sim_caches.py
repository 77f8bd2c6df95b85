"""What the simulated judges compute once per image or per prompt, not once per request."""

from __future__ import annotations

import base64

import pytest
from PIL import ImageFilter

from judgepanel.core.prompts import bytes_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel.studies.visionq.composite import composite_png
from judgepanel.studies.visionq.parse import parse_letter
from judgepanel.studies.visionq.protocol import prompt_text, visionq_messages
from judgepanel_sim.judges import families, handlers, visionq
from judgepanel_sim.judges.protocol import parse_chat
from judgepanel_sim.judges.server import answer_chat


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(owner, name)

    def wrapper(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def test_composite_tiles_are_located_once_per_image(scene, monkeypatch: pytest.MonkeyPatch):
    base = scene(seed=31, size=(200, 150))
    tiles = [base.filter(ImageFilter.GaussianBlur(b)) if b else base for b in (1.5, 0, 2.5)]
    url = "data:image/png;base64," + base64.b64encode(composite_png(tiles)).decode("ascii")
    calls = _counting(monkeypatch, visionq, "locate_tiles")
    text = prompt_text("Which method demonstrates better sharpness?", 3)
    answers = []
    for seed in range(6):
        body = {"model": "sim-basalt-v1", "messages": visionq_messages(text, url), "seed": seed}
        answers.append(answer_chat(parse_chat(body), 0))
    assert len(calls) == 1
    assert {parse_letter(a, 3) for a in answers} <= set("ABC")


def test_rubric_prompt_is_read_and_perceived_once(jpeg_image, monkeypatch: pytest.MonkeyPatch):
    url = bytes_data_url(jpeg_image, "image/jpeg")
    messages = load_rubric().dimension_messages("composition", url)
    matches = _counting(monkeypatch, handlers.DimensionHandler, "matches")
    evidence = _counting(monkeypatch, families.Family, "evidence")
    scores = []
    for seed in range(5):
        body = {"model": "sim-dune-v1", "messages": messages, "seed": seed, "temperature": 1.0}
        scores.append(answer_chat(parse_chat(body), 0))
    assert len(matches) <= 1  # once for this prompt (0 if an earlier test met it first)
    assert len(evidence) <= 1  # once for this (family, image)
    assert len(set(scores)) > 1  # the sampling noise is still drawn per request
