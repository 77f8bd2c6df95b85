"""Generic scoring: plan each dataset with its study's planner, send what the store lacks.

A study registers a planner for each dataset kind it scores (:func:`register_planner`);
:func:`plan_target` dispatches on the kind, and :func:`score_settings` sends the plan minus
what the store already holds through :func:`judgepanel.core.client.run_calls`. Scoring
knows nothing about any study: ``judgepanel.studies`` registers the planners on import.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.core.batch import run_batches
from judgepanel.core.budget import RequestShape
from judgepanel.core.calls import CallSpec
from judgepanel.core.client import RunSummary, pending_calls, run_calls
from judgepanel.core.config import Config, DatasetRef, Price
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.parameters import StudyParameters, register_parameters
from judgepanel.core.settings import ScoreRequest, ScoreSettings, resolve_settings
from judgepanel.core.store import Store

Planner = Callable[[DatasetRef, ScoreSettings], list[CallSpec]]
"""Every call of one dataset under the settings: ``planner(target, settings) -> specs``."""

PLANNERS: dict[str, Planner] = {}
"""Dataset kind -> the planner a study registered for it."""

PLAN_PARAMETERS: dict[str, tuple[str, ...]] = {}
"""Dataset kind -> the run parameters its planner reads (beyond the profile and design)."""


def register_planner(
    kind: str,
    planner: Planner,
    parameters: Sequence[str] = (),
    model: type[StudyParameters] = StudyParameters,
) -> Planner:
    """Make ``planner`` the one that plans datasets of ``kind`` (a study calls this once).

    ``parameters`` names the run parameters the planner reads, so that two runs that agree
    on them are known to plan the same calls; ``model`` is the study's parameter model
    (every parameter its notebooks read, with its default).
    """
    register_parameters(kind, model)
    if kind in PLANNERS and PLANNERS[kind] is not planner:
        raise ValueError(f"a planner for dataset kind {kind!r} is already registered")
    PLANNERS[kind] = planner
    PLAN_PARAMETERS[kind] = tuple(parameters)
    return planner


def plan_parameters(kind: str, parameters: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The values of the run parameters that the planner of ``kind`` reads (hashable)."""
    return tuple((name, repr(parameters.get(name))) for name in PLAN_PARAMETERS.get(kind, ()))


def plan_target(target: DatasetRef, settings: ScoreSettings) -> list[CallSpec]:
    """The calls of one dataset, planned by the study registered for its kind."""
    try:
        planner = PLANNERS[target.kind]
    except KeyError:
        known = ", ".join(sorted(PLANNERS)) or "none (import judgepanel.studies)"
        raise ConfigError(
            f"no planner for dataset kind {target.kind!r}; registered: {known}"
        ) from None
    return planner(target, settings)


# -- dry run --------------------------------------------------------------------------------


