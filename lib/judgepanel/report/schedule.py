"""A report run several steps at a time: each notebook or call explorer as soon as what it
reads is scored, and the runs scored side by side in lanes.

The steps are the notebooks and the datasets' call explorers. Each runs in a process of
its own (papermill starts a kernel per notebook; an explorer is built in a worker
process), so a thread that waits on one costs nothing; the number running at once is
bounded by the cores the report may use (``report --jobs``), and each scoring process,
which keeps about one core busy, counts as one of them while it lasts. The store admits
one sender per dataset, so a notebook that may score starts once its own datasets are
scored, while the report still scores others.

What orders the notebooks is the data they read. Within a run they write different tables
and figures (the files they share, ``headlines.json`` and ``notebooks.json``, are updated
under a lock), and none reads what another writes, except through the store: a notebook
that may score (``00_scoring`` with an endpoint configured) goes before every notebook
that reads the datasets it scores. A page links its dataset's call explorer, so the
notebooks of a one-dataset run wait for that explorer.

With one slot (``report --jobs 1``) none of this runs: the report scores, then runs its
steps one after the other in :func:`~judgepanel.report.steps.in_order` in its own thread.
The tables are the same either way.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context

from judgepanel.core.client import RunSummary
from judgepanel.core.config import Config, Run
from judgepanel.core.endpoint import Endpoint
from judgepanel.report.index import NotebookResult
from judgepanel.report.steps import (
    DataKey,
    Job,
    Progress,
    Waiting,
    close_step,
    data_keys,
    last_scoring,
)
from judgepanel.report.timings import Timings, cpu_since, process_cpu, scoring_cpu
from judgepanel.studies import score_run


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system reports one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no affinity on this system
        return max(1, os.cpu_count() or 1)


def chain_seconds(jobs: list[Job]) -> dict[int, float]:
    """Each job's expected seconds plus those of the longest chain of jobs waiting on it."""
    waiting: dict[int, list[int]] = {j.index: [] for j in jobs}
    for job in jobs:
        for first in job.after:
            waiting[first].append(job.index)
    expected = {j.index: j.expected for j in jobs}
    chain: dict[int, float] = {}

    def length(index: int) -> float:
        if index not in chain:
            chain[index] = expected[index] + max(map(length, waiting[index]), default=0.0)
        return chain[index]

    for job in jobs:
        length(job.index)
    return chain


