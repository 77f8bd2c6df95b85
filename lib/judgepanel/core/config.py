"""``papermill_runs.yaml``: profiles, runs, scoring designs and prices. Each model is both the
schema of its part of the file and what the code reads, so a new key is one field; a bad key
or value is an error naming the file, the line and the key."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, reduce
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar, get_args, get_origin

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from judgepanel.core.errors import ConfigError
from judgepanel.core.paths import DEFAULT_RUNS_FILE, project_root
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.core.sendconfig import (
    ClientOptions,
    Frozen,
    file_options,
    resolve_options,
    send_keys,
)
from judgepanel.datasets import kinds
from judgepanel.datasets.presence import check_policy

T = TypeVar("T")
Loc = tuple[Any, ...]

MISSING_IMAGES = "missing_images"
"""The dataset key (and flag) saying what a run does with rated images absent from disk."""


def takes_missing_images(kind: str) -> bool:
    """Whether a dataset entry of ``kind`` takes the ``missing_images`` key."""
    return MISSING_IMAGES in kinds.get_kind(kind).keys


def _problems(title: str, problems: list[tuple[Loc, str]]) -> ValidationError:
    """The error of ``problems`` (key path, what is wrong), each placed under the model's."""
    errors = [
        InitErrorDetails(type=PydanticCustomError("runs_file", "{p}", {"p": p}), loc=loc, input=0)
        for loc, p in problems
    ]
    return ValidationError.from_exception_data(title, errors)


def _unknown_kind(kind: Any) -> str | None:
    if isinstance(kind, str) and kind in kinds.kind_names():
        return None
    return f"unknown dataset kind {kind!r}; known kinds: {', '.join(kinds.kind_names())}"


def _known_kind(kind: str) -> str:
    if problem := _unknown_kind(kind):
        raise ValueError(problem)
    return kind


@cache
def _entry_model(name: str, version: int) -> type[Frozen]:
    kind = kinds.get_kind(name)
    fields: dict[str, Any] = {"kind": (Literal[kind.name], ...), "root": (str, ...)}
    for key, declared in kind.keys.items():
        fields[key] = (declared.type, Field(declared.default, description=declared.doc or None))
    title = f"{kind.name.capitalize()}Dataset"
    return create_model(title, __base__=Frozen, __doc__=kind.summary, **fields)


def dataset_model(kind: kinds.DatasetKind) -> type[Frozen]:
    """The model of a dataset entry of ``kind`` (its declared keys), as the registry is now."""
    return _entry_model(kind.name, kinds.registry_version())


def _under(path: Path, context: dict[str, Any] | None) -> Path:
    """``path`` relative to the runs file's folder (the context's ``base``), if any."""
    base = (context or {}).get("base")
    return path if base is None or path.is_absolute() else base / path


FilePath = Annotated[Path, AfterValidator(lambda p, info: _under(p, info.context))]
KindName = Annotated[str, AfterValidator(_known_kind)]


class _Part(Frozen):
    """A part of the runs file: validated with a context, its input is the file's entry, read
    by `_read`; the fields of ``set_by_code`` are refused there."""

    set_by_code: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict) or info.context is None:
            return data
        if inner := [k for k in data if k in cls.set_by_code]:
            extra = [InitErrorDetails(type="extra_forbidden", loc=(k,), input=0) for k in inner]
            raise ValidationError.from_exception_data(cls.__name__, extra)
        return cls._read(data, info.context)

    @classmethod
    def _read(cls, data: dict[str, Any], context: dict[str, Any]) -> Any:
        return data

    @classmethod
    def file_keys(cls) -> list[str]:
        """The keys this part of the file takes, as an error lists them."""
        return [f.alias or n for n, f in cls.model_fields.items() if n not in cls.set_by_code]


def _named(parts: dict[str, Any]) -> dict[str, Any]:
    return {key: part.model_copy(update={"name": key}) for key, part in parts.items()}


def _find(table: dict[str, T], key: str, problem: str) -> T:
    try:
        return table[key]
    except KeyError:
        raise ConfigError(problem) from None


