"""The retry policy as data: classification, Retry-After parsing, back-off bounds."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx2
import openai
import pytest

from judgepanel.core.retry import RetryDecision, RetryPolicy, classify, retry_after_seconds

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def status_error(code: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    """A real SDK error built the way the SDK builds it from a real httpx response."""
    response = httpx2.Response(code, headers=headers or {}, request=REQUEST, json={"error": {}})
    client = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1", max_retries=0)
    return client._make_status_error_from_response(response)


@pytest.mark.parametrize("code", [408, 409, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses(code: int) -> None:
    d = classify(status_error(code))
    assert d.retry and not d.fatal
    assert d.reason == f"http {code}"


@pytest.mark.parametrize("code", [400, 413, 422])
def test_other_client_errors_are_not_retried(code: int) -> None:
    d = classify(status_error(code))
    assert not d.retry and not d.fatal


@pytest.mark.parametrize("code", [401, 403, 404])
def test_auth_and_unknown_model_errors_abort_the_run(code: int) -> None:
    d = classify(status_error(code))
    assert d.fatal and not d.retry


def test_timeouts_and_connection_errors_are_transient() -> None:
    assert classify(openai.APITimeoutError(request=REQUEST)) == RetryDecision.transient("timeout")
    assert classify(TimeoutError()).reason == "timeout"
    d = classify(openai.APIConnectionError(request=REQUEST))
    assert d.retry and d.reason == "connection error"


def test_retry_after_header_is_read() -> None:
    assert classify(status_error(429, {"Retry-After": "3"})) == RetryDecision.rate_limit(3.0)
    assert classify(status_error(503, {"retry-after-ms": "250"})).delay == pytest.approx(0.25)


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"Retry-After": "2.5"}) == 2.5
    assert retry_after_seconds({"retry-after-ms": "1500", "Retry-After": "9"}) == 1.5
    now = datetime(2026, 1, 1, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds({"Retry-After": later}, now=now.timestamp()) == pytest.approx(30)
    earlier = format_datetime(now - timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds({"Retry-After": earlier}, now=now.timestamp()) == 0.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({"Retry-After": "-4"}) is None
    assert retry_after_seconds({}) is None
    assert retry_after_seconds(None) is None


def test_full_jitter_within_exponential_cap() -> None:
    policy = RetryPolicy(base=0.5, cap=4.0)
    rng = random.Random(0)
    d = RetryDecision.transient("http 500")
    for n, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (9, 4.0)]:
        waits = [policy.delay(n, d, rng) for _ in range(400)]
        assert min(waits) >= 0.0 and max(waits) <= ceiling
        # jitter: the waits spread over the range instead of all being the cap
        assert max(waits) - min(waits) > 0.5 * ceiling


def test_server_delay_is_a_floor_and_is_capped() -> None:
    policy = RetryPolicy(base=0.5, cap=4.0, max_server_delay=10.0)
    rng = random.Random(1)
    assert all(policy.delay(1, RetryDecision.rate_limit(3.0), rng) >= 3.0 for _ in range(50))
    assert policy.delay(1, RetryDecision.rate_limit(3600.0), rng) <= 10.0


def test_a_timeout_caused_by_a_refused_connection_is_a_connection_error() -> None:
    """The aiohttp transport reports a refused connection as a connect timeout; the cause
    chain decides, and a chain that loops back on itself still ends."""
    import httpx2
    import openai

    from judgepanel.core.retry import classify

    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    refused = openai.APITimeoutError(request)
    refused.__cause__ = ConnectionRefusedError("refused")
    assert classify(refused).reason == "connection error"
    looped = openai.APITimeoutError(request)
    inner = ValueError("inner")
    looped.__cause__ = inner
    inner.__cause__ = looped
    assert classify(looped).reason == "timeout"
