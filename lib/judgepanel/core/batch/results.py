"""Reading batch results: output and error lines back into call outcomes.

A result line is read by the provider (for OpenAI's output and error files and ``vllm
run-batch``'s output, ``{id, custom_id, response: {status_code, request_id, body}, error}``).
Its body is an answer, read by the same code as an online answer, and its failure is
classed as the online path classes it:

* an answer that parses is ``ok``;
* an answer that does not parse is asked again in a later batch (with the re-ask seed the
  online path would use) while re-asks are left, else it fails ``final``;
* a 429, 408, 409 or 5xx line fails ``retryable`` (a later batch sends it again), any other
  status ``final``;
* a line the provider never ran (the batch expired or was cancelled: ``error`` with no
  ``response``) is not an outcome at all: the call is planned again.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from judgepanel.core.budget import CallBound
from judgepanel.core.calls import AnswerError, CallSpec
from judgepanel.core.client.answers import Tally, short
from judgepanel.core.client.secrets import scrub
from judgepanel.core.config import Price
from judgepanel.core.providers import BatchResult, Choice, Provider
from judgepanel.core.retry import RETRYABLE_STATUS
from judgepanel.core.store import CallResult
from judgepanel.errors import JudgepanelError

ASKED_AGAIN = " (asked again in a later batch)"
"""Ends the reason of an unreadable batch answer whose call is asked again."""


class ResultFileError(JudgepanelError, ValueError):
    """A result file holds a line that cannot be read or matched; the message names it."""


@dataclass(frozen=True)
class ResultLine:
    """One result line: where it came from, and what the provider read in it."""

    source: str
    number: int
    result: BatchResult

    @property
    def custom_id(self) -> str:
        return self.result.custom_id

    @property
    def where(self) -> str:
        return f"{self.source}:{self.number}"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, as it was after.

    A result file is read whole before its lines are written, and a logprob answer is a
    thousand small objects: with the collector on, its passes walk every line read so far
    (and the run's plan) again and again, most of a logprob line's cost. Parsed JSON holds
    no reference cycles, so reference counting frees it all once the file is written.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_result_lines(data: bytes, source: str, provider: Provider) -> Iterator[ResultLine]:
    """The lines of an output or error file, read by ``provider``; a line that is not a
    result object is an error naming the file and the line."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ResultFileError(f"{source}:{number}: not a JSON line ({exc})") from None
        result = provider.batch_result(obj)
        if result is None:
            raise ResultFileError(f"{source}:{number}: a result line needs a custom_id")
        yield ResultLine(source, number, result)


def _status_retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status == 429 or status >= 500


def _error_message(body: Any) -> str:
    inner = body.get("error", body) if isinstance(body, dict) else body
    message = inner.get("message") if isinstance(inner, dict) else inner
    return short(scrub(str(message or "no message")))


def outcome(
    spec: CallSpec,
    line: ResultLine,
    provider: Provider,
    *,
    seed: int | None,
    price: Price,
    bound: CallBound,
    reasks_before: int,
    max_reasks: int,
    latency_s: float,
) -> CallResult | None:
    """The stored outcome of one result line (``None``: the provider never ran it).

    ``reasks_before`` counts the re-asks this call already had, so that a batch call is
    asked again at most ``max_reasks`` times, as an online one.
    """
    status, body = line.result.status, line.result.body
    if status is None:
        return None
    if status != 200:
        # OpenAI puts the error in the body; vllm run-batch leaves the body out and gives
        # the message as the line's ``error``
        message = _error_message(body if body is not None else line.result.error)
        if _status_retryable(status):
            reason = f"http {status} in a batch: {message} after 1 attempts"
            return CallResult("failed", reason=reason, failure="retryable", seed=seed)
        return CallResult("failed", reason=f"http {status}: {message}", failure="final", seed=seed)
    tally = Tally(start=time.monotonic() - latency_s, seed=seed, attempts=1)
    choices = provider.choices(body)
    choice = choices[0] if choices else Choice(None, None)
    tally.answered(choice, provider.usage(body), price, bound, provider)
    try:
        if tally.answer is None:
            raise AnswerError("the response holds no message")
        parsed = spec.read(tally.answer, tally.logprobs)
    except AnswerError as exc:
        problem = f"unparseable: {short(scrub(str(exc)))}"
        if reasks_before < max_reasks:
            tally.reasks = 1
            return tally.result("failed", problem + ASKED_AGAIN, failure="retryable")
        return tally.result("failed", problem, failure="final")
    except Exception as exc:  # a parser bug is recorded, not turned into a score
        reason = f"parser error: {type(exc).__name__}: {short(scrub(str(exc)))}"
        return tally.result("failed", reason, failure="final")
    return tally.result("ok", parsed=parsed)
