"""A rubric as data: its dimensions, their scales, and the messages built from them.

Everything sent to a judge for a rubric call is built here, so that the prompt hash in
the store key is computed from exactly the text that goes over the wire, and the parser
of each answer checks it against the scale the prompt asked for.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from judgepanel.core.calls import Message
from judgepanel.core.parsing import parse_levels, parse_score
from judgepanel.core.rubric import defaults

CALL_TYPES: tuple[str, ...] = ("holistic", "dimension", "sham")
"""The calls a rubric can plan: its holistic prompt, its dimension prompts, the sham's."""


@dataclass(frozen=True)
class Scale:
    """An integer range, or named levels each with an integer value.

    ``levels`` is ``None`` for a range, else ``(name, value)`` pairs in declared order.
    ``defaulted`` marks the 1-10 a rubric gets where it declares no scale, so that the
    checks against the data can say so (it takes no part in equality).
    """

    min: int
    max: int
    levels: tuple[tuple[str, int], ...] | None = None
    defaulted: bool = field(default=False, compare=False)

    @classmethod
    def of_levels(cls, levels: tuple[tuple[str, int], ...]) -> Scale:
        values = [v for _, v in levels]
        return cls(min(values), max(values), levels)

    @property
    def is_seed(self) -> bool:
        """The seed study's 1-10 range (parsed exactly as the seed parses it)."""
        return self.levels is None and (self.min, self.max) == (1, 10)

    def span(self) -> str:
        """The scale in short, for messages: ``0-2`` or ``absent, present``."""
        if self.levels is None:
            return f"{self.min}-{self.max}"
        return ", ".join(f"{name} ({value})" for name, value in self.levels)

    def text(self) -> str:
        """The scale as the default prompt words it."""
        if self.levels is None:
            return f"with an integer from {self.min} to {self.max}"
        return "with one of the levels: " + ", ".join(name for name, _ in self.levels)

    def answer_form(self) -> str:
        """The score's placeholder in the JSON form the default prompt asks for."""
        if self.levels is None:
            return f"<integer {self.min}-{self.max}>"
        return '"<level>"'

    def parser(self) -> Callable[[str], Any]:
        """The answer parser of this scale; out-of-scale answers raise ``AnswerError``."""
        if self.is_seed:
            return parse_score
        if self.levels is None:
            return partial(parse_score, lo=self.min, hi=self.max)
        return partial(parse_levels, levels=self.levels)


@dataclass(frozen=True)
class Dimension:
    """One rubric dimension: what it asks, its role framing, scale and tiers of criteria."""

    key: str
    title: str
    asks: str
    role: str
    scale: Scale
    tiers: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def focus(self) -> str:
        """The seed rubric's name for ``asks``."""
        return self.asks

    def tiers_text(self) -> str:
        return "\n".join(f"{band}: " + " ".join(crit) for band, crit in self.tiers)


@dataclass(frozen=True)
class Holistic:
    """The optional whole-image question: its exact text and its scale."""

    text: str
    scale: Scale


