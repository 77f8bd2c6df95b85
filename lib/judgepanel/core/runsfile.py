"""The schema of ``papermill_runs.yaml``: what each key may hold, checked before anything runs.

`judgepanel.core.config.load_config` validates the parsed file against `RunsFile` first, so a
typo (``max_cots:``), a dataset of an unknown kind or a count written as text is an error
that names the file, the line and the key, and lists the keys that would have been right,
rather than a setting silently ignored. Unknown keys are refused at every level; a run's
``parameters`` are free-form here and belong to the notebooks that read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator
from pydantic.fields import FieldInfo

from judgepanel.core.sendconfig import declared_options, default_of, without_none
from judgepanel.datasets import kinds


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Dataset(_Strict):
    """A dataset of a profile: its format and folder (relative to the runs file's folder).

    Each kind is its own model (`dataset_model`, from the kind's registration in
    `judgepanel.datasets.kinds`) with the keys its loader reads, so a key another kind takes
    (``questions:`` under ``ava``) is refused like a typo.
    """

    kind: str
    root: str


def dataset_model(kind: kinds.DatasetKind) -> type[_Dataset]:
    """The model of a dataset entry of ``kind``: ``kind``, ``root`` and the keys its
    registration declares (`judgepanel.datasets.kinds.Key`), generated from the registry."""
    fields: dict[str, Any] = {"kind": (Literal[kind.name], ...)}
    for name, key in kind.keys.items():
        fields[name] = (key.type, Field(key.default, description=key.doc or None))
    return create_model(
        f"{kind.name.capitalize()}Dataset",
        __base__=_Dataset,
        __doc__=kind.summary,
        __module__=__name__,
        **fields,
    )


def send_keys(level: str) -> dict[str, Any]:
    """The runs-file keys of the send options that a ``profile`` or a ``run`` sets, as
    pydantic fields, generated from their declarations
    (`judgepanel.core.client.options.ClientOptions`): a profile's default is the declared
    one, a run's is unset (its profile's value applies)."""
    keys: dict[str, Any] = {}
    for name, (declared, annotation) in declared_options().items():
        if not getattr(declared, level):
            continue
        kind = declared.file_type or without_none(annotation)
        if level == "run":
            keys[name] = (kind | None, Field(None, **declared.bounds()))
        elif isinstance(default_of(name), dict):
            keys[name] = (kind, Field(default_factory=dict, **declared.bounds()))
        else:
            keys[name] = (kind, Field(default_of(name), **declared.bounds()))
    return keys


_ProfileSendKeys = create_model("_ProfileSendKeys", __base__=_Strict, **send_keys("profile"))
_RunSendKeys = create_model("_RunSendKeys", __base__=_Strict, **send_keys("run"))


class ProfileSpec(_ProfileSendKeys):  # type: ignore[misc, valid-type]
    """Where a profile's data and store live and which model each family name means, and
    how its calls are sent (the keys of `send_keys`)."""

    description: str = ""
    simulated: bool = False
    store: str
    datasets: dict[str, _Dataset]
    families: dict[str, str]
    predeclared: list[str] | None = None
    rubric: str | None = None

    @model_validator(mode="after")
    def _predeclared_are_families(self) -> ProfileSpec:
        unknown = [f for f in self.predeclared or () if f not in self.families]
        if unknown:
            raise ValueError(f"predeclared families not in `families`: {unknown}")
        models = set(self.families.values())
        stray = [k for k in self.limits if k not in self.families and k not in models]
        if stray:
            raise ValueError(f"`limits` names neither a family nor a model id: {stray}")
        return self


class ScoringSpec(_Strict):
    """The rubric-fusion scoring design of one dataset kind."""

    holistic_k: int = Field(ge=0)
    dimension_r: int = Field(ge=0)
    temperature: float = Field(ge=0)
    n_images: int | None = Field(None, ge=1)
    sample_seed: int = 0
    sham_r: int = Field(0, ge=0)


class PriceSpec(_Strict):
    """USD per one million input, cached input and output tokens.

    ``cached_input`` is the price of prompt tokens served from the provider's cache; left
    out, they are charged the full input price. A batch API's prices are ``batch_input``
    and ``batch_output``, or ``batch_discount``, the share taken off every price.
    """

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)
    batch_discount: float | None = Field(None, ge=0, lt=1)
    batch_input: float | None = Field(None, ge=0)
    batch_output: float | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _one_batch_price(self) -> PriceSpec:
        explicit = (self.batch_input is None, self.batch_output is None)
        if explicit[0] != explicit[1]:
            raise ValueError("give both `batch_input` and `batch_output`, or neither")
        if self.batch_discount is not None and self.batch_input is not None:
            raise ValueError("give `batch_discount` or batch prices, not both")
        return self


class RunSpec(_RunSendKeys):  # type: ignore[misc, valid-type]
    """One run of the report: a profile, one dataset or several, its notebooks, and the
    send options it sets over its profile's (the keys of `send_keys`)."""

    profile: str
    dataset: str | None = None
    datasets: list[str] | None = None
    notebooks: list[str]
    parameters: dict[str, Any] = Field(default_factory=dict)
    rubric: str | None = None

    @model_validator(mode="after")
    def _one_way_to_name_datasets(self) -> RunSpec:
        if (self.dataset is None) == (self.datasets is None):
            raise ValueError("give either `dataset` or `datasets` (a list), not both or neither")
        return self


