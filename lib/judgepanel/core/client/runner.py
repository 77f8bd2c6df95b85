"""The runner: workers that take repetition groups from one queue and send them, paced.

``concurrency`` workers pull from one queue, so at most that many requests are in flight
(each model's :class:`~judgepanel.core.client.pacing.Lane` may hold fewer). A queue item
is a group: one call, or, with ``samples_per_request`` above 1, up to that many
repetitions of one prompt, sent as one request with ``n`` and the first repetition's
seed. Each choice is recorded as its own row under its own key. A model that returns
fewer choices than asked gets the rest asked one at a time, and its later groups are
split before they are sent.

Each call's cost bound is reserved before its request leaves, first in the budget and
then durably in the store (a call in flight when the process dies is known afterwards),
and its outcome is written as soon as it is known.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judgepanel.core.budget import Budget, CallBound, RequestShape
from judgepanel.core.calls import AnswerError, CallSpec
from judgepanel.core.client.answers import Tally, error_detail, reask_seed, short
from judgepanel.core.client.counts import CallCounts
from judgepanel.core.client.outcome import RunAborted
from judgepanel.core.client.pacing import Lane, Pacer, RateHeaders
from judgepanel.core.client.secrets import scrub
from judgepanel.core.client.transport import Reply, post_chat
from judgepanel.core.config import Price
from judgepanel.core.providers import Choice, Provider
from judgepanel.core.retry import RetryDecision, RetryPolicy, classify, retry_after_seconds
from judgepanel.core.store import CallResult, Store

if TYPE_CHECKING:
    import openai

    from judgepanel.core.sendconfig import ClientOptions

log = logging.getLogger("judgepanel.core.client")

FAILURE_SHARE_SAMPLE = 20
"""Calls a run completes before its failure share is judged (all of them if fewer)."""

Group = tuple[CallSpec, ...]
_NO_CHOICE = Choice(None, None)


def group_key(spec: CallSpec) -> tuple:
    """What repetitions sharing one request must agree on: all but the repetition."""
    k = spec.key
    return (
        k.dataset,
        k.item,
        k.family,
        k.model,
        k.call_type,
        k.dimension,
        k.temperature,
        k.rubric_sha,
        k.prompt_hash,
        spec.max_tokens,
    )


def repetition_groups(specs: Sequence[CallSpec], size: int) -> list[Group]:
    """Consecutive calls that differ only in their repetition, ``size`` at most a group."""
    groups: list[Group] = []
    current: list[CallSpec] = []
    current_key: tuple | None = None
    for spec in specs:
        key = group_key(spec) if size > 1 else None
        if current and (key != current_key or len(current) >= size):
            groups.append(tuple(current))
            current = []
        current.append(spec)
        current_key = key
    if current:
        groups.append(tuple(current))
    return groups


@dataclass(frozen=True)
class Failed:
    """How a call ended without an answer: the stored reason and failure kind."""

    reason: str
    failure: str


class Runner:
    """State of one run: the SDK client, budget, pacing, counters and the progress line."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        store: Store,
        prices: Mapping[str, Price],
        budget: Budget,
        options: ClientOptions,
        *,
        bar: Any,
        total: int,
        endpoint: str,
        provider: Provider,
        seed: int = 0,
    ) -> None:
        self.client = client
        self.provider = provider
        self.store = store
        self.prices = prices
        self.budget = budget
        self.options = options
        self.policy: RetryPolicy = options.retry_policy()
        self.timeout = options.timeout
        self.max_reasks = options.max_reasks
        self.pacer = Pacer(options)
        self.bar = bar
        self.rng = random.Random(seed)
        self.total = total
        self.endpoint = endpoint
        self.c = CallCounts()
        self.stop = False
        self.stopped_by_budget = False
        self.aborted = ""
        self.ignores_n: set[str] = set()
        self.notes: list[str] = []
        self.cond = asyncio.Condition()
        self._last_refresh = 0.0
        self._shapes: dict[tuple, RequestShape] = {}

    # progress ----------------------------------------------------------------------------

    def postfix(self) -> str:
        c = self.c
        text = f"ok {c.ok} failed {c.failed} retries {c.retries} ${c.spend:.4f}"
        return f"{text} | {c.note}" if c.note else text

    def show_retry(self, note: str) -> None:
        self.c.note = note
        now = time.monotonic()
        if self.bar is not None and now - self._last_refresh > self.bar.mininterval:
            self._last_refresh = now
            self.bar.set_postfix_str(self.postfix(), refresh=True)
        log.info("retry: %s", note)

    def show_done(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(self.postfix(), refresh=False)
            self.bar.update(1)

    # one request -------------------------------------------------------------------------

    async def attempt(
        self, spec: CallSpec, messages: list, seed: int | None, n: int, shape: RequestShape
    ) -> Reply:
        """One paced HTTP attempt of ``spec``'s request with ``n`` choices."""
        lane = self.pacer.lane(spec.key.model)
        estimate = shape.input_expected()
        await lane.acquire(lane.estimate(estimate, spec.max_tokens, n))
        try:
            self.c.requests += 1
            body = self.provider.request_body(spec, messages, seed, n)
            reply = await post_chat(self.client, body, self.timeout, self.provider.chat_path)
        except Exception as exc:
            self._refusal(lane, exc)
            raise
        finally:
            await lane.release()
        usage = self.provider.usage(reply.body)
        lane.answered(RateHeaders.of(reply.headers), estimate, usage and usage.prompt)
        return reply

    def _refusal(self, lane: Lane, exc: BaseException) -> None:
        """A 429 pauses the model's lane (see :mod:`judgepanel.core.client.pacing`)."""
        import openai

        if isinstance(exc, openai.APIStatusError) and exc.status_code == 429:
            self.c.refused += 1
            headers = exc.response.headers if exc.response is not None else None
            lane.refused(RateHeaders.of(headers), retry_after_seconds(headers))

    async def call(
        self,
        spec: CallSpec,
        messages: list,
        bound: CallBound,
        shape: RequestShape,
        tally: Tally | None = None,
    ) -> CallResult:
        """Send one call until it has a readable answer or runs out of attempts.

        Attempts (HTTP retries and re-asks together) never exceed ``policy.max_attempts``,
        and answered attempts never exceed ``1 + max_reasks``: the number the budget's
        bound reserved for. ``tally`` carries what a shared request already did for it.
        """
        price = self.prices[spec.key.model]
        tally = tally or Tally(start=time.monotonic(), seed=spec.seed)
        while True:
            tally.attempts += 1
            got = await self._try(spec, messages, tally.seed, 1, shape, tally.attempts)
            if got is None:
                continue
            if isinstance(got, Failed):
                return tally.result("failed", got.reason, failure=got.failure)
            resp, unreadable = got
            choices = self.provider.choices(resp)
            tally.samples = 1
            choice = choices[0] if choices else _NO_CHOICE
            tally.answered(choice, self.provider.usage(resp), price, bound, self.provider)
            outcome = self._read(spec, tally, unreadable)
            if outcome is not None:
                return outcome

    async def _try(
        self,
        spec: CallSpec,
        messages: list,
        seed: int | None,
        n: int,
        shape: RequestShape,
        attempts: int,
    ) -> tuple[Any, str] | Failed | None:
        """Attempt number ``attempts``: ``(body, why unreadable)`` when answered, a
        :class:`Failed` when the call ends, ``None`` to try again (after the wait)."""
        import openai

        try:
            reply = await self.attempt(spec, messages, seed, n, shape)
        except (openai.OpenAIError, TimeoutError) as exc:
            decision = classify(exc)
            if decision.fatal:
                raise RunAborted(f"{decision.reason}: {error_detail(exc)}") from None
            if not decision.retry:
                return Failed(f"{decision.reason}: {error_detail(exc)}", "final")
            if attempts >= self.policy.max_attempts:
                return Failed(f"{decision.reason} after {attempts} attempts", "retryable")
            await self._wait(decision, attempts, spec)
            return None
        except ValueError as exc:
            # A success status with a body that is not JSON: the answer may have been
            # billed yet cannot be read, so it is an unreadable answer like any other.
            return None, f"response body is not JSON ({type(exc).__name__})"
        return reply.body, ""

    def _read(self, spec: CallSpec, tally: Tally, unreadable: str = "") -> CallResult | None:
        """The outcome of the answer just tallied, or ``None`` to ask again."""
        try:
            if unreadable:
                raise AnswerError(unreadable)
            answer = tally.answer if tally.answer is not None else ""
            parsed = spec.read(answer, tally.logprobs)
        except AnswerError as exc:
            problem = f"unparseable: {short(scrub(str(exc)))}"
            if tally.reasks < self.max_reasks and tally.attempts < self.policy.max_attempts:
                tally.reasks += 1
                self.c.retries += 1
                self.c.reasks += 1
                tally.seed = reask_seed(spec.seed, tally.reasks)
                self.show_retry(f"re-ask {spec.key.item}: {problem[:60]}")
                return None
            return tally.result("failed", problem, failure="final")
        except Exception as exc:  # a parser bug is recorded, not turned into a score
            reason = f"parser error: {type(exc).__name__}: {short(scrub(str(exc)))}"
            return tally.result("failed", reason, failure="final")
        return tally.result("ok", parsed=parsed)

    async def call_group(
        self, group: Group, messages: list, bound: CallBound, shape: RequestShape
    ) -> list[CallResult]:
        """Send repetitions of one prompt as one request with ``n``; one result each.

        The request carries the first repetition's seed. Choices are matched to the
        repetitions in order and billed in equal shares of the request's usage. A choice
        that cannot be read is asked again on its own; repetitions the answer had no
        choice for (a provider that ignores ``n``) are asked one at a time.
        """
        first = group[0]
        model = first.key.model
        price = self.prices[model]
        start = time.monotonic()
        tallies = [Tally(start=start, seed=spec.seed) for spec in group]
        while True:
            for t in tallies:
                t.attempts += 1
            attempts = tallies[0].attempts
            got = await self._try(first, messages, first.seed, len(group), shape, attempts)
            if got is None:
                continue
            if isinstance(got, Failed):
                return [t.result("failed", got.reason, failure=got.failure) for t in tallies]
            resp, body_error = got
            break
        choices = self.provider.choices(resp)[: len(group)]
        if body_error or not choices:
            choices = [_NO_CHOICE]  # billed as one unreadable answer, like a single call
        usage = self.provider.usage(resp)
        shares = usage.split(len(choices)) if usage is not None else [None] * len(choices)
        if len(choices) < len(group) and model not in self.ignores_n:
            self.ignores_n.add(model)
            self.notes.append(
                f"{model} returned {len(choices)} of {len(group)} choices asked for with "
                "`n`; its repetitions were sent one per request"
            )
        results: list[CallResult] = []
        for i, spec in enumerate(group):
            tally = tallies[i]
            if i < len(choices):
                tally.samples = len(choices)
                tally.answered(choices[i], shares[i], price, bound, self.provider)
                outcome = self._read(spec, tally, body_error)
                if outcome is None:  # re-asked alone
                    outcome = await self.call(spec, messages, bound, shape, tally)
            else:  # nothing came back for it: asked on its own
                outcome = await self.call(spec, messages, bound, shape, tally)
            results.append(outcome)
        return results

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

    async def worker(self, queue: deque[Group]) -> None:
        """Take groups from ``queue`` until it is empty or the run stops."""
        try:
            await self._work(queue)
        except BaseException:
            # A store that cannot be written (or any other error) stops every worker from
            # launching calls whose answers could not be recorded; calls in flight finish.
            self.stop = True
            raise

    def _shape(self, spec: CallSpec, messages: list) -> RequestShape:
        key = (*group_key(spec), len(messages))
        shape = self._shapes.get(key)
        if shape is None:
            if len(self._shapes) > 256:
                self._shapes.clear()
            shape = self._shapes[key] = RequestShape.of(messages, spec.max_tokens)
        return shape

    async def _work(self, queue: deque[Group]) -> None:
        while not self.stop:
            try:
                group = queue.popleft()
            except IndexError:
                return
            if len(group) > 1 and group[0].key.model in self.ignores_n:
                queue.extendleft(reversed([(s,) for s in group]))
                continue
            first = group[0]
            try:
                messages = first.build()
            except Exception as exc:
                # Nothing was sent; the calls are recorded as failed so that they show in
                # `judgepanel status` and can be sent again with --retry-failed.
                reason = scrub(f"request not built: {type(exc).__name__}: {short(exc)}")
                for spec in group:
                    result = CallResult(
                        status="failed",
                        reason=reason,
                        failure="final",
                        attempts=0,
                        seed=spec.seed,
                    )
                    await self._record(spec, result)
                continue
            shape = self._shape(first, messages)
            bound = shape.bound(self.max_reasks)
            each = bound.cost(self.prices[first.key.model])
            amount = each * len(group)
            if not await self._reserve(amount):
                return
            self.c.sent += len(group)
            try:
                # Durable before the request leaves: a kill from here on is seen on resume.
                for spec in group:
                    self.store.reserve(spec.key, each, spec.seed)
                if len(group) == 1:
                    results = [await self.call(first, messages, bound, shape)]
                else:
                    results = await self.call_group(group, messages, bound, shape)
            except RunAborted as exc:
                # The abort came as an HTTP error (nothing billed): drop the reservations.
                for spec in group:
                    self.store.release(spec.key)
                await self._settle(amount, 0.0)
                await self._halt(scrub(str(exc)))
                self.c.sent -= len(group)
                return
            except BaseException:
                self.stop = True
                await self._settle(amount, 0.0)
                raise
            await self._settle(amount, sum(r.cost for r in results))
            for spec, result in zip(group, results, strict=True):
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
        self.c.record(result)
        if result.status != "ok":
            log.info("failed %s: %s", spec.key.item, result.reason)
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
        share = self.options.max_failure_share
        if self.c.failed > share * done:
            return (
                f"{self.c.failed} of {done} calls failed, more than the "
                f"{share:.0%} allowed (--max-failure-share); last: {result.reason}"
            )
        return ""
