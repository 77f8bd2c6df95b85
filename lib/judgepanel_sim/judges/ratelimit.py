"""Per-key rate limits, as a provider enforces them: a request bucket and a token bucket.

Each API key (the bearer token, kept only as a digest) has two token buckets, one counting
requests and one counting tokens. A bucket of a per-minute ``limit`` refills continuously
at ``limit / 60`` a second and holds ``limit * burst_s / 60`` (``burst_s`` seconds' worth),
so a client may send a short burst and then only at the limit's pace. Buckets start full.

A request is admitted when each bucket holds its charge (or, for a charge larger than the
bucket, when the bucket is full: it then goes into debt, so the long-run rate still keeps
to the limit); both are then debited. The token charge is what OpenAI counts at admission:
the prompt tokens plus ``max_tokens`` for every choice. A refused request still debits the
request bucket by one (``count_refused``; the level may go down to minus the capacity), as
OpenAI counts rejected requests toward the limit, so a client that retries without waiting
starves itself. A token charge beyond the per-minute limit can never be admitted and is
refused as "Request too large", without a ``retry-after``.

The headers follow OpenAI's names. ``limit`` is the per-minute limit; ``remaining`` is the
bucket's current level rounded down (what may be sent at once, never more than the burst);
``reset`` is the time until the bucket is full again, in OpenAI's duration format
(``"120ms"``, ``"1.5s"``, ``"6m0s"``). The clock is a parameter, so tests can drive it.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from judgepanel_sim.judges.protocol import ApiError

MAX_KEYS = 4096
"""Keys whose buckets are kept; the least recently seen is forgotten (its next request
finds full buckets again)."""


def duration(seconds: float) -> str:
    """``seconds`` in OpenAI's reset format: ``"0s"``, ``"95ms"``, ``"1.5s"``, ``"6m0s"``
    (Go's duration notation at millisecond precision, rounded up)."""
    ms = max(0, math.ceil(seconds * 1000.0 - 1e-6))
    if ms == 0:
        return "0s"
    if ms < 1000:
        return f"{ms}ms"
    hours, rest = divmod(ms, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs = f"{rest / 1000:.3f}".rstrip("0").rstrip(".")
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


class TokenBucket:
    """One continuously refilled bucket of a per-minute ``limit``."""

    def __init__(self, limit: int, burst_s: float, now: float) -> None:
        self.limit = limit
        self.rate = limit / 60.0
        self.capacity = limit * burst_s / 60.0
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        """Add what flowed in since the last call (never beyond the capacity)."""
        if now > self.stamp:
            self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
            self.stamp = now

    def need(self, charge: float) -> float:
        """The level that admits ``charge``: the charge, or a full bucket for a larger one."""
        return min(charge, self.capacity)

    def holds(self, charge: float) -> bool:
        return self.level >= self.need(charge) - 1e-9

    def wait(self, charge: float) -> float:
        """Seconds until the bucket admits ``charge`` (0 if it does now)."""
        return max(0.0, (self.need(charge) - self.level) / self.rate)

    def debit_refused(self) -> None:
        """Count a refused request: one less, but not below minus the capacity."""
        self.level = max(self.level - 1.0, min(self.level, -self.capacity))

    def remaining(self) -> int:
        return max(0, math.floor(self.level + 1e-9))

    def used(self) -> int:
        """How much of the burst is spent (the error message's "Used", before the request)."""
        return max(0, math.ceil(self.capacity - self.level - 1e-9))

    def reset(self) -> float:
        """Seconds until the bucket is full."""
        return max(0.0, (self.capacity - self.level) / self.rate)


@dataclass
class _Buckets:
    requests: TokenBucket | None
    tokens: TokenBucket | None


@dataclass(frozen=True)
class Decision:
    """The limiter's answer for one request.

    Attributes:
        admitted: whether the request may be answered.
        headers: the ``x-ratelimit-*`` headers (after this request's debit).
        error: the 429 to send when refused (carrying the headers and ``retry-after``).
    """

    admitted: bool
    headers: dict[str, str] = field(default_factory=dict)
    error: ApiError | None = None


def key_of(token: str) -> bytes:
    """The bucket key of a bearer token: a digest, so the token itself is never kept."""
    return hashlib.blake2b(token.encode("utf-8"), digest_size=16).digest()


class RateLimiter:
    """Requests-per-minute and tokens-per-minute buckets per API key.

    Args:
        rpm: requests per minute (0: no request limit).
        tpm: tokens per minute (0: no token limit).
        burst_s: seconds' worth of the limit a bucket holds.
        count_refused: a refused request still uses one request of the limit.
        clock: monotonic seconds (``time.monotonic`` unless a test drives it).
    """

    def __init__(
        self,
        rpm: int = 0,
        tpm: int = 0,
        burst_s: float = 2.0,
        count_refused: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rpm < 0 or tpm < 0:
            raise ValueError("rpm and tpm must be >= 0")
        if not burst_s > 0:
            raise ValueError(f"burst_s must be > 0, got {burst_s}")
        self.rpm = rpm
        self.tpm = tpm
        self.burst_s = burst_s
        self.count_refused = count_refused
        self.clock = clock
        self._keys: OrderedDict[bytes, _Buckets] = OrderedDict()

    def _buckets(self, key: bytes) -> _Buckets:
        now = self.clock()
        b = self._keys.get(key)
        if b is None:
            b = _Buckets(
                TokenBucket(self.rpm, self.burst_s, now) if self.rpm else None,
                TokenBucket(self.tpm, self.burst_s, now) if self.tpm else None,
            )
            self._keys[key] = b
            while len(self._keys) > MAX_KEYS:
                self._keys.popitem(last=False)
        else:
            self._keys.move_to_end(key)
        for bucket in (b.requests, b.tokens):
            if bucket is not None:
                bucket.refill(now)
        return b

    @staticmethod
    def _headers(b: _Buckets) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, bucket in (("requests", b.requests), ("tokens", b.tokens)):
            if bucket is not None:
                out[f"x-ratelimit-limit-{name}"] = str(bucket.limit)
                out[f"x-ratelimit-remaining-{name}"] = str(bucket.remaining())
                out[f"x-ratelimit-reset-{name}"] = duration(bucket.reset())
        return out

    def peek(self, key: bytes) -> dict[str, str]:
        """The headers of ``key``'s buckets, without charging anything."""
        return self._headers(self._buckets(key))

    def admit(self, key: bytes, model: str, tokens: int) -> Decision:
        """Admit (and debit) or refuse one request of ``tokens`` tokens for ``model``."""
        b = self._buckets(key)
        req, tok = b.requests, b.tokens
        too_large = tok is not None and tokens > tok.limit
        if not too_large and (req is None or req.holds(1)) and (tok is None or tok.holds(tokens)):
            if req is not None:
                req.level -= 1.0
            if tok is not None:
                tok.level -= tokens
            return Decision(True, self._headers(b))
        used = {"requests": req.used() if req else 0, "tokens": tok.used() if tok else 0}
        if req is not None and self.count_refused:
            req.debit_refused()
        headers = self._headers(b)
        if too_large:
            assert tok is not None
            message = (
                f"Request too large for {model} on tokens per min (TPM): Limit {tok.limit}, "
                f"Requested {tokens}. The input or output tokens must be reduced in order to "
                "run successfully. (simulated)"
            )
            return Decision(False, headers, _refusal(message, "tokens", headers))
        waits = [
            (bucket.wait(charge), name, bucket, charge)
            for name, bucket, charge in (("requests", req, 1), ("tokens", tok, tokens))
            if bucket is not None
        ]
        wait, name, bucket, charge = max(waits, key=lambda w: w[0])
        unit = "RPM" if name == "requests" else "TPM"
        message = (
            f"Rate limit reached for {model} on {name} per min ({unit}): Limit {bucket.limit}, "
            f"Used {used[name]}, Requested {charge}. Please try again in {duration(wait)}. "
            "(simulated)"
        )
        headers = {
            **headers,
            "retry-after": str(max(1, math.ceil(wait - 1e-9))),
            "retry-after-ms": str(max(1, math.ceil(wait * 1000.0 - 1e-6))),
        }
        return Decision(False, headers, _refusal(message, name, headers))


def _refusal(message: str, kind: str, headers: dict[str, str]) -> ApiError:
    return ApiError(
        429, message, type=kind, code="rate_limit_exceeded", param=None, headers=dict(headers)
    )