class DatasetRef(_Part):
    """A dataset a profile knows: its key in the store (``name``), ``kind``, folder and the other
    keys its kind declares (``options``; VisionQ's files may lie outside ``root``)."""

    name: str = ""
    kind: str
    root: FilePath
    questions: FilePath | None = None
    eligible: FilePath | None = None
    options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def _read(cls, data: dict[str, Any], context: dict[str, Any]) -> Any:
        """The entry checked against its kind's keys, so that another kind's key (``questions:``
        under ``ava``) is refused like a typo."""
        if "kind" not in data or (problem := _unknown_kind(data["kind"])):
            known = f"missing key 'kind'; known kinds: {', '.join(kinds.kind_names())}"
            raise _problems("dataset", [(("kind",), problem) if "kind" in data else ((), known)])
        kind = kinds.get_kind(data["kind"])
        entry = dataset_model(kind).model_validate(data)
        values = {k: getattr(entry, k) for k in kind.keys}
        for key in [k for k, v in values.items() if kind.keys[k].path and v]:
            values[key] = _under(Path(values[key]), context)
        named = {key: values.pop(key) for key in ("questions", "eligible") if key in values}
        return {"kind": kind.name, "root": entry.root, **named, "options": tuple(values.items())}

    @property
    def loader_keys(self) -> dict[str, Any]:
        """The keys its loader takes by name."""
        return dict(self.options)

    @property
    def missing_images(self) -> str | None:
        """Its ``missing_images`` policy; None where its kind takes none (VAB, VisionQ)."""
        return self.loader_keys.get(MISSING_IMAGES)

    def with_missing_images(self, policy: str | None) -> DatasetRef:
        """This reference under ``policy`` (``--missing-images`` wins over the runs file)."""
        if policy is None or not takes_missing_images(self.kind):
            return self
        check_policy(policy)
        keys = {**self.loader_keys, MISSING_IMAGES: policy}
        return self.model_copy(update={"options": tuple(keys.items())})


class Price(_Part):
    """USD per one million input, cached input (``None``: the input price) and output tokens;
    a batch API's are ``batch_input`` and ``batch_output``, or less ``batch_discount``."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)
    batch_discount: float | None = Field(None, ge=0, lt=1)
    batch_input: float | None = Field(None, ge=0)
    batch_output: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one_batch_price(self) -> Price:
        if (self.batch_input is None) != (self.batch_output is None):
            raise ValueError("give both `batch_input` and `batch_output`, or neither")
        if self.batch_discount is not None and self.batch_input is not None:
            raise ValueError("give `batch_discount` or batch prices, not both")
        return self

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
        usage counts them), billed at ``cached_input``."""
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


class ScoringDesign(_Part):
    """The rubric-fusion scoring of one dataset kind (``sham_r``: of the sham rubric)."""

    holistic_k: int = Field(ge=0)
    dimension_r: int = Field(ge=0)
    temperature: float = Field(ge=0)
    n_images: int | None = Field(None, ge=1)
    sample_seed: int = 0
    sham_r: int = Field(0, ge=0)

    @property
    def calls_per_image(self) -> int:
        """Calls per image and family: k holistic plus R per rubric dimension."""
        return self.holistic_k + len(DIMENSIONS) * self.dimension_r


_ProfileSendKeys = create_model("_ProfileSendKeys", __base__=_Part, **send_keys("profile"))
_RunSendKeys = create_model("_RunSendKeys", __base__=_Part, **send_keys("run"))


