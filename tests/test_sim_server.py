"""The simulated judge server, driven through the official ``openai`` SDK over real HTTP."""

from __future__ import annotations

import asyncio
import io
import json
import re
import time

import httpx
import numpy as np
import openai
import pytest
from openai import AsyncOpenAI, OpenAI
from PIL import Image, ImageFilter
from scipy.stats import spearmanr

from judgepanel.core.prompts import DIMENSIONS, bytes_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel_sim.judges.families import FAMILIES
from judgepanel_sim.judges.handlers import (
    SimRequest,
    detect_dimension,
    find_handler,
    read_format,
    read_scale,
)
from judgepanel_sim.judges.protocol import MODELS, ImageView

KEY = "test-key"  # the simulator accepts any non-empty bearer token


def _client(server, **kw) -> OpenAI:
    return OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0, **kw)


def _async_client(server, **kw) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.base_url, api_key=KEY, max_retries=0, **kw)


@pytest.fixture(scope="module")
def image_url(jpeg_image: bytes) -> str:
    return bytes_data_url(jpeg_image, "image/jpeg")


def _score(content: str, lo: int = 1, hi: int = 10) -> int:
    obj = json.loads(content)
    assert isinstance(obj["score"], int)
    assert lo <= obj["score"] <= hi
    assert isinstance(obj["reason"], str) and obj["reason"].endswith(".")
    return obj["score"]


def test_models_list(sim_server):
    ids = [m.id for m in _client(sim_server).models.list().data]
    assert len(ids) >= 5
    assert set(MODELS) <= set(ids)


def test_holistic_prompt_every_model(sim_server, image_url):
    client = _client(sim_server)
    rubric = load_rubric()
    for model in MODELS:
        r = client.chat.completions.create(
            model=model, messages=rubric.holistic_messages(image_url), temperature=0.3, seed=1
        )
        assert r.object == "chat.completion" and r.model == model
        assert r.choices[0].finish_reason == "stop"
        _score(r.choices[0].message.content)
        # 85 + 170 tokens for one 512-px tile, plus the text.
        assert r.usage.prompt_tokens > 255
        assert r.usage.completion_tokens > 0
        assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_dimension_prompts(sim_server, image_url):
    client = _client(sim_server)
    rubric = load_rubric()
    for i, dim in enumerate(DIMENSIONS):
        r = client.chat.completions.create(
            model=MODELS[i % len(MODELS)],
            messages=rubric.dimension_messages(dim, image_url),
            temperature=0.3,
            max_tokens=200,
        )
        _score(r.choices[0].message.content)


def test_prompt_tokens_grow_with_text_and_image(sim_server, scene):
    client = _client(sim_server)
    small = io.BytesIO()
    scene(seed=2, size=(384, 288)).save(small, format="PNG")
    big = io.BytesIO()
    scene(seed=2, size=(1536, 1152)).save(big, format="JPEG", quality=85)

    def usage(text: str, data: bytes, mime: str) -> int:
        msg = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "image_url", "image_url": {"url": bytes_data_url(data, mime)}},
                ],
            }
        ]
        r = client.chat.completions.create(model=MODELS[0], messages=msg, temperature=0)
        return r.usage.prompt_tokens

    short = usage("Rate this photo from 1 to 10.", small.getvalue(), "image/png")
    long = usage("Rate this photo from 1 to 10. " * 20, small.getvalue(), "image/png")
    large = usage("Rate this photo from 1 to 10.", big.getvalue(), "image/jpeg")
    assert short < long
    assert large >= short + 170


def test_foreign_prompts_get_their_scale_and_format(sim_server, image_url):
    client = _client(sim_server)

    def ask(text: str, model: str = MODELS[1]) -> str:
        msg = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "image_url", "image_url": {"url": image_url}},
                ],
            }
        ]
        r = client.chat.completions.create(model=model, messages=msg, temperature=0.3)
        return r.choices[0].message.content.strip()

    for model in MODELS:
        five = ask(
            "Give this picture a rating from 1 to 5 for its aesthetic appeal. "
            "Answer with just the number.",
            model,
        )
        assert re.fullmatch(r"[1-5]", five), five
    hundred = json.loads(
        ask('How beautiful is this image, out of 100? Respond in JSON: {"rating": <number>}')
    )
    assert set(hundred) == {"rating"} and 0 <= hundred["rating"] <= 100
    sentence = ask("On a scale of 0-10, how good is this photo overall?")
    m = re.match(r"Score: (\d+)\. ", sentence)
    assert m and 0 <= int(m.group(1)) <= 10, sentence


