"""The simulator answers any rubric: a score per declared dimension on its declared scale.

Requests go through the official ``openai`` SDK over real HTTP to the simulated server,
in the prompt form a rubric other than the seed's is sent in.
"""

from __future__ import annotations

import io
import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from openai import OpenAI
from PIL import Image, ImageFilter
from scipy.stats import spearmanr

from judgepanel.core.prompts import DIMENSIONS, bytes_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel_sim.judges.anyrubric import describe_dimension, parse_dimension
from judgepanel_sim.judges.latents import LATENT_CUES, find_latent, latents_table
from judgepanel_sim.judges.protocol import MODELS, ImageView

KEY = "test-key"
LEVELS = ("none", "slight", "clear", "striking")


def _client(server) -> OpenAI:
    return OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0)


def scale_text(lo: int | None, hi: int | None, levels: tuple[str, ...] | None) -> tuple[str, str]:
    """The prompt's scale phrase and answer form, for an integer range or named levels."""
    if levels is not None:
        return f"with one of the levels: {', '.join(levels)}", '"<level>"'
    return f"with an integer from {lo} to {hi}", f"<integer {lo}-{hi}>"


def dimension_messages(
    url: str,
    title: str,
    asks: str,
    lo: int | None = 1,
    hi: int | None = 10,
    levels: tuple[str, ...] | None = None,
    tiers: str | None = None,
    role: str = "You are a careful image critic.",
) -> list[dict]:
    """A dimension request of a rubric other than the seed's."""
    scale, form = scale_text(lo, hi, levels)
    user = f"Rubric dimension: {title} ({asks}).\n"
    if tiers:
        user += f"Score tiers, each with the criteria an image at that tier shows:\n{tiers}\n"
    user += (
        f"Score the image below on {title} only, {scale}.\n"
        f'Reply with JSON only, exactly in the form {{"score": {form}, '
        '"reason": "<one sentence>"}.'
    )
    system = (
        f"{role} You score one image on a single dimension of a rubric and always answer in JSON."
    )
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": user},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        },
    ]


def holistic_messages(url: str, lo: int, hi: int) -> list[dict]:
    text = (
        f"Rate the overall quality of this image.\nUse an integer scale from {lo} to {hi}.\n"
        f'Reply with JSON only, exactly in the form {{"score": <integer {lo}-{hi}>, '
        '"reason": "<one sentence>"}.\nDo not add any other text.'
    )
    return [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        }
    ]


def _png_url(rgb: np.ndarray) -> str:
    buf = io.BytesIO()
    Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8)).save(buf, format="PNG")
    return bytes_data_url(buf.getvalue(), "image/png")


def _ask(client: OpenAI, model: str, messages: list[dict], temperature: float = 0.3) -> dict:
    r = client.chat.completions.create(
        model=model, messages=messages, temperature=temperature, seed=3
    )
    return json.loads(r.choices[0].message.content)


@pytest.fixture(scope="module")
def scenes(scene) -> list[np.ndarray]:
    """Forty varied small scenes (the property under test is then varied on top)."""
    return [np.asarray(scene(seed=s, size=(192, 144)), dtype=np.float64) for s in range(40)]


def test_answers_are_on_the_declared_scale(sim_server, scene):
    client = _client(sim_server)
    urls = [_png_url(np.asarray(scene(seed=s, size=(192, 144)))) for s in range(6)]
    cases = [
        ("Whimsy", "how playful and surprising the picture feels", 0, 2, None),
        ("Symmetry", "how closely the left half mirrors the right", 1, 7, None),
        ("Storytelling", "how strongly the picture suggests a narrative", None, None, LEVELS),
    ]
    seen: dict[str, set] = {c[0]: set() for c in cases}
    for title, asks, lo, hi, levels in cases:
        for url in urls:
            for model in MODELS:
                obj = _ask(client, model, dimension_messages(url, title, asks, lo, hi, levels))
                assert set(obj) == {"score", "reason"}
                assert isinstance(obj["reason"], str) and obj["reason"].endswith(".")
                if levels is None:
                    assert isinstance(obj["score"], int) and lo <= obj["score"] <= hi, obj
                else:
                    assert obj["score"] in levels, obj
                seen[title].add(obj["score"])
    for title, values in seen.items():
        assert len(values) >= 2, (title, values)  # the judges use the scale
    for lo, hi in ((0, 2), (1, 7)):  # the holistic prompt on the rubric's scale
        for url in urls[:3]:
            for model in MODELS:
                obj = _ask(client, model, holistic_messages(url, lo, hi))
                assert isinstance(obj["score"], int) and lo <= obj["score"] <= hi, obj


