"""The steps of a report, in the order one job slot runs them: the runs it scores, then the
call explorers and notebooks, each after what it reads.

Each plan is scored once (:func:`scoring_steps`). The explorers and notebooks are
:class:`Job` s (:func:`report_steps`), each waiting for the steps that may write the
datasets it reads (:func:`order_by_data`); :func:`in_order` is the order one slot runs
them in, after all the scoring (:func:`score_in_order`). Running them several at a time,
and scoring in lanes, is :mod:`judgepanel.report.schedule`'s.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from judgepanel.core.client import RunSummary
from judgepanel.core.config import Config, Run
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import RunStopped
from judgepanel.core.scoring import closing_note, plan_parameters
from judgepanel.report.index import NotebookResult, recorded_outcomes
from judgepanel.report.timings import (
    Timings,
    cpu_since,
    earlier_seconds,
    process_cpu,
    scoring_cpu,
)
from judgepanel.studies import score_run

DataKey = tuple[str, str]
"""A dataset of a profile: (profile name, dataset name)."""


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


def in_order(jobs: Sequence[Job]) -> list[Job]:
    """The order one job slot runs ``jobs`` in: the first listed whose ``after`` jobs are
    done, again and again (a reader waits for a writer listed after it).

    Raises:
        RuntimeError: jobs wait on each other.
    """
    pending, done, order = list(jobs), set(), []
    while pending:
        job = next((j for j in pending if j.after <= done), None)
        if job is None:
            stuck = ", ".join(j.name for j in pending)
            raise RuntimeError(f"jobs waiting on each other: {stuck}")
        pending.remove(job)
        done.add(job.index)
        order.append(job)
    return order


class Progress:
    """The lines a report prints as its notebooks start and end, ``[i/n]`` counting the
    shown jobs (the call explorers are not shown). The caller serialises the calls."""

    def __init__(self, jobs: Iterable[Job], echo: Callable[[str], None]) -> None:
        self._shown = sum(j.shown for j in jobs)
        self._started = 0
        self._ended = 0
        self._echo = echo

    def started(self, job: Job) -> None:
        """Announce that ``job`` starts."""
        if job.shown:
            self._started += 1
            self._echo(f"[{self._started}/{self._shown}] started {job.name}")

    def ended(self, job: Job, result: NotebookResult | None, error: Exception | None) -> None:
        """Announce how ``job`` ended: its seconds and ``ok``, or why it failed."""
        if job.shown:
            self._ended += 1
            self._echo(f"[{self._ended}/{self._shown}] {job.name}  {_outcome(result, error)}")


def scoring_steps(runs: Iterable[Run]) -> list[Run]:
    """The runs whose scoring the report does, in order: each plan is scored once.

    A dataset is planned the same way by every run that agrees on the parameters its
    planner reads; a run is scored when it plans some dataset differently.
    """
    seen: set[tuple] = set()
    steps = []
    for run in runs:
        profile = run.profile
        keys = {
            (profile.name, name, plan_parameters(profile.dataset(name).kind, run.parameters))
            for name in run.datasets
        }
        if not keys <= seen:
            seen |= keys
            steps.append(run)
    return steps


def data_keys(run: Run) -> frozenset[DataKey]:
    """The datasets a run reads (and its scoring writes), named with their profile."""
    return frozenset((run.profile.name, name) for name in run.datasets)


def read_keys(run: Run) -> frozenset[DataKey]:
    """What a run's notebooks read from the store: its datasets, and every other dataset of
    its profile that a parameter names (09's ``sampled_dataset``, 04's
    ``logprob_datasets``, 05's ``fusion_train``), as a string or a mapping's values."""
    named: set[str] = set()
    for value in run.parameters.values():
        values = value.values() if isinstance(value, dict) else [value]
        named |= {v for v in values if isinstance(v, str) and v in run.profile.datasets}
    return data_keys(run) | frozenset((run.profile.name, name) for name in named)


class Waiting(Protocol):
    """What waits on the scoring: told how many scoring processes run, and which datasets
    are scored (:class:`~judgepanel.report.schedule.JobPool`)."""

    def scoring(self, lanes: int) -> None: ...

    def scored(self, keys: Iterable[DataKey]) -> None: ...


class NothingWaits:
    """With one job slot the steps run after all the scoring: nothing is told."""

    def scoring(self, lanes: int) -> None:
        """Nothing runs beside the scoring."""

    def scored(self, keys: Iterable[DataKey]) -> None:
        """Nothing starts before the scoring is over."""


def last_scoring(runs: Iterable[Run]) -> dict[DataKey, Run]:
    """The run that scores each dataset last: its steps may start once that run is over."""
    return {key: run for run in runs for key in data_keys(run)}


def score_in_order(
    config: Config,
    runs: Sequence[Run],
    waiting: Waiting,
    timings: Timings,
    endpoint: Endpoint | None = None,
    server_pid: int | None = None,
) -> None:
    """Score ``runs`` one after the other in this process, telling ``waiting`` each dataset
    once the last run scoring it is over (``endpoint``: None, ``OPENAI_BASE_URL``;
    ``server_pid``: the process of the simulated server the report started, whose CPU each
    run's step records beside this process's)."""
    last = last_scoring(runs)
    spent: dict[str, float] = {}
    waiting.scoring(1 if runs else 0)
    for run in runs:
        with timings.step("scoring", run=run.name, datasets=list(run.datasets)) as record:
            client, server = process_cpu(os.getpid()), process_cpu(server_pid)
            summary = score_step(config, run, spent, endpoint)
            record.update(calls=summary.sent, planned=summary.planned, skipped=summary.skipped)
            record.update(
                scoring_cpu(cpu_since(os.getpid(), client), cpu_since(server_pid, server))
            )
        waiting.scored({key for key, at in last.items() if at is run})
    waiting.scoring(0)


def score_step(
    config: Config, run: Run, spent: dict[str, float], endpoint: Endpoint | None = None
) -> RunSummary:
    """Score one run before the notebooks that read it; stop the report if it was cut short.

    A profile's ``max_cost`` is one ceiling for all the scoring of this command, as it is
    for one ``judgepanel score``: each run gets what the runs before it left (``spent``
    holds what each profile spent so far and is updated here).
    """
    profile = run.profile
    remaining = None
    if profile.send.max_cost is not None:
        remaining = max(0.0, profile.send.max_cost - spent.get(profile.name, 0.0))
    print(f"scoring {run.name} ({', '.join(run.datasets)})", flush=True)
    summary = score_run(run.name, config=config, endpoint=endpoint, max_cost=remaining)
    spent[profile.name] = spent.get(profile.name, 0.0) + summary.spend
    close_step(config, run, summary, f"profile {profile.name!r} max_cost left", remaining)
    return summary


TYPICAL_SECONDS = {
    "00_scoring": 22.0,
    "01_mtmm_validity": 24.0,
    "02_input_ablation": 42.0,
    "03_trio_sweep": 30.0,
    "04_headroom": 91.0,
    "05_vab": 46.0,
    "06_visionq": 24.0,
    "07_temperature": 17.0,
    "10_agreement": 20.0,
}
"""Seconds each notebook took in a fresh-clone demo report (``bench/bench_report.py``); when
no earlier report left its own timings, they rank the chains of jobs (the longest starts
first) and nothing else."""


@dataclass(frozen=True)
class ReportStep:
    """A job of the report after scoring and what it does: build a dataset's call explorer
    (``explorer``) or execute a notebook of a run (``run`` and ``notebook``)."""

    job: Job
    run: Run | None = None
    notebook: str = ""
    explorer: DataKey | None = None


def report_steps(
    chosen: Sequence[tuple[Run, Sequence[str]]],
    outputs: Path,
    sends_calls: Callable[[Run, str], bool],
    *,
    explorers: bool = True,
    sends: bool = False,
) -> list[ReportStep]:
    """The call explorers of the one-dataset runs, then the notebooks in the runs file's
    order, each waiting for what it reads (a page links its dataset's explorer).

    ``sends_calls(run, notebook)`` says whether a notebook sends calls when an endpoint is
    configured; it then writes the store only if the notebooks are given an endpoint
    (``sends``). ``explorers=False`` leaves the explorers out (a report of tables only).
    """
    runs = [run for run, _ in chosen]
    explored = (
        sorted({(r.profile.name, r.dataset) for r in runs if len(r.datasets) == 1})
        if explorers
        else []
    )
    took = earlier_seconds(outputs)
    steps = [
        ReportStep(
            Job(
                i,
                f"call explorer {key[0]}-{key[1]}",
                frozenset({key}),
                expected=took.get(("explorer", *key), 0.0),
                shown=False,
            ),
            explorer=key,
        )
        for i, key in enumerate(explored)
    ]
    explorer_job = {key: i for i, key in enumerate(explored)}
    for run, names in chosen:
        earlier = recorded_outcomes(outputs, run.name)
        links = set()
        if len(run.datasets) == 1 and explored:
            links.add(explorer_job[(run.profile.name, run.dataset)])
        for name in names:
            job = Job(
                len(steps),
                f"{run.name}/{name}",
                read_keys(run),
                writes=sends and sends_calls(run, name),
                after=frozenset(links),
                expected=earlier[name].seconds
                if name in earlier
                else TYPICAL_SECONDS.get(name, 0.0),
            )
            steps.append(ReportStep(job, run=run, notebook=name))
    jobs = order_by_data(s.job for s in steps)
    return [replace(s, job=j) for s, j in zip(steps, jobs, strict=True)]


def close_step(
    config: Config, run: Run, summary: RunSummary, label: str, ceiling: float | None
) -> None:
    """Print what a run left undone; stop the report if the run was cut short.

    ``label`` names the ceiling the run was given (``ceiling``, ``None`` for none).

    Raises:
        RunStopped: the run was stopped by its budget or aborted (the closing note says
            why and how to resume).
    """
    resume = shlex.join(["judgepanel", "score", "--run", run.name, "--runs-file", str(config.path)])
    ceilings = {label: ceiling, "max_total_cost": run.profile.send.max_total_cost}
    note = closing_note(summary, resume, ceilings)
    if summary.aborted or summary.stopped_by_budget:
        raise RunStopped(f"{run.name}: {note}")
    if note:
        print(note, flush=True)


def _outcome(result: NotebookResult | None, error: Exception | None) -> str:
    """How a job's end line reads: its seconds and ``ok``, or why it failed."""
    if result is None:
        return f"FAILED: {error}"
    return f"{result.seconds:6.1f} s  " + ("ok" if result.ok else f"FAILED: {result.error}")
