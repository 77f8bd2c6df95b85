"""The simulator answers the request shapes that peer clients send, through real HTTP.

Shapes written down from the clients' documentation and code:

- The ``openai`` SDK: ``chat.completions.create(stream=True, stream_options=
  {"include_usage": True})`` reads ``chat.completion.chunk`` events, the usage in a last
  chunk with no choices; ``n``, ``logprobs`` / ``top_logprobs``; image parts
  ``{"type": "image_url", "image_url": {"url": data URL, "detail": "low"}}``.
- Inspect AI's ``openai/<model>`` route, which may use the Responses API:
  ``responses.create(model, input=[{"type": "message", "role": "user", "content":
  [{"type": "input_text"}, {"type": "input_image", "image_url", "detail"}]}],
  instructions=..., max_output_tokens=..., store=False, include=[])``.
- VisionQ's official harness (``bench_run.py --composite``): a system message that
  always lists "(A), (B), (C), (D)", one composite on a white canvas with a black
  64-px banner "(X)" above each tile (tiles fit 512 px, 8-px gaps; 2 or 3 tiles in a
  row, 4 as 2 x 2), and the user text "Question: ...\\nThe single image below contains
  {n} candidate tiles arranged in a grid. Each tile has a label banner above it: (A),
  (B). Reply with EXACTLY one of those letters in parentheses."; its per-image mode
  sends "You will see {n} candidate images labeled ..." then "Image (A):" and an image,
  for each choice. Its parser takes the last "(X)" within range, else the last bare
  letter A-D within range.
"""

from __future__ import annotations

import io
import math
import re

import numpy as np
import pytest
from openai import OpenAI
from PIL import Image, ImageDraw

from judgepanel.core.prompts import bytes_data_url
from judgepanel.datasets.visionq import load_questions
from judgepanel_sim.judges.protocol import MODELS
from judgepanel_sim.judges.visionq import locate_tiles
from judgepanel_sim.world.visionq import write_visionq

KEY = "test-key"
RATE = "Rate the overall aesthetic quality of this photo from 1 to 10."
HARNESS_SYSTEM = (
    "You are a careful image-quality judge. You will see a question and between 2 and 4 "
    "candidate images, each labeled (A), (B), (C), (D). Pick the SINGLE image that best "
    "satisfies the question. Reply with EXACTLY one of: (A), (B), (C), (D). Do not explain. "
    "Do not add any other text."
)


def _client(server) -> OpenAI:
    return OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)


# The module's fixtures are built once, by the one worker that runs every test here
# (spread over two workers, each built them).
pytestmark = pytest.mark.xdist_group("sim-peers")


@pytest.fixture(scope="module")
def photo_url(jpeg_image: bytes) -> str:
    return bytes_data_url(jpeg_image, "image/jpeg")


def _rate(url: str, detail: str | None = None) -> list[dict]:
    image = {"url": url} if detail is None else {"url": url, "detail": detail}
    return [
        {
            "role": "user",
            "content": [{"type": "text", "text": RATE}, {"type": "image_url", "image_url": image}],
        }
    ]