def estimate_plan(
    specs: Sequence[CallSpec],
    store: Store,
    prices: dict[str, Price],
    *,
    max_reasks: int,
    retry_failed: bool = False,
) -> pd.DataFrame:
    """Per family: planned, stored, to send, and the expected and upper-bound cost.

    The upper bound is what the budget reserves (:mod:`judgepanel.core.budget`). The expected
    cost is the mean cost per call already observed in the store for the same model and
    prompt kind (at least 20 calls), else a rough token estimate with a short answer.
    """
    todo, _ = pending_calls(specs, store, retry_failed=retry_failed)
    todo_keys = {s.key.as_tuple() for s in todo}
    observed: dict[tuple[str, str], float] = {}
    stored = store.frame(status="ok", columns=["model", "kind", "cost"])
    if len(stored):
        grouped = stored.groupby(["model", "kind"])["cost"].agg(["mean", "size"])
        observed = {k: float(r["mean"]) for k, r in grouped.iterrows() if r["size"] >= 20}
    rows: dict[str, dict[str, Any]] = {}
    shapes: dict[tuple, RequestShape] = {}
    for spec in specs:
        key = spec.key
        row = rows.setdefault(
            key.family,
            {
                "family": key.family,
                "model": key.model,
                "planned": 0,
                "stored": 0,
                "to_send": 0,
                "expected_usd": 0.0,
                "upper_bound_usd": 0.0,
            },
        )
        row["planned"] += 1
        if key.as_tuple() not in todo_keys:
            row["stored"] += 1
            continue
        row["to_send"] += 1
        price = prices[key.model]
        # Repetitions and families of one prompt on one item send requests of one shape
        # (only the seed or the model id differs), so each shape is built once.
        shape_key = (key.dataset, key.item, key.call_type, key.dimension, key.prompt_hash)
        shape = shapes.get(shape_key)
        if shape is None or shape.max_tokens != spec.max_tokens:
            shape = shapes[shape_key] = RequestShape.of(spec.build(), spec.max_tokens)
        row["upper_bound_usd"] += shape.bound(max_reasks).cost(price)
        seen = observed.get((key.model, key.call_type))
        if seen is not None:
            row["expected_usd"] += seen
        else:
            row["expected_usd"] += price.cost(shape.input_expected(), min(shape.max_tokens, 60))
    return pd.DataFrame(list(rows.values()))


def dry_run(settings: ScoreSettings) -> list[tuple[DatasetRef, int, pd.DataFrame]]:
    """Per target: the number of planned calls and :func:`estimate_plan`'s table (with
    the re-asks and the failed calls ``settings.send`` would send).

    Sends nothing and never creates the store: with no file yet, nothing is stored.
    """
    out = []
    exists = settings.store.exists()
    with Store(settings.store, readonly=True) if exists else Store(":memory:") as store:
        for target in settings.targets:
            specs = plan_target(target, settings)
            table = estimate_plan(
                specs,
                store,
                settings.prices,
                max_reasks=settings.send.max_reasks,
                retry_failed=settings.send.retry_failed,
            )
            out.append((target, len(specs), table))
    return out


# -- sending -------------------------------------------------------------------------------


def _sum(summaries: list[RunSummary]) -> RunSummary:
    if len(summaries) == 1:
        return summaries[0]
    return RunSummary(
        planned=sum(s.planned for s in summaries),
        skipped=sum(s.skipped for s in summaries),
        sent=sum(s.sent for s in summaries),
        ok=sum(s.ok for s in summaries),
        failed=sum(s.failed for s in summaries),
        retries=sum(s.retries for s in summaries),
        spend=sum(s.spend for s in summaries),
        stopped_by_budget=any(s.stopped_by_budget for s in summaries),
        elapsed=sum(s.elapsed for s in summaries),
        reasks=sum(s.reasks for s in summaries),
        aborted="; ".join(s.aborted for s in summaries if s.aborted),
        unsent=sum(s.unsent for s in summaries),
        retryable=sum(s.retryable for s in summaries),
        interrupted=sum(s.interrupted for s in summaries),
        interrupted_bound=sum(s.interrupted_bound for s in summaries),
        requests=sum(s.requests for s in summaries),
        refused=sum(s.refused for s in summaries),
        notes=tuple(n for s in summaries for n in s.notes),
    )


