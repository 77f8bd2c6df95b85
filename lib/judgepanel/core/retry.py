"""When to send a failed attempt again, and how long to wait first.

Why the policy is what it is:

* Retry only what a second attempt can fix: 408 (request timeout), 409 (conflict, which
  providers use for transient lock contention), 429 (rate limit), every 5xx, client-side
  timeouts and connection errors. Any other 4xx means the request itself is wrong (bad
  image, unknown parameter); sending it again only spends time, so it fails at once.
* 401, 403 and 404 are wrong for every call, not for one (a bad key, no permission, a
  model id or path the endpoint does not have), so they abort the whole run at the first
  call instead of being recorded against hundreds (``RetryDecision.fatal``).
* Waits grow exponentially with *full jitter* (uniform between 0 and the exponential cap):
  when many workers hit a limit at the same moment, jitter spreads their retries out rather
  than sending them back together in a burst that trips the limit again.
* When the server says how long to wait (``Retry-After`` in seconds or as an HTTP date,
  or ``retry-after-ms``), that wait is honoured as a floor, because the server knows its
  own quota window better than any formula; it is capped so one bad header cannot stall a
  run for hours.

The decision is data (:class:`RetryDecision`) so that tests and the progress line can
inspect it, and the sleep is computed by :meth:`RetryPolicy.delay`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS: frozenset[int] = frozenset({408, 409, 429})
MAX_FAILURE_SHARE = 0.2
"""The default share of a run's calls that may fail before it stops (``--max-failure-share``):
far above what transient faults leave after six attempts, far below an outage's."""
FATAL_STATUS: frozenset[int] = frozenset({401, 403, 404})


@dataclass(frozen=True)
class RetryDecision:
    """What to do after a failed attempt.

    Attributes:
        retry: whether the same request may be sent again.
        reason: a short label for the store and the progress line (``http 429``,
            ``timeout``, ``connection error``).
        delay: the server's requested wait in seconds, if it gave one.
        fatal: the failure concerns every call (bad key, no permission): stop the run.
    """

    retry: bool
    reason: str
    delay: float | None = None
    fatal: bool = False

    @classmethod
    def no(cls, reason: str) -> RetryDecision:
        """A permanent failure of this request."""
        return cls(False, reason)

    @classmethod
    def transient(cls, reason: str, delay: float | None = None) -> RetryDecision:
        """A failure that a later attempt may not meet (5xx, timeout, connection)."""
        return cls(True, reason, delay)

    @classmethod
    def rate_limit(cls, delay: float | None, reason: str = "http 429") -> RetryDecision:
        """The server asked us to slow down, possibly saying for how long."""
        return cls(True, reason, delay)

    @classmethod
    def abort(cls, reason: str) -> RetryDecision:
        """A failure no call of this run can avoid: stop launching calls."""
        return cls(False, reason, None, fatal=True)


def retry_after_seconds(
    headers: Mapping[str, str] | None, now: float | None = None
) -> float | None:
    """The wait a response asks for, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` may be a number of seconds or an HTTP date; a date in the past means
    "now" (0 s). Unreadable values are ignored rather than guessed.
    """
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
            if value >= 0:
                return value
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
        return value if value >= 0 else None
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def _refused(exc: BaseException) -> bool:
    """Whether a timeout error was really a connection that failed or was dropped.

    The SDK's aiohttp transport reports every aiohttp connection error (refused, reset,
    the server gone) as a connect *timeout*; the cause chain still holds the original.
    """
    import aiohttp

    visited: set[int] = set()  # a chain can loop back on itself
    link = exc.__cause__ or exc.__context__
    while link is not None and id(link) not in visited:
        visited.add(id(link))
        if isinstance(link, aiohttp.ServerTimeoutError | TimeoutError):
            return False
        if isinstance(link, aiohttp.ClientConnectionError | ConnectionError):
            return True
        link = link.__cause__ or link.__context__
    return False


def classify(exc: BaseException) -> RetryDecision:
    """Map an exception raised by one attempt to a :class:`RetryDecision`."""
    import openai  # loaded by the client already; analyses that import this never need it

    if isinstance(exc, openai.APITimeoutError) and _refused(exc):
        return RetryDecision.transient("connection error")
    if isinstance(exc, openai.APITimeoutError | asyncio.TimeoutError | TimeoutError):
        return RetryDecision.transient("timeout")
    if isinstance(exc, openai.APIConnectionError):
        return RetryDecision.transient("connection error")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        delay = retry_after_seconds(exc.response.headers if exc.response is not None else None)
        label = f"http {status}"
        if status == 429:
            return RetryDecision.rate_limit(delay, label)
        if status in RETRYABLE_STATUS or status >= 500:
            return RetryDecision.transient(label, delay)
        if status in FATAL_STATUS:
            return RetryDecision.abort(label)
        return RetryDecision.no(label)
    return RetryDecision.no(f"{type(exc).__name__}")


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds and back-off of the retry loop.

    Attributes:
        max_attempts: HTTP attempts per call, first attempt and re-asks included.
        base: the first back-off cap in seconds; the n-th retry waits up to
            ``base * 2**(n-1)``.
        cap: the largest back-off cap in seconds.
        max_server_delay: the longest server-requested wait honoured, in seconds.
    """

    max_attempts: int = 6
    base: float = 0.5
    cap: float = 20.0
    max_server_delay: float = 120.0

    def delay(self, retry_number: int, decision: RetryDecision, rng: random.Random) -> float:
        """Seconds to wait before retry number ``retry_number`` (1 for the first retry).

        Full jitter over the exponential cap; a server-requested delay is a floor.
        """
        ceiling = min(self.cap, self.base * 2.0 ** max(0, retry_number - 1))
        wait = rng.uniform(0.0, ceiling)
        if decision.delay is not None:
            wait = max(wait, min(decision.delay, self.max_server_delay))
        return wait
