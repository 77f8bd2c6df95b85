"""Where a problem of ``papermill_runs.yaml`` lies: its line, its key and what would be right.

The runs file's models (`judgepanel.core.config`) refuse unknown keys at every level, so a
typo (``max_cots:``), a dataset of an unknown kind or a count written as text is an error
that names the file, the line and the key, and lists the keys that would have been right,
rather than a setting silently ignored. A run's ``parameters`` are free-form here and belong
to the notebooks that read them. A dataset entry is checked against the keys its kind's
registration declares (`dataset_model`), so a key another kind takes (``questions:`` under
``ava``) is refused like a typo.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import InitErrorDetails, PydanticCustomError

from judgepanel.datasets import kinds


class _Entry(BaseModel):
    """A dataset entry of a profile: its format and folder (relative to the runs file's
    folder), and the keys its kind declares."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    root: str


_models: dict[str, tuple[int, type[_Entry]]] = {}


def dataset_model(kind: kinds.DatasetKind) -> type[_Entry]:
    """The model of a dataset entry of ``kind``: ``kind``, ``root`` and the keys its
    registration declares (`judgepanel.datasets.kinds.Key`), made once per registry version."""
    version = kinds.registry_version()
    if kind.name in _models and _models[kind.name][0] == version:
        return _models[kind.name][1]
    fields: dict[str, Any] = {"kind": (Literal[kind.name], ...)}
    for name, key in kind.keys.items():
        fields[name] = (key.type, Field(key.default, description=key.doc or None))
    model = create_model(
        f"{kind.name.capitalize()}Dataset", __base__=_Entry, __doc__=kind.summary, **fields
    )
    _models[kind.name] = (version, model)
    return model


def _custom(loc: tuple[Any, ...], problem: str) -> InitErrorDetails:
    custom = PydanticCustomError("runs_file", "{problem}", {"problem": problem})
    return InitErrorDetails(type=custom, loc=loc, input=None)


def problems_at(title: str, problems: list[tuple[tuple[Any, ...], str]]) -> ValidationError:
    """A validation error of ``problems``, each (its key path, what is wrong), that a model's
    validator raises: pydantic puts the model's own place in the file before each path."""
    return ValidationError.from_exception_data(title, [_custom(*p) for p in problems])


def dataset_entry(data: dict[str, Any]) -> _Entry:
    """A dataset entry checked against its kind's keys.

    Raises:
        ValidationError: an unknown or missing kind, or keys its kind does not take.
    """
    kind, known = data.get("kind"), ", ".join(kinds.kind_names())
    if "kind" not in data:
        raise problems_at("dataset", [((), f"missing key 'kind'; known kinds: {known}")])
    if not isinstance(kind, str) or kind not in kinds.kind_names():
        unknown = f"unknown dataset kind {kind!r}; known kinds: {known}"
        raise problems_at("dataset", [(("kind",), unknown)])
    model = dataset_model(kinds.get_kind(kind))
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        keys = ", ".join(model.model_fields)
        raise ValidationError.from_exception_data(
            "dataset", [_of_kind(e, kind, keys) for e in exc.errors()]
        ) from None


def _of_kind(err: Any, kind: str, keys: str) -> InitErrorDetails:
    """An error of a dataset entry; an unknown key's lists the keys of its kind."""
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        return _custom(loc, f"unknown key {loc[-1]!r}; the keys of kind {kind!r} are: {keys}")
    ctx = {"ctx": err["ctx"]} if "ctx" in err else {}
    return InitErrorDetails(type=err["type"], loc=loc, input=err["input"], **ctx)  # type: ignore[typeddict-item]


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


def _resolve(loc: tuple[Any, ...], root: type[BaseModel]) -> tuple[tuple[Any, ...], Any]:
    """``loc`` as the file's key path, and the model whose keys its last key is among."""
    keys: list[Any] = []
    ann: Any = root
    owner = None
    for part in loc:
        if part == "[key]":  # a mapping's key was wrong, not its value
            continue
        keys.append(part)
        owner = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        if owner is not None:
            fields = {f.alias or name: f for name, f in owner.model_fields.items()}
            ann = fields[str(part)].annotation if str(part) in fields else None
        elif get_origin(ann) in (dict, list, tuple):
            ann = get_args(ann)[-1 if get_origin(ann) is dict else 0]
        else:
            ann = None
    return tuple(keys), owner


def _problem(err: Any, root: type[BaseModel]) -> tuple[tuple[Any, ...], str]:
    """Where in the file an error of the schema lies (its key path), and what is wrong."""
    loc, owner = _resolve(tuple(err["loc"]), root)
    if err["type"] == "extra_forbidden":
        allowed = ", ".join(getattr(owner, "file_keys", lambda: [])()) or "none"
        return loc, f"unknown key {loc[-1]!r}; the keys here are: {allowed}"
    if err["type"] == "missing":
        return loc[:-1], f"missing key {loc[-1]!r}"
    return loc, str(err["msg"]).removeprefix("Value error, ")


def schema_errors(exc: ValidationError, root: type[BaseModel], path: Path, text: str) -> str:
    """The problems of the runs file ``path`` (of ``text``) validated as ``root``, one line
    each: ``FILE:LINE: key.path: what is wrong``."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        node = None
    lines = []
    for loc, message in (_problem(err, root) for err in exc.errors()):
        line = _line(node, loc)
        where = f"{path}:{line}" if line else str(path)
        key = ".".join(str(p) for p in loc) or "(top level)"
        lines.append(f"{where}: {key}: {message}")
    return "\n".join(lines)
