"""The entry points: :func:`run_calls` and :func:`run_calls_async` send a plan's missing calls.

A run stops early, with :attr:`RunSummary.aborted` saying why, when an error would meet
every call (a rejected key, an unknown model), when the endpoint cannot be reached, or when
more than ``max_failure_share`` of its calls fail.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from tqdm import tqdm

from judgepanel.core.budget import Budget
from judgepanel.core.calls import CallSpec
from judgepanel.core.client.outcome import ClientError, RunSummary
from judgepanel.core.client.runner import Runner, repetition_groups
from judgepanel.core.client.secrets import endpoint_key
from judgepanel.core.client.transport import open_client
from judgepanel.core.config import Price
from judgepanel.core.providers import Provider, provider
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store

log = logging.getLogger("judgepanel.core.client")


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
    """The calls of a plan not yet in the store, and how many were already there.

    Calls in an open batch were sent already and count as there: their answers come with
    the batch (``score --batch`` collects them), and sending them again would pay twice.
    """
    datasets = {s.key.dataset for s in specs}
    done = store.completed_digests(datasets, include_failed=not retry_failed)
    done |= store.batched_digests(datasets)
    todo = [s for s in specs if s.key.digest not in done]
    return todo, len(specs) - len(todo)


async def run_calls_async(
    specs: Sequence[CallSpec],
    store: Store,
    *,
    prices: Mapping[str, Price],
    options: ClientOptions | None = None,
    desc: str = "scoring",
) -> RunSummary:
    """Send every planned call not yet in ``store``; see :func:`run_calls`."""
    options = options or ClientOptions()
    started = time.monotonic()
    impl = provider(options.endpoint.provider)  # an unknown provider fails before any send
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
        todo, skipped = pending_calls(plan, store, retry_failed=options.retry_failed)
        missing = sorted({s.key.model for s in todo} - set(prices))
        if missing:
            raise ClientError(
                f"no price for model(s) {', '.join(missing)}; add them under `prices:` in "
                "papermill_runs.yaml so that spend can be recorded and the budget enforced"
            )
        if not todo:
            summary = RunSummary(
                len(plan), skipped, 0, 0, 0, 0, 0.0, False, time.monotonic() - started
            )
        else:
            summary = await _send_all(
                todo, store, endpoint_key(options.endpoint), prices, options, len(plan),
                skipped, desc, impl,
            )  # fmt: skip
        return dataclasses.replace(
            summary,
            elapsed=time.monotonic() - started,
            interrupted=interrupted.calls,
            interrupted_bound=interrupted.bound,
        )


async def _send_all(
    todo: list[CallSpec],
    store: Store,
    key: str,
    prices: Mapping[str, Price],
    options: ClientOptions,
    plan_size: int,
    skipped: int,
    desc: str,
    impl: Provider,
) -> RunSummary:
    base_url = options.endpoint.base_url
    options.retry_policy()  # a bad policy fails before anything is sent
    client = open_client(key, base_url, options.timeout)
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
        if options.progress
        else None
    )
    prior = store.total_committed() if options.max_total_cost is not None else 0.0
    runner = Runner(
        client,
        store,
        prices,
        Budget(options.max_cost, options.max_total_cost, prior),
        options,
        bar=bar,
        total=len(todo),
        endpoint=base_url or "the endpoint",
        provider=impl,
    )
    queue = deque(repetition_groups(todo, options.samples_per_request))
    try:
        workers = [
            asyncio.create_task(runner.worker(queue))
            for _ in range(max(1, min(options.concurrency, len(queue))))
        ]
        results = await asyncio.gather(*workers, return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]
    finally:
        await client.close()
        if bar is not None:
            bar.set_postfix_str(runner.postfix(), refresh=False)
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
        elapsed=0.0,
        reasks=c.reasks,
        aborted=runner.aborted,
        unsent=len(todo) - c.ok - c.failed,
        retryable=c.retryable,
        requests=c.requests,
        refused=c.refused,
        notes=tuple(runner.notes),
    )


def run_calls(
    specs: Sequence[CallSpec],
    store: Store,
    *,
    prices: Mapping[str, Price],
    options: ClientOptions | None = None,
    desc: str = "scoring",
) -> RunSummary:
    """Send every planned call not yet in ``store`` and checkpoint each as it completes.

    Args:
        specs: the plan; keys must be unique.
        store: the checkpoint store; calls already in it are skipped.
        prices: model id -> :class:`~judgepanel.core.config.Price`, for every model planned.
        options: how to send (:class:`~judgepanel.core.sendconfig.ClientOptions`).
        desc: label of the progress line.

    Returns:
        A :class:`RunSummary`. Calls left unsent by the budget or an early stop are not
        recorded; ``aborted`` says why a run stopped early.

    Raises:
        ClientError: no API key, no price for a planned model, or duplicate keys.
    """
    coro = run_calls_async(specs, store, prices=prices, options=options, desc=desc)
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