class JobPool:
    """Runs jobs on threads, at most ``slots`` at once (fewer by the scoring processes).

    The report's main thread scores and tells the pool which datasets are done
    (:meth:`scored`); each finished job starts the next ready one. With one slot the jobs
    run one after the other in their order, after all the scoring.
    """

    def __init__(
        self,
        jobs: list[Job],
        slots: int,
        execute: Callable[[Job], NotebookResult | None],
        *,
        unscored: Iterable[DataKey] = (),
        echo: Callable[[str], None] = print,
    ) -> None:
        if slots < 1:
            raise ValueError(f"a report needs at least one job slot, got {slots}")
        known = {j.index for j in jobs}
        for job in jobs:
            if not job.after <= known:
                raise ValueError(f"{job.name} waits for a job that is not listed")
        self._jobs = list(jobs)
        self._pending = list(jobs)
        self._slots = slots
        self._execute = execute
        self._progress = Progress(jobs, echo)
        self._unscored = set(unscored)
        self._scoring = 0
        self._closed = False
        self._running = 0
        self._done: set[int] = set()
        self._results: dict[int, NotebookResult] = {}
        self._errors: list[BaseException] = []
        self._threads: list[threading.Thread] = []
        self._cond = threading.Condition()
        chain = chain_seconds(self._jobs)
        # Several slots: the longest chain first. One slot: the order changes nothing but
        # what is printed, so it stays the jobs' own.
        self._priority: Callable[[Job], tuple[float, int]] = (
            (lambda j: (chain[j.index], -j.index)) if slots > 1 else (lambda j: (0.0, -j.index))
        )

    def scoring(self, lanes: int) -> None:
        """Say how many scoring processes run now (each takes one slot); 0 when it ended."""
        with self._cond:
            self._scoring = int(lanes)
            self._dispatch()

    def scored(self, keys: Iterable[DataKey]) -> None:
        """Say that these datasets are scored: the jobs reading only scored ones may start."""
        with self._cond:
            self._unscored -= set(keys)
            self._dispatch()

    def wait(self) -> list[NotebookResult]:
        """Start what is ready, wait for every job and return the notebooks' results in order.

        Raises:
            RuntimeError: a job raised (after the others ended), or jobs wait on each other.
        """
        with self._cond:
            self._scoring = 0
            self._unscored.clear()
            self._dispatch()
            while len(self._done) < len(self._jobs):
                if not self._running and not self._ready():
                    stuck = ", ".join(j.name for j in self._pending)
                    raise RuntimeError(f"jobs waiting on each other: {stuck}")
                self._cond.wait()
        self._join()
        if self._errors:
            raise RuntimeError(f"a report step failed: {self._errors[0]}") from self._errors[0]
        return [self._results[i] for i in sorted(self._results)]

    def close(self) -> None:
        """Start nothing more, and wait for the jobs already running."""
        with self._cond:
            self._closed = True
        self._join()

    def _join(self) -> None:
        for thread in list(self._threads):
            thread.join()

    def _ready(self) -> list[Job]:
        # A job that may send calls needs only its own datasets scored: the store admits one
        # sender per dataset, and the report's scoring has released them.
        return [
            j for j in self._pending if j.reads.isdisjoint(self._unscored) and j.after <= self._done
        ]

    def _dispatch(self) -> None:
        """Start ready jobs while a slot is free (the caller holds the lock)."""
        while not self._closed:
            free = self._slots - self._running - self._scoring
            ready = self._ready()
            if free < 1 or not ready:
                return
            job = max(ready, key=self._priority)
            self._pending.remove(job)
            self._running += 1
            self._progress.started(job)
            thread = threading.Thread(target=self._work, args=(job,), name=job.name)
            self._threads.append(thread)
            thread.start()

    def _work(self, job: Job) -> None:
        error: Exception | None = None
        result = None
        try:
            result = self._execute(job)
        except Exception as exc:  # kept, raised by wait() once the other jobs have ended
            error = exc
        with self._cond:
            self._running -= 1
            self._done.add(job.index)
            if error is not None:
                self._errors.append(error)
            if result is not None:
                self._results[job.index] = result
            self._progress.ended(job, result, error)
            self._dispatch()
            self._cond.notify_all()


def _slots_taken(running: list[Run]) -> int:
    """The cores that scoring ``running`` keeps busy: one per online run (its client), but
    one in all for runs sent as batches, whose clients only poll while the endpoint (the
    simulator, on this machine) answers their lines."""
    online = sum(not _batched(run) for run in running)
    return online + (1 if len(running) > online else 0)


def _batched(run: Run) -> bool:
    return run.send.batch