def closing_note(
    summary: RunSummary, resume: str, ceilings: Mapping[str, float | None] | None = None
) -> str:
    """What a scoring command says last: why it stopped and the exact command to resume.

    ``judgepanel score`` and ``judgepanel report --score`` both end with this text, so a
    stopped run reads the same wherever it was started. ``ceilings`` names each ceiling
    that applied (flag or profile key -> USD). ``""`` when there is nothing to add.
    """
    lines: list[str] = []
    if summary.interrupted:
        lines.append(
            f"{summary.interrupted} calls were in flight when an earlier run was interrupted: "
            f"possibly billed, unanswered, up to ${summary.interrupted_bound:.4f} "
            "(counted by `judgepanel status` and by --max-total-cost)"
        )
    if summary.aborted:
        lines.append(f"the run stopped early: {summary.aborted}")
    elif summary.stopped_by_budget:
        named = [f"{k} ${v:.4f}" for k, v in (ceilings or {}).items() if v is not None]
        lines.append(
            f"the budget stopped the run ({', '.join(named)}): ${summary.spend:.4f} spent "
            "by this command"
        )
    stopped = bool(summary.aborted or summary.stopped_by_budget)
    if stopped or summary.retryable:
        waiting = []
        if summary.unsent:
            waiting.append(f"{summary.unsent} planned calls were not sent")
        if summary.retryable:
            waiting.append(f"{summary.retryable} failed for a reason a later attempt may not meet")
        if waiting:
            lines.append("; ".join(waiting) + ".")
        hint = " (with a higher ceiling)" if summary.stopped_by_budget else ""
        lines.append(f"resume{hint} with: {resume}")
    return "\n".join(lines)


def score_settings(
    settings: ScoreSettings,
    *,
    echo: bool = True,
    plans: Mapping[str, Sequence[CallSpec]] | None = None,
) -> RunSummary:
    """Plan and send every target of ``settings`` as ``settings.send`` says; the ceiling
    spans all of them.

    With ``send.batch`` the calls go through the provider's batch API
    (:func:`judgepanel.core.batch.run_batches`), else online. ``plans`` holds, by dataset,
    a plan the caller already made with :func:`plan_target` for the same run (a notebook
    that also checks the plan's coverage plans once); a dataset it lacks is planned here.
    """
    send = settings.send
    summaries: list[RunSummary] = []
    planned = plans or {}
    with Store(settings.store) as store:
        for target in settings.targets:
            if target.name in planned:
                specs = list(planned[target.name])
            else:
                specs = plan_target(target, settings)
            remaining = None
            if send.max_cost is not None:
                remaining = max(0.0, send.max_cost - sum(s.spend for s in summaries))
            options = dataclasses.replace(send, max_cost=remaining)
            if echo:
                print(f"{target.name} ({target.kind}): {len(specs)} calls planned", flush=True)
            if send.batch:
                summary = run_batches(
                    specs,
                    store,
                    prices=settings.prices,
                    options=options,
                    run=settings.run or target.name,
                    desc=target.name,
                )
            else:
                summary = run_calls(
                    specs, store, prices=settings.prices, options=options, desc=target.name
                )
            summaries.append(summary)
            if echo:
                print(f"{target.name}: {summary.line()}", flush=True)
            if summary.stopped_by_budget or summary.aborted:
                break
    return _sum(summaries)


def score_run(
    run_name: str,
    *,
    runs_file: str | Path | None = None,
    config: Config | None = None,
    endpoint: Endpoint | None = None,
    limit_images: int | None = None,
    max_cost: float | None = None,
    progress: bool = True,
    limit_share: float = 1.0,
    plans: Mapping[str, Sequence[CallSpec]] | None = None,
) -> RunSummary:
    """Score one run of ``papermill_runs.yaml`` (the entry point of notebooks and reports).

    Sends as the run and its profile say (store, families, concurrency, ceilings...) and
    to ``endpoint`` (default: ``OPENAI_BASE_URL``, keyed by ``OPENAI_API_KEY``).
    ``config`` is the runs file already parsed (else ``runs_file`` is read). ``max_cost``
    replaces the profile's ceiling, like ``--max-cost``; ``limit_share`` is this process's
    part of each model's rate limits, when several processes score against one key at once.
    ``plans``: the run's plans the caller already made, by dataset (:func:`score_settings`).
    """
    request = ScoreRequest(
        run=run_name,
        runs_file=Path(runs_file) if runs_file else None,
        config=config,
        limit_images=limit_images,
        options={
            "endpoint": endpoint,
            "max_cost": max_cost,
            "progress": progress,
            "limit_share": limit_share,
        },
        source="score_run",
    )
    return score_settings(resolve_settings(request), echo=progress, plans=plans)