@dataclass(frozen=True)
class Rubric:
    """A loaded rubric with its hash; ``sha256`` is logged with every checkpointed call.

    ``system_template`` and ``user_template`` are the rubric's own templates, or ``None``
    for the package defaults (:mod:`judgepanel.core.rubric.defaults`). ``sham`` maps a
    dimension to the one whose criteria its sham prompt shows (empty: no sham variant).
    """

    dimensions: dict[str, Dimension]
    holistic: Holistic | None
    sha256: str
    source: str = ""
    name: str = ""
    system_template: str | None = None
    user_template: str | None = None
    sham: dict[str, str] | None = None
    sham_sha256: str = ""

    @property
    def holistic_text(self) -> str:
        if self.holistic is None:
            raise ValueError(f"{self.source}: the rubric asks no holistic question")
        return self.holistic.text

    @property
    def keys(self) -> tuple[str, ...]:
        """The dimension keys in declared order."""
        return tuple(self.dimensions)

    def call_types(self) -> tuple[str, ...]:
        """The calls this rubric can plan (of :data:`CALL_TYPES`)."""
        return tuple(
            k
            for k in CALL_TYPES
            if (k != "holistic" or self.holistic) and (k != "sham" or self.sham)
        )

    def scale(self, call_type: str, dimension: str = "") -> Scale:
        """The scale a prompt of ``call_type`` asks for (a sham prompt keeps its dimension's)."""
        if call_type.startswith("holistic"):
            if self.holistic is None:
                raise ValueError(f"{self.source}: the rubric asks no holistic question")
            return self.holistic.scale
        return self.dimensions[dimension].scale

    def parser(self, call_type: str, dimension: str = "") -> Callable[[str], Any]:
        """The parser validating an answer to a prompt of ``call_type`` against its scale."""
        return self.scale(call_type, dimension).parser()

    def holistic_messages(self, image_url: str) -> list[Message]:
        """The holistic question with the image, as one user message."""
        return [_user(self.holistic_text, image_url)]

    def _user_text(self, dim: Dimension, shown: Dimension) -> str:
        tiers = shown.tiers_text()
        fields = {
            "title": dim.title,
            "asks": dim.asks,
            "focus": dim.asks,
            "tiers": tiers,
            "scale_max": dim.scale.max,
            "scale_min": dim.scale.min,
            "scale_text": dim.scale.text(),
            "answer_form": dim.scale.answer_form(),
        }
        if self.user_template is not None:
            return self.user_template.format(**fields)
        text = defaults.USER_HEAD.format(**fields)
        if shown.tiers:
            text += defaults.TIERS_BLOCK.format(**fields)
        return text + defaults.USER_TAIL.format(**fields)

    def dimension_messages(
        self, dimension: str, image_url: str, criteria: str | None = None
    ) -> list[Message]:
        """System prompt (role framing), then the dimension's rubric and the image.

        ``criteria`` names the dimension whose tiers are shown (default: its own); the
        sham rubric shows another's.
        """
        dim = self.dimensions[dimension]
        shown = self.dimensions[criteria or dimension]
        system = (self.system_template or defaults.SYSTEM).format(role=dim.role)
        return [
            {"role": "system", "content": system},
            _user(self._user_text(dim, shown), image_url),
        ]

    def sham_messages(self, dimension: str, image_url: str) -> list[Message]:
        """The dimension prompt with another dimension's criteria (the sham derangement)."""
        if not self.sham:
            raise ValueError(f"{self.source}: the rubric has no sham variant")
        return self.dimension_messages(dimension, image_url, criteria=self.sham[dimension])

    def messages(self, call_type: str, dimension: str, image_url: str) -> list[Message]:
        """Messages for ``call_type`` "holistic" (dimension ""), "dimension" or "sham"."""
        if call_type == "holistic":
            return self.holistic_messages(image_url)
        if call_type == "dimension":
            return self.dimension_messages(dimension, image_url)
        if call_type == "sham":
            return self.sham_messages(dimension, image_url)
        raise ValueError(
            f"unknown call type {call_type!r}; expected 'holistic', 'dimension' or 'sham'"
        )

    def sha_of(self, call_type: str) -> str:
        """The hash a call of ``call_type`` is keyed by: the sham's covers its derangement too."""
        return self.sham_sha256 if call_type == "sham" else self.sha256

    def prompt_hash(self, call_type: str, dimension: str = "") -> str:
        """SHA-256 of the request text with the image left out: part of every store key."""
        return messages_hash(self.messages(call_type, dimension, "<image>"))


def _user(text: str, image_url: str) -> Message:
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": image_url}},
        ],
    }


def messages_hash(messages: list[Message]) -> str:
    """Stable SHA-256 of a message list (images should already be replaced by placeholders)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
