"""A fixed corpus of ~200 varied requests to the simulated judges, and its golden answers.

The simulator's answers are part of every study's results, so a change that only means to
make the server cheaper must leave every byte of them as it was. This module builds the
corpus (rubric holistic, dimension and sham prompts, foreign prompts with other scales and
formats, ``n``, ``logprobs``, ``stream``, the Responses API, unseeded and temperature-0
requests, VAB sets of two to five images, VisionQ composites and one-image-per-choice
questions, and bad requests), sends it in order to fresh servers, and reduces each
response to a digest. ``tests/data/sim_golden.json`` holds the digests recorded on the
code before an optimisation; ``tests/test_sim_golden.py`` compares.

Random ids (``chatcmpl-...``, ``resp_...``, ``msg_...``) and clock fields (``created``,
``created_at``) are the only bytes replaced before hashing.

Re-record (only on code known to answer as before, e.g. after a dependency upgrade that
changes image encoding, or on a change meant to alter some responses, after checking that
only those changed): ``python tests/sim_golden.py --write``. The responses that carry
logprobs were re-recorded when the score token's logprobs became the judges' sampling
distribution; every answer text stayed as it was.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from PIL import Image, ImageFilter

sys.path.insert(0, str(Path(__file__).parent))

from conftest import jpeg_bytes_of, synthetic_scene

from judgepanel.core.prompts import DIMENSIONS
from judgepanel.core.rubric import load_rubric
from judgepanel.studies.vab.protocol import build_messages
from judgepanel.studies.visionq.composite import composite_png
from judgepanel.studies.visionq.protocol import prompt_text, visionq_messages
from judgepanel_sim.judges.protocol import MODELS

GOLDEN_FILE = Path(__file__).parent / "data" / "sim_golden.json"

SERVERS: dict[str, dict[str, float]] = {
    "clean": {"seed": 7},
    "faulty": {"seed": 5, "malformed_rate": 0.3, "error_rate": 0.1},
}
"""The servers the corpus is sent to, by name: their ``sim-server`` flags."""

_VOLATILE = re.compile(rb'"(id|created|created_at)":("(?:chatcmpl-|resp_|msg_)[0-9a-f]+"|\d+)')


@dataclass(frozen=True)
class GoldenRequest:
    """One request of the corpus: a name, the path it is posted to and its JSON body."""

    name: str
    path: str
    body: dict[str, Any]


def _url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def images() -> dict[str, str]:
    """Data URLs of the corpus's images: scenes in several sizes, blurs and encodings."""
    out = {}
    for seed in range(4):
        out[f"scene{seed}"] = _url(jpeg_bytes_of(synthetic_scene(seed)), "image/jpeg")
    out["blurred"] = _url(
        jpeg_bytes_of(synthetic_scene(1).filter(ImageFilter.GaussianBlur(2.5))), "image/jpeg"
    )
    out["lowq"] = _url(jpeg_bytes_of(synthetic_scene(2), quality=20), "image/jpeg")
    out["wide_png"] = _url(_png(synthetic_scene(5, size=(640, 360), subject_x=0.5)), "image/png")
    out["tiny"] = _url(_png(synthetic_scene(6, size=(24, 24))), "image/png")
    return out


def _vab_set(k: int, seed: int) -> list[str]:
    base = synthetic_scene(10 + seed, size=(256, 192))
    blurs = [0.0, 1.5, 3.0, 0.8, 2.2][:k]
    return [
        _url(
            jpeg_bytes_of(base.filter(ImageFilter.GaussianBlur(b)) if b else base, 60 + 8 * i),
            "image/jpeg",
        )
        for i, b in enumerate(blurs)
    ]


def _visionq_tiles(n: int) -> list[Image.Image]:
    base = synthetic_scene(20 + n, size=(200, 150))
    blurs = [2.0, 0.0, 1.0, 3.0][:n]
    return [base.filter(ImageFilter.GaussianBlur(b)) if b else base for b in blurs]


def _chat(model: str, messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"model": model, "messages": messages, **fields}


