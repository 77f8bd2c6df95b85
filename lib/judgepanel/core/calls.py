"""What one judge call is: the key that names its answer, and how to build and read it.

Every study (rubric scoring, VAB set comparison, VisionQ composites) plans its work as a
list of :class:`CallSpec`, each made by :func:`make_spec` (the one place a call's seed is
derived). The client sends them, the store checkpoints them by :class:`CallKey`, and the
analyses read them back. Messages are built lazily, at send time, so that a plan of
100,000 calls does not hold 100,000 base64 images in memory.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property
from typing import Any

from judgepanel.errors import JudgepanelError

Message = dict[str, Any]

KEY_FIELDS: tuple[str, ...] = (  # the store's key columns, in CallKey's field order
    "dataset",
    "item",
    "family",
    "model",
    "kind",
    "dimension",
    "repetition",
    "temperature",
    "rubric_sha",
    "prompt_hash",
)


@dataclass(frozen=True, order=True)
class CallKey:
    """Everything that changes an answer; two calls with equal keys are the same call.

    Attributes:
        dataset: dataset key within the profile (``eva``, ``para``, ``vab``, ``visionq``).
        item: image id, VAB task id or VisionQ question id.
        family: family name from the profile (``aurora``, ``gemini``...).
        model: the model id sent to the endpoint.
        call_type: what the call asks: ``holistic``, ``dimension``, ``sham``, their
            ``_logprob`` forms, ``vab_top1``, ``vab_bot1``, ``vab_tb1`` or ``visionq``
            (the store's column ``kind``).
        dimension: the rubric dimension for ``dimension`` calls, else ``""``.
        repetition: repetition index (for VAB the order index, for VisionQ the rotation).
        temperature: sampling temperature.
        rubric_sha: SHA-256 of the frozen rubric (``""`` where no rubric is sent).
        prompt_hash: SHA-256 of the request text with images replaced by their identities.
    """

    dataset: str
    item: str
    family: str
    model: str
    call_type: str
    dimension: str
    repetition: int
    temperature: float
    rubric_sha: str
    prompt_hash: str

    def as_tuple(self) -> tuple:
        return _KEY_VALUES(self)

    def as_dict(self) -> dict[str, Any]:
        """The key as the store's columns (``call_type`` in column ``kind``)."""
        return dict(zip(KEY_FIELDS, self.as_tuple(), strict=True))

    @cached_property
    def digest(self) -> int:
        """:func:`key_digest` of the key, worked out once: a run compares it with the
        store, counts it, records it and files it with its batch line (not a field: equal
        keys stay equal, and it is not stored with the key's fields)."""
        k = self
        blob = (  # one f-string: this runs once per planned call
            f"{k.dataset}\x1f{k.item}\x1f{k.family}\x1f{k.model}\x1f{k.call_type}"
            f"\x1f{k.dimension}\x1f{k.repetition}\x1f{k.temperature!r}\x1f{k.rubric_sha}"
            f"\x1f{k.prompt_hash}"
        ).encode()
        return int.from_bytes(hashlib.blake2b(blob, digest_size=8).digest(), "big", signed=True)


# as_tuple without astuple's deep copy, in field order (the store's column order)
_KEY_VALUES = operator.attrgetter(*(f.name for f in fields(CallKey)))


class AnswerError(JudgepanelError, ValueError):
    """A judge's answer could not be read; the message is the recorded reason."""


@dataclass(frozen=True)
class CallSpec:
    """One planned call.

    Attributes:
        key: the store key.
        build: returns the chat messages, images included; called once, just before the
            call is sent (every attempt of the call reuses them).
        parse: reads the answer text into a JSON-serialisable value or raises AnswerError.
        max_tokens: the completion cap sent with the request (also bounds its cost).
        seed: sampling seed sent to the endpoint, derived from the key, so that repeated
            calls differ from each other yet a rerun asks for the same samples.
        n_images: images in the request, as the planner built it (descriptive: the budget
            measures the built messages themselves, see :mod:`judgepanel.core.budget`).
        text_chars: characters of prompt text, likewise descriptive.
        extra_body: (name, value) request fields sent beside the standard ones (e.g.
            ``logprobs`` and ``top_logprobs``), a tuple so that the spec stays hashable;
            they never replace model, messages, temperature, cap, seed or ``n``.
        parse_choice: when given, reads the answer with the choice's ``logprobs`` object
            (``None`` where the provider sent none) instead of ``parse``; it raises
            AnswerError alike.
    """

    key: CallKey
    build: Callable[[], list[Message]]
    parse: Callable[[str], Any]
    max_tokens: int = 200
    seed: int | None = None
    n_images: int = 1
    text_chars: int = 0
    extra_body: tuple[tuple[str, Any], ...] = ()
    parse_choice: Callable[[str, Any], Any] | None = None

    def read(self, answer: str, logprobs: Any = None) -> Any:
        """The parsed answer: ``parse_choice`` with the choice's logprobs where the spec
        has one, else ``parse`` (either raises AnswerError)."""
        if self.parse_choice is not None:
            return self.parse_choice(answer, logprobs)
        return self.parse(answer)


def key_digest(key: CallKey) -> int:
    """A signed 64-bit digest of every key field, stored beside the key.

    Planning a resume compares the plan's digests with one column of the store instead of
    ten, which keeps it well under a second for 100,000 calls. Two different keys share a
    digest with probability about n^2 / 2^64 (below 1e-9 for a million calls). Each key
    works its digest out once (:attr:`CallKey.digest`).
    """
    return key.digest


def seed_from_key(key: CallKey) -> int:
    """A 31-bit sampling seed derived from every key field, so each repetition differs.

    The text hashed is each field's ``str`` joined by ``\\x1f``, written as one f-string
    (this runs once per planned call, when the plan is made).
    """
    k = key
    blob = (
        f"{k.dataset}\x1f{k.item}\x1f{k.family}\x1f{k.model}\x1f{k.call_type}\x1f{k.dimension}"
        f"\x1f{k.repetition}\x1f{k.temperature}\x1f{k.rubric_sha}\x1f{k.prompt_hash}"
    ).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """One prompt about one item before it is asked: the :class:`CallSpec` fields that do
    not depend on who is asked or which repetition it is.

    A planner builds these once per item and crosses them with its families and
    repetitions through :func:`make_spec`; ``call_type`` is the one stored in the key (e.g.
    a logprob call type).
    """

    dataset: str
    item: str
    call_type: str
    prompt_hash: str
    build: Callable[[], list[Message]]
    parse: Callable[[str], Any]
    max_tokens: int
    temperature: float
    dimension: str = ""
    rubric_sha: str = ""
    n_images: int = 1
    text_chars: int = 0
    extra_body: tuple[tuple[str, Any], ...] = ()
    parse_choice: Callable[[str, Any], Any] | None = None


def make_spec(prompt: PromptSpec, *, family: str, model: str, repetition: int) -> CallSpec:
    """The call asking ``prompt`` of ``family`` (served as ``model``), repetition ``repetition``.

    Every planner builds its calls here, so that the sampling seed is derived from the
    key (:func:`seed_from_key`) in this one place and cannot drift between studies.
    """
    key = CallKey(
        dataset=prompt.dataset,
        item=prompt.item,
        family=family,
        model=model,
        call_type=prompt.call_type,
        dimension=prompt.dimension,
        repetition=repetition,
        temperature=float(prompt.temperature),
        rubric_sha=prompt.rubric_sha,
        prompt_hash=prompt.prompt_hash,
    )
    return CallSpec(
        key=key,
        build=prompt.build,
        parse=prompt.parse,
        max_tokens=prompt.max_tokens,
        seed=seed_from_key(key),
        n_images=prompt.n_images,
        text_chars=prompt.text_chars,
        extra_body=prompt.extra_body,
        parse_choice=prompt.parse_choice,
    )