def score_in_lanes(
    config: Config,
    runs: Sequence[Run],
    waiting: Waiting,
    timings: Timings,
    lanes: int,
    endpoints: Sequence[Endpoint] = (),
    server_pids: Mapping[str, int] | None = None,
) -> None:
    """Score ``runs`` in up to ``lanes`` worker processes, telling ``waiting`` each dataset
    once the last run scoring it is over: its explorer and notebooks may then start.

    Runs that write different datasets are scored side by side, each in a worker process
    of its own (the store admits one sender per dataset, and one client process keeps
    about one core busy against a local endpoint). A run waits for every earlier run that
    writes one of its datasets, and a later run that writes others takes a free lane
    meanwhile. Runs scored at once split the profile's ``max_cost`` that
    is left: each gets an equal share of what the running ones have not reserved, over the
    free lanes that have a run to take, so together they never exceed it.

    ``endpoints``: servers that answer alike (the simulated judge servers a report starts,
    one per lane); a lane's run is sent to the one fewest running runs use, so that one
    server's core does not pace every lane. Empty: ``OPENAI_BASE_URL``.
    ``server_pids``: the process of each server the report started, by its base URL: a
    run's step records the CPU its server used meanwhile (shared with no other run while
    each lane has a server of its own).
    """
    pids = dict(server_pids or {})
    last = last_scoring(runs)
    spent: dict[str, float] = {}
    pending = list(runs)
    running: dict[Future[Scored], tuple[Run, float, float | None]] = {}
    sent_to: dict[Future[Scored], Endpoint | None] = {}
    server_before: dict[Future[Scored], float | None] = {}
    failure: BaseException | None = None
    with ProcessPoolExecutor(max_workers=lanes, mp_context=get_context("spawn")) as workers:
        while pending or running:
            for run in list(pending) if failure is None else []:
                if len(running) >= lanes:
                    break
                keys = data_keys(run)
                earlier = pending[: pending.index(run)] + [r for r, _, _ in running.values()]
                if any(keys & data_keys(other) for other in earlier):
                    continue
                # the free lanes that a run is left to take: the last run gets all that is left
                sharing = min(lanes - len(running), len(pending))
                ceiling = _lane_ceiling(run, running.values(), spent, sharing)
                print(f"scoring {run.name} ({', '.join(run.datasets)})", flush=True)
                busy = list(sent_to.values())
                endpoint = min(endpoints, key=busy.count) if endpoints else None
                # lanes send to the same models with one key: each paces to its share
                future = workers.submit(
                    score_in_worker, config, run.name, ceiling, 1.0 / lanes, endpoint
                )
                running[future] = (run, timings.now(), ceiling)
                sent_to[future] = endpoint
                server_before[future] = process_cpu(_server_pid(pids, endpoint))
                pending.remove(run)
            waiting.scoring(_slots_taken([r for r, _, _ in running.values()]))
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                run, start, ceiling = running.pop(future)
                server_cpu = cpu_since(
                    _server_pid(pids, sent_to.pop(future)), server_before.pop(future)
                )
                timings.record("scoring", start, run=run.name, datasets=list(run.datasets)).update(
                    _summary_fields(future, server_cpu)
                )
                try:
                    summary = future.result().summary
                    spent[run.profile.name] = spent.get(run.profile.name, 0.0) + summary.spend
                    print(f"{run.name}: {summary.line()}", flush=True)
                    share = f"profile {run.profile.name!r} max_cost share"
                    close_step(config, run, summary, share, ceiling)
                except BaseException as exc:  # the other lane ends first; nothing new starts
                    if failure is None:
                        failure = exc
                    else:  # raised below is the first; this one is printed
                        print(f"error: {exc}", file=sys.stderr, flush=True)
                    continue
                waiting.scored({key for key, at in last.items() if at is run})
    waiting.scoring(0)
    if failure is not None:
        raise failure


def _server_pid(pids: Mapping[str, int], endpoint: Endpoint | None) -> int | None:
    return pids.get(str(endpoint.base_url)) if endpoint is not None else None


def _summary_fields(future: Future[Scored], server_cpu: float | None) -> dict[str, float]:
    if future.exception() is not None:
        return {}
    scored = future.result()
    summary = scored.summary
    return {
        "calls": summary.sent,
        "planned": summary.planned,
        "skipped": summary.skipped,
        **scoring_cpu(scored.cpu_s, server_cpu),
    }


def _lane_ceiling(
    run: Run,
    running: Iterable[tuple[Run, float, float | None]],
    spent: dict[str, float],
    free_lanes: int,
) -> float | None:
    """A run's share of its profile's ``max_cost``: what the finished runs spent and the
    running ones reserved is taken off, and the rest is split over ``free_lanes`` (the
    lanes free now that have a run left to take)."""
    profile = run.profile
    ceiling = profile.send.max_cost
    if ceiling is None:
        return None
    reserved = sum(c or 0.0 for r, _, c in running if r.profile.name == profile.name)
    left = max(0.0, ceiling - spent.get(profile.name, 0.0) - reserved)
    return left / max(1, free_lanes)


@dataclass(frozen=True)
class Scored:
    """What a worker's scoring of one run returns: its summary and the worker's CPU time."""

    summary: RunSummary
    cpu_s: float


def score_in_worker(
    config: Config,
    run_name: str,
    max_cost: float | None,
    limit_share: float = 1.0,
    endpoint: Endpoint | None = None,
) -> Scored:
    """Score one run of the parsed runs file ``config`` in a worker process (its lines are
    printed by the report), pacing to ``limit_share`` of each model's rate limits, which
    the lanes share; ``endpoint``: where to send (None: ``OPENAI_BASE_URL``)."""
    begun = time.process_time()
    summary = score_run(
        run_name,
        config=config,
        endpoint=endpoint,
        max_cost=max_cost,
        progress=False,
        limit_share=limit_share,
    )
    return Scored(summary, round(time.process_time() - begun, 3))
