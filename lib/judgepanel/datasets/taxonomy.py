"""The VisionQ criterion taxonomy: six axes, 51 leaves, each with a one-line definition.

Leaves are keyed by ``(axis, leaf)`` because a leaf name may recur under another axis
(``Segmentation`` is an Object Form leaf and an alias of a Reference Fidelity leaf).
The taxonomy ships as package data (``data/visionq_taxonomy.yaml``) and is validated on
load, so a broken edit fails loudly instead of silently mislabelling questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import pandas as pd
import yaml

from judgepanel.errors import JudgepanelError

N_AXES = 6
N_LEAVES = 51
REFERENCE_GROUPS: tuple[str, ...] = ("Source Preservation", "Target Fidelity")
GROUPED_AXIS = "Reference Fidelity"


class TaxonomyError(JudgepanelError, ValueError):
    """The taxonomy file is malformed; the message names the file and the entry."""


@dataclass(frozen=True)
class Leaf:
    """One taxonomy leaf.

    Attributes:
        axis: the axis it belongs to.
        name: the leaf name as the released question file spells it.
        definition: one line saying what the criterion covers.
        criterion: the phrase used in a question ("Which method demonstrates better ...?").
        group: Source Preservation or Target Fidelity for Reference Fidelity leaves, else "".
        aliases: other names that resolve to this leaf within its axis.
    """

    axis: str
    name: str
    definition: str
    criterion: str
    group: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.axis, self.name)


@dataclass(frozen=True)
class Taxonomy:
    """The validated taxonomy: axes in order, leaves in order within each axis."""

    axes: tuple[str, ...]
    axis_definitions: dict[str, str]
    leaves: tuple[Leaf, ...]

    def leaf(self, axis: str, name: str) -> Leaf:
        """The leaf named ``name`` (or one of its aliases) under ``axis``; KeyError if none."""
        for leaf in self.leaves:
            if leaf.axis == axis and (leaf.name == name or name in leaf.aliases):
                return leaf
        raise KeyError(f"no leaf {name!r} under axis {axis!r}")

    def has_leaf(self, axis: str, name: str) -> bool:
        try:
            self.leaf(axis, name)
        except KeyError:
            return False
        return True

    def leaves_of(self, axis: str) -> tuple[Leaf, ...]:
        if axis not in self.axes:
            raise KeyError(f"unknown axis {axis!r}; known: {', '.join(self.axes)}")
        return tuple(leaf for leaf in self.leaves if leaf.axis == axis)

    def frame(self) -> pd.DataFrame:
        """One row per leaf: axis, group, leaf, definition, criterion."""
        return pd.DataFrame(
            [
                {
                    "axis": leaf.axis,
                    "group": leaf.group,
                    "leaf": leaf.name,
                    "definition": leaf.definition,
                    "criterion": leaf.criterion,
                }
                for leaf in self.leaves
            ]
        )


def _require_text(entry: dict, field: str, where: str) -> str:
    value = entry.get(field)
    if not isinstance(value, str) or not value.strip():
        raise TaxonomyError(f"{where}: missing or empty {field!r}")
    return value.strip()


def parse_taxonomy(data: object, source: str = "<taxonomy>") -> Taxonomy:
    """Validate parsed YAML into a :class:`Taxonomy`.

    Raises:
        TaxonomyError: not exactly 6 axes and 51 leaves, a duplicate ``(axis, leaf)``, a
            missing name/definition/criterion, or a Reference Fidelity leaf without a
            known group.
    """
    if not isinstance(data, dict) or not isinstance(data.get("axes"), list):
        raise TaxonomyError(f"{source}: expected a mapping with a list under 'axes'")
    axes: list[str] = []
    axis_defs: dict[str, str] = {}
    leaves: list[Leaf] = []
    seen: set[tuple[str, str]] = set()
    for i, axis_entry in enumerate(data["axes"]):
        where = f"{source}: axes[{i}]"
        if not isinstance(axis_entry, dict):
            raise TaxonomyError(f"{where}: expected a mapping")
        axis = _require_text(axis_entry, "name", where)
        if axis in axes:
            raise TaxonomyError(f"{where}: duplicate axis {axis!r}")
        axes.append(axis)
        axis_defs[axis] = _require_text(axis_entry, "definition", where)
        entries = axis_entry.get("leaves")
        if not isinstance(entries, list) or not entries:
            raise TaxonomyError(f"{where} ({axis}): no leaves")
        for j, entry in enumerate(entries):
            lwhere = f"{where} ({axis}) leaves[{j}]"
            if not isinstance(entry, dict):
                raise TaxonomyError(f"{lwhere}: expected a mapping")
            name = _require_text(entry, "name", lwhere)
            names = [name, *(str(a) for a in entry.get("aliases", []) or [])]
            for n in names:
                if (axis, n) in seen:
                    raise TaxonomyError(f"{lwhere}: duplicate leaf {n!r} under {axis!r}")
                seen.add((axis, n))
            group = str(entry.get("group", "") or "")
            if axis == GROUPED_AXIS and group not in REFERENCE_GROUPS:
                raise TaxonomyError(
                    f"{lwhere}: {axis} leaf {name!r} needs a group in {REFERENCE_GROUPS}"
                )
            if axis != GROUPED_AXIS and group:
                raise TaxonomyError(f"{lwhere}: only {GROUPED_AXIS} leaves carry a group")
            leaves.append(
                Leaf(
                    axis=axis,
                    name=name,
                    definition=_require_text(entry, "definition", lwhere),
                    criterion=_require_text(entry, "criterion", lwhere),
                    group=group,
                    aliases=tuple(names[1:]),
                )
            )
    if len(axes) != N_AXES:
        raise TaxonomyError(f"{source}: expected {N_AXES} axes, found {len(axes)}")
    if len(leaves) != N_LEAVES:
        raise TaxonomyError(f"{source}: expected {N_LEAVES} leaves, found {len(leaves)}")
    return Taxonomy(axes=tuple(axes), axis_definitions=axis_defs, leaves=tuple(leaves))


def load_taxonomy_file(path: str | Path) -> Taxonomy:
    """Load and validate a taxonomy YAML file."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise TaxonomyError(f"{p}: not valid YAML: {exc}") from exc
    return parse_taxonomy(data, str(p))


@cache
def load_taxonomy() -> Taxonomy:
    """The packaged taxonomy, validated once per process."""
    ref = resources.files("judgepanel.datasets") / "visionq_taxonomy.yaml"
    text = ref.read_text(encoding="utf-8")
    return parse_taxonomy(yaml.safe_load(text), "judgepanel/datasets/visionq_taxonomy.yaml")
