"""The steps of a report: the runs it scores, then the call explorers and notebooks.

Each plan is scored once: in the report's own process, one run after the other, or in
worker processes, runs over different datasets side by side. The explorers and notebooks
are jobs for :class:`~judgepanel.report.schedule.JobPool`, each reading the datasets of its
run.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path

from judgepanel.core.client import RunSummary
from judgepanel.core.config import Config, Run
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import RunStopped
from judgepanel.core.scoring import closing_note, plan_parameters
from judgepanel.report.index import remembered
from judgepanel.report.schedule import DataKey, Job, JobPool, order_by_data
from judgepanel.report.timings import Timings, earlier_seconds
from judgepanel.studies import score_run


def scoring_steps(runs: list[Run]) -> list[Run]:
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
    _close_step(config, run, summary, f"profile {profile.name!r} max_cost left", remaining)
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
    chosen: list[tuple[Run, list[str]]],
    outputs: Path,
    may_score: Callable[[Run, str], bool],
    *,
    explorers: bool = True,
    sends: bool = False,
) -> list[ReportStep]:
    """The call explorers of the one-dataset runs, then the notebooks in the runs file's
    order, each waiting for what it reads (a page links its dataset's explorer).

    ``may_score(run, notebook)`` says whether a notebook sends calls when an endpoint is
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
        earlier = remembered(outputs, run.name)
        links = set()
        if len(run.datasets) == 1 and explored:
            links.add(explorer_job[(run.profile.name, run.dataset)])
        for name in names:
            job = Job(
                len(steps),
                f"{run.name}/{name}",
                read_keys(run),
                writes=sends and may_score(run, name),
                after=frozenset(links),
                expected=earlier[name].seconds
                if name in earlier
                else TYPICAL_SECONDS.get(name, 0.0),
            )
            steps.append(ReportStep(job, run=run, notebook=name))
    jobs = order_by_data(s.job for s in steps)
    return [replace(s, job=j) for s, j in zip(steps, jobs, strict=True)]


def score_and_release(
    config: Config,
    runs: list[Run],
    pool: JobPool,
    timings: Timings,
    *,
    score: bool,
    lanes: int = 1,
    endpoints: Sequence[Endpoint] = (),
) -> None:
    """Score the runs in order; a dataset's explorer and notebooks may start once the last
    run scoring it is over.

    With ``lanes`` above one, runs that write different datasets are scored side by side,
    each in a worker process of its own (the store admits one sender per dataset, and one
    client process keeps about one core busy against a local endpoint). A run waits for
    every earlier run that writes one of its datasets, and a later run that writes others
    takes a free lane meanwhile. Runs scored at once split the profile's ``max_cost`` that
    is left: each gets an equal share of what the running ones have not reserved, over the
    free lanes that have a run to take, so together they never exceed it.

    ``endpoints``: servers that answer alike (the simulated judge servers a report starts,
    one per lane); a lane's run is sent to the one fewest running runs use, so that one
    server's core does not pace every lane. Empty: ``OPENAI_BASE_URL``.
    """
    steps = scoring_steps(runs) if score else []
    last = {key: run for run in steps for key in data_keys(run)}
    pool.scored(set().union(*map(data_keys, runs)) - set(last))
    spent: dict[str, float] = {}
    if lanes <= 1 or len(steps) <= 1:
        pool.scoring(1 if steps else 0)
        for run in steps:
            with timings.step("scoring", run=run.name, datasets=list(run.datasets)) as record:
                summary = score_step(config, run, spent, endpoints[0] if endpoints else None)
                record.update(calls=summary.sent, planned=summary.planned, skipped=summary.skipped)
            pool.scored({key for key, at in last.items() if at is run})
        pool.scoring(0)
        return
    _score_in_lanes(config, steps, last, pool, timings, lanes, spent, endpoints)


def _slots_taken(running: list[Run]) -> int:
    """The cores that scoring ``running`` keeps busy: one per online run (its client), but
    one in all for runs sent as batches, whose clients only poll while the endpoint (the
    simulator, on this machine) answers their lines."""
    online = sum(not _batched(run) for run in running)
    return online + (1 if len(running) > online else 0)


def _batched(run: Run) -> bool:
    return run.send.batch


def _score_in_lanes(
    config: Config,
    steps: list[Run],
    last: dict[DataKey, Run],
    pool: JobPool,
    timings: Timings,
    lanes: int,
    spent: dict[str, float],
    endpoints: Sequence[Endpoint] = (),
) -> None:
    """Score ``steps`` in up to ``lanes`` worker processes (see :func:`score_and_release`)."""
    pending = list(steps)
    running: dict[Future[RunSummary], tuple[Run, float, float | None]] = {}
    sent_to: dict[Future[RunSummary], Endpoint | None] = {}
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
                pending.remove(run)
            pool.scoring(_slots_taken([r for r, _, _ in running.values()]))
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                run, start, ceiling = running.pop(future)
                sent_to.pop(future)
                timings.record("scoring", start, run=run.name, datasets=list(run.datasets)).update(
                    _summary_fields(future)
                )
                try:
                    summary = future.result()
                    spent[run.profile.name] = spent.get(run.profile.name, 0.0) + summary.spend
                    print(f"{run.name}: {summary.line()}", flush=True)
                    share = f"profile {run.profile.name!r} max_cost share"
                    _close_step(config, run, summary, share, ceiling)
                except BaseException as exc:  # the other lane ends first; nothing new starts
                    if failure is None:
                        failure = exc
                    else:  # raised below is the first; this one is printed
                        print(f"error: {exc}", file=sys.stderr, flush=True)
                    continue
                pool.scored({key for key, at in last.items() if at is run})
    pool.scoring(0)
    if failure is not None:
        raise failure


def _summary_fields(future: Future[RunSummary]) -> dict[str, int]:
    if future.exception() is not None:
        return {}
    summary = future.result()
    return {"calls": summary.sent, "planned": summary.planned, "skipped": summary.skipped}


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


def score_in_worker(
    config: Config,
    run_name: str,
    max_cost: float | None,
    limit_share: float = 1.0,
    endpoint: Endpoint | None = None,
) -> RunSummary:
    """Score one run of the parsed runs file ``config`` in a worker process (its lines are
    printed by the report), pacing to ``limit_share`` of each model's rate limits, which
    the lanes share; ``endpoint``: where to send (None: ``OPENAI_BASE_URL``)."""
    return score_run(
        run_name,
        config=config,
        endpoint=endpoint,
        max_cost=max_cost,
        progress=False,
        limit_share=limit_share,
    )


def _close_step(
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
