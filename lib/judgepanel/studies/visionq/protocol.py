"""The VisionQ judge protocol: one lettered composite, the question, one letter back.

A judge sees the composite (:mod:`judgepanel.studies.visionq.composite`) and the question text,
nothing else: no method names, caption, claim or paper. It must answer with one letter
in the form ``(X)``.

Rotations undo position bias by design: rotation r cyclically shifts the panel order, so
slot j shows released choice ``(j + r) mod n``. Rotation 0 is the released order; with
``rotations=0`` every question is asked in all n rotations (K = n calls per judge), and
the parsed letter is always mapped back to the released choice before it is stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import pandas as pd

from judgepanel.core.calls import CallSpec, Message, PromptSpec, make_spec
from judgepanel.core.prompts import bytes_data_url
from judgepanel.core.rubric import messages_hash
from judgepanel.studies.visionq.cache import CompositeCache, file_identity
from judgepanel.studies.visionq.composite import composite_png, fit_tiles, lay_out
from judgepanel.studies.visionq.parse import LETTERS, choice_letters, parse_letter

CALL_TYPE = "visionq"
"""The call type of every VisionQ question (the store's column ``kind``)."""
MAX_TOKENS = 64


class VisionqAnswer(TypedDict):
    """A parsed VisionQ answer, as the parser returns it and the store keeps it (as JSON).

    ``letter`` is the RELEASED letter (what the metrics score), ``shown`` the letter as
    answered, in the slot order of ``rotation``.
    """

    letter: str
    shown: str
    rotation: int


PROMPT_TEMPLATE = (
    "The image shows {n} panels labelled {labels}. Each panel is the output of a different "
    "method on the same input.\n"
    "Question: {question}\n"
    "Choices: {labels}\n"
    "Answer with exactly one letter in the form (X), for example (A)."
)
"""The text sent with the composite; ``{labels}`` is "(A), (B), (C)"."""


def prompt_text(question: str, n_choices: int) -> str:
    """The prompt text for a question with ``n_choices`` panels."""
    labels = ", ".join(f"({c})" for c in choice_letters(n_choices))
    return PROMPT_TEMPLATE.format(n=n_choices, labels=labels, question=question.strip())


def visionq_messages(text: str, image_url: str) -> list[Message]:
    """One user message: the composite first, then the text."""
    return [
        {
            "role": "user",
            "content": [
                {"type": "image_url", "image_url": {"url": image_url}},
                {"type": "text", "text": text},
            ],
        }
    ]


def rotated_order(n_choices: int, rotation: int) -> list[int]:
    """Released choice indices in display order: slot j shows ``(j + rotation) mod n``."""
    return [(j + rotation) % n_choices for j in range(n_choices)]


def unrotate(shown: str, n_choices: int, rotation: int) -> str:
    """The released letter of the panel shown in slot ``shown`` at ``rotation``."""
    return LETTERS[(LETTERS.index(shown) + rotation) % n_choices]


def rotations_for(qid: str, n_choices: int, rotations: int, seed: int) -> list[int]:
    """Which rotations to ask: all when ``rotations`` is 0 or >= n, else 0 plus a draw.

    The draw (``rotations - 1`` of the n - 1 non-zero shifts) is seeded by ``seed`` and
    the question id, so a plan is reproducible and independent of question order.
    """
    if rotations < 0:
        raise ValueError(f"rotations must be >= 0, got {rotations}")
    if rotations == 0 or rotations >= n_choices:
        return list(range(n_choices))
    digest = hashlib.sha256(f"{seed}\x1f{qid}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    extra = rng.choice(np.arange(1, n_choices), size=rotations - 1, replace=False)
    return [0, *sorted(int(r) for r in extra)]


COMPOSITE_CACHE = CompositeCache()
"""The cache :func:`plan_calls` uses unless given its own: a composite is rendered once and
served to every family (see :mod:`judgepanel.studies.visionq.cache`)."""
FIT_CACHE = CompositeCache(
    max_entries=8, size=lambda fit: sum(3 * im.width * im.height for im in fit[1])
)
"""A question's crops, opened and scaled once for all its rotations (by their files'
identity in released order)."""
AHEAD = 2
"""Composites :func:`plan_calls`' builders start rendering ahead of the one they send."""


def composite_url(files: Sequence[str]) -> str:
    """The composite of ``files`` (in panel order) as a PNG data URL, rendered afresh."""
    return bytes_data_url(composite_png(list(files)), "image/png")


@dataclass(frozen=True)
class _Render:
    """One (question, rotation) composite of a plan: the question's crops in released
    order and the order they are shown in."""

    qid: str
    rotation: int
    files: tuple[str, ...]
    order: tuple[int, ...]

    def key(self) -> Hashable:
        """The composite's cache key: reads the crops' identities now."""
        return (self.qid, self.rotation, file_identity(self.files[i] for i in self.order))

    def url(self) -> str:
        """The composite as a PNG data URL, from the question's fitted crops: the same
        bytes as :func:`composite_url` of the shown files."""
        side, fitted = FIT_CACHE.get(file_identity(self.files), lambda: fit_tiles(self.files))
        return bytes_data_url(lay_out(side, [fitted[i] for i in self.order]).png())


def _parser(n_choices: int, rotation: int):
    def parse(text: str) -> VisionqAnswer:
        shown = parse_letter(text, n_choices)
        return VisionqAnswer(
            letter=unrotate(shown, n_choices, rotation), shown=shown, rotation=rotation
        )

    return parse


def _builder(text: str, renders: list[_Render], at: int, cache: CompositeCache):
    """The messages of the composite ``renders[at]``, the next ones started meanwhile."""

    def build() -> list[Message]:
        for ahead in renders[at + 1 : at + 1 + AHEAD]:
            with suppress(OSError):  # a crop gone: its own call says so when it is built
                cache.prefetch(ahead.key(), ahead.url)
        render = renders[at]
        return visionq_messages(text, cache.get(render.key(), render.url))

    return build


def plan_calls(
    questions: pd.DataFrame,
    families: dict[str, str],
    *,
    dataset: str = "visionq",
    temperature: float = 0.3,
    rotations: int = 0,
    seed: int = 0,
    cache: CompositeCache | None = None,
) -> list[CallSpec]:
    """Every VisionQ call for ``questions`` x ``families`` x rotations.

    Args:
        questions: :func:`judgepanel.datasets.load_visionq` output (uses ``id``,
            ``question``, ``n_choices``, ``image_files`` and ``image_paths``).
        families: family name -> model id.
        dataset: dataset name in the store key.
        temperature: sampling temperature.
        rotations: 0 = every cyclic rotation (K = n_choices); k = rotation 0 plus k - 1
            others drawn with ``seed``.
        seed: seed of that draw.
        cache: where built composites are kept; None = the shared ``COMPOSITE_CACHE``.
            Families are the innermost loop of the plan, so the calls that share a
            composite are sent one after another and it is rendered once; building one
            starts rendering the next ``AHEAD`` composites of the plan on worker threads.

    Returns:
        CallSpecs of call type ``visionq`` with ``repetition`` = rotation; the prompt hash
        covers the text and the panel order (crop paths relative to the benchmark root),
        and ``parse`` returns a :class:`VisionqAnswer` (the released letter, the letter as
        answered, the rotation).
    """
    needed = ("id", "question", "n_choices", "image_files", "image_paths")
    missing = [c for c in needed if c not in questions.columns]
    if missing:
        raise ValueError(f"questions lack column(s) {missing}")
    cache = COMPOSITE_CACHE if cache is None else cache
    specs: list[CallSpec] = []
    renders: list[_Render] = []
    for q in questions.itertuples(index=False):
        n = int(q.n_choices)
        files: Sequence[str] = list(q.image_files)
        rel: Sequence[str] = list(q.image_paths)
        if len(files) != n or len(rel) != n:
            raise ValueError(f"question {q.id!r}: {len(files)} images for {n} choices")
        text = prompt_text(q.question, n)
        for r in rotations_for(q.id, n, rotations, seed):
            order = rotated_order(n, r)
            identity = "<composite:" + "|".join(rel[i] for i in order) + ">"
            phash = messages_hash(visionq_messages(text, identity))
            renders.append(_Render(q.id, r, tuple(files), tuple(order)))
            prompt = PromptSpec(
                dataset=dataset,
                item=q.id,
                call_type=CALL_TYPE,
                prompt_hash=phash,
                build=_builder(text, renders, len(renders) - 1, cache),
                parse=_parser(n, r),
                max_tokens=MAX_TOKENS,
                temperature=temperature,
                text_chars=len(text),
            )
            for family, model in families.items():
                specs.append(make_spec(prompt, family=family, model=model, repetition=r))
    return specs