def test_tiers_and_temperature_zero(sim_server, scene):
    """Tier labels in the prompt do not change the scale; temperature 0 repeats itself."""
    client = _client(sim_server)
    url = _png_url(np.asarray(scene(seed=3, size=(192, 144))))
    tiers = "2: A clear narrative.\n1: A hint of one.\n0: None."
    msgs = dimension_messages(url, "Storytelling", "narrative", 0, 2, tiers=tiers)
    first = _ask(client, MODELS[0], msgs, temperature=0.0)
    assert 0 <= first["score"] <= 2
    assert _ask(client, MODELS[0], msgs, temperature=0.0) == first


def _spearman_over(client: OpenAI, model: str, urls: list[str], messages_for) -> list[float]:
    def one(url: str) -> float:
        return float(_ask(client, model, messages_for(url))["score"])

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, urls))


def test_a_latent_dimension_reads_its_property(sim_server, scenes):
    """Brightness varied across forty scenes is read back by a 'Brightness' dimension,
    and saturation by a 'Saturation' one, on a 1-7 scale."""
    client = _client(sim_server)
    rng = np.random.default_rng(1)
    gains = rng.uniform(0.45, 1.5, len(scenes))
    bright_urls = [_png_url(img * g) for img, g in zip(scenes, gains, strict=True)]
    mixes = rng.uniform(0.0, 1.0, len(scenes))
    sat_urls = []
    for img, m in zip(scenes, mixes, strict=True):
        grey = img.mean(axis=2, keepdims=True)
        sat_urls.append(_png_url(grey + m * (img - grey)))
    cases = [
        ("Brightness", "how light the picture is overall", bright_urls, gains),
        ("Saturation", "how intense the hues are", sat_urls, mixes),
    ]
    for title, asks, urls, truth in cases:
        by_model = {
            model: _spearman_over(
                client, model, urls, lambda u, t=title, a=asks: dimension_messages(u, t, a, 1, 7)
            )
            for model in MODELS
        }
        rhos = {m: spearmanr(v, truth).statistic for m, v in by_model.items()}
        panel = spearmanr(np.mean(list(by_model.values()), axis=0), truth).statistic
        # The generalist reads it well; every family reads it (the compositionist's
        # compressed scale ties most answers, so its own correlation is lower).
        assert rhos[MODELS[0]] > 0.5, (title, rhos)
        assert panel > 0.5, (title, panel)
        assert min(rhos.values()) > 0.2, (title, rhos)


def _varied(scenes: list[np.ndarray]) -> list[str]:
    """The scenes with capture faults of varied strength (blur, noise, exposure), as a
    study's images vary in quality."""
    rng = np.random.default_rng(2)
    out = []
    for i, img in enumerate(scenes):
        if i % 4 == 1:
            pil = Image.fromarray(img.astype(np.uint8))
            img = np.asarray(pil.filter(ImageFilter.GaussianBlur(rng.uniform(0.5, 3.0))), float)
        elif i % 4 == 2:
            img = img + rng.normal(0.0, rng.uniform(3.0, 25.0), img.shape)
        elif i % 4 == 3:
            img = img * rng.uniform(0.4, 1.6)
        out.append(_png_url(img))
    return out


def test_an_unknown_dimension_follows_the_holistic_impression(sim_server, scenes):
    client = _client(sim_server)
    urls = _varied(scenes)
    model = MODELS[0]
    whimsy = _spearman_over(
        client,
        model,
        urls,
        lambda u: dimension_messages(u, "Whimsy", "how playful and surprising it feels", 1, 10),
    )
    overall = _spearman_over(client, model, urls, lambda u: holistic_messages(u, 1, 10))
    rho = spearmanr(whimsy, overall).statistic
    assert 0.3 < rho < 0.98, rho
    assert whimsy != overall