class Profile(_ProfileSendKeys):  # type: ignore[misc, valid-type]
    """Where the data and the store live, the model of each family, how calls are sent, the
    families of the pre-declared comparisons (default: the first three) and the rubric."""

    set_by_code = frozenset({"name"})
    name: str = ""
    description: str = ""
    simulated: bool = False
    store: FilePath
    datasets: dict[str, DatasetRef]
    families: dict[str, str]
    predeclared: tuple[str, ...] = Field((), validate_default=True)
    rubric: FilePath | None = None

    _named_datasets = field_validator("datasets")(_named)

    @field_validator("predeclared")
    @classmethod
    def _first_three(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        families = list(info.data.get("families", ()))
        unknown = [f for f in value if f not in families]
        if unknown and "families" in info.data:
            raise ValueError(f"predeclared families not in `families`: {unknown}")
        return value or tuple(families[:3])

    @model_validator(mode="after")
    def _limits_name_families(self) -> Profile:
        models = set(self.families.values())
        if stray := [k for k in self.limits if k not in self.families and k not in models]:
            raise ValueError(f"`limits` names neither a family nor a model id: {stray}")
        return self

    @property
    def layer(self) -> tuple[str, dict[str, Any]]:
        """The send options it sets, as a layer of `resolve_options`."""
        return (f"profile {self.name!r}", file_options(self, "profile"))

    @property
    def send(self) -> ClientOptions:
        return resolve_options(self.layer)

    def dataset(self, name: str) -> DatasetRef:
        known = ", ".join(sorted(self.datasets))
        problem = f"profile {self.name!r} has no dataset {name!r}; it has: {known}"
        return _find(self.datasets, name, problem)


class Run(_RunSendKeys):  # type: ignore[misc, valid-type]
    """One run of the report: a profile, dataset(s), notebooks, send options over its profile's,
    ``parameters`` (the file's updated by ``own_parameters``, which a study must each know)."""

    set_by_code = frozenset({"name", "own_parameters"})
    name: str = ""
    profile: Profile
    datasets: tuple[str, ...]
    notebooks: tuple[str, ...]
    parameters: dict[str, Any] = Field(default_factory=dict)
    own_parameters: dict[str, Any] = Field(default_factory=dict)
    own_rubric: FilePath | None = Field(None, alias="rubric")

    @classmethod
    def file_keys(cls) -> list[str]:
        keys = super().file_keys()
        return [*keys[: keys.index("datasets")], "dataset", *keys[keys.index("datasets") :]]

    @classmethod
    def _read(cls, data: dict[str, Any], context: dict[str, Any]) -> Any:
        """The run's profile found, its datasets checked, its parameters laid over the file's."""
        one = data.get("dataset") is not None
        if one == (data.get("datasets") is not None):
            raise ValueError("give either `dataset` or `datasets` (a list), not both or neither")
        out = {k: v for k, v in data.items() if k != "dataset"}
        out["datasets"] = names = [data["dataset"]] if one else data["datasets"]
        if isinstance(own := data.get("parameters", {}), dict):
            out |= {"parameters": {**context["parameters"], **own}, "own_parameters": own}
        if (profiles := context["profiles"]) is None:  # their own errors are reported
            return out | {
                "profile": Profile.model_construct(store=Path(), datasets={}, families={})
            }
        name = data.get("profile")
        if (profile := profiles.get(name) if isinstance(name, str) else None) is None:
            unknown = f"unknown profile {name!r}; profiles: {', '.join(profiles)}"
            if "profile" in data:
                raise _problems("run", [(("profile",), unknown)])
            return out
        known = ", ".join(profile.datasets)
        if wrong := [
            (("dataset",) if one else ("datasets", i), f"profile {name!r} has no dataset {d!r}")
            for i, d in enumerate(names if isinstance(names, list) else ())
            if isinstance(d, str) and d not in profile.datasets
        ]:
            raise _problems("run", [(loc, f"{what}; it has: {known}") for loc, what in wrong])
        return out | {"profile": profile}

    @property
    def rubric(self) -> Path | None:
        """Its own rubric, else its profile's (``None``: the project's)."""
        return self.own_rubric or self.profile.rubric

    def layers(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        """The layers of the run's send options: its profile's, then its own."""
        return (self.profile.layer, (f"run {self.name!r}", file_options(self, "run")))

    @property
    def send(self) -> ClientOptions:
        return resolve_options(*self.layers())

    @property
    def dataset(self) -> str:
        """The run's single dataset."""
        if len(self.datasets) != 1:
            raise ConfigError(f"run {self.name!r} spans {len(self.datasets)} datasets")
        return self.datasets[0]


class Config(_Part):
    """The parsed runs file; ``raw`` is its YAML (a quick report writes its copy from it)."""

    set_by_code = frozenset({"path", "raw"})
    path: Path = Path()
    profiles: dict[str, Profile]
    scoring: dict[KindName, ScoringDesign] = Field(default_factory=dict, validate_default=True)
    prices: dict[str, Price] = Field(default_factory=dict)
    parameters: dict[str, Any] = Field(default_factory=dict)
    runs: dict[str, Run]
    raw: dict[str, Any] = Field(default_factory=dict, repr=False)

    _named_profiles = field_validator("profiles")(_named)
    _named_runs = field_validator("runs")(_named)

    @field_validator("scoring")
    @classmethod
    def _and_the_kinds(cls, scoring: dict[str, ScoringDesign]) -> dict[str, ScoringDesign]:
        """The file's designs, and those the registered kinds bring for the others."""
        designs = {}
        for kind in kinds.all_kinds():
            try:
                if kind.design is not None:
                    designs[kind.name] = ScoringDesign.model_validate(dict(kind.design))
            except ValidationError as exc:
                raise ValueError(f"dataset kind {kind.name!r}'s scoring design: {exc}") from None
        return designs | scoring

    @field_validator("runs", mode="before")
    @classmethod
    def _known_to_runs(cls, runs: Any, info: ValidationInfo) -> Any:
        """The profiles (``None``: wrong) and parameters a run reads, validated before it."""
        if info.context is not None:
            info.context["profiles"] = info.data.get("profiles")
            info.context["parameters"] = info.data.get("parameters", {})
        return runs

    def run(self, name: str) -> Run:
        problem = f"{self.path}: no run {name!r}; runs are: {', '.join(self.runs)}"
        return _find(self.runs, name, problem)

    def profile(self, name: str) -> Profile:
        problem = f"{self.path}: no profile {name!r}; profiles are: {', '.join(self.profiles)}"
        return _find(self.profiles, name, problem)

    def runs_of(self, profile: str) -> list[Run]:
        self.profile(profile)
        return [r for r in self.runs.values() if r.profile.name == profile]

    def design(self, kind: str) -> ScoringDesign:
        problem = f"{self.path}: no scoring design for dataset kind {kind!r}"
        return _find(self.scoring, kind, problem)

    def price(self, model: str) -> Price:
        problem = (
            f"{self.path}: no price for model {model!r}; add it under `prices:` "
            "(USD per 1M input and output tokens) so the budget can be enforced"
        )
        return _find(self.prices, model, problem)


def _line(node: yaml.Node | None, loc: Loc) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (the key's line for a mapping key)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = [(k, v) for k, v in node.value if str(k.value) == str(part)]
            key, node = match[0] if match else (None, None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            key = node = node.value[part] if part < len(node.value) else None
        else:
            key = None
        if key is None:
            return line
        line = key.start_mark.line + 1
    return line


def _problem(err: Any, raw: Any) -> tuple[Loc, str]:
    """Where in the file an error lies (its key path) and what is wrong."""
    loc = tuple(p for p in err["loc"] if p != "[key]")  # a mapping's key was wrong
    if err["type"] == "missing":
        return loc[:-1], f"missing key {loc[-1]!r}"
    if err["type"] != "extra_forbidden":
        return loc, str(err["msg"]).removeprefix("Value error, ")
    ann: Any = Config
    for part in loc[:-1]:
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            fields = {f.alias or name: f for name, f in ann.model_fields.items()}
            ann = fields[part].annotation if part in fields else None
        else:
            ann = get_args(ann)[-1] if get_origin(ann) in (dict, Mapping) else None
    if ann is DatasetRef:
        kind = reduce(lambda node, key: node[key], loc[:-1], raw)["kind"]
        keys = list(dataset_model(kinds.get_kind(kind)).model_fields)
        return loc, f"unknown key {loc[-1]!r}; the keys of kind {kind!r} are: {', '.join(keys)}"
    part = isinstance(ann, type) and issubclass(ann, _Part)
    keys = ann.file_keys() if part else list(getattr(ann, "model_fields", ()))
    return loc, f"unknown key {loc[-1]!r}; the keys here are: {', '.join(keys) or 'none'}"


def load_config(path: str | Path | None = None) -> Config:
    """Parse and validate ``papermill_runs.yaml`` (paths relative to its folder); a
    `ConfigError` has one line per problem, ``FILE:LINE: key.path: what is wrong``."""
    path = Path(path) if path else project_root() / DEFAULT_RUNS_FILE
    if not path.exists():
        raise ConfigError(f"{path}: runs file not found")
    text = path.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text) or {}
        config = Config.model_validate(raw, context={"base": path.resolve().parent})
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    except ValidationError as exc:
        lines, root = [], yaml.compose(text)
        for loc, problem in (_problem(err, raw) for err in exc.errors()):
            line = _line(root, loc)
            key = ".".join(str(p) for p in loc) or "(top level)"
            lines.append(f"{f'{path}:{line}' if line else path}: {key}: {problem}")
        raise ConfigError("\n".join(lines)) from None
    return config.model_copy(update={"path": path, "raw": raw})