def _request(system: str, user: str) -> SimRequest:
    return SimRequest(
        model=MODELS[0],
        family=FAMILIES["aurora"],
        system_text=system,
        user_text=user,
        parts=[("text", user)],
        images=[],
        temperature=0.0,
        seed=None,
        max_tokens=None,
        rng=np.random.default_rng(0),
    )


def _texts(messages: list[dict]) -> tuple[str, str]:
    system, user = [], []
    for m in messages:
        content = m["content"]
        parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
        (system if m["role"] == "system" else user).extend(p for p in parts if p)
    return "\n".join(system), "\n".join(user)


def test_rubric_prompts_are_recognised():
    rubric = load_rubric()
    for dim in DIMENSIONS:
        req = _request(*_texts(rubric.dimension_messages(dim, "data:,")))
        assert detect_dimension(req) == dim
        assert read_scale(req.text) == (1, 10)
        assert read_format(req.text).kind == "json"
    holistic = _request(*_texts(rubric.holistic_messages("data:,")))
    assert detect_dimension(holistic) is None
    assert read_scale(holistic.text) == (1, 10)
    fmt = read_format(holistic.text)
    assert (fmt.kind, fmt.score_key, fmt.reason_key) == ("json", "score", "reason")


def test_rubric_requests_reach_the_rubric_handlers(jpeg_image):
    rubric = load_rubric()
    image = ImageView.from_bytes(jpeg_image)
    cases = [(rubric.holistic_messages("data:,"), "holistic")] + [
        (rubric.dimension_messages(d, "data:,"), "dimension") for d in DIMENSIONS
    ]
    for messages, expected in cases:
        req = _request(*_texts(messages))
        req.images = [image]
        req.parts = [*req.parts, ("image", image)]
        assert find_handler(req).name == expected


@pytest.mark.parametrize(
    ("prompt", "dimension"),
    [
        ("How well composed is this photograph? Rate it 1-10.", "composition"),
        ("Rate the color harmony and tonal range of this image (1-10).", "colour"),
        ("Judge only the technical quality: sharpness, noise, exposure.", "quality"),
        ("How original and distinctive is this picture?", "distinctiveness"),
        ("Score the emotional impact of the image from 1 to 10.", "emotion"),
        ("Rate the overall aesthetic quality of this photo, 1-10.", None),
        ("Rate this image overall, considering composition and colour.", None),
    ],
)
def test_foreign_dimension_wording(prompt, dimension):
    assert detect_dimension(_request("", prompt)) == dimension


@pytest.mark.parametrize(
    ("text", "scale"),
    [
        ("Use an integer scale from 1 (very poor) to 10 (excellent).", (1, 10)),
        ("Give a score between 0 and 10.", (0, 10)),
        ("Rate it 1-5.", (1, 5)),
        ("What would you give it out of 100?", (0, 100)),
        ("Tiers: 9-10 great, 7-8 good. Answer with an integer from 1 to 10.", (1, 10)),
        ("Rate this photo.", (1, 10)),
    ],
)
def test_scale_reading(text, scale):
    assert read_scale(text) == scale


def test_unknown_model_is_404(sim_server, image_url):
    with pytest.raises(openai.NotFoundError) as err:
        _client(sim_server).chat.completions.create(
            model="sim-nonexistent-v9",
            messages=load_rubric().holistic_messages(image_url),
        )
    assert err.value.body["code"] == "model_not_found"


def test_missing_key_is_401(sim_server):
    r = httpx.get(f"{sim_server.base_url}/models")
    assert r.status_code == 401
    assert set(r.json()["error"]) >= {"message", "type", "code"}
    empty = httpx.post(
        f"{sim_server.base_url}/chat/completions",
        json={"model": MODELS[0], "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": "Bearer"},
    )
    assert empty.status_code == 401
    assert empty.json()["error"]["code"] == "invalid_api_key"


def test_bad_images_are_400(sim_server):
    client = _client(sim_server)

    def send(url: str) -> openai.BadRequestError:
        with pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(
                model=MODELS[0],
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "Rate this image from 1 to 10."},
                            {"type": "image_url", "image_url": {"url": url}},
                        ],
                    }
                ],
            )
        return err.value

    assert (
        "could not be decoded" in send(bytes_data_url(b"not an image at all", "image/png")).message
    )
    assert "base64" in send("data:image/jpeg;base64,@@@###").message
    assert "not fetched" in send("https://example.org/cat.jpg").message


