"""When each step of a report after scoring runs: as soon as what it reads is scored, a few
at a time.

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
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from judgepanel.report.index import NotebookResult

DataKey = tuple[str, str]
"""A dataset of a profile: (profile name, dataset name)."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system reports one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no affinity on this system
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Job:
    """One step of the report after scoring: a notebook of a run, or a call explorer.

    Attributes:
        index: its place in the report's order (explorers, then the runs file's
            notebooks); results are returned in that order.
        name: what the printed lines call it, ``run/notebook`` for a notebook.
        reads: the datasets it reads from the store.
        writes: whether it may send calls and so add rows for the datasets it reads.
        after: the indexes of the jobs that must finish before it starts.
        expected: the seconds it took last time (0 when unknown); the longest chain of
            expected seconds starts first when several jobs are ready.
        shown: a notebook: announced when it starts and ends, and counted in ``[i/n]``.
    """

    index: int
    name: str
    reads: frozenset[DataKey]
    writes: bool = False
    after: frozenset[int] = field(default_factory=frozenset)
    expected: float = 0.0
    shown: bool = True


def order_by_data(jobs: Iterable[Job]) -> list[Job]:
    """Make each job wait for the notebooks that may write the datasets it reads.

    A writer waits only for the writers of its datasets listed before it, so the order
    among writers is the jobs' own. A job that a writer already waits for (the call
    explorer its page links) waits for no writer: it shows the store as the scoring left
    it, and there is no cycle.
    """
    jobs = list(jobs)
    writers = [j for j in jobs if j.writes]
    needed = {i for w in writers for i in w.after}
    ordered = []
    for job in jobs:
        after = set()
        if job.index not in needed:
            after = {
                w.index
                for w in writers
                if w.index != job.index
                and w.reads & job.reads
                and (not job.writes or w.index < job.index)
            }
        ordered.append(replace(job, after=job.after | after))
    return ordered


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
        self._echo = echo
        self._unscored = set(unscored)
        self._scoring = 0
        self._closed = False
        self._running = 0
        self._shown = sum(j.shown for j in jobs)
        self._started = 0
        self._ended = 0
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
            if job.shown:
                self._started += 1
                self._echo(f"[{self._started}/{self._shown}] started {job.name}")
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
            if job.shown:
                self._ended += 1
                self._echo(f"[{self._ended}/{self._shown}] {job.name}  {_outcome(result, error)}")
            self._dispatch()
            self._cond.notify_all()


def _outcome(result: NotebookResult | None, error: Exception | None) -> str:
    """How a job's end line reads: its seconds and ``ok``, or why it failed."""
    if result is None:
        return f"FAILED: {error}"
    return f"{result.seconds:6.1f} s  " + ("ok" if result.ok else f"FAILED: {result.error}")
