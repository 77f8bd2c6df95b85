"""Reading answers: each choice's text, the usage a provider bills, and one call's tally.

A server may send any JSON: whatever is missing or of the wrong type reads as ``None``
instead of raising. A body without a readable message is then an unreadable answer
(re-asked), and usage without both token counts is no usage (the call is charged its
bound, so the ceiling still holds).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from judgepanel.core.budget import CallBound
from judgepanel.core.client.secrets import scrub, scrub_value
from judgepanel.core.config import Price
from judgepanel.core.parsing import numeric_value
from judgepanel.core.store import CallResult

_REASK_SEED_STEP = 1_000_003
_MAX_REASON = 300


def short(text: object) -> str:
    """``text`` on one line, cut to the length a stored reason may have."""
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 3] + "..."


def error_detail(exc: BaseException) -> str:
    """A short, scrubbed description of a non-retryable error, from the response body."""
    body = getattr(exc, "body", None)
    message = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = str(inner.get("message", "") or "")
        elif isinstance(inner, str):
            message = inner
    if not message:
        message = getattr(exc, "message", "") or str(exc)
    return short(scrub(message))


def reask_seed(seed: int | None, reask: int) -> int | None:
    """The seed of re-ask number ``reask``: the same request with the same seed would
    return the same unreadable answer from a deterministic endpoint."""
    if seed is None or reask == 0:
        return seed
    return (seed + _REASK_SEED_STEP * reask) & 0x7FFFFFFF


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True)
class Choice:
    """One choice of an answer: its text and finish reason (``None`` if unreadable), and
    its ``logprobs`` object as sent (``None`` when there is none)."""

    answer: str | None
    finish: str | None
    logprobs: Any = None


@dataclass(frozen=True)
class Usage:
    """What a provider billed for one request (or a row's share of it).

    ``prompt`` includes ``cached``; ``reported_cost`` is the provider's own charge in USD
    (OpenRouter's ``usage.cost``), ``None`` when it sent none.
    """

    prompt: int
    completion: int
    cached: int = 0
    reported_cost: float | None = None

    def split(self, m: int) -> list[Usage]:
        """``m`` shares that add up to this usage exactly (integers spread evenly)."""
        if m <= 1:
            return [self]

        def spread(total: int) -> list[int]:
            q, r = divmod(total, m)
            return [q + (i < r) for i in range(m)]

        # spread alike, so no share's cached tokens exceed its prompt tokens
        prompt, completion, cached = (
            spread(self.prompt),
            spread(self.completion),
            spread(self.cached),
        )
        cost = None if self.reported_cost is None else self.reported_cost / m
        return [Usage(p, c, k, cost) for p, c, k in zip(prompt, completion, cached, strict=True)]


def read_choices(resp: Any) -> list[Choice]:
    """The choices of a chat completion in ``index`` order (an empty list if none)."""
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if not isinstance(choices, list):
        return []
    out: list[tuple[int, Choice]] = []
    for pos, choice in enumerate(choices):
        choice = choice if isinstance(choice, dict) else {}
        message = choice.get("message")
        answer = message.get("content") if isinstance(message, dict) else None
        finish = choice.get("finish_reason")
        index = choice.get("index")
        out.append(
            (
                index if _is_count(index) else pos,
                Choice(
                    answer if isinstance(answer, str) else None,
                    finish if isinstance(finish, str) else None,
                    choice.get("logprobs"),
                ),
            )
        )
    return [c for _, c in sorted(out, key=lambda t: t[0])]


def read_usage(resp: Any) -> Usage | None:
    """The request's billed usage, ``None`` without both token counts."""
    usage = resp.get("usage") if isinstance(resp, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if not (_is_count(prompt) and _is_count(completion)):
        return None
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    cached = min(cached, prompt) if _is_count(cached) else 0
    cost = usage.get("cost")
    reported = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    return Usage(prompt, completion, cached, reported)


@dataclass
class Tally:
    """What one call accumulated over its attempts: the fields of its :class:`CallResult`."""

    start: float
    seed: int | None
    attempts: int = 0
    reasks: int = 0
    answers: int = 0
    answers_with_usage: int = 0
    answers_with_cost: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    reported_cost: float = 0.0
    answer: str | None = None
    finish: str | None = None
    logprobs: Any = None
    samples: int = 1

    def answered(self, choice: Choice, usage: Usage | None, price: Price, bound: CallBound) -> None:
        """Count one answered (so billable) attempt; its texts are scrubbed at once."""
        self.answer = None if choice.answer is None else scrub(choice.answer)
        self.finish = None if choice.finish is None else scrub(choice.finish)
        self.logprobs = choice.logprobs
        self.answers += 1
        if usage is None:
            # No usage reported: charge the bound, so the ceiling still holds.
            self.cost += bound.answer_cost(price)
            return
        self.answers_with_usage += 1
        self.prompt_tokens += usage.prompt
        self.completion_tokens += usage.completion
        self.cached_tokens += usage.cached
        self.cost += price.cost(usage.prompt, usage.completion, usage.cached)
        if usage.reported_cost is not None:
            self.answers_with_cost += 1
            self.reported_cost += usage.reported_cost

    def result(
        self, status: str, reason: str = "", parsed: Any = None, failure: str = ""
    ) -> CallResult:
        # Token counts are stored only when every answered attempt reported them (no
        # answer at all is zero tokens, so counts still add up over later sends); the
        # provider's cost likewise only when every answered attempt carried one.
        counted = self.answers_with_usage == self.answers
        reported = self.answers_with_cost == self.answers and self.answers > 0
        return CallResult(
            status=status,
            answer=self.answer,
            parsed=scrub_value(parsed),
            value=numeric_value(parsed),
            reason=scrub(reason),
            failure=failure,
            prompt_tokens=self.prompt_tokens if counted else None,
            completion_tokens=self.completion_tokens if counted else None,
            cached_tokens=self.cached_tokens if counted else None,
            cost=self.cost,
            reported_cost=self.reported_cost if reported else None,
            latency_s=time.monotonic() - self.start,
            attempts=self.attempts,
            reasks=self.reasks,
            billed=self.answers,
            finish_reason=self.finish,
            seed=self.seed,
            samples_per_request=self.samples,
        )
