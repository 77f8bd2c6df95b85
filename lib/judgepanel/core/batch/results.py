"""Reading batch results: output and error lines back into call outcomes.

A result line is ``{id, custom_id, response: {status_code, request_id, body}, error}`` (the
shape of OpenAI's output and error files and of ``vllm run-batch``'s output). Its body is a
chat completion, read by the same code as an online answer, and its failure is classed as
the online path classes it:

* an answer that parses is ``ok``;
* an answer that does not parse is asked again in a later batch (with the re-ask seed the
  online path would use) while re-asks are left, else it fails ``final``;
* a 429, 408, 409 or 5xx line fails ``retryable`` (a later batch sends it again), any other
  status ``final``;
* a line the provider never ran (the batch expired or was cancelled: ``error`` with no
  ``response``) is not an outcome at all: the call is planned again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from judgepanel.core.budget import CallBound
from judgepanel.core.calls import AnswerError, CallSpec
from judgepanel.core.client.answers import Choice, Tally, read_choices, read_usage, short
from judgepanel.core.client.secrets import scrub
from judgepanel.core.config import Price
from judgepanel.core.errors import JudgepanelError
from judgepanel.core.retry import RETRYABLE_STATUS
from judgepanel.core.store import CallResult

ASKED_AGAIN = " (asked again in a later batch)"
"""Ends the reason of an unreadable batch answer whose call is asked again."""


class ResultFileError(JudgepanelError, ValueError):
    """A result file holds a line that cannot be read or matched; the message names it."""


@dataclass(frozen=True)
class ResultLine:
    """One result line: where it came from, its ``custom_id`` and the object itself."""

    source: str
    number: int
    custom_id: str
    obj: dict[str, Any]

    @property
    def where(self) -> str:
        return f"{self.source}:{self.number}"

    def model(self) -> str | None:
        """The model the answer names, if it has one."""
        response = self.obj.get("response")
        body = response.get("body") if isinstance(response, dict) else None
        model = body.get("model") if isinstance(body, dict) else None
        return model if isinstance(model, str) else None


def read_result_lines(data: bytes, source: str) -> Iterator[ResultLine]:
    """The lines of an output or error file; a line that is not a result object is an
    error naming the file and the line."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ResultFileError(f"{source}:{number}: not a JSON line ({exc})") from None
        cid = obj.get("custom_id") if isinstance(obj, dict) else None
        if not isinstance(cid, str) or not cid:
            raise ResultFileError(f"{source}:{number}: a result line needs a custom_id")
        yield ResultLine(source, number, cid, obj)


def _status_retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status == 429 or status >= 500


def _error_message(body: Any) -> str:
    inner = body.get("error", body) if isinstance(body, dict) else body
    message = inner.get("message") if isinstance(inner, dict) else inner
    return short(scrub(str(message or "no message")))


def outcome(
    spec: CallSpec,
    line: ResultLine,
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
    response = line.obj.get("response")
    status = response.get("status_code") if isinstance(response, dict) else None
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    body = response.get("body")
    if status != 200:
        # OpenAI puts the error in the body; vllm run-batch leaves the body out and gives
        # the message as the line's ``error``
        message = _error_message(body if body is not None else line.obj.get("error"))
        if _status_retryable(status):
            reason = f"http {status} in a batch: {message} after 1 attempts"
            return CallResult("failed", reason=reason, failure="retryable", seed=seed)
        return CallResult("failed", reason=f"http {status}: {message}", failure="final", seed=seed)
    tally = Tally(start=time.monotonic() - latency_s, seed=seed, attempts=1)
    choices = read_choices(body)
    choice = choices[0] if choices else Choice(None, None)
    tally.answered(choice, read_usage(body), price, bound)
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
