"""Pacing: keep each model's requests under its provider's limits, and slow down together.

One :class:`Lane` per model decides when that model's next request may leave:

* **Limits.** Requests and tokens per minute, configured or announced by the endpoint's
  ``x-ratelimit-limit-*`` headers, are paced by two leaky buckets (``aiolimiter``) at
  ``PACE_MARGIN`` of the limit, holding ``BURST_S`` seconds' worth, so the provider's own
  bucket keeps a margin instead of hovering at empty, where every jitter is a 429.
* **Headers.** When ``x-ratelimit-remaining-requests`` (or ``-tokens``) says fewer are left
  than this lane has in flight, new sends wait for the provider's bucket to refill.
* **Refusals.** A 429 pauses the whole lane until its ``Retry-After`` has passed, so one
  refused call does not set sixteen workers retrying on their own (providers count refused
  requests toward the limit, so a storm of retries keeps itself refused).
* **Adaptive concurrency.** A 429 halves the lane's concurrency (at most once per
  ``COOL_OFF_S``); every ``cap`` answers in a row win one slot back, up to the configured
  concurrency. This covers limits nobody configured and no header announces.

A request's tokens are estimated from its shape (:mod:`judgepanel.core.budget`) plus
``max_tokens`` times ``n``, scaled by the ratio of reported to estimated prompt tokens seen
so far for the model, since each provider counts image tokens its own way.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from aiolimiter import AsyncLimiter

from judgepanel.core.sendconfig import ClientOptions, RateLimits

PACE_MARGIN = 0.97
"""The share of a known limit the client aims at."""
BURST_S = 1.0
"""Seconds of the paced rate a lane may send at once (the providers' buckets hold more)."""
COOL_OFF_S = 1.0
"""A lane halves its concurrency at most once per this many seconds."""
DEFAULT_PAUSE_S = 1.0
"""How long a 429 without ``Retry-After`` pauses its lane."""

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | None) -> float | None:
    """Seconds in an OpenAI reset header (``"1s"``, ``"6m0s"``, ``"120ms"``), or ``None``."""
    if not text:
        return None
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


@dataclass(frozen=True)
class RateHeaders:
    """What one response's ``x-ratelimit-*`` headers say (``None`` where absent)."""

    limit_requests: float | None = None
    remaining_requests: float | None = None
    reset_requests: float | None = None
    limit_tokens: float | None = None
    remaining_tokens: float | None = None
    reset_tokens: float | None = None

    @classmethod
    def of(cls, headers: Mapping[str, str] | None) -> RateHeaders:
        # most endpoints send none: one look-up decides, rather than six
        if not headers or (
            "x-ratelimit-limit-requests" not in headers
            and ("x-ratelimit-limit-tokens" not in headers)
        ):
            return _NO_HEADERS

        def number(name: str) -> float | None:
            raw = headers.get(name)
            try:
                return None if raw is None else float(raw)
            except ValueError:
                return None

        return cls(
            number("x-ratelimit-limit-requests"),
            number("x-ratelimit-remaining-requests"),
            parse_duration(headers.get("x-ratelimit-reset-requests")),
            number("x-ratelimit-limit-tokens"),
            number("x-ratelimit-remaining-tokens"),
            parse_duration(headers.get("x-ratelimit-reset-tokens")),
        )


_NO_HEADERS = RateHeaders()


def _bucket(per_minute: float) -> AsyncLimiter:
    """A leaky bucket pacing at ``PACE_MARGIN`` of ``per_minute``, ``BURST_S`` deep."""
    rate = PACE_MARGIN * per_minute / 60.0
    capacity = max(1.0, rate * BURST_S)
    return AsyncLimiter(capacity, capacity / rate)


