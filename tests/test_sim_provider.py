"""The simulator behaving like a provider: rate limits, a router model, prompt caching, cost.

Bucket arithmetic is checked on the limiter with a fake clock; everything else over real
HTTP against a real server started through the launcher.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time

import httpx
import pytest
from conftest import jpeg_bytes_of, synthetic_scene
from openai import OpenAI

from judgepanel.core.prompts import bytes_data_url
from judgepanel_sim.judges.caching import PromptCache, prefix_keys, prefix_tokens
from judgepanel_sim.judges.pricing import DEFAULT_PRICES, Price, load_prices
from judgepanel_sim.judges.protocol import MODELS, parse_chat, text_tokens
from judgepanel_sim.judges.ratelimit import RateLimiter, duration, key_of

AURORA = "sim-aurora-v1"
ROUTER = "router/sim-aurora-v1"
KEY = "key-a"
HI = [{"role": "user", "content": "hi"}]  # 1 text token + 3 for the message
DURATION = re.compile(r"^(\d+h)?(\d+m)?(\d+(\.\d+)?s|\d+ms)$")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _http(server, key: str = KEY) -> httpx.Client:
    return httpx.Client(
        base_url=server.base_url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


def _chat(client: httpx.Client, **body) -> httpx.Response:
    return client.post("/chat/completions", json={"model": AURORA, "messages": HI, **body})


@pytest.fixture(scope="module")
def images() -> list[str]:
    """Two different 384x288 JPEG data URLs (one 512-px tile each: 255 prompt tokens)."""
    return [bytes_data_url(jpeg_bytes_of(synthetic_scene(s)), "image/jpeg") for s in (1, 2)]


def _messages(system: str, text: str, image: str) -> list[dict]:
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": image}},
            ],
        },
    ]


# The limiter's arithmetic, on a fake clock.


def test_duration_uses_openai_format():
    assert duration(0) == "0s"
    assert duration(0.095) == "95ms"
    assert duration(0.0001) == "1ms"
    assert duration(1.0) == "1s"
    assert duration(1.5) == "1.5s"
    assert duration(360) == "6m0s"
    assert duration(3723.5) == "1h2m3.5s"


def test_request_bucket_bursts_then_refills():
    clock = FakeClock()
    lim = RateLimiter(rpm=60, burst_s=2.0, count_refused=False, clock=clock)  # 2, 1/s
    key = key_of("k")
    first = lim.admit(key, AURORA, 10)
    assert first.admitted
    assert first.headers == {
        "x-ratelimit-limit-requests": "60",
        "x-ratelimit-remaining-requests": "1",
        "x-ratelimit-reset-requests": "1s",
    }
    assert lim.admit(key, AURORA, 10).admitted
    refused = lim.admit(key, AURORA, 10)
    assert not refused.admitted and refused.error is not None
    assert refused.error.status == 429 and refused.error.type == "requests"
    assert refused.headers["retry-after-ms"] == "1000" and refused.headers["retry-after"] == "1"
    assert "on requests per min (RPM): Limit 60, Used 2, Requested 1" in refused.error.message
    assert "Please try again in 1s." in refused.error.message
    clock.now += 0.5
    assert not lim.admit(key, AURORA, 10).admitted
    assert lim.admit(key_of("other"), AURORA, 10).admitted  # another key, its own bucket
    clock.now += 0.5
    assert lim.admit(key, AURORA, 10).admitted
    clock.now += 10  # refills to the capacity, not beyond
    assert lim.peek(key)["x-ratelimit-remaining-requests"] == "2"


def test_refused_requests_count_down_to_minus_the_capacity():
    clock = FakeClock()
    lim = RateLimiter(rpm=60, burst_s=2.0, count_refused=True, clock=clock)
    key = key_of("k")
    assert lim.admit(key, AURORA, 1).admitted and lim.admit(key, AURORA, 1).admitted
    waits = [int(lim.admit(key, AURORA, 1).headers["retry-after-ms"]) for _ in range(4)]
    assert waits == [2000, 3000, 3000, 3000]  # level -1, then floored at -2
    clock.now += 2.9  # level 0.9: refused, and that refusal costs one more
    assert not lim.admit(key, AURORA, 1).admitted
    clock.now += 1.0  # 0.9 again: refused again, 1.1 s short
    again = lim.admit(key, AURORA, 1)
    assert not again.admitted and again.headers["retry-after-ms"] == "1100"
    clock.now += 1.1
    assert lim.admit(key, AURORA, 1).admitted


def test_token_bucket_charges_and_refuses_what_is_not_left():
    clock = FakeClock()
    lim = RateLimiter(tpm=6000, burst_s=2.0, clock=clock)  # 200 tokens, 100 a second
    key = key_of("k")
    ok = lim.admit(key, AURORA, 150)
    assert ok.admitted and ok.headers["x-ratelimit-remaining-tokens"] == "50"
    assert ok.headers["x-ratelimit-reset-tokens"] == "1.5s"
    assert "x-ratelimit-limit-requests" not in ok.headers  # no request limit set
    short = lim.admit(key, AURORA, 80)
    assert not short.admitted and short.error is not None and short.error.type == "tokens"
    assert short.headers["retry-after-ms"] == "300"
    assert "(TPM): Limit 6000, Used 150, Requested 80. Please try again in 300ms" in (
        short.error.message
    )
    assert lim.admit(key, AURORA, 40).admitted  # what is left still admits a smaller one
    huge = lim.admit(key, AURORA, 6001)
    assert not huge.admitted and huge.error is not None
    assert huge.error.message.startswith("Request too large for sim-aurora-v1")
    assert "retry-after" not in huge.headers


def test_a_charge_beyond_the_burst_waits_for_a_full_bucket():
    clock = FakeClock()
    lim = RateLimiter(tpm=6000, burst_s=2.0, clock=clock)
    key = key_of("k")
    assert lim.admit(key, AURORA, 500).admitted  # full bucket: goes 300 into debt
    refused = lim.admit(key, AURORA, 10)
    assert refused.headers["retry-after-ms"] == "3100"
    assert refused.headers["x-ratelimit-remaining-tokens"] == "0"
    clock.now += 3.1
    assert lim.admit(key, AURORA, 10).admitted


# Rate limits over HTTP.


def test_headers_on_every_answer_match_the_limits(sim_server_factory, images):
    server = sim_server_factory(rpm=60, tpm=6000, burst_s=60.0)  # a minute's worth
    with _http(server) as client:
        r = _chat(client, messages=_messages("Judge.", "Rate it.", images[0]), max_tokens=50)
        assert r.status_code == 200
        charge = r.json()["usage"]["prompt_tokens"] + 50
        h = r.headers
        assert (h["x-ratelimit-limit-requests"], h["x-ratelimit-limit-tokens"]) == ("60", "6000")
        assert h["x-ratelimit-remaining-requests"] == "59"
        assert h["x-ratelimit-remaining-tokens"] == str(6000 - charge)
        assert h["x-ratelimit-reset-requests"] == "1s"
        assert DURATION.match(h["x-ratelimit-reset-tokens"])
        # No max_tokens: 256 per choice are charged, times n.
        s = _chat(client, n=2, stream=True)
        assert s.status_code == 200 and s.headers["content-type"].startswith("text/event-stream")
        left = int(s.headers["x-ratelimit-remaining-tokens"])
        assert 6000 - charge - (4 + 2 * 256) <= left <= 6000 - charge - (4 + 2 * 256) + 100
        bad = _chat(client, temperature=9)  # invalid: answered 400, not charged
        assert bad.status_code == 400 and "x-ratelimit-remaining-requests" in bad.headers
        assert int(bad.headers["x-ratelimit-remaining-requests"]) >= 57


def test_a_burst_beyond_the_bucket_gets_429(sim_server_factory):
    server = sim_server_factory(rpm=60, burst_s=2.0)  # two at once, then one a second
    with _http(server) as client, _http(server, "key-b") as other:
        assert [_chat(client).status_code for _ in range(2)] == [200, 200]
        r = _chat(client)
        assert r.status_code == 429
        assert int(r.headers["retry-after"]) >= 1 and 0 < int(r.headers["retry-after-ms"]) <= 2000
        assert r.headers["x-ratelimit-remaining-requests"] == "0"
        err = r.json()["error"]
        assert (err["type"], err["code"], err["param"]) == ("requests", "rate_limit_exceeded", None)
        assert err["message"].startswith(
            "Rate limit reached for sim-aurora-v1 on requests per min (RPM): Limit 60, Used 2,"
        )
        assert _chat(other).status_code == 200  # the limit is per key


def _hammer(client: httpx.Client, seconds: float) -> tuple[int, int, httpx.Response]:
    admitted = refused = 0
    last = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        last = _chat(client, max_tokens=5)
        admitted += last.status_code == 200
        refused += last.status_code == 429
    assert last is not None
    return admitted, refused, last


@pytest.mark.serial  # a refill measured on the wall clock: run apart from other tests
@pytest.mark.parametrize("count_refused", [True, False])
def test_a_client_that_never_waits(sim_server_factory, count_refused):
    server = sim_server_factory(rpm=600, burst_s=1.0, count_refused=count_refused)
    with _http(server) as client:
        start = time.monotonic()
        admitted, refused, last = _hammer(client, 1.5)
        allowed = 10 + 10 * (time.monotonic() - start)  # the burst plus 10 a second
        assert refused > 2 * allowed, "the client must send far faster than the limit"
        if count_refused:
            assert admitted <= 12  # the burst, then starved by its own refusals
            wait = int(last.headers["retry-after-ms"]) / 1000
            assert wait > 0.9
            time.sleep(wait / 2)
            early = _chat(client)
            assert early.status_code == 429
            time.sleep(int(early.headers["retry-after-ms"]) / 1000 + 0.05)
            assert _chat(client).status_code == 200  # refilled: admitted again
        else:
            assert admitted >= 0.7 * allowed


def test_token_limit_refuses_what_exceeds_what_is_left(sim_server_factory):
    server = sim_server_factory(tpm=6000, burst_s=10.0)  # 1000 tokens, 100 a second
    with _http(server) as client:
        a = _chat(client, max_tokens=700)  # 4 + 700
        assert a.status_code == 200
        assert 296 <= int(a.headers["x-ratelimit-remaining-tokens"]) <= 310
        b = _chat(client, max_tokens=500)
        assert b.status_code == 429
        err = b.json()["error"]
        assert err["type"] == "tokens" and "Requested 504." in err["message"]
        assert 1000 <= int(b.headers["retry-after-ms"]) <= 2100
        assert _chat(client, max_tokens=100).status_code == 200
        huge = _chat(client, max_tokens=7000)
        assert huge.status_code == 429 and "Request too large" in huge.json()["error"]["message"]


def test_limits_that_never_bite_change_no_answer(sim_server_factory, images):
    faults = {"seed": 5, "malformed_rate": 0.3, "error_rate": 0.2}
    msgs = _messages("You judge photos.", "Rate this photo from 1 to 10.", images[0])
    bodies: list[dict] = [{"messages": msgs} for _ in range(12)]  # unseeded: the count matters
    bodies.insert(4, {"temperature": 7})

    def run(**flags) -> list[tuple[int, str]]:
        server = sim_server_factory(**faults, **flags)
        with _http(server) as client:
            out = []
            for body in bodies:
                r = _chat(client, **body)
                content = r.json()["choices"][0]["message"]["content"] if r.is_success else r.text
                out.append((r.status_code, content))
            return out

    plain = run()
    assert {s for s, _ in plain} >= {200, 400} and len({c for _, c in plain}) > 5
    assert run(rpm=100_000, tpm=10_000_000) == plain


def test_a_refused_request_takes_no_place_in_the_answers(sim_server_factory, images):
    msgs = _messages("You judge photos.", "Rate this photo from 1 to 10.", images[0])
    bodies = [{"messages": msgs} for _ in range(3)]  # unseeded: answers follow the count
    limited = sim_server_factory(rpm=120, burst_s=1.0, count_refused=False)  # 2, 2/s
    plain = sim_server_factory()
    got = []
    with _http(limited) as client:
        for body in bodies:
            r = _chat(client, **body)
            if r.status_code == 429:
                time.sleep(int(r.headers["retry-after-ms"]) / 1000 + 0.05)
                r = _chat(client, **body)
            assert r.status_code == 200
            got.append(r.json()["choices"][0]["message"]["content"])
    with _http(plain) as client:
        want = [_chat(client, **b).json()["choices"][0]["message"]["content"] for b in bodies]
    assert got == want and len(set(want)) > 1


# The router model.


def test_router_model_ignores_n(sim_server, images):
    client = OpenAI(base_url=sim_server.base_url, api_key=KEY, max_retries=0)
    msgs = _messages("You judge photos.", "Rate this photo from 1 to 10.", images[0])
    one = client.chat.completions.create(model=AURORA, messages=msgs, seed=3, temperature=0.8)
    four = client.chat.completions.create(model=AURORA, messages=msgs, n=4, seed=3, temperature=0.8)
    routed = client.chat.completions.create(
        model=ROUTER, messages=msgs, n=4, seed=3, temperature=0.8
    )
    assert len(four.choices) == 4 and len(routed.choices) == 1
    assert routed.model == ROUTER
    assert four.usage.prompt_tokens == one.usage.prompt_tokens == routed.usage.prompt_tokens
    assert four.usage.completion_tokens == sum(
        math.ceil(len(c.message.content) / 4) for c in four.choices
    )
    assert routed.choices[0].message.content == four.choices[0].message.content
    assert routed.usage.completion_tokens == math.ceil(len(routed.choices[0].message.content) / 4)
    ids = [m.id for m in client.models.list().data]
    assert ids == list(MODELS)  # the list stays as it was
    assert client.models.retrieve(ROUTER).id == ROUTER


# Prompt caching.


def test_prompt_caching_reports_the_longest_recent_prefix(sim_server_factory, images):
    server = sim_server_factory(cache_window=2)
    system, text = "You judge photographs.", "Rate this photo from 1 to 10."
    r1 = _messages(system, text, images[0])
    r2 = _messages(system, text, images[1])  # another image: system and text are shared
    r3 = _messages("You are a critic.", text, images[0])  # another system prompt
    with _http(server) as client:

        def usage(messages, model: str = AURORA) -> dict:
            r = client.post(
                "/chat/completions", json={"model": model, "messages": messages, "seed": 1}
            )
            assert r.status_code == 200
            return r.json()["usage"]

        first = usage(r1)
        assert first["prompt_tokens_details"] == {"cached_tokens": 0}
        again = usage(r1)
        assert again["prompt_tokens_details"]["cached_tokens"] == again["prompt_tokens"] > 255
        other_image = usage(r2)
        shared = text_tokens(len(system) + len(text)) + 3 * 2
        assert other_image["prompt_tokens_details"]["cached_tokens"] == shared
        assert shared == other_image["prompt_tokens"] - 255
        assert usage(r3)["prompt_tokens_details"]["cached_tokens"] == 0
        assert usage(r1, ROUTER)["prompt_tokens_details"]["cached_tokens"] == 0  # model in key
        usage(HI)
        usage(HI)
        # r1, r2 and r3 are now more than two answered requests back.
        assert usage(r1)["prompt_tokens_details"]["cached_tokens"] == 0
        stream = client.post(
            "/chat/completions",
            json={
                "model": AURORA,
                "messages": r1,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
        events = [json.loads(x[6:]) for x in stream.text.split("\n\n") if x.startswith("data: {")]
        streamed = events[-1]["usage"]
        assert streamed["prompt_tokens_details"]["cached_tokens"] == streamed["prompt_tokens"]
        resp = client.post(
            "/responses",
            json={"model": AURORA, "instructions": "You judge photographs.", "input": "Rate."},
        )
        cached = resp.json()["usage"]["input_tokens_details"]["cached_tokens"]
        assert cached == text_tokens(len(system)) + 3 * 2  # the instructions were seen


def test_prompt_cache_memory_stays_within_the_window():
    cache = PromptCache(window=3)
    for i in range(50):
        chat = parse_chat({"model": AURORA, "messages": [{"role": "user", "content": f"t{i}"}]})
        assert cache.answer(chat) == 0
        assert len(cache) <= 3
    chat = parse_chat({"model": AURORA, "messages": [{"role": "user", "content": "t49"}]})
    assert len(prefix_keys(chat)) == 1
    assert cache.answer(chat) == prefix_tokens(chat, 1) == chat.prompt_tokens() == 4


# Cost and the ledger.


def _price(usage: dict, model: str) -> float:
    cached = usage.get("prompt_tokens_details", usage.get("input_tokens_details", {}))
    cached = cached.get("cached_tokens", 0)
    prompt = usage.get("prompt_tokens", usage.get("input_tokens"))
    completion = usage.get("completion_tokens", usage.get("output_tokens"))
    return DEFAULT_PRICES[model].cost(prompt, cached, completion)


def test_cost_in_usage_and_the_ledger_agree(sim_server_factory, images, tmp_path):
    book = tmp_path / "ledger.jsonl"
    server = sim_server_factory(report_cost=True, cache_window=8, ledger=book)
    msgs = _messages("You judge photographs.", "Rate this photo.", images[0])
    costs = []
    with _http(server) as client:
        for model, n in ((AURORA, 1), (AURORA, 3), ("sim-basalt-v1", 1), (ROUTER, 4)):
            usage = _chat(client, model=model, messages=msgs, n=n).json()["usage"]
            assert usage["cost"] == pytest.approx(_price(usage, model), rel=1e-12)
            costs.append(usage["cost"])
        stream = _chat(client, stream=True, stream_options={"include_usage": True}, n=2)
        events = [json.loads(x[6:]) for x in stream.text.split("\n\n") if x.startswith("data: {")]
        costs.append(events[-1]["usage"]["cost"])
        resp = client.post("/responses", json={"model": AURORA, "input": "Rate it."}).json()
        assert resp["usage"]["cost"] == pytest.approx(_price(resp["usage"], AURORA), rel=1e-12)
        costs.append(resp["usage"]["cost"])
    lines = [json.loads(x) for x in book.read_text().splitlines()]
    assert len(lines) == 6
    assert [x["choices"] for x in lines] == [1, 3, 1, 1, 2, 1]
    assert lines[1]["cached_tokens"] == lines[1]["prompt_tokens"] > 0
    assert set(lines[0]) == {
        "model",
        "seed",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "cost",
        "uncached_cost",
        "choices",
    }
    assert sum(x["cost"] for x in lines) == pytest.approx(sum(costs), rel=1e-12)
    assert [x["cost"] for x in lines] == costs  # full precision, the same floats
    # with a cache, each line also bills the same answer as a server without one would
    for x in lines:
        plain = DEFAULT_PRICES[x["model"]].cost(x["prompt_tokens"], 0, x["completion_tokens"])
        assert x["uncached_cost"] == plain
    assert lines[1]["uncached_cost"] > lines[1]["cost"]


def test_a_price_file_replaces_the_table(sim_server_factory, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("sim-aurora-v1: {input: 1.0, output: 4.0}\n")
    assert load_prices(prices) == {AURORA: Price(1.0, 1.0, 4.0)}
    server = sim_server_factory(report_cost=True, prices=prices, cache_window=4)
    with _http(server) as client:
        _chat(client)
        u = _chat(client).json()["usage"]
        assert u["prompt_tokens_details"]["cached_tokens"] == 4
        assert u["cost"] == pytest.approx((4 * 1.0 + u["completion_tokens"] * 4.0) / 1e6)
        assert _chat(client, model="sim-basalt-v1").json()["usage"]["cost"] is None  # no price


def test_a_bad_price_file_is_refused_naming_file_and_model(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"sim-aurora-v1": {"input": 1, "output": "cheap"}}))
    with pytest.raises(ValueError, match=r"bad\.json: model 'sim-aurora-v1': output"):
        load_prices(bad)
    ghost = tmp_path / "ghost.yaml"
    ghost.write_text("sim-ghost-v9: {input: 1, output: 2}\n")
    with pytest.raises(ValueError, match=r"ghost\.yaml: model 'sim-ghost-v9' is not served"):
        load_prices(ghost)
    done = subprocess.run(
        [sys.executable, "-m", "judgepanel_sim", "serve", "--prices", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1  # bad input, as every command answers it
    assert "bad.json" in done.stderr and "sim-aurora-v1" in done.stderr


# Defaults.


def test_defaults_add_nothing_to_the_answers(sim_server_factory, tmp_path):
    book = tmp_path / "ledger.jsonl"
    server = sim_server_factory(ledger=book)
    with _http(server) as client:
        r = _chat(client, seed=2)
        assert list(r.json()["usage"]) == ["prompt_tokens", "completion_tokens", "total_tokens"]
        assert not [h for h in r.headers if h.startswith("x-ratelimit")]
        assert b'"usage":{"prompt_tokens":4,' in r.content
        resp = client.post("/responses", json={"model": AURORA, "input": "hi"}).json()
        assert "cost" not in resp["usage"]
        assert resp["usage"]["input_tokens_details"] == {"cached_tokens": 0}
        assert _chat(client, seed=2).json()["usage"] == r.json()["usage"]  # nothing cached
    line = json.loads(book.read_text().splitlines()[0])
    assert line["cached_tokens"] == 0 and line["choices"] == 1
    assert line["cost"] == _price(r.json()["usage"], AURORA)


def test_new_server_flags_are_checked(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "judgepanel_sim", "serve", "--burst-seconds", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "burst_s must be > 0" in done.stderr  # bad input


def test_pricing_formula():
    p = DEFAULT_PRICES[AURORA]
    assert p.cost(1000, 400, 100) == pytest.approx((600 * 0.30 + 400 * 0.075 + 100 * 2.50) / 1e6)
