"""``papermill_runs.yaml``: profiles, runs, the scoring design and the price table.

The file is the single place where a run differs from another. A notebook receives the run's
name and resolves the rest from this file (`judgepanel.report.notebook_run`); the API key is
never part of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from judgepanel.core.errors import ConfigError
from judgepanel.core.paths import DEFAULT_RUNS_FILE, project_root
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.core.runsfile import ScoringSpec, validate_runs_file
from judgepanel.core.sendconfig import ClientOptions, file_options, resolve_options
from judgepanel.datasets.kinds import all_kinds, get_kind
from judgepanel.datasets.presence import check_policy

MISSING_IMAGES = "missing_images"
"""The dataset key (and, as ``--missing-images``, the flag) that says what a run does with
rated images absent from disk (`judgepanel.datasets.presence`)."""


def takes_missing_images(kind: str) -> bool:
    """Whether a dataset entry of ``kind`` takes the ``missing_images`` key."""
    return MISSING_IMAGES in get_kind(kind).keys


@dataclass(frozen=True)
class DatasetRef:
    """A dataset a profile knows: its key in the store, its format and where it lives.

    Attributes:
        name: the dataset's key in the profile and in the store.
        kind: its format: a kind registered in `judgepanel.datasets.kinds` (``eva``,
            ``para``, ``ratings``, ``ava``, ``aadb``, ``koniq``, ``spaq``, ``lapis``,
            ``vab``, ``visionq``, and any registered since).
        root: its folder (for VisionQ, the benchmark root that image paths are relative to).
        questions: VisionQ only: the question file, when it does not sit under ``root``.
        eligible: VisionQ only: the file of eligible question ids, when not under ``root``.
        options: the other runs-file keys its kind declares, by name (paths resolved).
    """

    name: str
    kind: str
    root: Path
    questions: Path | None = None
    eligible: Path | None = None
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def loader_keys(self) -> dict[str, Any]:
        """The keys its loader takes by name (``options``): what a run reads it with."""
        return dict(self.options)

    @property
    def missing_images(self) -> str | None:
        """Its ``missing_images`` policy; None where its kind takes none (VAB, VisionQ)."""
        return self.loader_keys.get("missing_images")

    def with_missing_images(self, policy: str | None) -> DatasetRef:
        """This reference read under ``policy`` (``--missing-images``, which wins over the
        runs file); unchanged for None or a kind that declares no such key."""
        if policy is None or not takes_missing_images(self.kind):
            return self
        check_policy(policy)
        keys = {**self.loader_keys, MISSING_IMAGES: policy}
        return dataclasses.replace(self, options=tuple(keys.items()))


@dataclass(frozen=True)
class Price:
    """USD per one million input, cached input and output tokens.

    ``cached_input`` is what a provider bills for prompt tokens it served from its cache
    (a repeated prompt prefix); ``None`` means cached tokens cost the full input price,
    the safe assumption where a discount is not confirmed.

    A batch API bills less: ``batch_input`` and ``batch_output`` give its prices, or
    ``batch_discount`` the share it takes off every price (0.5: half price). Neither means
    no batch price is known, and a batch is budgeted and charged at the online price.
    """

    input: float
    output: float
    cached_input: float | None = None
    batch_discount: float | None = None
    batch_input: float | None = None
    batch_output: float | None = None

    def batch(self) -> Price | None:
        """The prices of a batch line (``None``: no batch price given)."""
        if self.batch_input is not None and self.batch_output is not None:
            share = self.batch_input / self.input if self.input else 1.0
            cached = None if self.cached_input is None else self.cached_input * share
            return Price(self.batch_input, self.batch_output, cached)
        if self.batch_discount is None:
            return None
        keep = 1.0 - self.batch_discount
        cached = None if self.cached_input is None else self.cached_input * keep
        return Price(self.input * keep, self.output * keep, cached)

    def cost(
        self, prompt_tokens: float, completion_tokens: float, cached_tokens: float = 0
    ) -> float:
        """USD for one answer; ``prompt_tokens`` includes the ``cached_tokens`` (as OpenAI's
        usage counts them), which are billed at ``cached_input``.

        Raises:
            ValueError: ``cached_tokens`` is negative or more than ``prompt_tokens``.
        """
        if not 0 <= cached_tokens <= prompt_tokens:
            raise ValueError(
                f"cached_tokens must lie between 0 and prompt_tokens ({prompt_tokens}), "
                f"got {cached_tokens}: the cached tokens are part of the prompt"
            )
        cached_price = self.input if self.cached_input is None else self.cached_input
        return (
            (prompt_tokens - cached_tokens) * self.input
            + cached_tokens * cached_price
            + completion_tokens * self.output
        ) / 1e6


@dataclass(frozen=True)
class Profile:
    """Where the data and the store live, which model each family name means, and the
    send options the profile sets (``options``: name -> value, only those it names)."""

    name: str
    description: str
    simulated: bool
    store: Path
    datasets: dict[str, DatasetRef]
    families: dict[str, str]
    predeclared: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)
    rubric: Path | None = None
    """The profile's rubric file or folder (``None``: the project's ``rubric/``)."""

    @property
    def source(self) -> str:
        """The profile as the source of a send option's value."""
        return f"profile {self.name!r}"

    @property
    def send(self) -> ClientOptions:
        """How the profile's calls are sent: the declared defaults and its own options."""
        return resolve_options((self.source, self.options))

    def dataset(self, name: str) -> DatasetRef:
        try:
            return self.datasets[name]
        except KeyError:
            known = ", ".join(sorted(self.datasets))
            raise ConfigError(
                f"profile {self.name!r} has no dataset {name!r}; it has: {known}"
            ) from None