class RunsFile(_Strict):
    """The whole runs file; `runs_file_model` narrows its dataset entries and scoring keys
    to the registered kinds."""

    profiles: dict[str, ProfileSpec]
    scoring: dict[str, ScoringSpec] = Field(default_factory=dict)
    prices: dict[str, PriceSpec] = Field(default_factory=dict)
    parameters: dict[str, Any] = Field(default_factory=dict)
    runs: dict[str, RunSpec]


@dataclass(frozen=True)
class _Schema:
    """The runs file's models for the kinds registered at one registry version."""

    version: int
    kind: Any
    spec: Any
    runs_file: type[RunsFile]


_schema: list[_Schema] = []


def _current() -> _Schema:
    """The models for the kinds registered now, rebuilt when a kind comes or goes."""
    version = kinds.registry_version()
    if _schema and _schema[0].version == version:
        return _schema[0]
    kind = Literal[kinds.kind_names()]  # type: ignore[valid-type]
    members = tuple(dataset_model(k) for k in kinds.all_kinds())
    spec = Annotated[Union[members], Field(discriminator="kind")]  # noqa: UP007
    profile = create_model(
        "ProfileSpec", __base__=ProfileSpec, __module__=__name__, datasets=(dict[str, spec], ...)
    )
    runs_file = create_model(
        "RunsFile",
        __base__=RunsFile,
        __module__=__name__,
        profiles=(dict[str, profile], ...),  # type: ignore[valid-type]
        scoring=(dict[kind, ScoringSpec], Field(default_factory=dict)),  # type: ignore[valid-type]
    )
    _schema[:] = [_Schema(version, kind, spec, runs_file)]
    return _schema[0]


def runs_file_model() -> type[RunsFile]:
    """`RunsFile` with each dataset entry the model of its registered kind."""
    return _current().runs_file