def corpus() -> list[GoldenRequest]:
    """The fixed request corpus, in sending order."""
    rubric = load_rubric()
    imgs = images()
    scenes = ["scene0", "scene1", "scene2", "scene3", "blurred", "lowq", "wide_png"]
    out: list[GoldenRequest] = []

    def add(name: str, body: dict[str, Any], path: str = "/v1/chat/completions") -> None:
        out.append(GoldenRequest(f"{len(out):03d}-{name}", path, body))

    # The fusion study's prompts: every model, several images, seeded and not.
    for i, img in enumerate(scenes):
        for j, model in enumerate(MODELS):
            fields: dict[str, Any] = {"temperature": 0.3, "max_tokens": 200}
            if (i + j) % 3:
                fields["seed"] = 1000 * i + j
            add(
                f"holistic-{img}-{model}",
                _chat(model, rubric.holistic_messages(imgs[img]), **fields),
            )
    for i, dim in enumerate(DIMENSIONS):
        for j, model in enumerate(MODELS):
            img = imgs[scenes[(i + j) % len(scenes)]]
            add(
                f"dimension-{dim}-{model}",
                _chat(model, rubric.dimension_messages(dim, img), temperature=0.3, seed=7 * i + j),
            )
            add(
                f"sham-{dim}-{model}",
                _chat(model, rubric.sham_messages(dim, img), temperature=0.3, seed=11 * i + j),
            )
    # Temperature 0 and 2, and a truncating cap.
    for t, model in zip((0.0, 2.0, 1.0), MODELS, strict=False):
        add(
            f"temperature-{t}",
            _chat(model, rubric.holistic_messages(imgs["scene0"]), temperature=t, seed=3),
        )
    add("max-tokens-3", _chat(MODELS[1], rubric.holistic_messages(imgs["scene1"]), max_tokens=3))
    # Foreign prompts: other scales and answer formats, system text, json mode.
    foreign = [
        "Rate the overall aesthetic quality of this photo from 0 to 100. Reply in JSON like "
        '{"rating": <int>, "explanation": "<why>"}.',
        "On a scale of 1-5, how good is the composition of this image? Answer with just the "
        "number.",
        "How good is the colour grading of this picture? Give a score out of 10 and a short "
        "sentence.",
        "Judge only the technical quality (sharpness, noise, exposure). Score 1 to 10.",
        "Describe the emotional impact of this photograph and score it between 0 and 10.",
        "Is this image distinctive and original? Rate it 1 through 7.",
    ]
    for i, text in enumerate(foreign):
        for j, model in enumerate(MODELS[:3]):
            content = [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": imgs[scenes[i]]}},
            ]
            fields = {"temperature": 0.7, "seed": 100 + 10 * i + j}
            if j == 1:
                fields["response_format"] = {"type": "json_object"}
            messages = [{"role": "user", "content": content}]
            if j == 2:
                messages.insert(0, {"role": "system", "content": "You are a photo critic."})
            add(f"foreign-{i}-{model}", _chat(model, messages, **fields))
    add("no-image", _chat(MODELS[0], [{"role": "user", "content": "Rate this 1 to 10."}]))
    add(
        "low-detail",
        _chat(
            MODELS[2],
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": rubric.holistic_text},
                        {
                            "type": "image_url",
                            "image_url": {"url": imgs["wide_png"], "detail": "low"},
                        },
                    ],
                }
            ],
            seed=4,
        ),
    )
    # Protocol features: n, logprobs, stream, the Responses API.
    for j, model in enumerate(MODELS):
        msgs = rubric.dimension_messages(DIMENSIONS[j], imgs[scenes[j]])
        add(f"n3-{model}", _chat(model, msgs, n=3, temperature=0.9, seed=j))
        add(
            f"logprobs-{model}",
            _chat(model, msgs, logprobs=True, top_logprobs=j + 1, temperature=0.5, seed=j),
        )
        add(
            f"stream-{model}",
            _chat(
                model,
                rubric.holistic_messages(imgs[scenes[j]]),
                stream=True,
                seed=j,
                stream_options={"include_usage": j % 2 == 0},
            ),
        )
        add(
            f"stream-logprobs-n2-{model}",
            _chat(model, msgs, stream=True, n=2, logprobs=True, top_logprobs=2, seed=j),
        )
        add(
            f"responses-{model}",
            {
                "model": model,
                "instructions": "You judge photographs.",
                "input": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": rubric.holistic_text},
                            {"type": "input_image", "image_url": imgs[scenes[j + 1]]},
                        ],
                    }
                ],
                "temperature": 0.3,
                "max_output_tokens": 120 if j else 5,
            },
            path="/v1/responses",
        )
    # VAB: sets of 2, 3 and 5 images, every prompt kind, seeded and not.
    for k in (2, 3, 5):
        urls = _vab_set(k, k)
        labels = [chr(ord("A") + i) for i in range(k)]
        for kind in ("vab_top1", "vab_bot1", "vab_tb1"):
            if kind == "vab_tb1" and k == 2:
                continue
            for j, model in enumerate(MODELS):
                order = tuple((i + j) % k for i in range(k))
                fields = {"temperature": 0.3, "max_tokens": 300}
                if j != 4:
                    fields["seed"] = 50 * k + j
                add(
                    f"{kind}-k{k}-{model}",
                    _chat(model, build_messages(kind, order, labels, urls), **fields),
                )
    # VisionQ: composites of 2 to 4 panels, mapped and unmapped criteria, one image per choice.
    questions = [
        "Which method demonstrates better sharpness?",
        "Which method demonstrates better noise suppression?",
        "Which method shows better colour accuracy?",
        "Which method demonstrates better shape accuracy?",
    ]
    for n in (2, 3, 4):
        png = _url(composite_png(_visionq_tiles(n)), "image/png")
        for qi, question in enumerate(questions):
            for j, model in enumerate(MODELS):
                if (qi + j + n) % 2:
                    continue
                add(
                    f"visionq-n{n}-q{qi}-{model}",
                    _chat(
                        model,
                        visionq_messages(prompt_text(question, n), png),
                        temperature=0.3,
                        seed=qi * 10 + j,
                        max_tokens=64,
                    ),
                )
    per_choice = [_url(_png(t), "image/png") for t in _visionq_tiles(3)]
    for j, model in enumerate(MODELS):
        content: list[dict[str, Any]] = []
        for url in per_choice:
            content.append({"type": "image_url", "image_url": {"url": url}})
        content.append({"type": "text", "text": prompt_text(questions[j % 3], 3)})
        add(
            f"visionq-per-image-{model}",
            _chat(model, [{"role": "user", "content": content}], temperature=0.3, seed=j),
        )
    # Bad requests: each error is part of the protocol too.
    add("bad-model", _chat("sim-nope-v1", rubric.holistic_messages(imgs["scene0"])))
    add("bad-n", _chat(MODELS[0], rubric.holistic_messages(imgs["scene0"]), n=99))
    add(
        "bad-temperature", _chat(MODELS[0], rubric.holistic_messages(imgs["scene0"]), temperature=5)
    )
    add(
        "bad-image",
        _chat(
            MODELS[0],
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
                    ],
                }
            ],
        ),
    )
    add("tiny-image", _chat(MODELS[1], rubric.holistic_messages(imgs["tiny"]), seed=1))
    add("bad-messages", {"model": MODELS[0], "messages": []})
    return out


