"""A scoring job as asked (:class:`ScoreRequest`: by the command line, the report or a
notebook) and as resolved (:class:`ScoreSettings`, all the planners and the client see)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from judgepanel.core.config import Config, DatasetRef, Price, ScoringDesign, load_config
from judgepanel.core.errors import ConfigError
from judgepanel.core.sendconfig import COMMAND_LINE, ClientOptions, RateLimits, resolve_options
from judgepanel.datasets.kinds import get_kind, kind_names

DEFAULT_TEMPERATURE = 0.3
"""Sampling temperature of a dataset kind without a scoring design (VisionQ)."""


@dataclass(frozen=True)
class ScoreRequest:
    """A scoring job as asked: a run and/or explicit values, which win over the run's."""

    run: str | None = None
    runs_file: Path | None = None  # default: the project's ``papermill_runs.yaml``
    config: Config | None = None  # the runs file already parsed (not read again)
    dataset: str | None = None  # ``KIND:PATH`` instead of the run's datasets
    families: tuple[str, ...] = ()  # of the run's profile, or paired with ``models``
    models: tuple[str, ...] = ()
    holistic_k: int | None = None  # these three override the scoring design
    dimension_r: int | None = None
    temperature: float | None = None
    limit_images: int | None = None  # the first N items of the plan
    store: Path | None = None  # default: the profile's
    options: Mapping[str, Any] = field(default_factory=dict)  # send options, ``None``: unset
    source: str = COMMAND_LINE  # where ``options`` come from
    rubric: Path | None = None  # default: the run's, else the project's
    missing_images: str | None = None  # ``error`` or ``skip``; None: each entry's own


@dataclass(frozen=True)
class ScoreSettings:
    """What a scoring job resolved to: what the planners read, and ``send``, how calls go."""

    targets: tuple[DatasetRef, ...]
    families: dict[str, str]
    store: Path
    prices: dict[str, Price]
    send: ClientOptions = field(default_factory=ClientOptions)
    parameters: dict[str, Any] = field(default_factory=dict)
    designs: dict[str, ScoringDesign] = field(default_factory=dict)
    temperature: float | None = None
    limit_images: int | None = None
    predeclared: tuple[str, ...] = ()
    run: str = ""
    rubric: Path | None = None  # the calls' rubric file or folder (``None``: the project's)

    @property
    def seed(self) -> int:
        """The run's seed (the ``seed`` parameter, default 0)."""
        return int(self.parameters.get("seed", 0))

    def temperature_for(self, target: DatasetRef) -> float:
        """The sampling temperature of a target without its own scoring design."""
        return self.temperature if self.temperature is not None else DEFAULT_TEMPERATURE


def _override_design(base: ScoringDesign | None, request: ScoreRequest, kind: str) -> ScoringDesign:
    k, r, t = request.holistic_k, request.dimension_r, request.temperature
    given = {"holistic_k": k, "dimension_r": r, "temperature": t}
    if base is None:
        if None in given.values():
            raise ConfigError(
                f"no scoring design for dataset kind {kind!r}: give --holistic-k, "
                "--dimension-r and --temperature"
            )
        base = ScoringDesign(**given)
    changes = {name: value for name, value in given.items() if value is not None}
    return base.model_copy(update=changes) if changes else base


def _targets(request: ScoreRequest, run: Any) -> tuple[DatasetRef, ...]:
    if request.dataset:
        kind, sep, root = request.dataset.partition(":")
        if not sep or not root:
            raise ConfigError(
                f"--dataset {request.dataset!r}: expected KIND:PATH, e.g. eva:data/eva"
            )
        if kind not in kind_names():
            raise ConfigError(f"--dataset kind {kind!r}: expected one of {', '.join(kind_names())}")
        name = run.dataset if run and len(run.datasets) == 1 else kind
        return (DatasetRef(name, kind, Path(root).resolve()),)
    if run:
        return tuple(run.profile.dataset(d) for d in run.datasets)
    raise ConfigError("say what to score: --run NAME, or --dataset KIND:PATH with flags")


def _families(request: ScoreRequest, profile: Any) -> dict[str, str]:
    names, models = list(request.families), list(request.models)
    if models:
        if len(models) != len(names):
            raise ConfigError("--models must match --families one to one")
        return dict(zip(names, models, strict=True))
    if names:
        if profile is None:
            raise ConfigError("--families without --run needs --models (the model ids)")
        if unknown := [n for n in names if n not in profile.families]:
            raise ConfigError(
                f"profile {profile.name!r} has no family {', '.join(unknown)}; "
                f"it has: {', '.join(profile.families)}"
            )
        return {n: profile.families[n] for n in names}
    if profile is not None:
        return dict(profile.families)
    raise ConfigError("give --families and --models, or --run")


def resolve_settings(request: ScoreRequest) -> ScoreSettings:
    """Resolve a run and the explicit options (options win) into :class:`ScoreSettings`."""
    config: Config | None = request.config
    if config is None:
        try:
            config = load_config(request.runs_file)
        except ConfigError:  # without a run or a runs file: explicit options only
            if request.run or request.runs_file is not None:
                raise
    run = config.run(request.run) if request.run and config else None
    profile = run.profile if run else None
    targets = tuple(t.with_missing_images(request.missing_images) for t in _targets(request, run))
    families = _families(request, profile)

    store = request.store or (profile.store if profile else None)
    if store is None:
        raise ConfigError("give --store (or --run, whose profile names the store)")
    prices = {}
    for model in families.values():
        if config is None:
            raise ConfigError(f"no runs file to read the price of {model!r} from; give --runs-file")
        prices[model] = config.price(model)
    designs = {  # VAB's score-then-rank scores its set images too; VisionQ's calls take none
        t.name: _override_design(config.scoring.get(t.kind) if config else None, request, t.kind)
        for t in targets
        if get_kind(t.kind).scored
    }
    parameters = dict(run.parameters) if run else dict(config.parameters if config else {})
    send = resolve_options(*(run.layers() if run else ()), (request.source, request.options))
    send = replace(send, limits=_limits(send, families))
    return ScoreSettings(
        targets=targets,
        families=families,
        store=Path(store),
        prices=prices,
        send=send,
        parameters=parameters,
        designs=designs,
        temperature=request.temperature,
        limit_images=request.limit_images,
        predeclared=tuple(profile.predeclared) if profile else (),
        run=request.run or "",
        rubric=request.rubric or (run.rubric if run else None),
    )


def _limits(send: ClientOptions, families: dict[str, str]) -> dict[str, RateLimits]:
    """Each model's rate limits: the profile's (by family or model id), or ``--rpm``/``--tpm``."""
    out: dict[str, RateLimits] = {}
    for family, model in families.items():
        own = send.limits.get(family) or send.limits.get(model) or RateLimits()
        limits = RateLimits(
            send.rpm if send.rpm is not None else own.rpm,
            send.tpm if send.tpm is not None else own.tpm,
        )
        if limits:
            out[model] = limits
    return out