def __getattr__(name: str) -> Any:
    """``DatasetKind`` (the registered kinds, a ``Literal``) and ``DatasetSpec`` (a dataset
    entry: the discriminated union of their models), as of now."""
    if name == "DatasetKind":
        return _current().kind
    if name == "DatasetSpec":
        return _current().spec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the YAML node at ``loc`` (the key's line for a mapping key)."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = [(k, v) for k, v in node.value if str(k.value) == str(part)]
            if not match:
                return line
            key, node = match[0]
            line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _tags(ann: Any) -> dict[str, type[BaseModel]]:
    """The members of a discriminated union by their tag; empty for any other annotation."""
    if get_origin(ann) is not Annotated:
        return {}
    union, *meta = get_args(ann)
    key = next((m.discriminator for m in meta if isinstance(m, FieldInfo)), None)
    if not isinstance(key, str):
        return {}
    return {
        tag: member
        for member in get_args(union)
        for tag in get_args(member.model_fields[key].annotation)
    }


def _resolve(loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], type[BaseModel] | None]:
    """``loc`` as the file's key path, and the model whose keys its last key is among.

    A discriminated union puts the member's tag into ``loc`` (``datasets.x.ava.root``); it is
    no key of the file, so it is dropped, and it says which member's keys apply.
    """
    keys: list[Any] = []
    ann: Any = runs_file_model()
    owner = None
    for part in loc:
        members = _tags(ann)
        if str(part) in members:
            ann = members[str(part)]
            continue
        keys.append(part)
        owner = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        if owner is not None:
            field = owner.model_fields.get(str(part))
            ann = field.annotation if field else None
        elif get_origin(ann) in (dict, list):
            ann = get_args(ann)[-1]
        else:
            ann = None
    return tuple(keys), owner


def _problem(err: dict[str, Any]) -> tuple[tuple[Any, ...], str]:
    """Where in the file an error of the schema lies (its key path), and what is wrong."""
    loc, owner = _resolve(tuple(err["loc"]))
    known = ", ".join(kinds.kind_names())
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(owner.model_fields) if owner else "none"
        if owner is not None and issubclass(owner, _Dataset):
            kind = get_args(owner.model_fields["kind"].annotation)[0]
            return loc, f"unknown key {loc[-1]!r}; the keys of kind {kind!r} are: {allowed}"
        return loc, f"unknown key {loc[-1]!r}; the keys here are: {allowed}"
    if err["type"] == "missing":
        return loc[:-1], f"missing key {loc[-1]!r}"
    if err["type"] == "union_tag_invalid":
        return (*loc, "kind"), f"unknown dataset kind {err['ctx']['tag']!r}; known kinds: {known}"
    if err["type"] == "union_tag_not_found":
        return loc, f"missing key 'kind'; known kinds: {known}"
    return loc, str(err["msg"]).removeprefix("Value error, ")


def _cross_references(spec: RunsFile) -> list[tuple[tuple[Any, ...], str]]:
    """What the schema cannot see: runs naming profiles and datasets that do not exist."""
    problems = []
    for name, run in spec.runs.items():
        profile = spec.profiles.get(run.profile)
        if profile is None:
            known = ", ".join(spec.profiles)
            problems.append(
                (("runs", name, "profile"), f"unknown profile {run.profile!r}; profiles: {known}")
            )
            continue
        field = "dataset" if run.dataset is not None else "datasets"
        for i, d in enumerate([run.dataset] if run.dataset is not None else run.datasets or []):
            if d not in profile.datasets:
                loc = ("runs", name, field) if field == "dataset" else ("runs", name, field, i)
                known = ", ".join(profile.datasets)
                problems.append(
                    (loc, f"profile {run.profile!r} has no dataset {d!r}; it has: {known}")
                )
    return problems


def validate_runs_file(raw: Any, path: Path, text: str) -> RunsFile:
    """``raw`` (the file's parsed YAML) as a `RunsFile`, its cross-references checked.

    Raises:
        ValueError: one line per problem, each ``FILE:LINE: key.path: what is wrong``.
    """
    try:
        spec = runs_file_model().model_validate(raw)
        problems = _cross_references(spec)
    except ValidationError as exc:
        spec = None
        problems = [_problem(err) for err in exc.errors()]
    if not problems:
        assert spec is not None
        return spec
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        root = None
    lines = []
    for loc, message in problems:
        line = _line(root, loc)
        where = f"{path}:{line}" if line else str(path)
        key = ".".join(str(p) for p in loc) or "(top level)"
        lines.append(f"{where}: {key}: {message}")
    raise ValueError("\n".join(lines))
