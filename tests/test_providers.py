"""Providers: the OpenAI-compatible one sends and reads exactly what the client did before
it was one module, an unknown name is a clear error, and a second provider registered here
is used end to end (online and through batches) against the simulated server."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import openai
import pandas as pd
import pytest
from test_client import PRICES, make_images, simple_plan

from judgepanel.core.batch import BatchOptions, run_batches
from judgepanel.core.calls import CallKey, CallSpec
from judgepanel.core.client import RunSummary, open_client, run_calls
from judgepanel.core.client.transport import post_chat
from judgepanel.core.config import Price
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.providers import (
    OPENAI,
    OpenAIProvider,
    Provider,
    Usage,
    known_providers,
    provider,
    register,
    unregister,
)
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store

KEY = CallKey("eva", "im0", "aurora", "sim-aurora-v1", "holistic", "", 1, 0.3, "r", "p")
FIXED_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": 'Rate the image. Answer "7" \u2014 or another score.'},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Score 1 to 10."},
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"},
            },
        ],
    },
]
EXTRAS = (("logprobs", True), ("top_logprobs", 5), ("model", "other"))
FIXED = CallSpec(KEY, lambda: FIXED_MESSAGES, str, max_tokens=64, seed=11, extra_body=EXTRAS)

# What the client sent for FIXED before the provider was one module (recorded from it).
_MESSAGES_JSON = (
    b'"messages":[{"role":"system","content":"Rate the image. Answer \\"7\\" \\u2014 or '
    b'another score."},{"role":"user","content":[{"type":"text","text":"Score 1 to 10."},'
    b'{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo=",'
    b'"detail":"low"}}]}]'
)
BODY_BEFORE = (
    b'{"model":"sim-aurora-v1",' + _MESSAGES_JSON + b',"temperature":0.3,"max_tokens":64,'
    b'"seed":12345,"n":3,"logprobs":true,"top_logprobs":5}'
)
LINE_BEFORE = (
    b'{"custom_id":"jp-0123","method":"POST","url":"/v1/chat/completions","body":'
    b'{"model":"sim-aurora-v1",' + _MESSAGES_JSON + b',"temperature":0.3,"max_tokens":64,'
    b'"logprobs":true,"top_logprobs":5}}\n'
)
STORED = [
    "item",
    "family",
    "kind",
    "dimension",
    "repetition",
    "status",
    "answer",
    "value",
    "seed",
    "billed",
    "prompt_tokens",
    "completion_tokens",
    "cached_tokens",
]


class ToyProvider(OpenAIProvider):
    """A second provider: OpenAI's protocol, but its cap is ``max_completion_tokens`` and
    every answered request costs a fixed fee on top of its tokens."""

    name = "toy"
    FEE = 0.001

    def __init__(self) -> None:
        self.sent_fields: list[list[str]] = []

    def body_fields(
        self, spec: CallSpec, messages: list[dict[str, Any]], seed: int | None, n: int = 1
    ) -> dict[str, Any]:
        body = super().body_fields(spec, messages, seed, n)
        body["max_completion_tokens"] = body.pop("max_tokens")
        self.sent_fields.append(list(body))
        return body

    def cost(self, usage: Usage, price: Price) -> float:
        return super().cost(usage, price) + self.FEE


@pytest.fixture
def toy() -> Iterator[ToyProvider]:
    impl = ToyProvider()
    register(impl)
    try:
        yield impl
    finally:
        unregister(impl.name)


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    return "sim-local"


def image_spec(jpeg: bytes, seed: int, max_tokens: int = 40) -> CallSpec:
    url = "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
    messages = [
        {"role": "system", "content": "You rate photographs. Reply with a number."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Rate this photograph from 1 to 10."},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        },
    ]
    return CallSpec(KEY, lambda: messages, str, max_tokens=max_tokens, seed=seed)


def stored(path: Path, columns: list[str] = STORED) -> pd.DataFrame:
    with Store(path, readonly=True) as store:
        df = store.frame(columns=[*columns, "cost"])
    return df.sort_values(columns[:5]).reset_index(drop=True)


# -- the OpenAI provider: what the client sent and read before ---------------------------------


def test_the_openai_body_and_batch_line_are_byte_identical_to_before() -> None:
    assert OPENAI.request_body(FIXED, FIXED_MESSAGES, 12345, 3) == BODY_BEFORE
    body = OPENAI.request_body(FIXED, FIXED_MESSAGES, None)
    assert OPENAI.batch_line("jp-0123", body) == LINE_BEFORE
    assert OPENAI.batch_endpoint == "/v1/chat/completions"
    assert isinstance(OPENAI, Provider)


def test_the_openai_provider_reads_real_answers_as_the_sdk_does(
    sim_server: Any, jpeg_image: bytes
) -> None:
    spec = image_spec(jpeg_image, seed=5)
    body = OPENAI.request_body(spec, spec.build(), spec.seed, 3)
    sdk = openai.OpenAI(api_key="sim-local", base_url=sim_server.base_url)
    typed = sdk.chat.completions.create(**json.loads(body))
    choices = OPENAI.choices(typed.model_dump())
    assert [c.answer for c in choices] == [c.message.content for c in typed.choices]
    assert [c.finish for c in choices] == [c.finish_reason for c in typed.choices]
    assert len(choices) == 3
    usage = OPENAI.usage(typed.model_dump())
    assert usage is not None and typed.usage is not None
    assert (usage.prompt, usage.completion) == (
        typed.usage.prompt_tokens,
        typed.usage.completion_tokens,
    )

    async def raw() -> Any:
        client = open_client("sim-local", sim_server.base_url, 30.0)
        async with client:
            return await post_chat(client, body, 30.0, OPENAI.chat_path)

    reply = asyncio.run(raw())  # the client's own path: the encoded body, the raw answer
    assert OPENAI.choices(reply.body) == choices
    assert OPENAI.usage(reply.body) == usage
    assert OPENAI.cost(usage, PRICES["sim-aurora-v1"]) == PRICES["sim-aurora-v1"].cost(
        usage.prompt, usage.completion, usage.cached
    )


def test_a_batch_line_round_trip_answers_as_the_online_request(
    sim_server: Any, jpeg_image: bytes
) -> None:
    specs = [image_spec(jpeg_image, seed=s) for s in (1, 2)]
    data = b"".join(
        OPENAI.batch_line(f"jp-{s.seed}", OPENAI.request_body(s, s.build(), s.seed)) for s in specs
    )
    sdk = openai.OpenAI(api_key="sim-local", base_url=sim_server.base_url)
    made = sdk.files.create(file=("in.jsonl", data), purpose="batch")
    batch = sdk.batches.create(
        input_file_id=made.id, endpoint=OPENAI.batch_endpoint, completion_window="24h"
    )
    deadline = time.monotonic() + 60
    while batch.status not in ("completed", "failed", "expired", "cancelled"):
        assert time.monotonic() < deadline, batch.status
        time.sleep(0.05)
        batch = sdk.batches.retrieve(batch.id)
    assert batch.status == "completed" and batch.output_file_id
    out = sdk.files.content(batch.output_file_id).content
    results = {r.custom_id: r for r in map(OPENAI.batch_result, map(json.loads, out.splitlines()))}
    assert sorted(results) == ["jp-1", "jp-2"]
    for spec in specs:
        got = results[f"jp-{spec.seed}"]
        assert got.status == 200 and got.model == "sim-aurora-v1"
        online = sdk.chat.completions.create(
            **json.loads(OPENAI.request_body(spec, spec.build(), spec.seed))
        ).model_dump()
        assert OPENAI.choices(got.body) == OPENAI.choices(online)
        assert OPENAI.usage(got.body) == OPENAI.usage(online)
    assert OPENAI.batch_result({"response": {}}) is None  # no custom_id: names no call


# -- selecting a provider ----------------------------------------------------------------------


def test_an_unknown_provider_is_a_clear_error_listing_the_known_ones(
    sim_server: Any, tmp_path: Path, api_key: str
) -> None:
    assert provider("openai") is OPENAI and provider("simulator") is OPENAI
    with pytest.raises(ConfigError, match=r"unknown provider 'nope'; known providers: openai, sim"):
        provider("nope")
    specs = simple_plan(make_images(tmp_path / "img", 1), reps=1)
    endpoint = Endpoint(sim_server.base_url, provider="nope")
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(ConfigError, match="known providers: openai, simulator"):
            run_calls(specs, store, prices=PRICES, options=ClientOptions(endpoint=endpoint))
        assert store.frame().empty  # nothing was sent
    with pytest.raises(ConfigError, match="already registered"):
        register(ToyProvider(), "openai")
    with pytest.raises(ConfigError, match="cannot be removed"):
        unregister("openai")


def send_both(
    url: str, tmp_path: Path, specs: list[CallSpec], send: Callable[..., RunSummary]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``specs`` sent by ``send`` through the OpenAI provider and through the toy, each
    into its own store: what each store holds, in one order."""
    held = []
    for name in ("openai", "toy"):
        with Store(tmp_path / f"{name}.sqlite") as store:
            options = ClientOptions(endpoint=Endpoint(url, provider=name), progress=False)
            summary = send(specs, store, options=options)
        assert summary.ok == len(specs) and not summary.aborted
        held.append(stored(tmp_path / f"{name}.sqlite"))
    base, mine = held
    # the same answers and tokens; costed by the toy: its fee on every billed answer
    pd.testing.assert_frame_equal(base.drop(columns="cost"), mine.drop(columns="cost"))
    fees = mine["cost"] - base["cost"]
    assert fees.to_numpy() == pytest.approx((ToyProvider.FEE * mine["billed"]).to_numpy())
    return base, mine