@dataclass(frozen=True)
class ScoringDesign:
    """Repetitions and temperature of the rubric-fusion scoring, for one dataset kind."""

    holistic_k: int
    dimension_r: int
    temperature: float
    n_images: int | None = None
    sample_seed: int = 0
    sham_r: int = 0
    """Repetitions per dimension of the sham rubric (pre-declared families; 0: none)."""

    @property
    def calls_per_image(self) -> int:
        """Calls per image and family: k holistic plus R per rubric dimension."""
        return self.holistic_k + len(DIMENSIONS) * self.dimension_r


@dataclass(frozen=True)
class Run:
    """One run of the report: a profile, its dataset(s), notebooks and parameters.

    ``parameters`` are the runs file's global parameters updated by the run's own;
    ``own_parameters`` are the run's own alone (a study must know each of them).
    """

    name: str
    profile: Profile
    datasets: tuple[str, ...]
    notebooks: tuple[str, ...]
    parameters: dict[str, Any] = field(default_factory=dict)
    own_parameters: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    """The send options the run sets over its profile's (only those it names)."""
    own_rubric: Path | None = None
    """The rubric the run names itself (``None``: its profile's)."""

    @property
    def rubric(self) -> Path | None:
        """The run's rubric file or folder: its own, else its profile's (``None``: the
        project's ``rubric/``)."""
        return self.own_rubric or self.profile.rubric

    def layers(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The runs file's layers of the run's send options: its profile's, then its own."""
        return ((self.profile.source, self.profile.options), (f"run {self.name!r}", self.options))

    @property
    def send(self) -> ClientOptions:
        """How the run's calls are sent: the declared defaults, the profile's, the run's."""
        return resolve_options(*self.layers())

    @property
    def dataset(self) -> str:
        """The run's single dataset; runs over two datasets must use ``datasets``."""
        if len(self.datasets) != 1:
            raise ConfigError(f"run {self.name!r} spans {len(self.datasets)} datasets")
        return self.datasets[0]


@dataclass(frozen=True)
class Config:
    """The parsed runs file."""

    path: Path
    profiles: dict[str, Profile]
    runs: dict[str, Run]
    scoring: dict[str, ScoringDesign]
    prices: dict[str, Price]
    parameters: dict[str, Any]
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The file's YAML as parsed (a quick report writes its copy from it)."""

    def run(self, name: str) -> Run:
        try:
            return self.runs[name]
        except KeyError:
            known = ", ".join(self.runs)
            raise ConfigError(f"{self.path}: no run {name!r}; runs are: {known}") from None

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(self.profiles)
            raise ConfigError(f"{self.path}: no profile {name!r}; profiles are: {known}") from None

    def runs_of(self, profile: str) -> list[Run]:
        self.profile(profile)
        return [r for r in self.runs.values() if r.profile.name == profile]

    def design(self, kind: str) -> ScoringDesign:
        try:
            return self.scoring[kind]
        except KeyError:
            raise ConfigError(f"{self.path}: no scoring design for dataset kind {kind!r}") from None

    def price(self, model: str) -> Price:
        try:
            return self.prices[model]
        except KeyError:
            raise ConfigError(
                f"{self.path}: no price for model {model!r}; add it under `prices:` "
                "(USD per 1M input and output tokens) so the budget can be enforced"
            ) from None


def _dataset_ref(name: str, spec: Any, resolve: Callable[[str], Path]) -> DatasetRef:
    """A profile's dataset entry, its paths resolved: the keys its kind declares fill the
    reference's fields of their name (VisionQ's ``questions``, ``eligible``), else
    ``options``."""
    values = {}
    for key, declared in get_kind(spec.kind).keys.items():
        value = getattr(spec, key)
        values[key] = resolve(value) if declared.path and value else value
    named = {k: v for k, v in values.items() if k in ("questions", "eligible")}
    options = tuple((k, v) for k, v in values.items() if k not in named)
    return DatasetRef(name, spec.kind, resolve(spec.root), **named, options=options)


def _scoring_specs() -> dict[str, ScoringSpec]:
    """The scoring designs the registered kinds bring, for a runs file that names none."""
    specs = {}
    for kind in all_kinds():
        if kind.design is not None:
            try:
                specs[kind.name] = ScoringSpec.model_validate(dict(kind.design))
            except ValueError as exc:
                raise ConfigError(
                    f"dataset kind {kind.name!r}: its scoring design: {exc}"
                ) from None
    return specs


def load_config(path: str | Path | None = None) -> Config:
    """Parse ``papermill_runs.yaml``; relative paths are resolved against its folder.

    The file is first checked against its schema (`judgepanel.core.runsfile`): an unknown
    key, a wrong type, an unknown dataset kind or a run naming a profile or dataset that
    does not exist is a `ConfigError` naming the file, the line and the key.
    """
    path = Path(path) if path else project_root() / DEFAULT_RUNS_FILE
    if not path.exists():
        raise ConfigError(f"{path}: runs file not found")
    text = path.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    try:
        spec = validate_runs_file(raw, path, text)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    base = path.resolve().parent

    def resolve(p: str) -> Path:
        q = Path(p)
        return q if q.is_absolute() else base / q

    profiles: dict[str, Profile] = {}
    for name, prof in spec.profiles.items():
        datasets = {key: _dataset_ref(key, d, resolve) for key, d in prof.datasets.items()}
        families = dict(prof.families)
        profiles[name] = Profile(
            name=name,
            description=prof.description,
            simulated=prof.simulated,
            store=resolve(prof.store),
            datasets=datasets,
            families=families,
            predeclared=tuple(prof.predeclared or list(families)[:3]),
            options=file_options(prof, "profile"),
            rubric=resolve(prof.rubric) if prof.rubric else None,
        )
    scoring = {
        kind: ScoringDesign(
            holistic_k=d.holistic_k,
            dimension_r=d.dimension_r,
            temperature=d.temperature,
            n_images=d.n_images,
            sample_seed=d.sample_seed,
            sham_r=d.sham_r,
        )
        for kind, d in {**_scoring_specs(), **spec.scoring}.items()
    }
    prices = {
        model: Price(
            p.input, p.output, p.cached_input, p.batch_discount, p.batch_input, p.batch_output
        )
        for model, p in spec.prices.items()
    }
    parameters = dict(spec.parameters)
    runs = {
        name: Run(
            name=name,
            profile=profiles[r.profile],
            datasets=tuple([r.dataset] if r.dataset is not None else r.datasets or []),
            notebooks=tuple(r.notebooks),
            parameters={**parameters, **r.parameters},
            own_parameters=dict(r.parameters),
            options=file_options(r, "run"),
            own_rubric=resolve(r.rubric) if r.rubric else None,
        )
        for name, r in spec.runs.items()
    }
    return Config(path, profiles, runs, scoring, prices, parameters, raw=raw)
