"""The async client: a fixed pool of workers sending planned calls to an OpenAI endpoint.

``concurrency`` workers pull calls from one queue, so exactly that many requests are in
flight until the plan runs out; each worker builds its call's messages just before sending
(images are read lazily, with a small cache because repetitions of one image are planned
next to each other), reserves the call's cost bound, sends it with our own retry loop,
and writes the outcome to the store as soon as it is known.

The SDK's own retries are switched off (``max_retries=0``) so that every attempt is ours:
counted, shown in the progress line, and billed in the store.

Before a call is sent its reservation is written to the store, so a call in flight when
the process dies is known afterwards (see :mod:`judgepanel.core.store`). A run stops
early, with :attr:`RunSummary.aborted` saying why, when an error would meet every call
(a rejected key, an unknown model), when the endpoint cannot be reached, or when more
than ``max_failure_share`` of its calls fail.

The API key comes from ``OPENAI_API_KEY`` only. It is handed to the SDK and nowhere else;
every text we keep from a response or an error (answer, parsed answer, reason, finish
reason) passes through :func:`scrub` first, so an endpoint that echoes the key cannot put
it in the store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import json
import logging
import os
import random
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from judgepanel.core.budget import Budget, CallBound, request_bound
from judgepanel.core.calls import AnswerError, CallSpec, key_digest
from judgepanel.core.config import Price
from judgepanel.core.parsing import numeric_value
from judgepanel.core.prompts import image_data_url
from judgepanel.core.retry import MAX_FAILURE_SHARE, RetryDecision, RetryPolicy, classify
from judgepanel.core.store import CallResult, Store

if TYPE_CHECKING:  # the SDK is imported where a call is sent: analyses never load it
    import httpx2
    import openai

log = logging.getLogger(__name__)

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
_REASK_SEED_STEP = 1_000_003
_MAX_REASON = 300
FAILURE_SHARE_SAMPLE = 20
"""Calls a run completes before its failure share is judged (all of them if fewer)."""


class ClientError(RuntimeError):
    """The client cannot start (no key, no price for a model, a bad plan)."""


class RunAborted(RuntimeError):
    """A failure that every call of the run would meet (bad key, no permission)."""


@dataclass(frozen=True)
class RunSummary:
    """What one :func:`run_calls` did.

    Attributes:
        planned: distinct calls in the plan.
        skipped: calls already in the store, not sent.
        sent: calls launched (each may have made several attempts).
        ok: calls recorded with a readable answer.
        failed: calls recorded as failed, with a reason.
        retries: attempts beyond each call's first (HTTP retries and re-asks).
        reasks: the share of ``retries`` caused by unreadable answers.
        spend: USD recorded by this run.
        stopped_by_budget: the ceiling stopped the run before the plan was done.
        elapsed: wall-clock seconds.
        aborted: why the run stopped early (``""`` if it did not).
        unsent: planned calls neither skipped nor sent (budget or abort).
        retryable: failed calls a plain resume sends again.
        interrupted: calls found in flight from an earlier, interrupted run.
        interrupted_bound: the most those calls can have cost (USD, possibly billed).
    """

    planned: int
    skipped: int
    sent: int
    ok: int
    failed: int
    retries: int
    spend: float
    stopped_by_budget: bool
    elapsed: float
    reasks: int = 0
    aborted: str = ""
    unsent: int = 0
    retryable: int = 0
    interrupted: int = 0
    interrupted_bound: float = 0.0

    def as_row(self) -> dict[str, object]:
        """The summary as one table row."""
        return dataclasses.asdict(self)

    def line(self) -> str:
        """One human-readable line."""
        text = (
            f"planned {self.planned}, already stored {self.skipped}, sent {self.sent}: "
            f"ok {self.ok}, failed {self.failed}"
            + (f" ({self.retryable} retryable)" if self.retryable else "")
            + f", retries {self.retries} (re-asks {self.reasks}), spend ${self.spend:.4f}, "
            f"{self.elapsed:.1f} s"
        )
        if self.interrupted:
            text += (
                f"; {self.interrupted} calls were in flight when an earlier run was "
                f"interrupted (possibly billed, unanswered: up to ${self.interrupted_bound:.4f})"
            )
        if self.stopped_by_budget:
            text += f"; STOPPED BY BUDGET with {self.unsent} calls unsent"
        if self.aborted:
            text += f"; STOPPED EARLY ({self.aborted}) with {self.unsent} calls unsent"
        return text


# -- secrets --------------------------------------------------------------------------------

_TOKEN_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-*]{6,}"),
    re.compile(r"(?i)(bearer\s+)[^\s'\"]+"),
)


def scrub(text: str, secret: str | None = None) -> str:
    """``text`` with the API key (and anything shaped like a key or bearer token) removed."""
    secret = secret if secret is not None else os.environ.get(API_KEY_ENV)
    if secret and len(secret) >= 4:
        text = text.replace(secret, "[redacted]")
    text = _TOKEN_PATTERNS[0].sub("[redacted]", text)
    return _TOKEN_PATTERNS[1].sub(r"\1[redacted]", text)


def scrub_value(value: Any, secret: str | None = None) -> Any:
    """``value`` (a parsed answer: JSON-like lists, dicts and scalars) with every string
    passed through :func:`scrub`."""
    if isinstance(value, str):
        return scrub(value, secret)
    if isinstance(value, dict):
        return {scrub(str(k), secret): scrub_value(v, secret) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_value(v, secret) for v in value)
    return value


def api_key_from_env() -> str:
    """The API key from ``OPENAI_API_KEY``; a clear error (without any value) if unset."""
    key = os.environ.get(API_KEY_ENV, "").strip()
    if not key:
        raise ClientError(
            f"{API_KEY_ENV} is not set. Export the endpoint's key in the environment "
            "(any non-empty value for the simulated server); it is never read from a file "
            "or a flag."
        )
    return key


# -- transport ------------------------------------------------------------------------------


def http_transport(timeout: float) -> httpx2.AsyncClient | None:
    """The SDK's aiohttp transport (``openai[aiohttp]``), or ``None`` for its default.

    The SDK's default transport spends about as much CPU per request as the rest of the
    client together; its documented aiohttp transport needs about half as much
    (``bench/bench_client.py`` measures both), which keeps a fast endpoint busy and leaves
    cores to a simulator or a local server on the same machine. Without aiohttp the SDK's
    default is used, so a plain ``pip install openai`` setup still works.
    """
    import openai

    try:
        return openai.DefaultAioHttpClient(timeout=timeout)
    except RuntimeError:  # the aiohttp extra is not installed
        return None


# -- images ---------------------------------------------------------------------------------


@lru_cache(maxsize=32)
def cached_data_url(path: str) -> str:
    """:func:`judgepanel.core.prompts.image_data_url`, remembering the most recent images.

    Plans put the repetitions of one image next to each other, so a small cache turns
    k + 5R file reads and base64 encodings per image and family into one.
    """
    return image_data_url(Path(path))


# -- request bodies -------------------------------------------------------------------------

_IMAGE_SLOT = re.compile(r'"judgepanel-image-(\d+)"')
_PLAIN_DATA_URL = re.compile(r"data:[A-Za-z0-9.+/-]+;base64,[A-Za-z0-9+/=]*")


@lru_cache(maxsize=64)
def _plain(url: str) -> bool:
    """Whether ``url`` is a base64 data URL, whose JSON form is itself between quotes.

    Remembered per image: a Python string caches its hash, so asking again for the same
    (cached) data URL costs nothing like the scan.
    """
    return _PLAIN_DATA_URL.fullmatch(url) is not None


def encode_body(body: dict[str, Any]) -> bytes:
    """``body`` as compact JSON bytes, equal to ``json.dumps(body, separators=(",", ":"))``.

    An image is most of a request, and a data URL needs no escaping; so each image is put
    in the text as it is instead of being scanned by the JSON encoder on every call (the
    repetitions of one image share one string, see :func:`cached_data_url`).
    """
    images: list[str] = []

    def slot(part: Any) -> Any:
        image = part.get("image_url") if isinstance(part, dict) else None
        url = image.get("url") if isinstance(image, dict) else None
        if not isinstance(url, str) or not _plain(url):
            return part
        images.append(url)
        return {**part, "image_url": {**image, "url": f"judgepanel-image-{len(images) - 1}"}}

    messages = [
        {**m, "content": [slot(p) for p in m["content"]]}
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        else m
        for m in body.get("messages", ())
    ]
    text = json.dumps({**body, "messages": messages}, separators=(",", ":"))
    if images:
        if len(_IMAGE_SLOT.findall(text)) != len(images):  # a text that reads like a slot
            return json.dumps(body, separators=(",", ":")).encode()
        text = _IMAGE_SLOT.sub(lambda m: f'"{images[int(m[1])]}"', text)
    return text.encode()


# -- one call -------------------------------------------------------------------------------


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 3] + "..."


def _error_detail(exc: BaseException) -> str:
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
    return _short(scrub(message))


def reask_seed(seed: int | None, reask: int) -> int | None:
    """The seed of re-ask number ``reask``: the same request with the same seed would
    return the same unreadable answer from a deterministic endpoint."""
    if seed is None or reask == 0:
        return seed
    return (seed + _REASK_SEED_STEP * reask) & 0x7FFFFFFF


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def completion_parts(resp: Any) -> tuple[str | None, str | None, tuple[int, int] | None]:
    """The answer text, finish reason and ``(prompt, completion)`` tokens of a response.

    ``resp`` is the decoded JSON body of a chat completion. A server may send any JSON:
    whatever is missing or of the wrong type comes back as ``None`` instead of raising. A
    body without a readable message is then an unreadable answer (re-asked), and usage
    without both token counts is no usage (the call is charged its bound).
    """
    choices = resp.get("choices") if isinstance(resp, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    choice = choice if isinstance(choice, dict) else {}
    message = choice.get("message")
    answer = message.get("content") if isinstance(message, dict) else None
    finish = choice.get("finish_reason")
    usage = resp.get("usage") if isinstance(resp, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    tokens = (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    return (
        answer if isinstance(answer, str) else None,
        finish if isinstance(finish, str) else None,
        tokens if all(_is_count(t) for t in tokens) else None,
    )


@dataclass
class _Tally:
    """What one call accumulated over its attempts: the fields of its :class:`CallResult`."""

    start: float
    seed: int | None
    attempts: int = 0
    reasks: int = 0
    answers: int = 0
    answers_with_usage: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    answer: str | None = None
    finish: str | None = None

    def answered(self, resp: Any, price: Price, bound: CallBound) -> None:
        """Count one answered (so billable) attempt; its texts are scrubbed at once."""
        answer, finish, tokens = completion_parts(resp)
        self.answer = None if answer is None else scrub(answer)
        self.finish = None if finish is None else scrub(finish)
        self.answers += 1
        if tokens is None:
            # No usage reported: charge the bound, so the ceiling still holds.
            self.cost += bound.answer_cost(price)
            return
        self.answers_with_usage += 1
        self.prompt_tokens += tokens[0]
        self.completion_tokens += tokens[1]
        self.cost += price.cost(*tokens)

    def result(
        self, status: str, reason: str = "", parsed: Any = None, failure: str = ""
    ) -> CallResult:
        # Token counts are stored only when every answered attempt reported them (no
        # answer at all is zero tokens, so counts still add up over later sends).
        counted = self.answers_with_usage == self.answers
        return CallResult(
            status=status,
            answer=self.answer,
            parsed=scrub_value(parsed),
            value=numeric_value(parsed),
            reason=scrub(reason),
            failure=failure,
            prompt_tokens=self.prompt_tokens if counted else None,
            completion_tokens=self.completion_tokens if counted else None,
            cost=self.cost,
            latency_s=time.monotonic() - self.start,
            attempts=self.attempts,
            reasks=self.reasks,
            billed=self.answers,
            finish_reason=self.finish,
            seed=self.seed,
        )


@dataclass
class _Counters:
    sent: int = 0
    ok: int = 0
    failed: int = 0
    retryable: int = 0
    retries: int = 0
    reasks: int = 0
    spend: float = 0.0
    note: str = ""


class _Runner:
    """State of one run: the SDK client, the budget, counters and the progress line."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        store: Store,
        prices: Mapping[str, Price],
        budget: Budget,
        policy: RetryPolicy,
        *,
        timeout: float,
        max_reasks: int,
        bar: Any,
        seed: int = 0,
        total: int = 0,
        max_failure_share: float = MAX_FAILURE_SHARE,
        endpoint: str = "",
    ) -> None:
        self.client = client
        self.store = store
        self.prices = prices
        self.budget = budget
        self.policy = policy
        self.timeout = timeout
        self.max_reasks = max_reasks
        self.bar = bar
        self.rng = random.Random(seed)
        self.total = total
        self.max_failure_share = max_failure_share
        self.endpoint = endpoint
        self.c = _Counters()
        self.stop = False
        self.stopped_by_budget = False
        self.aborted = ""
        self.cond = asyncio.Condition()
        self._last_refresh = 0.0

    # progress ----------------------------------------------------------------------------

    def _postfix(self) -> str:
        c = self.c
        text = f"ok {c.ok} failed {c.failed} retries {c.retries} ${c.spend:.4f}"
        return f"{text} | {c.note}" if c.note else text

    def show_retry(self, note: str) -> None:
        self.c.note = note
        now = time.monotonic()
        if self.bar is not None and now - self._last_refresh > self.bar.mininterval:
            self._last_refresh = now
            self.bar.set_postfix_str(self._postfix(), refresh=True)
        log.info("retry: %s", note)

    def show_done(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(self._postfix(), refresh=False)
            self.bar.update(1)

    # sending -----------------------------------------------------------------------------

    async def _attempt(self, spec: CallSpec, messages: list, seed: int | None) -> Any:
        """One HTTP attempt; the decoded JSON body of the answer.

        The request goes through the SDK's ``post`` with the body already encoded, and the
        answer comes back as the raw HTTP response: the typed ``create`` would walk every
        message part through its TypedDict transformer and build a ``ChatCompletion``
        model, which for our plain JSON costs more CPU than the rest of a call together
        (``bench/bench_client.py`` measures the difference). Errors, status handling and
        timeouts are the SDK's own either way. A success status with a body that is not
        JSON raises ``ValueError``.
        """
        key = spec.key
        body: dict[str, Any] = {
            "model": key.model,
            "messages": messages,
            "temperature": key.temperature,
            "max_tokens": spec.max_tokens,
        }
        if seed is not None:
            body["seed"] = seed
        content = encode_body(body)
        import httpx2

        # The SDK timeout bounds each network phase; the outer one bounds the whole
        # attempt, so a server that trickles bytes cannot hold a worker forever.
        async with asyncio.timeout(self.timeout + 1.0):
            response = await self.client.post(
                "/chat/completions",
                cast_to=httpx2.Response,
                content=content,
                options={"timeout": self.timeout},
            )
            raw = await response.aread()
        return json.loads(raw)

    async def call(self, spec: CallSpec, messages: list, bound: CallBound) -> CallResult:
        """Send one call until it has a readable answer or runs out of attempts.

        Attempts (HTTP retries and re-asks together) never exceed ``policy.max_attempts``,
        and answered attempts never exceed ``1 + max_reasks``: the number the budget's
        bound reserved for.
        """
        import openai

        price = self.prices[spec.key.model]
        tally = _Tally(start=time.monotonic(), seed=spec.seed)
        while True:
            tally.attempts += 1
            unreadable = ""
            try:
                resp = await self._attempt(spec, messages, tally.seed)
            except (openai.OpenAIError, TimeoutError) as exc:
                decision = classify(exc)
                if decision.fatal:
                    raise RunAborted(f"{decision.reason}: {_error_detail(exc)}") from None
                if not decision.retry:
                    reason = f"{decision.reason}: {_error_detail(exc)}"
                    return tally.result("failed", reason, failure="final")
                if tally.attempts >= self.policy.max_attempts:
                    reason = f"{decision.reason} after {tally.attempts} attempts"
                    return tally.result("failed", reason, failure="retryable")
                await self._wait(decision, tally.attempts, spec)
                continue
            except ValueError as exc:
                # A success status with a body that is not JSON: the answer may have been
                # billed yet cannot be read, so it is an unreadable answer like any other.
                resp = None
                unreadable = f"response body is not JSON ({type(exc).__name__})"

            tally.answered(resp, price, bound)
            try:
                if unreadable:
                    raise AnswerError(unreadable)
                parsed = spec.parse(tally.answer if tally.answer is not None else "")
            except AnswerError as exc:
                problem = f"unparseable: {_short(scrub(str(exc)))}"
                if tally.reasks < self.max_reasks and tally.attempts < self.policy.max_attempts:
                    tally.reasks += 1
                    self.c.retries += 1
                    self.c.reasks += 1
                    tally.seed = reask_seed(spec.seed, tally.reasks)
                    self.show_retry(f"re-ask {spec.key.item}: {problem[:60]}")
                    continue
                return tally.result("failed", problem, failure="final")
            except Exception as exc:  # a parser bug is recorded, not turned into a score
                reason = f"parser error: {type(exc).__name__}: {_short(scrub(str(exc)))}"
                return tally.result("failed", reason, failure="final")
            return tally.result("ok", parsed=parsed)

    async def _wait(self, decision: RetryDecision, attempts: int, spec: CallSpec) -> None:
        delay = self.policy.delay(attempts, decision, self.rng)
        self.c.retries += 1
        self.show_retry(f"{decision.reason} on {spec.key.item}, retry in {delay:.1f}s")
        await asyncio.sleep(delay)

    # the pool ----------------------------------------------------------------------------

    async def _reserve(self, amount: float) -> bool:
        """Wait until ``amount`` fits under the ceiling; False once it never will.

        While other calls are in flight, their reservations may shrink to their (usually
        much smaller) actual cost, so a worker waits for them before giving up.
        """
        async with self.cond:
            while True:
                if self.stop:
                    return False
                if self.budget.try_reserve(amount):
                    return True
                if self.budget.in_flight == 0:
                    self.stop = True
                    self.stopped_by_budget = True
                    self.cond.notify_all()
                    return False
                await self.cond.wait()

    async def _settle(self, amount: float, actual: float) -> None:
        async with self.cond:
            self.budget.settle(amount, actual)
            self.cond.notify_all()

    async def worker(self, queue: asyncio.Queue[CallSpec]) -> None:
        """Take calls from ``queue`` until it is empty or the run stops."""
        try:
            await self._work(queue)
        except BaseException:
            # A store that cannot be written (or any other error) stops every worker from
            # launching calls whose answers could not be recorded; calls in flight finish.
            self.stop = True
            raise

    async def _work(self, queue: asyncio.Queue[CallSpec]) -> None:
        while not self.stop:
            try:
                spec = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                messages = spec.build()
            except Exception as exc:
                # Nothing was sent; the call is recorded as failed so that it shows in
                # `judgepanel status` and can be sent again with --retry-failed.
                result = CallResult(
                    status="failed",
                    reason=scrub(f"request not built: {type(exc).__name__}: {_short(exc)}"),
                    failure="final",
                    attempts=0,
                    seed=spec.seed,
                )
                await self._record(spec, result)
                continue
            bound = request_bound(messages, spec.max_tokens, self.max_reasks)
            amount = bound.cost(self.prices[spec.key.model])
            if not await self._reserve(amount):
                return
            self.c.sent += 1
            try:
                # Durable before the request leaves: a kill from here on is seen on resume.
                self.store.reserve(spec.key, amount, spec.seed)
                result = await self.call(spec, messages, bound)
            except RunAborted as exc:
                # The abort came as an HTTP error (nothing billed): drop the reservation.
                self.store.release(spec.key)
                await self._settle(amount, 0.0)
                await self._halt(scrub(str(exc)))
                self.c.sent -= 1
                return
            except BaseException:
                self.stop = True
                await self._settle(amount, 0.0)
                raise
            await self._settle(amount, result.cost)
            await self._record(spec, result)

    async def _halt(self, why: str) -> None:
        """Stop launching calls (those in flight finish), keeping the first reason given."""
        async with self.cond:
            if not self.aborted:
                self.aborted = why
            self.stop = True
            self.cond.notify_all()

    async def _record(self, spec: CallSpec, result: CallResult) -> None:
        self.store.record(spec.key, result)
        if result.status == "ok":
            self.c.ok += 1
        else:
            self.c.failed += 1
            self.c.retryable += result.failure == "retryable"
            log.info("failed %s: %s", spec.key.item, result.reason)
        self.c.spend += result.cost
        self.show_done()
        why = self._stop_reason(spec, result)
        if why:
            await self._halt(why)

    def _stop_reason(self, spec: CallSpec, result: CallResult) -> str:
        """Why the run must stop after this outcome (``""``: it goes on).

        A call that used up its attempts on connection errors saw the endpoint down for
        the whole back-off (seconds, not a blip): every other call would meet the same.
        Otherwise the failure share is judged once enough calls completed.
        """
        if result.reason.startswith("connection error after"):
            where = self.endpoint or "the endpoint"
            return scrub(f"{where} is unreachable: {spec.key.item}: {result.reason}")
        done = self.c.ok + self.c.failed
        if done < min(FAILURE_SHARE_SAMPLE, self.total) or not self.c.failed:
            return ""
        if self.c.failed > self.max_failure_share * done:
            return (
                f"{self.c.failed} of {done} calls failed, more than the "
                f"{self.max_failure_share:.0%} allowed (--max-failure-share); "
                f"last: {result.reason}"
            )
        return ""


def _unique_plan(specs: Sequence[CallSpec]) -> list[CallSpec]:
    """The plan with each key once; two different calls with one key are a planner bug."""
    seen: set[tuple] = set()
    out = []
    for spec in specs:
        t = spec.key.as_tuple()
        if t in seen:
            raise ClientError(f"the plan holds the key {spec.key} twice")
        seen.add(t)
        out.append(spec)
    return out


def pending_calls(
    specs: Sequence[CallSpec], store: Store, *, retry_failed: bool = False
) -> tuple[list[CallSpec], int]:
    """The calls of a plan not yet in the store, and how many were already there."""
    datasets = {s.key.dataset for s in specs}
    done: set[int] = set()
    for ds in datasets:
        done |= store.completed_digests(ds, include_failed=not retry_failed)
    todo = [s for s in specs if key_digest(s.key) not in done]
    return todo, len(specs) - len(todo)


async def run_calls_async(
    specs: Sequence[CallSpec],
    store: Store,
    *,
    base_url: str | None = None,
    concurrency: int = 16,
    max_cost: float | None = None,
    max_total_cost: float | None = None,
    max_failure_share: float = MAX_FAILURE_SHARE,
    prices: Mapping[str, Price],
    timeout: float = 60.0,
    max_attempts: int = 6,
    max_reasks: int = 2,
    progress: bool = True,
    retry_failed: bool = False,
    policy: RetryPolicy | None = None,
    desc: str = "scoring",
) -> RunSummary:
    """Send every planned call not yet in ``store``; see :func:`run_calls`."""
    started = time.monotonic()
    plan = _unique_plan(specs)
    # The plan is filtered under its datasets' writer lock, so a second process cannot slip
    # in between reading the checkpoints and sending; other datasets may be sent meanwhile.
    datasets = {s.key.dataset for s in plan}
    with store.sending(datasets):
        interrupted = store.recover_interrupted(datasets)
        if interrupted.calls:
            log.warning(
                "%d calls were in flight when an earlier run was interrupted; they may have "
                "been billed, up to $%.4f, and are sent again if unanswered",
                interrupted.calls,
                interrupted.bound,
            )
        todo, skipped = pending_calls(plan, store, retry_failed=retry_failed)
        missing = sorted({s.key.model for s in todo} - set(prices))
        if missing:
            raise ClientError(
                f"no price for model(s) {', '.join(missing)}; add them under `prices:` in "
                "papermill_runs.yaml so that spend can be recorded and the budget enforced"
            )
        if not todo:
            elapsed = time.monotonic() - started
            return RunSummary(
                len(plan),
                skipped,
                0,
                0,
                0,
                0,
                0.0,
                False,
                elapsed,
                interrupted=interrupted.calls,
                interrupted_bound=interrupted.bound,
            )
        key = api_key_from_env()
        summary = await _send_all(
            todo,
            store,
            key,
            plan_size=len(plan),
            skipped=skipped,
            started=started,
            base_url=base_url,
            concurrency=concurrency,
            max_cost=max_cost,
            max_total_cost=max_total_cost,
            max_failure_share=max_failure_share,
            prices=prices,
            timeout=timeout,
            max_attempts=max_attempts,
            max_reasks=max_reasks,
            progress=progress,
            policy=policy,
            desc=desc,
        )
        return dataclasses.replace(
            summary, interrupted=interrupted.calls, interrupted_bound=interrupted.bound
        )


async def _send_all(
    todo: list[CallSpec],
    store: Store,
    key: str,
    *,
    plan_size: int,
    skipped: int,
    started: float,
    base_url: str | None,
    concurrency: int,
    max_cost: float | None,
    max_total_cost: float | None,
    max_failure_share: float,
    prices: Mapping[str, Price],
    timeout: float,
    max_attempts: int,
    max_reasks: int,
    progress: bool,
    policy: RetryPolicy | None,
    desc: str,
) -> RunSummary:
    base_url = base_url or os.environ.get(BASE_URL_ENV) or None
    policy = policy or RetryPolicy(max_attempts=max_attempts)
    if policy.max_attempts < 1:
        raise ClientError("max_attempts must be at least 1")
    import openai

    client = openai.AsyncOpenAI(
        api_key=key,
        base_url=base_url,
        max_retries=0,
        timeout=timeout,
        http_client=http_transport(timeout),
    )
    bar = (
        tqdm(
            total=len(todo),
            desc=desc,
            unit="call",
            file=sys.stderr,
            dynamic_ncols=True,
            # A terminal redraws one line; a log file gets a new line per refresh.
            mininterval=0.2 if sys.stderr.isatty() else 15.0,
        )
        if progress
        else None
    )
    prior = store.total_committed() if max_total_cost is not None else 0.0
    runner = _Runner(
        client,
        store,
        prices,
        Budget(max_cost, max_total_cost, prior),
        policy,
        timeout=timeout,
        max_reasks=max_reasks,
        bar=bar,
        total=len(todo),
        max_failure_share=max_failure_share,
        endpoint=base_url or "the endpoint",
    )
    queue: asyncio.Queue[CallSpec] = asyncio.Queue()
    for spec in todo:
        queue.put_nowait(spec)
    try:
        workers = [
            asyncio.create_task(runner.worker(queue))
            for _ in range(max(1, min(concurrency, len(todo))))
        ]
        results = await asyncio.gather(*workers, return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]
    finally:
        await client.close()
        if bar is not None:
            bar.set_postfix_str(runner._postfix(), refresh=False)
            bar.close()
    c = runner.c
    if runner.budget.bound_exceeded:
        log.warning(
            "%d calls cost more than their reserved bound; the budget bound needs revising",
            runner.budget.bound_exceeded,
        )
    return RunSummary(
        planned=plan_size,
        skipped=skipped,
        sent=c.sent,
        ok=c.ok,
        failed=c.failed,
        retries=c.retries,
        spend=c.spend,
        stopped_by_budget=runner.stopped_by_budget,
        elapsed=time.monotonic() - started,
        reasks=c.reasks,
        aborted=runner.aborted,
        unsent=len(todo) - c.ok - c.failed,
        retryable=c.retryable,
    )


def run_calls(
    specs: Sequence[CallSpec],
    store: Store,
    *,
    base_url: str | None = None,
    concurrency: int = 16,
    max_cost: float | None = None,
    max_total_cost: float | None = None,
    max_failure_share: float = MAX_FAILURE_SHARE,
    prices: Mapping[str, Price],
    timeout: float = 60.0,
    max_attempts: int = 6,
    max_reasks: int = 2,
    progress: bool = True,
    retry_failed: bool = False,
    policy: RetryPolicy | None = None,
    desc: str = "scoring",
) -> RunSummary:
    """Send every planned call not yet in ``store`` and checkpoint each as it completes.

    Args:
        specs: the plan; keys must be unique.
        store: the checkpoint store; calls already in it are skipped.
        base_url: the endpoint (default ``$OPENAI_BASE_URL``, else the SDK's default).
        concurrency: requests in flight.
        max_cost: hard ceiling in USD for this run (``None``: no ceiling).
        max_total_cost: hard ceiling in USD over the whole store: what it recorded before,
            reservations of unanswered calls included, plus this run.
        max_failure_share: stop once more than this share of the run's calls failed.
        prices: model id -> :class:`~judgepanel.core.config.Price`, for every model planned.
        timeout: seconds per attempt.
        max_attempts: HTTP attempts per call, re-asks included.
        max_reasks: new attempts after an unreadable answer.
        progress: show a progress line on stderr.
        retry_failed: also send calls whose failure is final again (retryable failures
            are always sent again); what their earlier sends cost stays counted.
        policy: back-off settings (default: ``RetryPolicy(max_attempts)``).
        desc: label of the progress line.

    Returns:
        A :class:`RunSummary`. Calls left unsent by the budget or an early stop are not
        recorded; ``aborted`` says why a run stopped early.

    Raises:
        ClientError: no API key, no price for a planned model, or duplicate keys.
    """
    coro = run_calls_async(
        specs,
        store,
        base_url=base_url,
        concurrency=concurrency,
        max_cost=max_cost,
        max_total_cost=max_total_cost,
        max_failure_share=max_failure_share,
        prices=prices,
        timeout=timeout,
        max_attempts=max_attempts,
        max_reasks=max_reasks,
        progress=progress,
        retry_failed=retry_failed,
        policy=policy,
        desc=desc,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_in_new_loop(coro)
    # Called from a running event loop (a Jupyter kernel): run on a helper thread with its
    # own loop, and block until it is done, as the synchronous signature promises.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(_run_in_new_loop, coro).result()


def _run_in_new_loop(coro: Any) -> RunSummary:
    """Run ``coro`` on a fresh event loop, uvloop's when installed.

    The client's own work per call (building the request, the SDK, parsing, the store
    write) is a few milliseconds of CPU; uvloop's cheaper socket and scheduling paths cut
    a fifth of it, which is what keeps a fast endpoint saturated.
    """
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coro)
