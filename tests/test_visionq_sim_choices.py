"""The simulated VisionQ judge answers within the choices a request states, in any wording.

Foreign request shapes (none of judgepanel's own prompts): the choices stated as a list
("A, B or C"), a range ("Options: A-C", "panels labelled A to C"), "one of A/B/C", option
lines ("A) ..."), "among: A, B", or only in a system message; the figure holds one panel
more than the choices (an input or reference panel, as papers' figures do), as a composite
on a white canvas or as one image per panel. Through the ``openai`` SDK and the real
server (no injected faults, so every answer is the judge's own).
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Callable

import pytest
from PIL import Image, ImageDraw, ImageFilter

from judgepanel.studies.visionq.composite import composite_png
from judgepanel.studies.visionq.protocol import prompt_text
from judgepanel_sim.judges.protocol import MODELS
from judgepanel_sim.judges.visionq import read_choices

openai = pytest.importorskip("openai")

CRITERIA = ("sharpness", "noise suppression", "colour accuracy", "shape accuracy")
SEEDS = range(8)


def _letters(n: int) -> str:
    return "ABCDEFGH"[:n]


def _or_list(n: int) -> str:
    ls = _letters(n)
    return ", ".join(ls[:-1]) + " or " + ls[-1]


# Each wording: (system text or None, user text) for n choices and a criterion.
WORDINGS: dict[str, Callable[[int, str], tuple[str | None, str]]] = {
    "or-list": lambda n, c: (None, f"Which method shows better {c}? Reply with {_or_list(n)}."),
    "range": lambda n, c: (
        None,
        f"Options: A-{_letters(n)[-1]}.\nWhich method demonstrates better {c}?",
    ),
    "slashes": lambda n, c: (
        None,
        f"Which image has better {c}? Answer one of {'/'.join(_letters(n))}.",
    ),
    "labelled-to": lambda n, c: (
        None,
        f"The figure shows an input and panels labelled A to {_letters(n)[-1]}. "
        f"Which output has better {c}?",
    ),
    "among": lambda n, c: (
        None,
        f"Which method gives better {c}? "
        f"Answer with a single letter among: {', '.join(_letters(n))}",
    ),
    "option-lines": lambda n, c: (
        None,
        f"Which method demonstrates better {c}?\n"
        + "\n".join(f"{x}) method number {i + 1}" for i, x in enumerate(_letters(n))),
    ),
    "system-only": lambda n, c: (
        f"You compare figure panels. Answer with one letter, {_or_list(n)}, nothing else.",
        f"Which method demonstrates better {c}?",
    ),
}


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _crops(scene, k: int) -> list[Image.Image]:
    """``k`` crops of one scene under different blurs (the method outputs)."""
    base = scene(seed=9, size=(160, 120))
    blurs = [1.5, 0.0, 2.5, 0.8, 3.5]
    return [base.filter(ImageFilter.GaussianBlur(b)) if b else base for b in blurs[:k]]


def _white_canvas(crops: list[Image.Image]) -> bytes:
    """A one-row figure on white, a black banner over each panel: the last one unlabelled
    (the input), the others lettered A, B, ..."""
    w, h, banner, pad = 160, 120, 24, 10
    canvas = Image.new("RGB", (len(crops) * (w + pad) + pad, banner + h + 2 * pad), "white")
    draw = ImageDraw.Draw(canvas)
    for i, crop in enumerate(crops):
        x0 = pad + i * (w + pad)
        draw.rectangle([x0, pad, x0 + w - 1, pad + banner - 1], fill="black")
        label = "input" if i == len(crops) - 1 else _letters(i + 1)[-1]
        draw.text((x0 + w // 2 - 10, pad + 6), label, fill="white")
        canvas.paste(crop, (x0, pad + banner))
    return _png(canvas)


def _content(layout: str, n: int, scene) -> list[dict]:
    """The image parts for ``n`` choices shown with one extra panel."""
    crops = _crops(scene, n + 1)
    if layout == "white-canvas":
        urls = [_url(_white_canvas(crops))]
    elif layout == "own-composite":
        urls = [_url(composite_png(crops))]
    else:  # one image per panel
        urls = [_url(_png(c)) for c in crops]
    return [{"type": "image_url", "image_url": {"url": u}} for u in urls]


def _answered(text: str) -> set[str]:
    """Every letter an answer gives: each "(X)", or the whole answer when it is one letter."""
    found = set(re.findall(r"\(([A-Z])\)", text))
    if re.fullmatch(r"\s*[A-Z]\s*", text):
        found.add(text.strip())
    return found


@pytest.mark.parametrize(
    ("wording", "want"),
    [
        ("Reply with (A) or (B).", 2),
        ("Reply with A, B, or C.", 3),
        ("Options: A-C", 3),
        ("Options: (A) to (D)", 4),
        ("Pick one of A/B/C.", 3),
        ("The panels are labelled A to D.", 4),
        ("Answer with a single letter among: A, B", 2),
        ("A) first\nB) second\nC) third", 3),
        ("[A] first [B] second", 2),
        ("The figure shows panels (A)-(D); which of (A), (B) or (C) is best?", 3),
        ("Which of the three methods is best?", 3),
        ("Answer in the form (X), for example (A).", 0),
        ("A photo of B or C.", 0),
    ],
)
def test_read_choices(wording: str, want: int):
    assert read_choices(wording) == want


def test_own_prompts_read_as_before():
    for n in (2, 3, 4):
        assert read_choices(prompt_text("Which method demonstrates better sharpness?", n)) == n


@pytest.mark.parametrize("layout", ["white-canvas", "own-composite", "per-image"])
def test_answers_stay_within_the_stated_choices(sim_server, scene, layout):
    client = openai.OpenAI(base_url=sim_server.base_url, api_key="sim-key", max_retries=0)
    wrong: list[tuple[str, int, int, str]] = []
    seen: dict[int, set[str]] = {2: set(), 3: set(), 4: set()}
    for n in (2, 3, 4):
        images = _content(layout, n, scene)
        for wi, (name, wording) in enumerate(WORDINGS.items()):
            for seed in SEEDS:
                system, user = wording(n, CRITERIA[(seed + wi) % len(CRITERIA)])
                messages: list[dict] = (
                    [] if system is None else [{"role": "system", "content": system}]
                )
                messages.append(
                    {"role": "user", "content": [*images, {"type": "text", "text": user}]}
                )
                resp = client.chat.completions.create(
                    model=MODELS[seed % len(MODELS)],
                    messages=messages,
                    temperature=1.0,
                    seed=seed,
                    max_tokens=64,
                )
                answer = resp.choices[0].message.content
                letters = _answered(answer)
                seen[n] |= letters
                if not letters or not letters <= set(_letters(n)):
                    wrong.append((name, n, seed, answer))
    assert not wrong, f"{len(wrong)} answers outside the stated choices, e.g. {wrong[:5]}"
    for n, letters in seen.items():
        assert len(letters) >= 2, f"{n}-way answers all {letters}: the check would be idle"