def test_a_second_provider_is_used_end_to_end_online(
    sim_server: Any, tmp_path: Path, api_key: str, toy: ToyProvider
) -> None:
    assert "toy" in known_providers()
    specs = simple_plan(make_images(tmp_path / "img", 3), reps=2, dimension_r=1)
    base, mine = send_both(sim_server.base_url, tmp_path, specs, partial(run_calls, prices=PRICES))
    # every request went out in the toy's body, and the server answered it as OpenAI's
    assert len(toy.sent_fields) >= len(specs)
    assert all("max_completion_tokens" in f and "max_tokens" not in f for f in toy.sent_fields)
    assert mine["cost"].sum() == pytest.approx(base["cost"].sum() + ToyProvider.FEE * len(specs))


@pytest.mark.timeout(240)
def test_a_second_provider_is_used_end_to_end_through_batches(
    sim_server: Any, tmp_path: Path, api_key: str, toy: ToyProvider
) -> None:
    specs = simple_plan(make_images(tmp_path / "img", 2), reps=2)
    prices = {m: Price(p.input, p.output, batch_discount=0.5) for m, p in PRICES.items()}
    batch = BatchOptions(poll_s=0.05)
    send = partial(run_batches, prices=prices, batch=batch, run="providers")
    base, mine = send_both(sim_server.base_url, tmp_path, specs, send)
    assert len(toy.sent_fields) == len(specs)  # one batch line each, in the toy's body
    assert all("max_completion_tokens" in f for f in toy.sent_fields)
    assert mine["cost"].sum() == pytest.approx(base["cost"].sum() + ToyProvider.FEE * len(specs))