_TEXT = [{"role": "user", "content": "Rate this photo from 1 to 10."}]


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ([1, 2], None, "JSON object"),
        ({"model": MODELS[0]}, "messages", "non-empty list"),
        ({"model": MODELS[0], "messages": [{"role": "bot", "content": "x"}]}, "messages", "role"),
        (
            {"model": MODELS[0], "messages": [{"role": "user", "content": [{"type": "audio"}]}]},
            "messages",
            "messages[0].content[0]",
        ),
        ({"model": MODELS[0], "messages": _TEXT, "temperature": "hot"}, "temperature", "number"),
        ({"model": MODELS[0], "messages": _TEXT, "temperature": 3}, "temperature", "[0, 2]"),
        ({"model": MODELS[0], "messages": _TEXT, "seed": 1.5}, "seed", "integer"),
        ({"model": MODELS[0], "messages": _TEXT, "n": 9}, "n", "from 1 to 8"),
        ({"model": MODELS[0], "messages": _TEXT, "n": 0}, "n", "from 1 to 8"),
        ({"model": MODELS[0], "messages": _TEXT, "top_logprobs": 2}, "top_logprobs", "logprobs"),
        (
            {"model": MODELS[0], "messages": _TEXT, "stream_options": {"include_usage": True}},
            "stream",
            "stream set to true",
        ),
        ({"model": MODELS[0], "messages": _TEXT, "max_tokens": 0}, "max_tokens", "positive"),
        (
            {"model": MODELS[0], "messages": _TEXT, "max_completion_tokens": -3},
            "max_completion_tokens",
            "positive",
        ),
        ({"model": MODELS[0], "messages": _TEXT, "stream": "yes"}, "stream", "boolean"),
    ],
)
def test_malformed_requests_are_400_naming_the_field(sim_server, body, param, words):
    r = httpx.post(
        f"{sim_server.base_url}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {KEY}"},
    )
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["param"] == param and words in error["message"]
    assert "Traceback" not in r.text


def test_image_too_small_to_judge_is_400(sim_server, jpeg_image):
    tiny = io.BytesIO()
    Image.open(io.BytesIO(jpeg_image)).resize((16, 12)).save(tiny, format="PNG")
    with pytest.raises(openai.BadRequestError) as err:
        _client(sim_server).chat.completions.create(
            model=MODELS[0],
            messages=load_rubric().holistic_messages(bytes_data_url(tiny.getvalue())),
        )
    assert "16x12" in err.value.message and "smaller than" in err.value.message


def test_bad_json_is_400_and_huge_body_is_413(sim_server):
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    url = f"{sim_server.base_url}/chat/completions"
    r = httpx.post(url, content=b"{not json", headers=headers)
    assert r.status_code == 400 and "JSON" in r.json()["error"]["message"]
    r = httpx.post(url, content=b" " * (33 * 1024 * 1024), headers=headers, timeout=30)
    assert r.status_code == 413
    assert r.json()["error"]["code"] == "request_too_large"


def test_max_tokens_truncates(sim_server, image_url):
    r = _client(sim_server).chat.completions.create(
        model=MODELS[0],
        messages=load_rubric().holistic_messages(image_url),
        max_tokens=3,
        temperature=0,
    )
    assert r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 3
    assert len(r.choices[0].message.content) <= 12


def test_async_client_many_requests(sim_server, image_url):
    messages = load_rubric().holistic_messages(image_url)

    async def run() -> list[str]:
        async with _async_client(sim_server) as client:
            calls = [
                client.chat.completions.create(
                    model=MODELS[i % 5], messages=messages, temperature=0.3
                )
                for i in range(40)
            ]
            return [r.choices[0].message.content for r in await asyncio.gather(*calls)]

    for content in asyncio.run(run()):
        _score(content)


def test_determinism(sim_server, image_url):
    client = _client(sim_server)
    messages = load_rubric().dimension_messages("quality", image_url)

    def ask(temperature: float, seed: int | None) -> str:
        r = client.chat.completions.create(
            model="sim-ember-v1", messages=messages, temperature=temperature, seed=seed
        )
        return r.choices[0].message.content

    assert ask(0.3, 11) == ask(0.3, 11)
    assert len({ask(0.3, s) for s in range(20)}) >= 2
    assert len({ask(0.0, s) for s in range(5)} | {ask(0.0, None)}) == 1
    assert len({ask(0.7, None) for _ in range(20)}) >= 2  # no seed: repeats still differ


def test_injected_429_carries_retry_after(sim_server_factory, image_url):
    server = sim_server_factory(error_rate=1.0, seed=3)
    client = _client(server)
    seen = {429: 0, 500: 0}
    for _ in range(16):
        try:
            client.chat.completions.create(
                model=MODELS[0], messages=load_rubric().holistic_messages(image_url)
            )
        except openai.RateLimitError as err:
            seen[429] += 1
            assert float(err.response.headers["retry-after"]) >= 1
            assert float(err.response.headers["retry-after-ms"]) > 0
            assert err.body["code"] == "rate_limit_exceeded"
        except openai.InternalServerError as err:
            seen[500] += 1
            assert err.status_code == 500
    assert seen[429] > 0 and seen[500] > 0 and sum(seen.values()) == 16


