"""The dataset kinds: one `DatasetKind` record per format, registered with `register_kind`.

Everything that depends on a dataset's kind reads this registry: `load_dataset`, the
runs file's schema (`judgepanel.core.config` builds each kind's entry model from its
declared keys), ``--dataset KIND:PATH``, ``data describe``, the scoring designs, and the
studies' lists of rated-image kinds. A new kind is one `register_kind` call; the built-in
kinds are registered in `judgepanel.datasets.builtin`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

ItemKind = Literal["rated_images", "tasks"]
"""What a kind's items are: single images with human ratings (the rubric-fusion study's
`judgepanel.datasets.Dataset`), or tasks over several images (VAB's sets, VisionQ's
questions) that a study-specific loader reads."""

DESIGN_KEYS = ("holistic_k", "dimension_r", "temperature", "n_images", "sample_seed", "sham_r")
"""The keys a scoring design may hold (``scoring:`` in the runs file)."""


@dataclass(frozen=True)
class Key:
    """A runs-file key that a kind's dataset entry takes beyond ``kind`` and ``root``.

    Attributes:
        type: its type, as pydantic checks it (``str | None``).
        default: its value when the entry leaves it out.
        path: a file or folder, resolved against the runs file's folder.
        doc: what it names (shown in the entry model's description).
    """

    type: Any
    default: Any = None
    path: bool = False
    doc: str = ""


@dataclass(frozen=True)
class DatasetKind:
    """One dataset format: its name, its loader, what its items are and what it reads.

    Attributes:
        name: the ``kind:`` of a runs-file entry and the KIND of ``--dataset KIND:PATH``.
        loader: reads the dataset; for ``rated_images``, ``loader(root, **keys) -> Dataset``
            (the declared keys' values are passed by name where given).
        items: ``rated_images`` or ``tasks`` (see `ItemKind`).
        summary: the files it reads, one line (the docstring of its runs-file entry model).
        keys: the runs-file keys its loader reads beyond ``kind`` and ``root``, in order.
        scored: whether its calls are scored under a scoring design (``scoring.<name>``
            in the runs file); VisionQ's choice calls are not.
        design: the scoring design used when the runs file gives none for this kind
            (keys of `DESIGN_KEYS`); None: the runs file (or the command line) must.
        noun: what its items are called in words (``images``, ``tasks``, ``questions``).
        options: keyword options its loader takes that are not runs-file keys (yet):
            how to read an ambiguous release (a scale, an SD's ddof, a split overlap).
            ``data describe`` passes them and the keys (``--option KEY=VALUE``); a
            runs-file key (such as ``missing_images``, `judgepanel.datasets.presence`) is
            declared in ``keys``.
    """

    name: str
    loader: Callable[..., Any]
    items: ItemKind
    summary: str = ""
    keys: Mapping[str, Key] = field(default_factory=dict)
    scored: bool = True
    design: Mapping[str, Any] | None = None
    noun: str = "images"
    options: Mapping[str, Key] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"dataset kind {self.name!r}: use a lower-case identifier")
        if self.items not in ("rated_images", "tasks"):
            raise ValueError(f"dataset kind {self.name!r}: items must be rated_images or tasks")
        clash = {"kind", "root"} & set(self.keys)
        if clash:
            raise ValueError(f"dataset kind {self.name!r}: keys {sorted(clash)} are every kind's")
        stray = set(self.design or {}) - set(DESIGN_KEYS)
        if stray:
            raise ValueError(f"dataset kind {self.name!r}: design keys {sorted(stray)} unknown")
        both = set(self.keys) & set(self.options)
        if both:
            raise ValueError(f"dataset kind {self.name!r}: {sorted(both)} both keys and options")
        object.__setattr__(self, "keys", MappingProxyType(dict(self.keys)))
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @property
    def rated(self) -> bool:
        """Whether its items are single rated images (the rubric-fusion study's)."""
        return self.items == "rated_images"


_KINDS: dict[str, DatasetKind] = {}
_version = 0


def register_kind(kind: DatasetKind, *, replace: bool = False) -> DatasetKind:
    """Make ``kind`` known everywhere a dataset kind is read; returns it.

    Raises:
        ValueError: a different kind of that name is registered (unless ``replace``).
    """
    global _version
    if kind.name in _KINDS and _KINDS[kind.name] != kind and not replace:
        raise ValueError(f"a dataset kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    _version += 1
    return kind


def unregister_kind(name: str) -> DatasetKind:
    """Forget the kind ``name`` (a test's cleanup); returns its record.

    Raises:
        KeyError: no kind of that name.
    """
    global _version
    kind = _KINDS.pop(name)
    _version += 1
    return kind


def registry_version() -> int:
    """A number that changes whenever a kind is registered or forgotten (for caches)."""
    return _version


def get_kind(name: str) -> DatasetKind:
    """The registered kind ``name``.

    Raises:
        KeyError: no kind of that name; the message lists the known ones.
    """
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown dataset kind {name!r}; known kinds: {', '.join(_KINDS)}") from None


def all_kinds() -> tuple[DatasetKind, ...]:
    """Every registered kind, in registration order."""
    return tuple(_KINDS.values())


def kind_names() -> tuple[str, ...]:
    """The names of every registered kind, in registration order."""
    return tuple(_KINDS)


def rated_kinds() -> tuple[str, ...]:
    """The names of the kinds whose items are single rated images."""
    return tuple(k.name for k in _KINDS.values() if k.rated)
