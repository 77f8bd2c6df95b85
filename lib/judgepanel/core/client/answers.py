"""One call's tally over its attempts, the seeds of its re-asks, and short error texts.

What an answer holds (its choices and usage) is read by the endpoint's provider (see
:mod:`judgepanel.core.providers`); a tally adds up what those answers cost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from judgepanel.core.budget import CallBound
from judgepanel.core.client.secrets import scrub, scrub_value
from judgepanel.core.config import Price
from judgepanel.core.parsing import numeric_value
from judgepanel.core.providers import Choice, Provider, Usage
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

    def answered(
        self,
        choice: Choice,
        usage: Usage | None,
        price: Price,
        bound: CallBound,
        provider: Provider,
    ) -> None:
        """Count one answered (so billable) attempt, its usage costed by ``provider``; its
        texts are scrubbed at once."""
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
        self.cost += provider.cost(usage, price)
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