def test_injected_errors_at_roughly_the_set_rate(sim_server_factory, image_url):
    server = sim_server_factory(error_rate=0.2, seed=7)
    messages = load_rubric().holistic_messages(image_url)

    async def run() -> list[int]:
        async with _async_client(server) as client:

            async def one() -> int:
                try:
                    await client.chat.completions.create(model=MODELS[2], messages=messages)
                    return 200
                except openai.APIStatusError as err:
                    return err.status_code

            return await asyncio.gather(*(one() for _ in range(200)))

    codes = asyncio.run(run())
    errors = sum(c in (429, 500) for c in codes)
    assert set(codes) <= {200, 429, 500}
    # Binomial(200, 0.2): mean 40, sd 5.7; the schedule is seeded, the bound is generous.
    assert 20 <= errors <= 60


def test_malformed_answers_appear(sim_server_factory, image_url):
    server = sim_server_factory(malformed_rate=0.5, seed=5)
    client = _client(server)
    messages = load_rubric().holistic_messages(image_url)
    strict_ok, bad = 0, []
    for _ in range(40):
        content = (
            client.chat.completions.create(model=MODELS[3], messages=messages, temperature=0.3)
            .choices[0]
            .message.content
        )
        try:
            _score(content)
            strict_ok += 1
        except (ValueError, KeyError, AssertionError, TypeError):
            bad.append(content)
    assert strict_ok >= 5 and len(bad) >= 5
    kinds = {
        "fenced": any(b.startswith("```") for b in bad),
        "prose": any(not re.search(r"\d", b) and not b.startswith("{") for b in bad),
        "truncated": any(b.startswith("{") and not b.rstrip().endswith("}") for b in bad),
    }
    assert sum(kinds.values()) >= 2, bad


def test_stalled_request_times_out_and_server_stops(sim_server_factory, image_url):
    server = sim_server_factory(timeout_rate=1.0, seed=1)
    client = _client(server, timeout=1.0)
    t0 = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(
            model=MODELS[0], messages=load_rubric().holistic_messages(image_url)
        )
    assert time.monotonic() - t0 < 10
    assert httpx.get(f"http://127.0.0.1:{server.port}/health").status_code == 200
    server.stop()
    assert server.process.returncode == 0


def test_latency_is_added(sim_server_factory, image_url):
    server = sim_server_factory(latency_ms=300)
    client = _client(server)
    messages = load_rubric().holistic_messages(image_url)
    client.chat.completions.create(model=MODELS[0], messages=messages)  # warm the image cache
    t0 = time.monotonic()
    client.chat.completions.create(model=MODELS[0], messages=messages)
    assert time.monotonic() - t0 >= 0.3


def _degraded(scene, seed: int, level: int) -> bytes:
    """Level 0 clean to 5 worst: blur, noise and compression grow together."""
    img = scene(seed=seed)
    if level:
        img = img.filter(ImageFilter.GaussianBlur(0.5 * level))
        a = np.asarray(img, dtype=np.float32)
        a = a + np.random.default_rng(seed * 10 + level).normal(0, 3.0 * level, a.shape)
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=(95, 80, 60, 40, 25, 12)[level])
    return buf.getvalue()


def test_technical_quality_tracks_degradation_for_every_family(sim_server, scene):
    rubric = load_rubric()
    items = [(seed, level) for seed in range(4) for level in range(6)]
    urls = [bytes_data_url(_degraded(scene, s, lv), "image/jpeg") for s, lv in items]
    truth = [-lv for _, lv in items]

    async def scores(model: str, kind: str) -> list[int]:
        async with _async_client(sim_server) as client:
            calls = [
                client.chat.completions.create(
                    model=model,
                    messages=rubric.messages(kind, "quality" if kind == "dimension" else "", u),
                    temperature=0.3,
                    seed=17,
                )
                for u in urls
            ]
            out = await asyncio.gather(*calls)
        return [json.loads(r.choices[0].message.content)["score"] for r in out]

    by_family = {m: asyncio.run(scores(m, "dimension")) for m in MODELS}
    for model, values in by_family.items():
        rho = spearmanr(values, truth)[0]
        assert rho > 0.3, (model, rho, values)
    # The families are not one judge under five names.
    vectors = {tuple(v) for v in by_family.values()}
    assert len(vectors) == len(MODELS)
    means = [np.mean(v) for v in by_family.values()]
    assert max(means) - min(means) > 0.5
    holistic = {m: asyncio.run(scores(m, "holistic")) for m in ("sim-basalt-v1", "sim-dune-v1")}
    assert holistic["sim-basalt-v1"] != holistic["sim-dune-v1"]