def test_streaming_gives_the_same_answer_and_usage_in_the_last_chunk(sim_server, photo_url):
    client = _client(sim_server)
    args = {"model": MODELS[1], "messages": _rate(photo_url), "temperature": 0.3, "seed": 9}
    whole = client.chat.completions.create(**args)
    chunks = list(
        client.chat.completions.create(**args, stream=True, stream_options={"include_usage": True})
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.model_dump() == whole.usage.model_dump()
    assert all(c.usage is None for c in chunks[:-1])
    plain = list(client.chat.completions.create(**args, stream=True))
    assert all(c.usage is None for c in plain) and all(c.choices for c in plain)


def test_n_choices_are_sampled_in_turn(sim_server, photo_url):
    r = _client(sim_server).chat.completions.create(
        model=MODELS[3], messages=_rate(photo_url), temperature=1.0, seed=4, n=5
    )
    assert [c.index for c in r.choices] == [0, 1, 2, 3, 4]
    answers = [c.message.content for c in r.choices]
    assert len(set(answers)) > 1  # sampled, not one answer copied
    single = _client(sim_server).chat.completions.create(
        model=MODELS[3], messages=_rate(photo_url), temperature=1.0, seed=4
    )
    assert answers[0] == single.choices[0].message.content
    assert r.usage.completion_tokens == sum(math.ceil(len(a) / 4) for a in answers)


def test_logprobs_describe_the_answer_and_give_the_score_distribution(sim_server, photo_url):
    r = _client(sim_server).chat.completions.create(
        model=MODELS[0],
        messages=_rate(photo_url),
        temperature=0.7,
        seed=3,
        n=2,
        logprobs=True,
        top_logprobs=4,
    )
    for choice in r.choices:
        content = choice.logprobs.content
        assert "".join(t.token for t in content) == choice.message.content
        scores = [t for t in content if t.token.strip().isdigit()]
        assert len(scores) == 1  # "Score: 7. <reason>": one number, the score
        for t in content:
            assert t.logprob <= 0
            assert len(t.top_logprobs) == 4
            assert [a.logprob for a in t.top_logprobs] == sorted(
                (a.logprob for a in t.top_logprobs), reverse=True
            )
            assert sum(math.exp(a.logprob) for a in t.top_logprobs) <= 1.0 + 1e-9
            assert bytes(t.bytes).decode() == t.token
            if t is scores[0]:
                # The score token lists the likeliest scores the judge samples from, the
                # sampled one among them or not.
                assert all(1 <= int(a.token) <= 10 for a in t.top_logprobs)
                for a in t.top_logprobs:
                    if a.token == t.token:
                        assert a.logprob == t.logprob
            else:  # any other token is described after the fact: itself, then others
                assert t.logprob < 0
                assert t.top_logprobs[0].token == t.token
                assert t.top_logprobs[0].logprob == t.logprob
    bare = _client(sim_server).chat.completions.create(
        model=MODELS[0], messages=_rate(photo_url), temperature=0.7, seed=3
    )
    assert bare.choices[0].logprobs is None


def test_a_model_without_logprobs_answers_null(sim_server, photo_url):
    asked = _client(sim_server).chat.completions.create(
        model="sim-ember-v1",
        messages=_rate(photo_url),
        temperature=0.7,
        seed=3,
        n=2,
        logprobs=True,
        top_logprobs=4,
    )
    plain = _client(sim_server).chat.completions.create(
        model="sim-ember-v1", messages=_rate(photo_url), temperature=0.7, seed=3, n=2
    )
    assert [c.logprobs for c in asked.choices] == [None, None]
    # The first answer is the one a request that does not ask gets (later choices are
    # drawn after the first one's logprobs, as for every model).
    assert asked.choices[0].message.content == plain.choices[0].message.content


def test_low_detail_images_cost_the_low_detail_price(sim_server, scene):
    big = io.BytesIO()
    scene(seed=2, size=(1536, 1152)).save(big, format="JPEG", quality=85)
    url = bytes_data_url(big.getvalue(), "image/jpeg")
    client = _client(sim_server)
    tokens = {
        d: client.chat.completions.create(
            model=MODELS[0], messages=_rate(url, d), temperature=0
        ).usage.prompt_tokens
        for d in (None, "high", "low")
    }
    assert tokens[None] == tokens["high"]
    # 1536 x 1152 -> 1024 x 768 -> 2 x 2 tiles: 85 + 4 x 170 in full, 85 at low detail.
    assert tokens[None] - tokens["low"] == 4 * 170


def test_responses_api_answers_inspects_request_shape(sim_server, photo_url):
    client = _client(sim_server)
    r = client.responses.create(
        model=MODELS[2],
        instructions="You are an expert photo critic.",
        input=[
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": RATE},
                    {"type": "input_image", "image_url": photo_url, "detail": "auto"},
                ],
            }
        ],
        max_output_tokens=200,
        temperature=0.3,
        store=False,
        include=[],
    )
    assert r.status == "completed"
    assert re.search(r"\b([1-9]|10)\b", r.output_text)
    chat = client.chat.completions.create(
        model=MODELS[2],
        messages=[
            {"role": "system", "content": "You are an expert photo critic."},
            *_rate(photo_url),
        ],
        temperature=0.3,
    )
    assert r.usage.input_tokens == chat.usage.prompt_tokens
    assert r.usage.output_tokens == math.ceil(len(r.output_text) / 4)
    assert r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens
    text_only = client.responses.create(model=MODELS[2], input="Say hello.")
    assert text_only.output_text


def test_responses_api_refuses_what_it_does_not_keep(sim_server):
    client = _client(sim_server)
    import openai

    with pytest.raises(openai.BadRequestError, match="stream"):
        client.responses.create(model=MODELS[0], input="hi", stream=True).close()
    with pytest.raises(openai.BadRequestError, match="input"):
        client.responses.create(model=MODELS[0], input=[])