def requests_digest(requests: list[GoldenRequest]) -> str:
    """SHA-256 of the corpus itself (names, paths and bodies)."""
    h = hashlib.sha256()
    for r in requests:
        h.update(json.dumps([r.name, r.path, r.body], sort_keys=True).encode("utf-8"))
    return h.hexdigest()


def response_digest(status: int, headers: httpx.Headers, body: bytes) -> str:
    """SHA-256 of a response's status, content type, retry headers and body, with random
    ids and clock fields replaced."""
    h = hashlib.sha256()
    h.update(str(status).encode())
    for name in ("content-type", "retry-after", "retry-after-ms"):
        h.update(f"\x1f{name}={headers.get(name, '')}".encode())
    h.update(b"\x1f")
    h.update(_VOLATILE.sub(rb'"\1":0', body))
    return h.hexdigest()


def send_all(base_url: str, requests: list[GoldenRequest]) -> Iterator[tuple[str, str]]:
    """(request name, response digest) for each request, sent one at a time in order."""
    root = base_url.removesuffix("/v1")
    with httpx.Client(
        base_url=root, headers={"Authorization": "Bearer golden"}, timeout=60
    ) as client:
        for r in requests:
            resp = client.post(r.path, json=r.body)
            yield r.name, response_digest(resp.status_code, resp.headers, resp.content)


def in_process_digests(requests: list[GoldenRequest]) -> Iterator[tuple[str, str]]:
    """(request name, digest of ``answer_chat``'s text) for each valid chat request, with
    the request's index as the server counter (as a fresh server would see it)."""
    from judgepanel_sim.judges.protocol import ApiError, parse_chat
    from judgepanel_sim.judges.server import answer_chat

    for i, r in enumerate(requests):
        if r.path != "/v1/chat/completions":
            continue
        try:
            text = answer_chat(parse_chat(r.body), SERVERS["clean"]["seed"], i + 1)
        except ApiError as err:
            text = f"error {err.status}: {err.message}"
        yield r.name, hashlib.sha256(text.encode("utf-8")).hexdigest()


def record(start: Any) -> dict[str, Any]:
    """The golden record: the corpus digest and, per server and in-process, the digests."""
    requests = corpus()
    out: dict[str, Any] = {"requests_sha256": requests_digest(requests), "count": len(requests)}
    for name, flags in SERVERS.items():
        server = start(**flags)
        try:
            out[name] = dict(send_all(server.base_url, requests))
        finally:
            server.stop()
    out["in_process"] = dict(in_process_digests(requests))
    return out


def main() -> int:
    """``--write``: record the golden digests into ``GOLDEN_FILE``."""
    import tempfile

    from judgepanel.core.local_sim import SimConfig, start_sim_server

    if sys.argv[1:] != ["--write"]:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        data = record(lambda **flags: start_sim_server(SimConfig(**flags), log_dir=Path(tmp)))
    GOLDEN_FILE.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN_FILE.name}: {data['count']} requests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
