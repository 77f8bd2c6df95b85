"""When each notebook of a report runs: as soon as what it reads is scored, a few at a time.

Papermill runs every notebook in its own kernel process, so a thread that waits on one
costs nothing; the number of notebooks executing at once is bounded by the cores the
report may use (``report --jobs``), and scoring, which runs in the report's own process
and keeps about one core busy, counts as one of them while it lasts.

What orders the notebooks is the data they read. Within a run they write different tables
and figures (the files they share, ``headlines.json`` and ``notebooks.json``, are updated
under a lock), and none reads what another writes, except through the store: a notebook
that may score (``00_scoring`` with an endpoint configured) goes before every notebook
that reads the datasets it scores.
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
class NotebookJob:
    """One notebook of one run, as the report schedules it.

    Attributes:
        index: its place in the runs file's order; results are reported in that order.
        run: the run's name.
        notebook: the notebook's name.
        reads: the datasets the notebook reads from the store.
        writes: whether it may send calls and so add rows for the datasets it reads.
        after: the indexes of the jobs that must finish before it starts.
        expected: the seconds it took last time (0 when unknown); the longest chain of
            expected seconds starts first when several notebooks are ready.
    """

    index: int
    run: str
    notebook: str
    reads: frozenset[DataKey]
    writes: bool = False
    after: frozenset[int] = field(default_factory=frozenset)
    expected: float = 0.0


def order_by_data(jobs: Iterable[NotebookJob]) -> list[NotebookJob]:
    """Make each notebook wait for the notebooks that may write the datasets it reads.

    A writer waits only for the writers of its datasets listed before it, so the order
    among writers is the runs file's and there is no cycle.
    """
    jobs = list(jobs)
    writers = [j for j in jobs if j.writes]
    ordered = []
    for job in jobs:
        after = {
            w.index
            for w in writers
            if w.index != job.index
            and w.reads & job.reads
            and (not job.writes or w.index < job.index)
        }
        ordered.append(replace(job, after=job.after | after))
    return ordered


def chain_seconds(jobs: list[NotebookJob]) -> dict[int, float]:
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


class NotebookPool:
    """Executes notebook jobs on threads, at most ``slots`` at once (one fewer while scoring).

    The report's main thread scores and tells the pool which datasets are done
    (:meth:`scored`); each finished notebook starts the next ready one. With one slot the
    notebooks run one after the other in the runs file's order, after all the scoring.
    """

    def __init__(
        self,
        jobs: list[NotebookJob],
        slots: int,
        execute: Callable[[NotebookJob], NotebookResult],
        *,
        unscored: Iterable[DataKey] = (),
        echo: Callable[[str], None] = print,
    ) -> None:
        if slots < 1:
            raise ValueError(f"a report needs at least one job slot, got {slots}")
        known = {j.index for j in jobs}
        for job in jobs:
            if not job.after <= known:
                raise ValueError(f"{job.run}/{job.notebook} waits for a job that is not listed")
        self._jobs = list(jobs)
        self._pending = list(jobs)
        self._slots = slots
        self._execute = execute
        self._echo = echo
        self._unscored = set(unscored)
        self._scoring = False
        self._closed = False
        self._running = 0
        self._started = 0
        self._done: set[int] = set()
        self._results: dict[int, NotebookResult] = {}
        self._threads: list[threading.Thread] = []
        self._cond = threading.Condition()
        chain = chain_seconds(self._jobs)
        # Several slots: the longest chain first. One slot: the order changes nothing but
        # what is printed, so it stays the runs file's.
        self._priority: Callable[[NotebookJob], tuple[float, int]] = (
            (lambda j: (chain[j.index], -j.index)) if slots > 1 else (lambda j: (0.0, -j.index))
        )

    def scoring(self, active: bool) -> None:
        """Say that scoring runs (it takes one slot) or has ended."""
        with self._cond:
            self._scoring = active
            self._dispatch()

    def scored(self, keys: Iterable[DataKey]) -> None:
        """Say that these datasets are scored: the notebooks reading only them may start."""
        with self._cond:
            self._unscored -= set(keys)
            self._dispatch()

    def wait(self) -> list[NotebookResult]:
        """Start what is ready, wait for every notebook and return the results in order."""
        with self._cond:
            self._scoring = False
            self._unscored.clear()
            self._dispatch()
            while len(self._done) < len(self._jobs):
                if not self._running and not self._ready():
                    stuck = ", ".join(f"{j.run}/{j.notebook}" for j in self._pending)
                    raise RuntimeError(f"notebooks waiting on each other: {stuck}")
                self._cond.wait()
        self._join()
        return [self._results[j.index] for j in sorted(self._jobs, key=lambda j: j.index)]

    def close(self) -> list[NotebookResult]:
        """Start nothing more; wait for the notebooks already running and return their results."""
        with self._cond:
            self._closed = True
        self._join()
        return [self._results[i] for i in sorted(self._results)]

    def _join(self) -> None:
        for thread in list(self._threads):
            thread.join()

    def _ready(self) -> list[NotebookJob]:
        return [
            j for j in self._pending if j.reads.isdisjoint(self._unscored) and j.after <= self._done
        ]

    def _dispatch(self) -> None:
        """Start ready notebooks while a slot is free (the caller holds the lock)."""
        while not self._closed:
            free = self._slots - self._running - (1 if self._scoring else 0)
            ready = self._ready()
            if free < 1 or not ready:
                return
            job = max(ready, key=self._priority)
            self._pending.remove(job)
            self._running += 1
            self._started += 1
            self._echo(f"[{self._started}/{len(self._jobs)}] started {job.run}/{job.notebook}")
            thread = threading.Thread(
                target=self._work, args=(job,), name=f"notebook {job.run}/{job.notebook}"
            )
            self._threads.append(thread)
            thread.start()

    def _work(self, job: NotebookJob) -> None:
        try:
            result = self._execute(job)
        except Exception as exc:  # a page that cannot be rendered fails its notebook only
            result = NotebookResult(
                job.run, job.notebook, False, 0.0, None, f"{job.notebook}: {exc}"
            )
        with self._cond:
            self._running -= 1
            self._done.add(job.index)
            self._results[job.index] = result
            state = "ok" if result.ok else f"FAILED: {result.error}"
            self._echo(
                f"[{len(self._done)}/{len(self._jobs)}] {job.run}/{job.notebook}  "
                f"{result.seconds:6.1f} s  {state}"
            )
            self._dispatch()
            self._cond.notify_all()