# -- VisionQ under the official harness's prompt -----------------------------------------

BANNER, PAD, TILE = 64, 8, 512


def harness_composite(files: list[str]) -> bytes:
    """A composite in the official harness's documented layout (see the module text)."""
    tiles = []
    for f in files:
        with Image.open(f) as im:
            im = im.convert("RGB")
            scale = TILE / max(im.size)
            if scale < 1:
                im = im.resize((int(im.width * scale), int(im.height * scale)))
            tiles.append(im)
    n = len(tiles)
    cols, rows = (2, 2) if n == 4 else (n, 1)
    cw = max(t.width for t in tiles)
    th = max(t.height for t in tiles)
    ch = th + BANNER
    canvas = Image.new("RGB", (cols * cw + (cols + 1) * PAD, rows * ch + (rows + 1) * PAD), "white")
    draw = ImageDraw.Draw(canvas)
    for i, t in enumerate(tiles):
        r, c = divmod(i, cols)
        x0, y0 = PAD + c * (cw + PAD), PAD + r * (ch + PAD)
        draw.rectangle([x0, y0, x0 + cw, y0 + BANNER], fill="black")
        draw.text((x0 + cw // 2 - 10, y0 + 24), f"({'ABCD'[i]})", fill="white")
        canvas.paste(t, (x0 + (cw - t.width) // 2, y0 + BANNER + (th - t.height) // 2))
    buf = io.BytesIO()
    canvas.save(buf, format="PNG")
    return buf.getvalue()


def harness_letter(text: str, n: int) -> str | None:
    """The official parser's reading: last in-range "(X)", else last in-range bare letter."""
    for pattern in (r"\(\s*([A-D])\s*\)", r"\b([A-D])\b"):
        found = [m for m in re.findall(pattern, text or "") if ord(m) - 65 < n]
        if found:
            return found[-1]
    return None


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("vq-world")
    write_visionq(root, 11, n_papers=30)
    questions = load_questions(root)
    picked = questions.groupby("n_choices").head(6)
    assert sorted(picked["n_choices"].unique()) == [2, 3, 4]
    return picked


def test_official_composite_prompt_is_read_on_2_3_and_4_way_questions(sim_server, world):
    client = _client(sim_server)
    unreadable, correct = 0, 0
    for q in world.itertuples():
        png = harness_composite(list(q.image_files))
        assert len(locate_tiles(np.asarray(Image.open(io.BytesIO(png)).convert("RGB")))) == (
            q.n_choices
        )
        letters = ", ".join(f"({c})" for c in "ABCD"[: q.n_choices])
        user = (
            f"Question: {q.question}\nThe single image below contains {q.n_choices} candidate "
            f"tiles arranged in a grid. Each tile has a label banner above it: {letters}. "
            "Reply with EXACTLY one of those letters in parentheses."
        )
        for model in MODELS:
            r = client.chat.completions.create(
                model=model,
                messages=[
                    {"role": "system", "content": HARNESS_SYSTEM},
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": user},
                            {"type": "image_url", "image_url": {"url": bytes_data_url(png)}},
                        ],
                    },
                ],
                temperature=0.0,
            )
            letter = harness_letter(r.choices[0].message.content, q.n_choices)
            unreadable += letter is None
            correct += letter == q.gold
    assert unreadable == 0
    assert correct / (len(world) * len(MODELS)) > 0.5  # read from the tiles, not guessed


def test_official_per_image_prompt_is_answered_as_a_choice(sim_server, world):
    client = _client(sim_server)
    for q in world.itertuples():
        letters = ", ".join(f"({c})" for c in "ABCD"[: q.n_choices])
        content = [
            {
                "type": "text",
                "text": f"Question: {q.question}\nYou will see {q.n_choices} candidate images "
                f"labeled {letters}. Reply with EXACTLY one of those letters in parentheses.",
            }
        ]
        for i, f in enumerate(q.image_files):
            with open(f, "rb") as fh:
                data = fh.read()
            content.append({"type": "text", "text": f"Image ({'ABCD'[i]}):"})
            content.append({"type": "image_url", "image_url": {"url": bytes_data_url(data)}})
        r = client.chat.completions.create(
            model=MODELS[0],
            messages=[
                {"role": "system", "content": HARNESS_SYSTEM},
                {"role": "user", "content": content},
            ],
            temperature=0.0,
        )
        answer = r.choices[0].message.content
        assert not answer.lower().startswith("score"), answer
        assert harness_letter(answer, q.n_choices) is not None, answer
