"""Pacing against a provider-like limiter: the real client, the real simulated server.

The server (``--rpm``) keeps a per-key token bucket holding two seconds' worth, counts
refused requests toward the limit as OpenAI documents, and reports ``x-ratelimit-*``
headers; these tests check that the client stays under it, reads it, and shares it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from test_client import PRICES, make_images, simple_plan

from judgepanel.core.client import Lane, RateHeaders, run_calls
from judgepanel.core.client.pacing import PACE_MARGIN, parse_duration
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.sendconfig import ClientOptions, RateLimits
from judgepanel.core.store import Store

RPM = 1200
"""The server's limit in these tests: twice a provider's small tier, so each test waits
half as long; the bucket holds two seconds' worth (40 requests)."""
BURST = 2 * RPM // 60


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-pacing-test-0001")
    return "sk-pacing-test-0001"


def test_reset_durations_read_as_openai_writes_them():
    assert parse_duration("1s") == 1.0
    assert parse_duration("6m0s") == 360.0
    assert parse_duration("120ms") == pytest.approx(0.12)
    assert parse_duration("1.5s") == 1.5
    assert parse_duration("1h2m3s") == 3723.0
    assert parse_duration("0.25") == 0.25
    assert parse_duration("soon") is None and parse_duration("") is None
    assert parse_duration("3x") is None


def test_headers_read_and_missing_ones_are_none():
    h = RateHeaders.of(
        {
            "x-ratelimit-limit-requests": "600",
            "x-ratelimit-remaining-requests": "17",
            "x-ratelimit-reset-requests": "300ms",
            "x-ratelimit-limit-tokens": "oops",
        }
    )
    assert (h.limit_requests, h.remaining_requests, h.reset_requests) == (600, 17, 0.3)
    assert h.limit_tokens is None and h.remaining_tokens is None
    assert RateHeaders.of(None) == RateHeaders()


def test_limits_are_validated_and_shared():
    with pytest.raises(ConfigError, match="--rpm -1"):
        ClientOptions(rpm=-1)
    with pytest.raises(ConfigError, match="--samples-per-request 0"):
        ClientOptions(samples_per_request=0)
    options = ClientOptions(rpm=600, limits={"m2": RateLimits(tpm=1000)}, limit_share=0.5)
    assert options.limits_for("m1") == RateLimits(300.0, None)
    assert options.limits_for("m2") == RateLimits(None, 500.0)


def test_a_refusal_halves_concurrency_once_per_cool_off_and_answers_win_it_back():
    async def scenario() -> list[int]:
        lane = Lane(RateLimits(), concurrency=16, share=1.0, adaptive=True)
        caps = [lane.cap]
        lane.refused(RateHeaders(), 0.0)
        caps.append(lane.cap)
        lane.refused(RateHeaders(), 0.0)  # within the cool-off: no second cut
        caps.append(lane.cap)
        for _ in range(8):  # `cap` answers in a row win one slot back
            lane.answered(RateHeaders(), 0, None)
        caps.append(lane.cap)
        assert lane.paused_until >= time.monotonic() - 1.0
        return caps

    assert asyncio.run(scenario()) == [16, 8, 8, 9]


def test_a_lane_adopts_the_limit_its_headers_announce():
    async def scenario() -> float:
        lane = Lane(RateLimits(), concurrency=16, share=0.5, adaptive=True)
        assert lane.requests is None
        lane.answered(RateHeaders(limit_requests=600, remaining_requests=19), 0, None)
        return lane.requests.max_rate / lane.requests.time_period * 60

    assert asyncio.run(scenario()) == pytest.approx(PACE_MARGIN * 300)


def _timed_run(server, specs, store: Store, **options) -> tuple:
    t0 = time.perf_counter()
    summary = run_calls(
        specs,
        store,
        prices=PRICES,
        options=ClientOptions(endpoint=Endpoint.at(server.base_url), progress=False, **options),
    )
    return summary, time.perf_counter() - t0


@pytest.mark.serial  # a rate measured on the wall clock: run apart from other tests
@pytest.mark.timeout(180)
@pytest.mark.parametrize("configured", [True, False], ids=["told-the-limit", "headers-only"])
def test_paced_client_stays_under_the_limit(
    sim_server_factory, tmp_path: Path, api_key: str, configured: bool
):
    """160 calls, 16 in flight, against 1200 RPM with refused requests counted: almost no
    429s, no failures, and a rate close to the limit but not above it (the bucket's two
    seconds' worth, 40 requests, may go at once)."""
    server = sim_server_factory(latency_ms=100, rpm=RPM)
    specs = simple_plan(make_images(tmp_path / "img", 16), reps=10)
    with Store(tmp_path / "s.sqlite") as store:
        summary, elapsed = _timed_run(
            server, specs, store, concurrency=16, rpm=RPM if configured else None
        )
    assert summary.ok == len(specs) and summary.failed == 0
    assert summary.refused <= 0.02 * summary.requests
    rate = summary.ok / elapsed * 60
    assert rate <= RPM * 1.0 + BURST / elapsed * 60 + 1  # the limit plus the initial burst
    assert rate >= 0.85 * RPM


@pytest.mark.timeout(180)
def test_an_unpaced_client_is_refused_where_the_paced_one_is_not(
    sim_server_factory, tmp_path: Path, api_key: str
):
    """The same plan without pacing (no limit told, no adaptation) meets many 429s: what
    the previous test's pacing avoids is there to be avoided."""
    server = sim_server_factory(latency_ms=100, rpm=RPM)
    specs = simple_plan(make_images(tmp_path / "img", 8), reps=10)
    with Store(tmp_path / "s.sqlite") as store:
        summary, _ = _timed_run(
            server, specs, store, concurrency=16, adaptive=False, max_failure_share=1.0
        )
    assert summary.refused > 0.2 * summary.requests


@pytest.mark.serial  # a rate measured on the wall clock: run apart from other tests
@pytest.mark.timeout(240)
def test_two_processes_sharing_a_key_split_the_limit(
    sim_server_factory, tmp_path: Path, api_key: str
):
    """Two scoring runs at once (as the report's lanes are), each pacing to half of the
    1200 RPM: together they stay under it, with almost no 429s."""
    server = sim_server_factory(latency_ms=100, rpm=RPM)
    images = make_images(tmp_path / "img", 12)
    plans = [simple_plan(images.iloc[i::2].reset_index(drop=True), reps=10) for i in range(2)]
    out: dict[int, tuple] = {}

    def lane(i: int) -> None:
        with Store(tmp_path / f"s{i}.sqlite") as store:
            out[i] = _timed_run(server, plans[i], store, rpm=RPM, limit_share=0.5)

    threads = [threading.Thread(target=lane, args=(i,)) for i in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    summaries = [out[i][0] for i in range(2)]
    total = sum(s.ok for s in summaries)
    assert total == sum(len(p) for p in plans) and all(s.failed == 0 for s in summaries)
    refused = sum(s.refused for s in summaries)
    assert refused <= 0.02 * sum(s.requests for s in summaries)
    assert total / elapsed * 60 <= RPM + BURST / elapsed * 60 + 1