def test_seed_titles_stay_with_the_seed_handlers():
    """A seed title (or a question naming a seed dimension) is not this handler's, so the
    seed study's answers cannot change; other titles are parsed with their scale."""
    rubric = load_rubric()
    for dim in DIMENSIONS:
        msgs = rubric.dimension_messages(dim, "data:,")
        assert parse_dimension(msgs[0]["content"], msgs[1]["content"][0]["text"]) is None
    system, user = _texts(dimension_messages("data:,", "Composition", "layout", 0, 4))
    assert parse_dimension(system, user) is None
    system, user = _texts(dimension_messages("data:,", "Whimsy", "playfulness", 0, 4))
    asked = parse_dimension(system, user)
    assert asked is not None and (asked.title, asked.lo, asked.hi) == ("Whimsy", 0, 4)
    system, user = _texts(dimension_messages("data:,", "Story", "a narrative", levels=LEVELS))
    asked = parse_dimension(system, user)
    assert asked is not None and asked.levels == LEVELS and (asked.lo, asked.hi) == (0, 3)
    system, user = _texts(dimension_messages("data:,", "Mood lift", "x", levels=LEVELS))
    assert parse_dimension(system, user) is None  # "mood" is a seed (emotion) keyword


def _texts(messages: list[dict]) -> tuple[str, str]:
    user = messages[1]["content"][0]["text"]
    return messages[0]["content"], user


def test_latent_registry_and_description():
    for name in ("symmetry", "saturation", "brightness", "texture", "clutter"):
        assert name in LATENT_CUES
        assert find_latent(name.capitalize()) is LATENT_CUES[name]
    assert find_latent("Mirror balance", "how symmetric the frame is").name == "symmetry"
    assert find_latent("Whimsy", "how playful it feels") is None
    sym = describe_dimension("Symmetry", "left against right")
    assert "latent cue 'symmetry'" in sym
    whimsy = describe_dimension("Whimsy", "how playful it feels")
    assert "holistic impression" in whimsy and "own noise" in whimsy
    assert "seed rubric's composition" in describe_dimension("Composition", "")
    table = latents_table().splitlines()
    assert len(table) == 2 + len(LATENT_CUES) and table[2].startswith("| brightness |")


def _view(rgb: np.ndarray) -> ImageView:
    buf = io.BytesIO()
    Image.fromarray(np.clip(rgb, 0, 255).astype(np.uint8)).save(buf, format="PNG")
    return ImageView.from_bytes(buf.getvalue())


def test_symmetry_and_clutter_cues_read_what_a_world_renders(scenes):
    """A world that renders a latent into the pixels has it read back by the cue of that
    name: a scene blended with its own mirror image, and shapes scattered over a scene."""
    rng = np.random.default_rng(4)
    blends = rng.uniform(0.0, 1.0, len(scenes))
    sym = [
        LATENT_CUES["symmetry"].z(_view((1 - b) * img + b * 0.5 * (img + img[:, ::-1])))
        for img, b in zip(scenes, blends, strict=True)
    ]
    assert spearmanr(sym, blends).statistic > 0.8
    counts = rng.integers(0, 12, len(scenes))
    busy = []
    for img, k in zip(scenes, counts, strict=True):
        out = img.copy()
        for _ in range(int(k)):
            y, x = rng.integers(0, 130), rng.integers(0, 180)
            out[y : y + 14, x : x + 12] = rng.uniform(0, 255, 3)
        busy.append(LATENT_CUES["clutter"].z(_view(out)))
    assert spearmanr(busy, counts).statistic > 0.6


def test_logprobs_and_malformed_answers(sim_server_factory, scene):
    """The score token's logprobs are the judge's distribution on the declared scale; a
    malformed answer on a levels dimension is still a string (no crash)."""
    url = _png_url(np.asarray(scene(seed=5, size=(192, 144))))
    client = _client(sim_server_factory(seed=1))
    msgs = dimension_messages(url, "Symmetry", "left against right", 0, 4)
    r = client.chat.completions.create(
        model=MODELS[0], messages=msgs, temperature=0.7, logprobs=True, top_logprobs=5, seed=1
    )
    score = json.loads(r.choices[0].message.content)["score"]
    entry = next(t for t in r.choices[0].logprobs.content if t.token.strip() == str(score))
    tops = [int(t.token) for t in entry.top_logprobs]
    assert (
        set(tops) <= set(range(5))
        and sum(np.exp([t.logprob for t in entry.top_logprobs])) <= 1.0001
    )
    bad = _client(sim_server_factory(seed=1, malformed_rate=1.0))
    for i in range(8):
        msgs = dimension_messages(url, "Storytelling", "a narrative", levels=LEVELS)
        r = bad.chat.completions.create(model=MODELS[i % 5], messages=msgs, seed=i)
        assert isinstance(r.choices[0].message.content, str)