class Lane:
    """When one model's next request may leave (see the module docstring)."""

    def __init__(self, limits: RateLimits, *, concurrency: int, share: float, adaptive: bool):
        self.max_cap = concurrency
        self.cap = concurrency
        self.share = share
        self.adaptive = adaptive
        self.requests = _bucket(limits.rpm) if limits.rpm else None
        self.tokens = _bucket(limits.tpm) if limits.tpm else None
        self.configured = bool(limits)
        self.in_flight = 0
        self.waiting = 0
        self.paused_until = 0.0
        self.streak = 0
        self.last_cut = -math.inf
        self.token_scale = 1.0
        self._scale_seen = 0
        self.cond = asyncio.Condition()

    def estimate(self, prompt_estimate: int, max_tokens: int, n: int) -> float:
        """The tokens a provider counts for one request, as well as this lane knows."""
        return prompt_estimate * self.token_scale + max_tokens * n

    async def acquire(self, tokens: float) -> None:
        """Wait until a request of ``tokens`` may leave; it then counts as in flight."""
        if self.in_flight < self.cap and not self.waiting:  # no await: nothing can interleave
            self.in_flight += 1
        else:
            self.waiting += 1
            try:
                async with self.cond:
                    await self.cond.wait_for(lambda: self.in_flight < self.cap)
                    self.in_flight += 1
            finally:
                self.waiting -= 1
        try:
            await self._wait_pause()
            if self.requests is not None:
                await self.requests.acquire()
            if self.tokens is not None:
                await self.tokens.acquire(min(tokens, self.tokens.max_rate))
            await self._wait_pause()  # a refusal may have come in meanwhile
        except BaseException:
            await self.release()
            raise

    async def _wait_pause(self) -> None:
        while (wait := self.paused_until - time.monotonic()) > 0:
            await asyncio.sleep(wait)

    async def release(self) -> None:
        self.in_flight -= 1
        if self.waiting:
            async with self.cond:
                self.cond.notify_all()

    def pause(self, seconds: float) -> None:
        """Hold every new send of this lane for ``seconds`` from now."""
        self.paused_until = max(self.paused_until, time.monotonic() + seconds)

    def answered(self, headers: RateHeaders, prompt_estimate: int, prompt_tokens: int | None):
        """Learn from an answer: its headers, and how the provider counted its prompt."""
        if prompt_tokens and prompt_estimate > 0:
            self._scale_seen += 1
            weight = 1.0 / min(self._scale_seen, 20)
            ratio = prompt_tokens / prompt_estimate
            self.token_scale += weight * (ratio - self.token_scale)
        self._follow(headers)
        if self.adaptive and self.cap < self.max_cap:
            self.streak += 1
            if self.streak >= self.cap:
                self.streak = 0
                self.cap += 1
                self._notify()

    def refused(self, headers: RateHeaders, retry_after: float | None) -> None:
        """A 429: pause the lane, and halve its concurrency once per cool-off."""
        self.pause(retry_after if retry_after is not None else DEFAULT_PAUSE_S)
        self._follow(headers)
        self.streak = 0
        now = time.monotonic()
        if self.adaptive and now - self.last_cut >= COOL_OFF_S:
            self.last_cut = now
            self.cap = max(1, self.cap // 2)

    def _follow(self, h: RateHeaders) -> None:
        """Adopt an announced limit nobody configured; wait when the provider runs low."""
        if not self.adaptive:
            return
        if not self.configured:
            if self.requests is None and h.limit_requests:
                self.requests = _bucket(h.limit_requests * self.share)
            if self.tokens is None and h.limit_tokens:
                self.tokens = _bucket(h.limit_tokens * self.share)
        waits = [0.0]
        if h.remaining_requests is not None and h.limit_requests:
            short = self.in_flight - h.remaining_requests
            if short > 0:
                waits.append(short * 60.0 / h.limit_requests)
        low_tokens = (
            h.remaining_tokens is not None
            and self.tokens is not None
            and h.remaining_tokens < self.tokens.max_rate * 0.1
        )
        if low_tokens and h.reset_tokens:
            waits.append(min(h.reset_tokens, BURST_S))
        if max(waits) > 0:
            self.pause(max(waits))

    def _notify(self) -> None:
        # Called from the event loop without the condition held: wake waiters soon.
        if self.waiting:
            asyncio.get_running_loop().create_task(self._wake())

    async def _wake(self) -> None:
        async with self.cond:
            self.cond.notify_all()


class Pacer:
    """The lanes of one run, created on first use of each model."""

    def __init__(self, options: ClientOptions) -> None:
        self.options = options
        self.lanes: dict[str, Lane] = {}

    def lane(self, model: str) -> Lane:
        lane = self.lanes.get(model)
        if lane is None:
            o = self.options
            lane = self.lanes[model] = Lane(
                o.limits_for(model),
                concurrency=o.concurrency,
                share=o.limit_share,
                adaptive=o.adaptive,
            )
        return lane
