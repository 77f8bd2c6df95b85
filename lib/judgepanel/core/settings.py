"""Typed settings of a scoring command: what the user asked for, and what it resolves to.

The command line, the report and the notebooks all describe a scoring job with a
:class:`ScoreRequest` (a run of ``papermill_runs.yaml`` and/or explicit options);
:func:`resolve_settings` turns it into :class:`ScoreSettings`, which is all the planners
and the client ever see.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
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
    """A scoring job as asked: a run and/or explicit options (an option wins over the run).

    Attributes:
        run: a run of the runs file (for example ``demo-eva``).
        runs_file: the runs file (default: ``papermill_runs.yaml`` at the project root).
        config: the runs file already parsed (then ``runs_file`` is not read again).
        dataset: ``KIND:PATH`` instead of the run's datasets.
        families: family names (of the run's profile, or paired with ``models``).
        models: model ids, one per family, when no profile names them.
        holistic_k, dimension_r, temperature: override the scoring design.
        limit_images: score only the first N items of the plan.
        store: the checkpoint store (default: the profile's).
        options: send options set over the run's and the profile's (name -> value,
            ``None``: not set; see `judgepanel.core.sendconfig.ClientOptions`).
        source: where ``options`` come from (shown by ``check --explain``).
        rubric: the rubric file or folder (default: the run's, else the project's).
        missing_images: what to do with rated images absent from disk, ``error`` or
            ``skip`` (``--missing-images``); None: each dataset entry's own (``error``
            unless the runs file says ``missing_images: skip``).
    """

    run: str | None = None
    runs_file: Path | None = None
    config: Config | None = None
    dataset: str | None = None
    families: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    holistic_k: int | None = None
    dimension_r: int | None = None
    temperature: float | None = None
    limit_images: int | None = None
    store: Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    source: str = COMMAND_LINE
    rubric: Path | None = None
    missing_images: str | None = None


@dataclass(frozen=True)
class ScoreSettings:
    """Everything a scoring job resolved to: what the planners read, and ``send``, how
    the client sends the calls."""

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
    rubric: Path | None = None
    """The rubric file or folder the calls are built from (``None``: the project's)."""

    @property
    def seed(self) -> int:
        """The run's seed (the ``seed`` parameter, default 0)."""
        return int(self.parameters.get("seed", 0))

    def temperature_for(self, target: DatasetRef) -> float:
        """The sampling temperature of a target without its own scoring design."""
        return self.temperature if self.temperature is not None else DEFAULT_TEMPERATURE


def _override_design(
    design: ScoringDesign | None, request: ScoreRequest, kind: str
) -> ScoringDesign:
    k, r, t = request.holistic_k, request.dimension_r, request.temperature
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
    return design.model_copy(update=changes) if changes else design


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
        unknown = [n for n in names if n not in profile.families]
        if unknown:
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
    if config is None and (request.run or request.runs_file is not None):
        config = load_config(request.runs_file)
    elif config is None:
        try:
            config = load_config(None)
        except ConfigError:
            config = None  # explicit options only; prices must then come from somewhere
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
    designs: dict[str, ScoringDesign] = {}
    for target in targets:
        # VAB's score-then-rank scores its set images with the rubric, under its own design;
        # VisionQ's choice calls take none.
        if not get_kind(target.kind).scored:
            continue
        base = config.scoring.get(target.kind) if config else None
        designs[target.name] = _override_design(base, request, target.kind)
    parameters = dict(run.parameters) if run else dict(config.parameters if config else {})
    send = resolve_options(*(run.layers() if run else ()), (request.source, request.options))
    send = dataclasses.replace(send, limits=_limits(send, families))
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
    """Each planned model's rate limits: the profile's ``limits`` (keyed by family name or
    model id), with ``--rpm`` and ``--tpm`` replacing what they name for every model."""
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
