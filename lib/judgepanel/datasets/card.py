"""``dataset.yaml``: what a generic ``ratings`` dataset says about itself.

The card names the dataset, its images folder, licence and citation, and describes every
rated attribute: its range, its direction, and the rubric dimension it validates (the key
of a dimension of any rubric, ``holistic`` for the overall rating that holistic judge
scores are read against, or ``none``). A dataset has at most one overall rating, and may
have none. Which rubric a dimension belongs to is known only when a run names one, so the
card checks that a dimension is a key; the run checks it against its rubric
(:func:`judgepanel.datasets.mapping.rubric_mapping`). A misspelt key, a missing one or a
value of the wrong kind is a `DatasetError` naming the file, its line and the key, so that
a card is never half read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judgepanel.datasets._common import DatasetError
from judgepanel.datasets.attribute import HOLISTIC, RESERVED_COLUMNS, Attribute

DIMENSION_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
"""What a rubric dimension's key looks like (``quality``, ``blue_glow``)."""
NO_DIMENSION = "none"
TOP_KEYS: dict[str, bool] = {
    "name": True,
    "images": True,
    "licence": False,
    "citation": False,
    "sd_ddof": False,
    "attributes": True,
}
"""The card's keys, and whether each is required."""
ATTRIBUTE_KEYS: dict[str, bool] = {"range": True, "higher": True, "dimension": False}


@dataclass(frozen=True)
class DatasetCard:
    """A parsed ``dataset.yaml``."""

    name: str
    images: Path
    licence: str
    citation: str
    attributes: tuple[Attribute, ...]
    sd_ddof: int = 1
    """The ddof of ``summary.csv``'s SDs: 1 (a sample SD, the default) or 0."""


def read_card(path: Path) -> DatasetCard:
    """Parse and check a ``dataset.yaml`` (``images`` is resolved against its folder).

    Raises:
        DatasetError: ``FILE:LINE: key: what is wrong`` for the first problem found.
    """
    try:
        root = yaml.compose(path.read_text(encoding="utf-8-sig"))
    except yaml.YAMLError as exc:
        raise DatasetError(f"{path}: not valid YAML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc})") from None
    card = _Reader(path)
    top = card.mapping(root, "(top level)", TOP_KEYS)
    name = card.text(top, "name")
    images = card.text(top, "images")
    node = top["attributes"][1]
    specs = card.mapping(node, "attributes", None)
    if not specs:
        card.fail(node, "attributes", "lists no attribute")
    attributes = [card.attribute(key, value) for key, value in specs.items()]
    holistic = [a for a in attributes if a.dimension == HOLISTIC]
    if len(holistic) > 1:
        card.fail(
            node,
            "attributes",
            "at most one attribute may have `dimension: holistic` (the overall rating); "
            f"found {', '.join(a.name for a in holistic)}",
        )
    seen: dict[str, str] = {}
    for a in attributes:
        if a.column in seen:
            where = specs[a.name][0]
            card.fail(
                where,
                f"attributes.{a.name}",
                f"takes the column {a.column!r} that attribute {seen[a.column]!r} already "
                "has: one attribute per rubric dimension, and no attribute named after a "
                "dimension or `score` unless it is that dimension",
            )
        seen[a.column] = a.name
    return DatasetCard(
        name=name,
        images=(path.parent / images).resolve(),
        licence=card.text(top, "licence", required=False),
        citation=card.text(top, "citation", required=False),
        attributes=tuple(attributes),
        sd_ddof=_ddof(card, top),
    )


def _ddof(card: _Reader, top: dict[str, tuple[yaml.Node, yaml.Node]]) -> int:
    """The card's ``sd_ddof`` (1 where it gives none)."""
    if "sd_ddof" not in top:
        return 1
    node = top["sd_ddof"][1]
    value = card.value(node)
    if value not in (0, 1) or isinstance(value, bool):
        card.fail(node, "sd_ddof", f"expected 0 (population SDs) or 1 (sample SDs), got {value!r}")
    return int(value)


class _Reader:
    """Reads values off the composed YAML, whose nodes know their lines."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.loader = yaml.SafeLoader("")

    def fail(self, node: yaml.Node | None, key: str, what: str) -> None:
        line = f":{node.start_mark.line + 1}" if node is not None else ""
        raise DatasetError(f"{self.path}{line}: {key}: {what}")

    def value(self, node: yaml.Node) -> Any:
        return self.loader.construct_object(node, deep=True)

    def mapping(
        self, node: yaml.Node | None, key: str, keys: dict[str, bool] | None
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """key -> (key node, value node) of a mapping; ``keys`` are the allowed ones."""
        if not isinstance(node, yaml.MappingNode):
            self.fail(node, key, "expected a mapping of keys to values")
        assert isinstance(node, yaml.MappingNode)
        out = {str(k.value): (k, v) for k, v in node.value}
        if keys is not None:
            for name, (k, _) in out.items():
                if name not in keys:
                    allowed = ", ".join(keys)
                    self.fail(k, f"{key}.{name}", f"unknown key; the keys here are: {allowed}")
            for name, required in keys.items():
                if required and name not in out:
                    self.fail(node, key, f"missing key {name!r}")
        return out

    def text(
        self, entries: dict[str, tuple[yaml.Node, yaml.Node]], key: str, required: bool = True
    ) -> str:
        if key not in entries:
            return ""
        node = entries[key][1]
        value = self.value(node)
        if not isinstance(value, str | int | float) or isinstance(value, bool) or not str(value):
            self.fail(node, key, f"expected text, got {value!r}")
        return str(value).strip()

    def attribute(self, name: str, nodes: tuple[yaml.Node, yaml.Node]) -> Attribute:
        where = f"attributes.{name}"
        spec = self.mapping(nodes[1], where, ATTRIBUTE_KEYS)
        if not name.strip() or name in RESERVED_COLUMNS:
            self.fail(nodes[0], where, f"an attribute may not be called {name!r}")
        span_node = spec["range"][1]
        span = self.value(span_node)
        numbers = isinstance(span, list) and len(span) == 2
        numbers = numbers and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in span
        )
        if not numbers or not span[0] < span[1]:
            self.fail(
                span_node, f"{where}.range", f"expected [low, high] with low < high, got {span!r}"
            )
        higher_node = spec["higher"][1]
        higher = self.value(higher_node)
        if higher not in ("better", "worse"):
            self.fail(higher_node, f"{where}.higher", f"expected better or worse, got {higher!r}")
        dimension = self.value(spec["dimension"][1]) if "dimension" in spec else None
        dimension = NO_DIMENSION if dimension is None else dimension
        if not isinstance(dimension, str) or not DIMENSION_KEY.fullmatch(dimension):
            self.fail(
                spec["dimension"][1],
                f"{where}.dimension",
                f"expected {HOLISTIC}, {NO_DIMENSION} or the key of a rubric dimension "
                f"(a letter, then letters, digits or _), got {dimension!r}",
            )
        mapped = None if dimension == NO_DIMENSION else str(dimension)
        column = "score" if mapped == HOLISTIC else mapped or name
        return Attribute(
            name=name,
            column=column,
            low=float(span[0]),
            high=float(span[1]),
            higher_is_better=higher == "better",
            dimension=mapped,
        )
