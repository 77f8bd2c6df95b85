"""Planning and running the scoring of a dataset: ``judgepanel score`` and :func:`score_run`.

A run from ``papermill_runs.yaml`` (or explicit flags) resolves to datasets, families and a
scoring design; each dataset kind has its planner (the rubric scoring here, VAB and VisionQ
in their own packages); the plan minus what the store already holds is sent by
:func:`judgepanel.client.run_calls`.

Exit codes of ``judgepanel score``: 0 done (calls may have failed; they are recorded),
1 bad input or configuration, 3 stopped by the budget, 4 aborted by an error every call
would meet (for example a rejected API key).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgepanel.budget import RequestShape
from judgepanel.calls import CallKey, CallSpec, seed_from_key
from judgepanel.client import (
    ClientError,
    RunSummary,
    cached_data_url,
    pending_calls,
    run_calls,
    scrub,
)
from judgepanel.config import (
    Config,
    ConfigError,
    DatasetRef,
    Price,
    ScoringDesign,
    load_config,
)
from judgepanel.parsing import parse_score
from judgepanel.prompts import DIMENSIONS, Rubric, load_rubric
from judgepanel.store import Store, StoreError

if TYPE_CHECKING:
    from judgepanel.datasets import Dataset

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BUDGET = 3
EXIT_ABORTED = 4

SCORE_MAX_TOKENS = 200
"""Completion cap of a rubric call: the JSON score and a one-sentence reason fit in ~60."""

AESTHETIC_KINDS = ("eva", "para")
KINDS = ("eva", "para", "vab", "visionq")


# -- the rubric plan ------------------------------------------------------------------------


def _build(rubric: Rubric, kind: str, dimension: str, path: str) -> list[dict[str, Any]]:
    return rubric.messages(kind, dimension, cached_data_url(path))


def _text_chars(messages: list[dict[str, Any]]) -> int:
    n = 0
    for msg in messages:
        content = msg["content"]
        if isinstance(content, str):
            n += len(content)
        else:
            n += sum(len(p.get("text", "")) for p in content if p.get("type") == "text")
    return n


def plan_aesthetic(
    images: pd.DataFrame,
    families: dict[str, str],
    design: ScoringDesign,
    *,
    dataset: str,
) -> list[CallSpec]:
    """Every rubric call for ``images`` x ``families``: k holistic and R per dimension.

    Calls per image and family are ``design.holistic_k + 5 * design.dimension_r``. The plan
    is image-major (image, then family, then prompt, then repetition), so the repetitions
    of one image are adjacent and its file is read and encoded once.

    Args:
        images: columns ``image_id`` and ``path``.
        families: family name -> model id.
        design: repetitions and temperature.
        dataset: the dataset key in the store.

    Raises:
        ValueError: missing columns or duplicate image ids.
    """
    missing = [c for c in ("image_id", "path") if c not in images.columns]
    if missing:
        raise ValueError(f"image table lacks column(s): {', '.join(missing)}")
    ids = images["image_id"].astype(str)
    dupes = ids[ids.duplicated()].unique()
    if len(dupes):
        raise ValueError(f"duplicate image ids in the image table: {', '.join(dupes[:5])}")
    rubric = load_rubric()
    prompts: list[tuple[str, str, int, str, int]] = []
    for kind, dim, reps in [("holistic", "", design.holistic_k)] + [
        ("dimension", d, design.dimension_r) for d in DIMENSIONS
    ]:
        chars = _text_chars(rubric.messages(kind, dim, "<image>"))
        prompts.append((kind, dim, reps, rubric.prompt_hash(kind, dim), chars))
    temperature = float(design.temperature)
    specs: list[CallSpec] = []
    for image_id, path in zip(ids, images["path"].astype(str), strict=True):
        for family, model in families.items():
            for kind, dim, reps, phash, chars in prompts:
                build = partial(_build, rubric, kind, dim, path)
                for rep in range(reps):
                    key = CallKey(
                        dataset=dataset,
                        item=image_id,
                        family=family,
                        model=model,
                        kind=kind,
                        dimension=dim,
                        repetition=rep,
                        temperature=temperature,
                        rubric_sha=rubric.sha256,
                        prompt_hash=phash,
                    )
                    specs.append(
                        CallSpec(
                            key=key,
                            build=build,
                            parse=parse_score,
                            max_tokens=SCORE_MAX_TOKENS,
                            seed=seed_from_key(key),
                            n_images=1,
                            text_chars=chars,
                        )
                    )
    return specs


# -- resolving a run or flags ---------------------------------------------------------------


@dataclass(frozen=True)
class ScoreSettings:
    """Everything ``judgepanel score`` resolved from a run and/or flags."""

    targets: tuple[DatasetRef, ...]
    families: dict[str, str]
    store: Path
    prices: dict[str, Price]
    concurrency: int
    max_cost: float | None
    parameters: dict[str, Any] = field(default_factory=dict)
    designs: dict[str, ScoringDesign] = field(default_factory=dict)
    temperature: float | None = None
    limit_images: int | None = None


def _split(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def _override_design(design: ScoringDesign | None, args: Any, kind: str) -> ScoringDesign:
    k = getattr(args, "holistic_k", None)
    r = getattr(args, "dimension_r", None)
    t = getattr(args, "temperature", None)
    if design is None:
        if k is None or r is None or t is None:
            raise ConfigError(
                f"no scoring design for dataset kind {kind!r}: give --holistic-k, "
                "--dimension-r and --temperature"
            )
        design = ScoringDesign(holistic_k=k, dimension_r=r, temperature=t)
    changes = {
        name: value
        for name, value in (("holistic_k", k), ("dimension_r", r), ("temperature", t))
        if value is not None
    }
    return dataclasses.replace(design, **changes) if changes else design


def resolve_settings(args: Any) -> ScoreSettings:
    """Resolve ``--run`` and the explicit flags (flags win) into :class:`ScoreSettings`."""
    runs_file = getattr(args, "runs_file", None)
    config: Config | None = None
    if getattr(args, "run", None) or runs_file is not None:
        config = load_config(runs_file)
    else:
        try:
            config = load_config(None)
        except ConfigError:
            config = None  # explicit flags only; prices must then come from somewhere
    run = config.run(args.run) if getattr(args, "run", None) and config else None
    profile = run.profile if run else None

    # datasets
    if getattr(args, "dataset", None):
        kind, sep, root = args.dataset.partition(":")
        if not sep or not root:
            raise ConfigError(f"--dataset {args.dataset!r}: expected KIND:PATH, e.g. eva:data/eva")
        if kind not in KINDS:
            raise ConfigError(f"--dataset kind {kind!r}: expected one of {', '.join(KINDS)}")
        name = run.dataset if run and len(run.datasets) == 1 else kind
        targets: tuple[DatasetRef, ...] = (DatasetRef(name, kind, Path(root).resolve()),)
    elif run:
        refs = [profile.dataset(d) for d in run.datasets]
        targets = tuple(refs)
    else:
        raise ConfigError("say what to score: --run NAME, or --dataset KIND:PATH with flags")

    # families
    names, models = _split(getattr(args, "families", None)), _split(getattr(args, "models", None))
    if models:
        if len(models) != len(names):
            raise ConfigError("--models must match --families one to one")
        families = dict(zip(names, models, strict=True))
    elif names:
        if profile is None:
            raise ConfigError("--families without --run needs --models (the model ids)")
        unknown = [n for n in names if n not in profile.families]
        if unknown:
            raise ConfigError(
                f"profile {profile.name!r} has no family {', '.join(unknown)}; "
                f"it has: {', '.join(profile.families)}"
            )
        families = {n: profile.families[n] for n in names}
    elif profile is not None:
        families = dict(profile.families)
    else:
        raise ConfigError("give --families and --models, or --run")

    store = getattr(args, "store", None) or (profile.store if profile else None)
    if store is None:
        raise ConfigError("give --store (or --run, whose profile names the store)")
    concurrency = getattr(args, "concurrency", None) or (profile.concurrency if profile else 16)
    max_cost = getattr(args, "max_cost", None)
    if max_cost is None and profile is not None and profile.max_cost > 0:
        max_cost = profile.max_cost
    prices = {}
    for model in families.values():
        if config is None:
            raise ConfigError(f"no runs file to read the price of {model!r} from; give --runs-file")
        prices[model] = config.price(model)
    designs: dict[str, ScoringDesign] = {}
    for target in targets:
        dk = target.kind if target.kind in AESTHETIC_KINDS else "vab"
        if target.kind == "visionq":
            continue
        base = config.scoring.get(dk) if config else None
        designs[target.name] = _override_design(base, args, dk)
    parameters = dict(run.parameters) if run else dict(config.parameters if config else {})
    return ScoreSettings(
        targets=targets,
        families=families,
        store=Path(store),
        prices=prices,
        concurrency=int(concurrency),
        max_cost=max_cost,
        parameters=parameters,
        designs=designs,
        temperature=getattr(args, "temperature", None),
        limit_images=getattr(args, "limit_images", None),
    )


def scored_dataset(kind: str, root: str | Path, design: ScoringDesign) -> Dataset:
    """The rated images a scoring design covers: its stratified sample of ``n_images``
    (seed ``sample_seed``), or every image when the design names no ``n_images``.

    The planner and the notebooks both take the images from here, so an analysis reads
    exactly the images that were scored.
    """
    from judgepanel.datasets import load_dataset

    ds = load_dataset(kind, str(root))
    return ds if design.n_images is None else ds.sample(design.n_images, design.sample_seed)


def plan_target(target: DatasetRef, settings: ScoreSettings) -> list[CallSpec]:
    """The calls of one dataset, dispatched by its kind (see the interfaces of each study)."""
    # The studies import the scoring path, so they are imported here, not at module level.
    from judgepanel import vab, visionq
    from judgepanel.datasets import load_vab, load_visionq
    from judgepanel.datasets.visionq import bench_files

    families = settings.families
    limit = settings.limit_images
    params = settings.parameters
    seed = int(params.get("seed", 0))
    if target.kind in AESTHETIC_KINDS:
        design = settings.designs[target.name]
        images = scored_dataset(target.kind, target.root, design).images
        if limit is not None:
            images = images.head(limit)
        return plan_aesthetic(images, families, design, dataset=target.name)
    temperature = settings.temperature if settings.temperature is not None else 0.3
    if target.kind == "vab":
        tasks = load_vab(target.root)
        if limit is not None:
            tasks = tasks.head(limit)
        specs = vab.plan_calls(
            tasks,
            families,
            dataset=target.name,
            temperature=temperature,
            n_orders=int(params.get("vab_orders", 3)),
            balanced=bool(params.get("vab_balanced", True)),
            seed=seed,
        )
        cache_dir = settings.store.parent / "cache" / f"{target.name}-images"
        images = vab.image_table(tasks, cache_dir)
        specs += plan_aesthetic(
            images, families, settings.designs[target.name], dataset=target.name
        )
        return specs
    if target.kind == "visionq":
        default_questions, default_eligible = bench_files(target.root)
        questions = load_visionq(
            target.questions or default_questions,
            target.root,
            eligible_ids=target.eligible or default_eligible,
        )
        if limit is not None:
            questions = questions.head(limit)
        return visionq.plan_calls(
            questions,
            families,
            dataset=target.name,
            temperature=temperature,
            rotations=int(params.get("visionq_rotations", 0)),
            seed=seed,
        )
    raise ConfigError(f"unknown dataset kind {target.kind!r}")


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

    The upper bound is what the budget reserves (:mod:`judgepanel.budget`). The expected
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
        shape_key = (key.dataset, key.item, key.kind, key.dimension, key.prompt_hash)
        shape = shapes.get(shape_key)
        if shape is None or shape.max_tokens != spec.max_tokens:
            shape = shapes[shape_key] = RequestShape.of(spec.build(), spec.max_tokens)
        row["upper_bound_usd"] += shape.bound(max_reasks).cost(price)
        seen = observed.get((key.model, key.kind))
        if seen is not None:
            row["expected_usd"] += seen
        else:
            row["expected_usd"] += price.cost(shape.input_expected(), min(shape.max_tokens, 60))
    return pd.DataFrame(list(rows.values()))


# -- commands -------------------------------------------------------------------------------


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
    )


def score_settings(
    settings: ScoreSettings,
    *,
    base_url: str | None = None,
    timeout: float = 60.0,
    max_attempts: int = 6,
    max_reasks: int = 2,
    retry_failed: bool = False,
    progress: bool = True,
    echo: bool = True,
) -> RunSummary:
    """Plan and send every target of ``settings``; the ceiling spans all of them."""
    summaries: list[RunSummary] = []
    with Store(settings.store) as store:
        for target in settings.targets:
            specs = plan_target(target, settings)
            remaining = None
            if settings.max_cost is not None:
                remaining = max(0.0, settings.max_cost - sum(s.spend for s in summaries))
            if echo:
                print(f"{target.name} ({target.kind}): {len(specs)} calls planned", flush=True)
            summary = run_calls(
                specs,
                store,
                base_url=base_url,
                concurrency=settings.concurrency,
                max_cost=remaining,
                prices=settings.prices,
                timeout=timeout,
                max_attempts=max_attempts,
                max_reasks=max_reasks,
                progress=progress,
                retry_failed=retry_failed,
                desc=target.name,
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
    base_url: str | None = None,
    limit_images: int | None = None,
    max_cost: float | None = None,
    progress: bool = True,
) -> RunSummary:
    """Score one run of ``papermill_runs.yaml`` (the entry point of notebooks and reports).

    Uses the profile's store, families, concurrency and ceiling and the run's parameters;
    the endpoint comes from ``base_url`` or ``OPENAI_BASE_URL``, the key from
    ``OPENAI_API_KEY``. ``max_cost`` replaces the profile's ceiling, like ``--max-cost``.
    """
    args = argparse_namespace(
        run=run_name,
        runs_file=Path(runs_file) if runs_file else None,
        limit_images=limit_images,
        max_cost=max_cost,
    )
    settings = resolve_settings(args)
    return score_settings(settings, base_url=base_url, progress=progress, echo=progress)


def argparse_namespace(**values: Any) -> Any:
    """A namespace with every ``judgepanel score`` flag at its default, updated by values."""
    from judgepanel.cli import build_parser

    args = build_parser().parse_args(["score"])
    for name, value in values.items():
        setattr(args, name, value)
    return args


def _print_dry_run(settings: ScoreSettings, max_reasks: int, retry_failed: bool) -> None:
    # A dry run never creates the store: with no file yet, nothing is stored.
    exists = settings.store.exists()
    with Store(settings.store, readonly=True) if exists else Store(":memory:") as store:
        for target in settings.targets:
            specs = plan_target(target, settings)
            table = estimate_plan(
                specs, store, settings.prices, max_reasks=max_reasks, retry_failed=retry_failed
            )
            print(f"{target.name} ({target.kind}, {target.root}): {len(specs)} calls planned")
            if len(table):
                shown = table.copy()
                for col in ("expected_usd", "upper_bound_usd"):
                    shown[col] = shown[col].map(lambda v: f"{v:.4f}")
                print(shown.to_string(index=False))
                print(
                    f"total: {int(table['to_send'].sum())} to send, "
                    f"{int(table['stored'].sum())} already stored, expected "
                    f"${table['expected_usd'].sum():.4f}, upper bound "
                    f"${table['upper_bound_usd'].sum():.4f}"
                )
    ceiling = "none" if settings.max_cost is None else f"${settings.max_cost:.2f}"
    print(f"ceiling (--max-cost): {ceiling}; nothing was sent (dry run)")


def score_command(args: Any) -> int:
    """``judgepanel score``: plan, skip what is stored, send the rest; see module exit codes."""
    try:
        settings = resolve_settings(args)
        if args.dry_run:
            _print_dry_run(settings, args.max_reasks, args.retry_failed)
            return EXIT_OK
        base_url = args.base_url or os.environ.get("OPENAI_BASE_URL")
        print(f"endpoint: {base_url or '(SDK default)'}; store: {settings.store}", flush=True)
        summary = score_settings(
            settings,
            base_url=base_url,
            timeout=args.timeout,
            max_attempts=args.max_attempts,
            max_reasks=args.max_reasks,
            retry_failed=args.retry_failed,
            progress=not args.no_progress,
        )
    except (ConfigError, ClientError, StoreError, FileNotFoundError, ValueError) as exc:
        print(f"error: {scrub(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    if summary.aborted:
        print(f"error: the run was aborted: {summary.aborted}", file=sys.stderr)
        return EXIT_ABORTED
    if summary.stopped_by_budget:
        print(
            f"the budget stopped the run: ${summary.spend:.4f} spent, {summary.unsent} planned "
            "calls not sent (they stay planned; raise --max-cost and run again to resume)",
            file=sys.stderr,
        )
        return EXIT_BUDGET
    return EXIT_OK
